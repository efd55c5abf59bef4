/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The turboschedd control protocol, shared by the daemon and turboschedctl.
 *
 * Transport: AF_UNIX SOCK_STREAM at RUNSTATEDIR/turboschedd/control. Every message is a frame: a
 * 4-byte big-endian length, then that many bytes of one JSON object (json-c). The client sends one
 * request and reads one response per connection.
 *
 * Requests:  {"v":1,"cmd":"status"|"tasks"|"rules"|"reload"}
 *            {"v":1,"cmd":"explain","pid":N}
 * Responses: {"ok":true, ...command fields} or {"ok":false,"error":"message"}.
 * The one change (reload) is allowed for uid 0 and CAP_SYS_NICE holders only. Tagging by hand is
 * not a request: turboschedctl writes the clamp itself and records it in its ledger (ledger.h),
 * which the daemon reads.
 */
#ifndef TS_PROTO_H
#define TS_PROTO_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ledger.h"
#include "rules.h"

#define TS_PROTO_VERSION 1
#define TS_PROTO_HDR_LEN 4
/* A request is tiny; anything bigger is a confused or hostile client. */
#define TS_PROTO_MAX_REQUEST (16u * 1024u)
/* A task list of a big machine fits; a runaway response does not eat the client's memory. */
#define TS_PROTO_MAX_RESPONSE (8u * 1024u * 1024u)
#define TS_PROTO_TIMEOUT_MS   5000

enum ts_cmd {
	TS_CMD_STATUS,
	TS_CMD_TASKS,
	TS_CMD_EXPLAIN,
	TS_CMD_RULES,
	TS_CMD_RELOAD,
	TS_CMD_COUNT,
};

struct ts_request {
	enum ts_cmd cmd;
	pid_t pid; /* explain */
};

/* RUNSTATEDIR "/turboschedd/control". */
const char *ts_proto_default_socket(void);

const char *ts_cmd_name(enum ts_cmd c);
/* True for commands that change state and need privilege. */
bool ts_cmd_is_change(enum ts_cmd c);

/* Frame header. */
void ts_frame_put_len(uint8_t hdr[TS_PROTO_HDR_LEN], uint32_t len);
uint32_t ts_frame_get_len(const uint8_t hdr[TS_PROTO_HDR_LEN]);
/*
 * Looks at received bytes: 1 when a whole frame of *payload_len bytes follows the header, 0 when
 * more bytes are needed, -EMSGSIZE when the announced length exceeds max.
 */
int ts_frame_complete(const uint8_t *buf, size_t len, size_t max, size_t *payload_len);
/* Header + JSON text of obj in one malloc'd buffer. NULL on allocation failure. */
uint8_t *ts_frame_encode(json_object *obj, size_t *len);

/* ts_frame_encode() of {"ok":false,"error":msg}: a refusal sent before closing. */
uint8_t *ts_frame_encode_error(const char *msg, size_t *len);

/* The request as a JSON object (caller puts it). */
json_object *ts_request_to_json(const struct ts_request *r);
/*
 * Parses and validates a request payload. 0, or -EINVAL with a message for the client in err
 * (e.g. "unknown command 'x'", "'pid' must be a positive integer").
 */
int ts_request_parse(const char *payload, size_t len, struct ts_request *out, char *err,
                     size_t errlen);

/*
 * Parses a response payload (what ts_proto_call() received after the header): the object when it
 * is exactly one JSON object of protocol shape (ts_response_check() >= 0), else NULL.
 */
json_object *ts_response_decode(const char *payload, size_t len);

/* {"ok":true} */
json_object *ts_response_ok(void);
/* {"ok":false,"error":"..."} */
json_object *ts_response_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Checks a response's shape. 0 when ok:true; 1 when ok:false (*err points into resp); -EPROTO when
 * it is not a protocol response.
 */
int ts_response_check(json_object *resp, const char **err);

/*
 * Ledger entries on the wire ("tasks" reply, "registry" of explain): {"tid","tgid","starttime",
 * "rule","how","since","util_min","util_max","min_lowered"}, where "how" is the owner's name and
 * util_* and min_lowered the clamp the tag replaced.
 */
json_object *ts_ledger_entry_to_json(const struct ts_ledger_entry *e);
/* The reverse; 0 or -EINVAL. out->rule points into o (ts_ledger_put() copies it). */
int ts_ledger_entry_from_json(json_object *o, struct ts_ledger_entry *out);
/*
 * The "tasks" reply {"ok":true,"tasks":[entries...]}: the entries are written straight into the
 * output when it is serialized (thousands never exist as json-c objects), so l must outlive the
 * reply and not change before it is serialized. NULL when out of memory.
 */
json_object *ts_reply_tasks(const struct ts_ledger *l);
/* Reads a "tasks" reply into l (appends; malformed entries are skipped). 0, -EPROTO or -ENOMEM. */
int ts_reply_tasks_parse(json_object *resp, struct ts_ledger *l);

/* The rule set as {"rules":[{name,kind,threads,comm[],cgroup[],user[],file,line}...]} fields. */
json_object *ts_rules_to_json(const struct ts_ruleset *rs);

struct ts_task;
/*
 * Explains the decision for one thread and its process: pid, tgid, comm, cgroup, uid, verdict,
 * rule, and per rule which fields matched. The daemon and turboschedctl's offline explain both
 * use this, over the same ts_ruleset_explain().
 */
json_object *ts_explain_to_json(const struct ts_ruleset *rs, const struct ts_task *thread,
                                const struct ts_task *process);

/*
 * ts_rules_read_task() + ts_explain_to_json() for a PID or TID. NULL with *err = -ESRCH when there
 * is no such task, or another -errno.
 */
json_object *ts_explain_pid(const struct ts_ruleset *rs, pid_t pid, int *err);

/*
 * Sends one request and waits for the response (at most timeout_ms in total). 0 and *resp (caller
 * puts), or -errno: -ENOENT or -ECONNREFUSED when the daemon is not running, -EACCES, -ETIMEDOUT,
 * -EMSGSIZE, -EPROTO (garbled response).
 */
int ts_proto_call(const char *path, const struct ts_request *req, int timeout_ms,
                  json_object **resp);

/* A sentence for ts_proto_call() errors, e.g. "turboschedd is not running (no socket at PATH)". */
const char *ts_proto_strerror(int err);

#endif

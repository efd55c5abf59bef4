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
#include "macro.h"
#include "rules.h"
#include "task.h"

/* _cleanup_(json_object_putp) json_object *o: put when it goes out of scope. */
DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put)

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

/*
 * Typed replies. The daemon fills a struct and ts_reply_*() makes the wire object; turboschedctl
 * gets the struct back from ts_reply_*_parse() and, for --json, the same object again. JSON keys
 * are known here and nowhere else. A parsed struct's strings point into the response object, so
 * keep that until done with the struct.
 */

/* The counters of "stats" and "control", in wire order: X(name) each. */
/* clang-format off */
#define TS_STATUS_STATS(X) \
	X(events) X(scans) X(rescans) X(tagged) X(restored) X(vanished) X(failures) X(external) \
	X(skipped) X(late) X(lag_max_us)
#define TS_STATUS_CONTROL(X) X(served) X(refused) X(timeouts) X(evicted) X(rejected) X(uid_limited)
/* clang-format on */
#define TS_STATUS_FIELD(name) uint64_t name;
/* Failed tags by cause, at most this many causes (the daemon keeps ENGINE_CAUSES). */
#define TS_STATUS_CAUSES 8

struct ts_status {
	pid_t pid;
	const char *version;
	int64_t started;
	bool has_config;
	struct {
		const char *const *files;
		size_t nfiles;
		int64_t loaded;
		uint64_t rules, excludes;
		int64_t recheck_interval_ms;
		bool restore_on_stop;
	} config;
	struct {
		uint64_t count, failures;
		const char *error; /* NULL: the last reload worked */
	} last_reload;
	uint64_t tagged;
	struct {
		TS_STATUS_STATS(TS_STATUS_FIELD)
		int late_ms;
		struct {
			const char *name; /* "EPERM", ..., "other" */
			uint64_t count;
		} causes[TS_STATUS_CAUSES];
		size_t ncauses;
	} stats;
	bool has_proc_connector;
	struct {
		bool subscribed;
		const char *error;
	} proc_connector;
	const char *degraded; /* NULL: not degraded */
	bool has_control;
	struct {
		TS_STATUS_CONTROL(TS_STATUS_FIELD)
	} control;
};

json_object *ts_reply_status(const struct ts_status *s);
/*
 * Fields the reply lacks stay zero (has_* false for whole parts): an older or a test daemon may
 * send less. 0, -EPROTO (not an object) or -ENOMEM. Free with ts_status_free().
 */
int ts_reply_status_parse(json_object *resp, struct ts_status *out);
void ts_status_free(struct ts_status *s);
/*
 * turboschedctl status --json's "daemon" object: pid, version, tagged, last_reload {count,
 * failures, ok, error}, stats, control, proc_connector, degraded, each null without s or the part.
 */
void ts_status_add_summary(json_object *o, const struct ts_status *s);

/* The rule set as the "rules" array [{name,kind,threads,comm[],cgroup[],user[],file,line}...]. */
json_object *ts_rules_to_json(const struct ts_ruleset *rs);

/* The "rules" reply, from the daemon (with its files) or from the configuration on disk. */
struct ts_rules_reply {
	struct ts_ruleset rules;
	char **files; /* NULL when the reply names none */
	size_t nfiles;
	bool from_config; /* "source":"config": turboschedctl read the configuration itself */
};

/* {"ok":true,"rules":[...],"files":[...] unless files is NULL,"source":"config" if from_config} */
json_object *ts_reply_rules(const struct ts_ruleset *rs, char *const *files, size_t nfiles,
                            bool from_config);
/* Copies what it reads (rules owns its strings). 0, -EPROTO or -ENOMEM. */
int ts_reply_rules_parse(json_object *resp, struct ts_rules_reply *out);
void ts_rules_reply_free(struct ts_rules_reply *r);

/* One rule's part in an explanation: ts_rule_result with the rule by name. */
struct ts_explain_rule {
	const char *name;
	enum ts_rule_kind kind;
	enum ts_rule_threads threads; /* "subject": "process" for all, "thread" for matched */
	bool matched;
	struct ts_field_result field[TS_FIELD_COUNT];
};

/* The decision for one thread and its process, field by field, and who owns the task. */
struct ts_explain {
	pid_t pid, tgid;
	char comm[TS_COMM_LEN], process_comm[TS_COMM_LEN], cgroup[TS_CGROUP_LEN];
	uid_t uid; /* effective */
	int jitter;
	enum ts_verdict_kind verdict;
	const char *rule; /* the deciding rule; NULL for none */
	struct ts_explain_rule *rules;
	size_t nrules;
	/* The reply's, not the matcher's: */
	bool from_config; /* "source": "config" (turboschedctl alone) or "daemon" */
	bool owned;       /* "registry": either ledger has the task; then owner is its entry */
	struct ts_ledger_entry owner;
};

/*
 * Runs ts_ruleset_explain() for a thread and its process; strings of rules point into rs. The
 * daemon and turboschedctl's offline explain both use this. 0 or -ENOMEM.
 */
int ts_explain_build(const struct ts_ruleset *rs, const struct ts_task *thread,
                     const struct ts_task *process, struct ts_explain *out);
/* ts_rules_read_task() + ts_explain_build() for a PID or TID: 0, -ESRCH (no such task), -errno. */
int ts_explain_pid(const struct ts_ruleset *rs, pid_t pid, struct ts_explain *out);
void ts_explain_free(struct ts_explain *e);
/*
 * The explanation as JSON: pid, tgid, comm, process_comm, cgroup, uid, jitter, verdict, rule,
 * rules[{name, kind, subject, matched, fields{FIELD:{matched, pattern}}}].
 */
json_object *ts_explain_to_json(const struct ts_ruleset *rs, const struct ts_task *thread,
                                const struct ts_task *process);
/* The "explain" reply: the above, then ok, source and registry (a ledger entry, or null). */
json_object *ts_reply_explain(const struct ts_explain *e);
/* 0, -EPROTO or -ENOMEM; free with ts_explain_free(). */
int ts_reply_explain_parse(json_object *resp, struct ts_explain *out);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * turboschedctl's view of the daemon: one request over the control socket (lib/proto), and the
 * daemon's registry of the tasks it tagged, used to say "tagged by rule X" and to restore the clamp
 * the daemon recorded.
 *
 * Expected "tasks" response: {"ok":true,"tasks":[{"tid":N,"starttime":N,"rule":"NAME",
 * "util_min":N,"util_max":N,"min_lowered":BOOL}, ...]} where util_min/util_max are the clamps the
 * task had before the daemon tagged it. "starttime", "util_*" and "min_lowered" are optional.
 */
#ifndef TS_CLI_DAEMON_H
#define TS_CLI_DAEMON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "commands.h"
#include "config.h"
#include "proto.h"
#include "tag.h"

/*
 * Sends one request. 0 with *resp (ok:true; caller puts); 1 when the daemon refused (why says
 * what it said); -errno when it could not be asked (why says so, e.g. not running).
 */
int daemon_call(const struct cli_opts *o, const struct ts_request *req, json_object **resp,
                char *why, size_t whylen);

/*
 * For commands that answer from the daemon or, without one, from the configuration on disk
 * (explain, rules): asks the daemon unless config names a file to read instead. Returns
 * CLI_EXIT_OK with either *resp (the daemon's answer) or *cfg (loaded from disk; the caller
 * frees it; a note saying so and why, "...; <doing> the configuration on disk", went to stderr
 * when the daemon did not answer), else CLI_EXIT_FAILURE after saying why.
 */
int daemon_call_or_load(const struct cli_opts *o, const struct ts_request *req, const char *config,
                        const char *doing, json_object **resp, struct ts_config **cfg);

struct daemon_registry_key {
	pid_t tid;
	size_t idx; /* in tasks */
};

struct daemon_registry {
	bool reachable;
	char why[256];      /* when not reachable */
	json_object *tasks; /* the "tasks" array, owned by resp */
	json_object *resp;
	/* tasks' entries sorted by tid: `tasks` looks up every jitter task, often thousands */
	struct daemon_registry_key *by_tid;
	size_t nkeys;
};

/* Asks the daemon for its registry; never fails (an unreachable daemon is recorded in reg). */
void daemon_registry_load(const struct cli_opts *o, struct daemon_registry *reg);
/* Builds a registry from a response object (takes ownership); what daemon_registry_load uses. */
void daemon_registry_from_json(struct daemon_registry *reg, json_object *resp);
void daemon_registry_free(struct daemon_registry *reg);

/* The rule that tagged (tid, starttime), or NULL; fills *prev when given and recorded. */
const char *daemon_registry_rule(const struct daemon_registry *reg, pid_t tid,
                                 unsigned long long starttime, struct ts_prev *prev);
/* ts_prev_lookup_fn over a struct daemon_registry (ctx). */
bool daemon_registry_lookup(void *ctx, pid_t tid, unsigned long long starttime,
                            struct ts_prev *out);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * turboschedctl's client of the daemon: one request over the control socket (lib/proto), and the
 * daemon's ledger of the tasks it tagged, used to say "tagged by rule X" and to restore the clamp
 * the daemon recorded.
 */
#ifndef TS_CLI_CLIENT_H
#define TS_CLI_CLIENT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "commands.h"
#include "config.h"
#include "proto.h"
#include "socket_client.h"
#include "ledger.h"

/*
 * Sends one request. 0 with *resp (ok:true; caller puts); 1 when the daemon refused (why says
 * what it said); -errno when it could not be asked (why says so, e.g. not running).
 */
int client_call(const struct cli_opts *o, const struct ts_request *req, json_object **resp,
                char *why, size_t whylen);

/*
 * For commands that answer from the daemon or, without one, from the configuration on disk
 * (explain, rules): asks the daemon unless config names a file to read instead. Returns
 * CLI_EXIT_OK with either *resp (the daemon's answer) or *cfg (loaded from disk; the caller
 * frees it; a note saying so and why, "...; <doing> the configuration on disk", went to stderr
 * when the daemon did not answer), else CLI_EXIT_FAILURE after saying why.
 */
int client_call_or_load(const struct cli_opts *o, const struct ts_request *req, const char *config,
                        const char *doing, json_object **resp, struct ts_config **cfg);

/* The daemon's ledger, as its "tasks" reply gave it (typed by lib/proto). */
struct client_ledger {
	bool reachable;
	char why[256]; /* when not reachable */
	struct ts_ledger l;
};

/* Asks the daemon for its ledger; never fails (an unreachable daemon is recorded in dl). */
void client_ledger_load(const struct cli_opts *o, struct client_ledger *dl);
void client_ledger_free(struct client_ledger *dl);
/* How many tasks the daemon's rule of this name has tagged now (inherited tags included). */
size_t client_ledger_rule_count(const struct client_ledger *dl, const char *rule);

#endif

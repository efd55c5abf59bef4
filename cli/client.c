/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "errors.h"
#include "client.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int client_call(const struct cli_opts *o, const struct ts_request *req, json_object **resp,
                char *why, size_t whylen)
{
	const char *msg = NULL;
	int r;

	r = ts_proto_call(o->socket_path, req, TS_PROTO_TIMEOUT_MS, resp);
	if (r < 0) {
		snprintf(why, whylen, "%s", ts_proto_strerror(r));
		return r;
	}
	r = ts_response_check(*resp, &msg);
	if (r == 0)
		return 0;
	snprintf(why, whylen, "%s", r == 1 && msg ? msg : ts_proto_strerror(r < 0 ? r : -EPROTO));
	json_object_put(*resp);
	*resp = NULL;
	return r == 1 ? 1 : r;
}

int client_call_or_load(const struct cli_opts *o, const struct ts_request *req, const char *config,
                        const char *doing, json_object **resp, struct ts_config **cfg)
{
	char why[512];
	_cleanup_free_ char *msgs = NULL;

	*resp = NULL;
	*cfg = NULL;
	int r = config ? -ENOENT : client_call(o, req, resp, why, sizeof(why));
	if (r == 0)
		return CLI_EXIT_OK;
	if (r == 1) {
		cli_err(o->err, "%s", why);
		return CLI_EXIT_FAILURE;
	}
	/* No daemon (or --config): answer with what the daemon would load. */
	if (!config)
		cli_err(o->err, "%s; %s the configuration on disk", why, doing);
	struct ts_config_source src = {.path = config};
	if (ts_config_load_joined(&src, cfg, &msgs) < 0) {
		cli_err(o->err, "invalid configuration:\n%s", msgs ? msgs : "out of memory");
		*cfg = NULL;
		return CLI_EXIT_FAILURE;
	}
	return CLI_EXIT_OK;
}

void client_ledger_load(const struct cli_opts *o, struct client_ledger *dl)
{
	struct ts_request req = {.cmd = TS_CMD_TASKS};
	json_object *resp = NULL;

	memset(dl, 0, sizeof(*dl));
	if (client_call(o, &req, &resp, dl->why, sizeof(dl->why)) != 0)
		return;
	dl->reachable = true;
	if (ts_reply_tasks_parse(resp, &dl->l) < 0)
		snprintf(dl->why, sizeof(dl->why), "%s", ts_proto_strerror(-EPROTO));
	json_object_put(resp);
}

void client_ledger_free(struct client_ledger *dl)
{
	ts_ledger_free(&dl->l);
	memset(dl, 0, sizeof(*dl));
}

size_t client_ledger_rule_count(const struct client_ledger *dl, const char *rule)
{
	size_t n = 0;

	for (size_t i = 0; i < dl->l.n; i++)
		if (ts_owner_is_daemon(dl->l.v[i].owner) && strcmp(dl->l.v[i].rule, rule) == 0)
			n++;
	return n;
}

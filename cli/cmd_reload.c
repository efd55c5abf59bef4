/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload: ask the daemon to re-read its configuration; on error it keeps the old one. */
#include "commands.h"
#include "errors.h"
#include "client.h"
#include "output.h"

int cmd_reload(const struct cli_opts *o, int argc, char **argv)
{
	struct ts_request req = {.cmd = TS_CMD_RELOAD};
	json_object *resp = NULL;
	char why[4096];

	(void)argv;
	if (argc > 1)
		return cli_usage(o->err, "reload");
	int r = client_call(o, &req, &resp, why, sizeof(why));
	if (r != 0) {
		cli_err(o->err, "%s", why);
		return CLI_EXIT_FAILURE;
	}
	if (o->json)
		json_print_put(o->out, resp);
	else {
		fprintf(o->out, "Configuration reloaded; every task was re-evaluated.\n");
		json_object_put(resp);
	}
	return CLI_EXIT_OK;
}

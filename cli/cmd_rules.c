/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placeholder: the daemon side implements 'rules' (issue 4). */
#include "commands.h"

int cmd_rules(const struct cli_opts *opts, int argc, char **argv)
{
	fprintf(opts->err, "turboschedctl: 'rules' is not implemented yet\n");
	return CLI_EXIT_FAILURE;
}

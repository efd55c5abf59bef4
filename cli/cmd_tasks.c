/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "commands.h"

int cmd_tasks(const struct cli_opts *opts, int argc, char **argv)
{
	fprintf(opts->err, "turboschedctl: 'tasks' is not implemented yet\n");
	return CLI_EXIT_FAILURE;
}

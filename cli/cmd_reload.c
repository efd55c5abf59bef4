/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placeholder: the daemon side implements 'reload' (issue 4). */
#include "commands.h"

int cmd_reload(const struct cli_opts *opts, int argc, char **argv)
{
	fprintf(opts->err, "turboschedctl: 'reload' is not implemented yet\n");
	return CLI_EXIT_FAILURE;
}

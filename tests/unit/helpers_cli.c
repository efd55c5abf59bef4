// SPDX-License-Identifier: GPL-2.0-or-later
/* Helpers for the unit tests that link turboschedctl's code (cli_lib) as well. */
#include <stdio.h>

#include "helpers_cli.h"
#include "commands.h"

int ctl_quiet(const char *cmd, const char *pid)
{
	char *argv[] = {"turboschedctl", "--socket",  "/nonexistent/control",
	                (char *)cmd,     (char *)pid, NULL};
	FILE *devnull = fopen("/dev/null", "w");
	int rc = cli_main(5, argv, devnull, devnull);

	fclose(devnull);
	return rc;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The turboschedctl subcommand interface. main.c parses the global options into struct cli_opts and
 * calls one cmd_X with the remaining arguments (argv[0] is the command name, as for getopt).
 * Every command returns the process exit code.
 */
#ifndef TS_CLI_COMMANDS_H
#define TS_CLI_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

enum cli_exit {
	CLI_EXIT_OK = 0,      /* everything asked for was done */
	CLI_EXIT_FAILURE = 1, /* something failed (the output says what) */
	CLI_EXIT_USAGE = 2,   /* bad arguments */
};

struct cli_opts {
	bool json;               /* --json: machine-readable output on out */
	const char *socket_path; /* daemon control socket (--socket), NULL = default */
	FILE *out;               /* normal output (stdout; tests use a memstream) */
	FILE *err;               /* diagnostics (stderr) */
};

typedef int (*cli_cmd_fn)(const struct cli_opts *opts, int argc, char **argv);

int cmd_tag(const struct cli_opts *opts, int argc, char **argv);
int cmd_untag(const struct cli_opts *opts, int argc, char **argv);
int cmd_run(const struct cli_opts *opts, int argc, char **argv);
int cmd_status(const struct cli_opts *opts, int argc, char **argv);
int cmd_tasks(const struct cli_opts *opts, int argc, char **argv);
int cmd_explain(const struct cli_opts *opts, int argc, char **argv);
int cmd_rules(const struct cli_opts *opts, int argc, char **argv);
int cmd_reload(const struct cli_opts *opts, int argc, char **argv);

/* A command's --help text (its synopsis, options and the global options); nothing when unknown. */
void cli_command_help(FILE *f, const char *name);

/*
 * Parses global options and runs the command; what main() does, callable from tests.
 * Returns the exit code.
 */
int cli_main(int argc, char **argv, FILE *out, FILE *err);

/* status --watch stops after this many rounds (tests); 0, the default, means never. */
extern unsigned int cli_watch_rounds;

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turboschedctl: global options and dispatch to one subcommand. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "commands.h"
#include "errors.h"
#include "util.h"

struct command {
	const char *name;
	cli_cmd_fn fn;
	const char *args;
	const char *help;
};

static const struct command commands[] = {
    {"tag", cmd_tag, "[--thread] PID...", "classify processes (or threads) as jitter tasks"},
    {"untag", cmd_untag, "[--thread] PID...", "restore the clamp they had before tagging"},
    {"status", cmd_status, "", "kernel support, counters, daemon, and the per-core view"},
    {"tasks", cmd_tasks, "", "list every jitter task and who tagged it"},
    {"explain", cmd_explain, "PID", "which daemon rule matches a process, or why none does"},
    {"rules", cmd_rules, "", "the rules the daemon has loaded"},
    {"reload", cmd_reload, "", "ask the daemon to reload its configuration"},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: turboschedctl [OPTIONS] COMMAND [ARGS...]\n\n"
	           "Classify jitter tasks for TurboSched packing and show where they run.\n\n"
	           "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %-18s %s\n", commands[i].name, commands[i].args,
		        commands[i].help);
	fprintf(f, "\nOptions:\n"
	           "  -j, --json         machine-readable JSON output\n"
	           "      --socket PATH  daemon control socket\n"
	           "      --root DIR     read /proc, /sys and /run below DIR (testing)\n"
	           "  -h, --help         show this help\n"
	           "  -V, --version      show the version\n\n"
	           "Exit status: 0 success, 1 failure, 2 usage error.\n");
}

int cli_main(int argc, char **argv, FILE *out, FILE *err)
{
	enum { OPT_SOCKET = 256, OPT_ROOT };
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"socket", required_argument, NULL, OPT_SOCKET},
	    {"root", required_argument, NULL, OPT_ROOT},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_opts opts = {.out = out, .err = err};
	int c;

	/* "+": stop at the command name so its own options are left for it. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opts.json = true;
			break;
		case OPT_SOCKET:
			opts.socket_path = optarg;
			break;
		case OPT_ROOT:
			ts_root_set(optarg);
			break;
		case 'h':
			usage(out);
			return CLI_EXIT_OK;
		case 'V':
			fprintf(out, "turboschedctl %s\n", TURBOSCHED_VERSION);
			return CLI_EXIT_OK;
		default:
			return cli_unknown_option(err, NULL, argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		cli_err(err, "no command given; see turboschedctl --help");
		return CLI_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[optind], commands[i].name) == 0) {
			/* Reset getopt for the command's own parsing of argv[optind..]. */
			char **sub = argv + optind;
			int subc = argc - optind;

			optind = 0;
			return commands[i].fn(&opts, subc, sub);
		}
	}
	cli_err(err, "unknown command '%s'; see turboschedctl --help", argv[optind]);
	return CLI_EXIT_USAGE;
}

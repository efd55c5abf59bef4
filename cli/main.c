/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * turboschedctl: global options (before or after the command, as systemctl takes them), every
 * command's --help, and dispatch to one subcommand.
 */
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
	/* Its options, one "  -x, --long ARG  what" line each, for its --help. */
	const char *options;
	/* Its options that take their argument as the next word: not global options to hoist. */
	const char *const *argopts;
	/* Its arguments end at the first non-option (a command line to run follows). */
	bool stop_at_operand;
};

static const char *const status_argopts[] = {"-s", "--sample", NULL};
static const char *const config_argopts[] = {"-c", "--config", NULL};

static const struct command commands[] = {
    {"tag", cmd_tag, "[--thread] PID...", "classify processes (or threads) as jitter tasks",
     "  -t, --thread        each PID is one thread (TID), not a whole process\n", NULL, false},
    {"untag", cmd_untag, "[--thread] PID...", "restore the clamp they had before tagging",
     "  -t, --thread        each PID is one thread (TID), not a whole process\n", NULL, false},
    {"run", cmd_run, "[--] COMMAND [ARGS...]", "start a command already a jitter task", "", NULL,
     true},
    {"status", cmd_status, "[--sample MS] [--watch[=SECONDS]] [--format=FORMAT]",
     "kernel support, counters, daemon, and the per-core view",
     "  -s, --sample MS          busy sample length (default 250 ms)\n"
     "  -w, --watch[=SECONDS]    redraw every SECONDS (default 2) until interrupted\n"
     "      --format=FORMAT      text (default), json (as --json) or prometheus (node_exporter\n"
     "                           textfile format)\n",
     status_argopts, false},
    {"tasks", cmd_tasks, "", "list every jitter task and who tagged it", "", NULL, false},
    {"explain", cmd_explain, "[--config FILE] PID",
     "which daemon rule matches a process, or why none does",
     "  -c, --config FILE   judge by this configuration file instead of the daemon's rules\n",
     config_argopts, false},
    {"rules", cmd_rules, "[--config FILE]",
     "the rules the daemon has loaded, and how many tasks each tagged",
     "  -c, --config FILE   show this configuration file instead of the daemon's rules\n",
     config_argopts, false},
    {"reload", cmd_reload, "", "ask the daemon to reload its configuration", "", NULL, false},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char global_options[] =
    "  -j, --json         machine-readable JSON output\n"
    "      --socket PATH  daemon control socket\n"
    "      --root DIR     read /proc, /sys and /run below DIR (testing)\n"
    "  -h, --help         show this help (COMMAND --help: that command's)\n"
    "  -V, --version      show the version\n";

static void usage(FILE *f)
{
	fprintf(f, "Usage: turboschedctl [OPTIONS] COMMAND [ARGS...]\n\n"
	           "Classify jitter tasks for TurboSched packing and show where they run.\n\n"
	           "Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n           %s\n", commands[i].name, commands[i].args,
		        commands[i].help);
	fprintf(f,
	        "\nOptions (before or after the command):\n%s\n"
	        "Exit status: 0 success, 1 failure, 2 usage error.\n",
	        global_options);
}

static const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

void cli_command_help(FILE *f, const char *name)
{
	const struct command *c = command_find(name);

	if (!c)
		return;
	fprintf(f, "Usage: turboschedctl [OPTIONS] %s%s%s\n%c%s.\n", c->name, c->args[0] ? " " : "",
	        c->args, c->help[0] - 'a' + 'A', c->help + 1);
	if (c->options[0])
		fprintf(f, "\nOptions:\n%s", c->options);
	fprintf(f, "\nGlobal options:\n%s", global_options);
}

static bool is_argopt(const struct command *c, const char *a)
{
	for (const char *const *o = c->argopts; o && *o; o++)
		if (strcmp(a, *o) == 0)
			return true;
	return false;
}

enum { GLOBAL_NONE, GLOBAL_TAKEN, GLOBAL_HELP, GLOBAL_VERSION, GLOBAL_MISSING };

/* One global option at args[0] (its value maybe at args[1]): what it was, *used words. */
static int global_option(struct cli_opts *o, char **args, int n, int *used)
{
	const char *a = args[0];
	static const char *const valued[] = {"--socket", "--root"};

	*used = 1;
	if (strcmp(a, "-j") == 0 || strcmp(a, "--json") == 0) {
		o->json = true;
		return GLOBAL_TAKEN;
	}
	if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
		return GLOBAL_HELP;
	if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0)
		return GLOBAL_VERSION;
	for (size_t i = 0; i < 2; i++) {
		size_t l = strlen(valued[i]);
		const char *v = NULL;

		if (strncmp(a, valued[i], l) != 0)
			continue;
		if (a[l] == '=')
			v = a + l + 1;
		else if (a[l] == '\0' && n > 1)
			v = args[(*used = 2) - 1];
		else if (a[l] == '\0')
			return GLOBAL_MISSING;
		else
			continue;
		if (i == 0)
			o->socket_path = v;
		else
			ts_root_set(v);
		return GLOBAL_TAKEN;
	}
	return GLOBAL_NONE;
}

/*
 * Takes the global options out of the command's arguments (sub[0] is the command), up to "--"
 * (or, for run, the command line to start). Returns -1 to go on, else an exit code.
 */
static int hoist_globals(struct cli_opts *o, const struct command *c, int *subc, char **sub)
{
	int w = 1, i = 1;

	while (i < *subc) {
		char *a = sub[i];
		int used, g;

		if (strcmp(a, "--") == 0 || (c->stop_at_operand && a[0] != '-'))
			break;
		if (a[0] != '-') {
			sub[w++] = sub[i++];
			continue;
		}
		if (is_argopt(c, a)) {
			sub[w++] = sub[i++];
			if (i < *subc)
				sub[w++] = sub[i++];
			continue;
		}
		g = global_option(o, sub + i, *subc - i, &used);
		if (g == GLOBAL_HELP) {
			cli_command_help(o->out, c->name);
			return CLI_EXIT_OK;
		}
		if (g == GLOBAL_VERSION) {
			fprintf(o->out, "turboschedctl %s\n", TURBOSCHED_VERSION);
			return CLI_EXIT_OK;
		}
		if (g == GLOBAL_MISSING) {
			cli_err(o->err, "option '%s' needs an argument", a);
			return CLI_EXIT_USAGE;
		}
		if (g == GLOBAL_NONE)
			sub[w++] = sub[i++];
		else
			i += used;
	}
	while (i < *subc)
		sub[w++] = sub[i++];
	sub[w] = NULL;
	*subc = w;
	return -1;
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
	const struct command *cmd;
	char **sub;
	int c, subc, r;

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
	cmd = command_find(argv[optind]);
	if (!cmd) {
		cli_err(err, "unknown command '%s'; see turboschedctl --help", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	/* A copy: the command's argv without the global options, for its own getopt. */
	subc = argc - optind;
	sub = calloc((size_t)subc + 1, sizeof(*sub));
	if (!sub)
		return CLI_EXIT_FAILURE;
	memcpy(sub, argv + optind, (size_t)subc * sizeof(*sub));
	r = hoist_globals(&opts, cmd, &subc, sub);
	if (r < 0) {
		optind = 0;
		opterr = 0;
		r = cmd->fn(&opts, subc, sub);
	}
	free(sub);
	return r;
}

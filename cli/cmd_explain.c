/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * explain PID: which rule matches, field by field. Asks the daemon; without one, loads the
 * configuration and runs the same matcher (ts_explain_pid) here, and says so.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "config.h"
#include "client.h"
#include "output.h"
#include "scan.h"
#include "task.h"
#include "util.h"

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, key, &v);
	return v;
}

static const char *str(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	return v ? json_object_get_string(v) : "";
}

static void print_rule(FILE *f, json_object *r)
{
	bool m = json_object_get_boolean(get(r, "matched"));
	fprintf(f, "  %-7s %-20s (%s) %s\n", str(r, "kind"), str(r, "name"), str(r, "subject"),
	        m ? "MATCH" : "no match");
	json_object_object_foreach(get(r, "fields"), field, fo)
	{
		json_object *pat = get(fo, "pattern");
		if (json_object_get_boolean(get(fo, "matched")))
			fprintf(f, "      %-6s matched '%s'\n", field, json_object_get_string(pat));
		else
			fprintf(f, "      %-6s no pattern matched\n", field);
	}
}

static void print_human(FILE *f, json_object *e)
{
	const char *verdict = str(e, "verdict");
	fprintf(f, "Task %s (%s)", str(e, "pid"), str(e, "comm"));
	if (strcmp(str(e, "pid"), str(e, "tgid")) != 0)
		fprintf(f, ", thread of process %s (%s)", str(e, "tgid"), str(e, "process_comm"));
	fprintf(f, "\n  cgroup %s, uid %s\n", *str(e, "cgroup") ? str(e, "cgroup") : "(unknown)",
	        str(e, "uid"));
	/* One verdict: who owns the task (either ledger) says more than what the rules say. */
	json_object *reg = get(e, "registry");
	const char *how = reg ? str(reg, "how") : "";
	if (strcmp(how, "manual") == 0)
		fprintf(f, "Verdict: tagged by hand (turboschedctl tag); rules leave it alone\n");
	else if (strcmp(how, "untagged") == 0)
		fprintf(f, "Verdict: untagged by hand (turboschedctl untag); rules leave it alone "
		           "until it exits\n");
	else if (reg)
		fprintf(f, "Verdict: tagged by rule %s%s\n", str(reg, "rule"),
		        strcmp(how, "inherited") == 0 ? " (inherited from a tagged parent)" : "");
	else if (strcmp(verdict, "tag") == 0)
		fprintf(f, "Verdict: rule %s matches; %s\n", str(e, "rule"),
		        strcmp(str(e, "source"), "daemon") != 0 ? "the daemon would tag it"
		        : json_object_get_int(get(e, "jitter")) == 1
		            ? "already tagged by someone else, so the daemon leaves it alone"
		            : "not tagged yet");
	else if (strcmp(verdict, "excluded") == 0)
		fprintf(f, "Verdict: not tagged, excluded by [exclude %s]\n", str(e, "rule"));
	else
		fprintf(f, "Verdict: not tagged, no rule matches\n");
	json_object *rules = get(e, "rules");
	size_t n = rules ? json_object_array_length(rules) : 0;
	if (n)
		fprintf(f, "Rules (exclusions win; otherwise the first matching rule):\n");
	for (size_t i = 0; i < n; i++)
		print_rule(f, json_object_array_get_idx(rules, i));
	if (reg) {
		time_t since = (time_t)json_object_get_int64(get(reg, "since"));
		char when[64];
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&since));
		fprintf(f, "Owner: %s since %s\n", how, when);
	}
}

static int usage(const struct cli_opts *o)
{
	fprintf(o->err, "Usage: turboschedctl explain [--config FILE] PID\n");
	return CLI_EXIT_USAGE;
}

int cmd_explain(const struct cli_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {{"config", required_argument, NULL, 'c'},
	                                         {NULL, 0, NULL, 0}};
	const char *config = NULL;
	json_object *resp = NULL;
	pid_t pid;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+c:", longopts, NULL)) != -1) {
		if (c != 'c')
			return usage(o);
		config = optarg;
	}
	if (optind != argc - 1 || ts_parse_pid(argv[optind], &pid) < 0)
		return usage(o);

	struct ts_request req = {.cmd = TS_CMD_EXPLAIN, .pid = pid};
	struct ts_config *cfg;
	if (client_call_or_load(o, &req, config, "explaining with", &resp, &cfg) != CLI_EXIT_OK)
		return CLI_EXIT_FAILURE;
	if (cfg) {
		int err;
		resp = ts_explain_pid(&cfg->rules, pid, &err);
		ts_config_free(cfg);
		if (!resp) {
			fprintf(o->err, "turboschedctl: %s\n",
			        err == -ESRCH ? "no such process or thread" : strerror(-err));
			return CLI_EXIT_FAILURE;
		}
		json_object_object_add(resp, "ok", json_object_new_boolean(1));
		json_object_object_add(resp, "source", json_object_new_string("config"));
		/* Without the daemon, the hand's record is the only owner to know of. */
		struct ts_ledger manual;
		unsigned long long st;
		manual_ledger_load(o->err, &manual);
		const struct ts_ledger_entry *m =
		    ts_task_starttime(0, pid, &st) == 0 ? ts_ledger_get(&manual, pid, st) : NULL;
		json_object_object_add(resp, "registry", m ? ts_ledger_entry_to_json(m) : NULL);
		ts_ledger_free(&manual);
	}
	if (o->json) {
		json_print_put(o->out, resp);
		return CLI_EXIT_OK;
	}
	print_human(o->out, resp);
	json_object_put(resp);
	return CLI_EXIT_OK;
}

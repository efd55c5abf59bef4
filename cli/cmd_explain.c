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
#include "errors.h"
#include "config.h"
#include "client.h"
#include "output.h"
#include "scan.h"
#include "task.h"
#include "util.h"

static void print_rule(FILE *f, const struct ts_explain_rule *r)
{
	fprintf(f, "  %-7s %-20s (%s) %s\n", ts_rule_kind_name(r->kind), r->name,
	        r->threads == TS_THREADS_ALL ? "process" : "thread",
	        r->matched ? "MATCH" : "no match");
	for (int k = 0; k < TS_FIELD_COUNT; k++) {
		const struct ts_field_result *fr = &r->field[k];
		const char *field = ts_rule_field_name((enum ts_rule_field)k);
		if (!fr->given)
			continue;
		if (fr->matched)
			fprintf(f, "      %-6s matched '%s'\n", field,
			        fr->pattern ? fr->pattern : "");
		else
			fprintf(f, "      %-6s no pattern matched\n", field);
	}
}

static void print_human(FILE *f, const struct ts_explain *e)
{
	fprintf(f, "Task %d (%s)", (int)e->pid, e->comm);
	if (e->pid != e->tgid)
		fprintf(f, ", thread of process %d (%s)", (int)e->tgid, e->process_comm);
	fprintf(f, "\n  cgroup %s, uid %u\n", e->cgroup[0] ? e->cgroup : "(unknown)",
	        (unsigned)e->uid);
	/* One verdict: who owns the task (either ledger) says more than what the rules say. */
	enum ts_owner how = e->owner.owner;
	if (e->owned && how == TS_OWNER_MANUAL)
		fprintf(f, "Verdict: tagged by hand (turboschedctl tag); rules leave it alone\n");
	else if (e->owned && how == TS_OWNER_UNTAGGED)
		fprintf(f, "Verdict: untagged by hand (turboschedctl untag); rules leave it alone "
		           "until it exits\n");
	else if (e->owned)
		fprintf(f, "Verdict: tagged by rule %s%s\n", e->owner.rule,
		        how == TS_OWNER_INHERITED ? " (inherited from a tagged parent)" : "");
	else if (e->verdict == TS_VERDICT_TAG)
		fprintf(f, "Verdict: rule %s matches; %s\n", e->rule ? e->rule : "",
		        e->from_config ? "the daemon would tag it"
		        : e->jitter == 1
		            ? "already tagged by someone else, so the daemon leaves it alone"
		            : "not tagged yet");
	else if (e->verdict == TS_VERDICT_EXCLUDED)
		fprintf(f, "Verdict: not tagged, excluded by [exclude %s]\n",
		        e->rule ? e->rule : "");
	else
		fprintf(f, "Verdict: not tagged, no rule matches\n");
	if (e->nrules)
		fprintf(f, "Rules (exclusions win; otherwise the first matching rule):\n");
	for (size_t i = 0; i < e->nrules; i++)
		print_rule(f, &e->rules[i]);
	if (e->owned) {
		time_t since = e->owner.since;
		char when[64];
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&since));
		fprintf(f, "Owner: %s since %s\n", ts_owner_name(how), when);
	}
}

/* Without the daemon, the hand's record is the only owner to know of. */
static void explain_owner_manual(const struct cli_opts *o, pid_t pid, struct ts_ledger *manual,
                                 struct ts_explain *e)
{
	unsigned long long st;
	manual_ledger_load(o->err, manual);
	const struct ts_ledger_entry *m =
	    ts_task_starttime(0, pid, &st) == 0 ? ts_ledger_get(manual, pid, st) : NULL;
	if (m) {
		e->owned = true;
		e->owner = *m;
	}
}

int cmd_explain(const struct cli_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {{"config", required_argument, NULL, 'c'},
	                                         {NULL, 0, NULL, 0}};
	const char *config = NULL;
	_cleanup_(json_object_putp) json_object *resp = NULL;
	pid_t pid;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+c:", longopts, NULL)) != -1) {
		if (c != 'c')
			return cli_usage(o->err, "explain [--config FILE] PID");
		config = optarg;
	}
	if (optind != argc - 1 || ts_parse_pid(argv[optind], &pid) < 0)
		return cli_usage(o->err, "explain [--config FILE] PID");

	struct ts_request req = {.cmd = TS_CMD_EXPLAIN, .pid = pid};
	_cleanup_(ts_config_freep) struct ts_config *cfg = NULL;
	_cleanup_(ts_ledger_free) struct ts_ledger manual = {0};
	/* Declared last, freed first: its strings point into the three above. */
	_cleanup_(ts_explain_free) struct ts_explain e = {0};
	int r;
	if (client_call_or_load(o, &req, config, "explaining with", &resp, &cfg) != CLI_EXIT_OK)
		return CLI_EXIT_FAILURE;
	if (cfg) {
		r = ts_explain_pid(&cfg->rules, pid, &e);
		if (r >= 0) {
			e.from_config = true;
			explain_owner_manual(o, pid, &manual, &e);
		}
	} else {
		r = ts_reply_explain_parse(resp, &e);
	}
	if (r < 0) {
		cli_err(o->err, "explain %d: %s", (int)pid,
		        r == -ESRCH    ? "no such process or thread"
		        : r == -EPROTO ? ts_proto_strerror(r)
		                       : strerror(-r));
	} else if (o->json) {
		json_print_put(o->out, ts_reply_explain(&e));
	} else {
		print_human(o->out, &e);
	}
	return r < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

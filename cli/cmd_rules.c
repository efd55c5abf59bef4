/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules: the rules the daemon has loaded, or (daemon not running) the configuration on disk. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "errors.h"
#include "config.h"
#include "client.h"
#include "output.h"

/* "a, b"; "-" when empty. */
static void join(char *const *v, size_t n, char *buf, size_t len)
{
	size_t w = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && w < len; i++)
		w += (size_t)snprintf(buf + w, len - w, "%s%s", i ? ", " : "", v[i]);
	if (!n)
		snprintf(buf, len, "-");
}

/* Tasks a rule has tagged now; "-" for exclusions and when the daemon was not asked. */
static void tagged_str(const struct ts_rule *r, const struct client_ledger *l, char *buf,
                       size_t len)
{
	if (r->kind == TS_RULE_EXCLUDE || !l->reachable)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%zu", client_ledger_rule_count(l, r->name));
}

static void print_table(FILE *f, const struct ts_ruleset *rs, const struct client_ledger *l)
{
	static const char *const hdr[] = {"KIND", "NAME",   "TAGGED", "THREADS",
	                                  "COMM", "CGROUP", "USER",   "DEFINED AT"};
	struct table t;
	table_init(&t, 8, hdr);
	for (size_t i = 0; i < rs->nrules; i++) {
		const struct ts_rule *r = &rs->rules[i];
		char comm[1024], cg[1024], user[256], at[320], tagged[24];
		join(r->comm, r->ncomm, comm, sizeof(comm));
		join(r->cgroup, r->ncgroup, cg, sizeof(cg));
		join(r->user, r->nuser, user, sizeof(user));
		snprintf(at, sizeof(at), "%s:%d", r->file, r->line);
		tagged_str(r, l, tagged, sizeof(tagged));
		table_add(&t, ts_rule_kind_name(r->kind), r->name, tagged,
		          ts_rule_threads_name(r->threads), comm, cg, user, at);
	}
	if (t.nrows)
		table_print(&t, f);
	else
		fprintf(f, "No rules: nothing is classified automatically.\n");
	table_free(&t);
}

int cmd_rules(const struct cli_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {{"config", required_argument, NULL, 'c'},
	                                         {NULL, 0, NULL, 0}};
	const char *config = NULL;
	struct ts_request req = {.cmd = TS_CMD_RULES};
	_cleanup_(json_object_putp) json_object *resp = NULL;
	_cleanup_(ts_config_freep) struct ts_config *cfg = NULL;
	_cleanup_(ts_rules_reply_free) struct ts_rules_reply rr = {0};
	_cleanup_(client_ledger_free) struct client_ledger ledger = {0};
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+c:", longopts, NULL)) != -1) {
		if (c != 'c')
			return cli_usage(o->err, "rules [--config FILE]");
		config = optarg;
	}
	if (optind < argc)
		return cli_usage(o->err, "rules [--config FILE]");

	if (client_call_or_load(o, &req, config, "showing", &resp, &cfg) != CLI_EXIT_OK)
		return CLI_EXIT_FAILURE;
	if (cfg) {
		/* The reply takes the rules over: one owner, one free. */
		rr.rules = cfg->rules;
		cfg->rules = (struct ts_ruleset){0};
		rr.from_config = true;
	} else if (ts_reply_rules_parse(resp, &rr) < 0) {
		cli_err(o->err, "%s", ts_proto_strerror(-EPROTO));
		return CLI_EXIT_FAILURE;
	}
	if (!cfg)
		client_ledger_load(o, &ledger);
	if (o->json) {
		json_object *j = ts_reply_rules(&rr.rules, rr.files, rr.nfiles, rr.from_config);
		json_object *arr = json_object_object_get(j, "rules");
		/* "tagged": how many tasks each rule has tagged now (null: not known, or an
		 * exclusion). */
		for (size_t i = 0; i < rr.rules.nrules && arr; i++) {
			const struct ts_rule *r = &rr.rules.rules[i];
			json_object_object_add(
			    json_object_array_get_idx(arr, i), "tagged",
			    r->kind == TS_RULE_EXCLUDE || !ledger.reachable
			        ? NULL
			        : json_object_new_int64(
			              (int64_t)client_ledger_rule_count(&ledger, r->name)));
		}
		json_print_put(o->out, j);
	} else {
		print_table(o->out, &rr.rules, &ledger);
	}
	return CLI_EXIT_OK;
}

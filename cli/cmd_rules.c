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

static void print_table(FILE *f, const struct ts_ruleset *rs)
{
	static const char *const hdr[] = {"KIND",   "NAME", "THREADS",   "COMM",
	                                  "CGROUP", "USER", "DEFINED AT"};
	struct table t;
	table_init(&t, 7, hdr);
	for (size_t i = 0; i < rs->nrules; i++) {
		const struct ts_rule *r = &rs->rules[i];
		char comm[256], cg[256], user[128], at[320];
		join(r->comm, r->ncomm, comm, sizeof(comm));
		join(r->cgroup, r->ncgroup, cg, sizeof(cg));
		join(r->user, r->nuser, user, sizeof(user));
		snprintf(at, sizeof(at), "%s:%d", r->file, r->line);
		table_add(&t, ts_rule_kind_name(r->kind), r->name, ts_rule_threads_name(r->threads),
		          comm, cg, user, at);
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
	json_object *resp = NULL;
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

	struct ts_config *cfg;
	struct ts_rules_reply rr = {0};
	if (client_call_or_load(o, &req, config, "showing", &resp, &cfg) != CLI_EXIT_OK)
		return CLI_EXIT_FAILURE;
	if (cfg) {
		rr.rules = cfg->rules;
		rr.from_config = true;
	} else if (ts_reply_rules_parse(resp, &rr) < 0) {
		cli_err(o->err, "%s", ts_proto_strerror(-EPROTO));
		ts_rules_reply_free(&rr);
		json_object_put(resp);
		return CLI_EXIT_FAILURE;
	}
	if (o->json)
		json_print_put(o->out,
		               ts_reply_rules(&rr.rules, rr.files, rr.nfiles, rr.from_config));
	else
		print_table(o->out, &rr.rules);
	if (cfg)
		ts_config_free(cfg);
	else
		ts_rules_reply_free(&rr);
	json_object_put(resp);
	return CLI_EXIT_OK;
}

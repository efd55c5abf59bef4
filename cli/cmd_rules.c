/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules: the rules the daemon has loaded, or (daemon not running) the configuration on disk. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "config.h"
#include "client.h"
#include "output.h"

/* "a, b" from a JSON array of strings; "-" when empty. */
static void join(json_object *a, char *buf, size_t len)
{
	size_t n = json_object_array_length(a), w = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && w < len; i++)
		w += (size_t)snprintf(buf + w, len - w, "%s%s", i ? ", " : "",
		                      json_object_get_string(json_object_array_get_idx(a, i)));
	if (!n)
		snprintf(buf, len, "-");
}

static const char *str(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, key, &v);
	return v;
}

static void print_table(FILE *f, json_object *rules)
{
	static const char *const hdr[] = {"KIND",   "NAME", "THREADS",   "COMM",
	                                  "CGROUP", "USER", "DEFINED AT"};
	struct table t;
	table_init(&t, 7, hdr);
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i);
		char comm[256], cg[256], user[128], at[320];
		join(get(r, "comm"), comm, sizeof(comm));
		join(get(r, "cgroup"), cg, sizeof(cg));
		join(get(r, "user"), user, sizeof(user));
		snprintf(at, sizeof(at), "%s:%s", str(r, "file"), str(r, "line"));
		table_add(&t, str(r, "kind"), str(r, "name"), str(r, "threads"), comm, cg, user,
		          at);
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
		if (c != 'c') {
			fprintf(o->err, "Usage: turboschedctl rules [--config FILE]\n");
			return CLI_EXIT_USAGE;
		}
		config = optarg;
	}
	if (optind < argc) {
		fprintf(o->err, "Usage: turboschedctl rules [--config FILE]\n");
		return CLI_EXIT_USAGE;
	}

	struct ts_config *cfg;
	if (client_call_or_load(o, &req, config, "showing", &resp, &cfg) != CLI_EXIT_OK)
		return CLI_EXIT_FAILURE;
	if (cfg) {
		resp = ts_response_ok();
		json_object_object_add(resp, "rules", ts_rules_to_json(&cfg->rules));
		json_object_object_add(resp, "source", json_object_new_string("config"));
		ts_config_free(cfg);
	}
	if (o->json) {
		json_print_put(o->out, resp);
		return CLI_EXIT_OK;
	}
	print_table(o->out, get(resp, "rules"));
	json_object_put(resp);
	return CLI_EXIT_OK;
}

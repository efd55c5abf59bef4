/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tasks: every jitter task, where it last ran, and who tagged it. */
#include <getopt.h>
#include <string.h>

#include "commands.h"
#include "errors.h"
#include "macro.h"
#include "output.h"
#include "scan.h"

static void by_str(const struct jitter_task *j, char *buf, size_t len)
{
	if (j->by == TAGGED_RULE)
		snprintf(buf, len, "rule %s", j->rule);
	else
		snprintf(buf, len, "%s", tagged_by_str(j->by));
}

static json_object *task_json(const struct jitter_task *j)
{
	json_object *o = json_object_new_object();
	char user[128];

	json_object_object_add(o, "tid", json_object_new_int(j->task.tid));
	json_object_object_add(o, "pid", json_object_new_int(j->task.tgid));
	json_object_object_add(o, "comm", json_object_new_string(j->task.comm));
	json_object_object_add(
	    o, "uid", j->task.euid == (uid_t)-1 ? NULL : json_object_new_int64(j->task.euid));
	cli_user_name(j->task.euid, user, sizeof(user));
	json_object_object_add(o, "user",
	                       j->task.euid == (uid_t)-1 ? NULL : json_object_new_string(user));
	json_object_object_add(o, "cgroup",
	                       j->task.cgroup[0] ? json_object_new_string(j->task.cgroup) : NULL);
	json_object_object_add(o, "cpu", j->task.cpu < 0 ? NULL : json_object_new_int(j->task.cpu));
	json_object_object_add(o, "core", j->core < 0 ? NULL : json_object_new_int(j->core));
	json_object_object_add(o, "util_min", json_object_new_int64(j->clamp.util_min));
	json_object_object_add(o, "policy",
	                       json_object_new_string(ts_policy_name(j->clamp.policy)));
	json_object_object_add(o, "kernel_jitter",
	                       j->task.jitter < 0 ? NULL : json_object_new_boolean(j->task.jitter));
	json_object_object_add(o, "tagged_by", json_object_new_string(tagged_by_str(j->by)));
	json_object_object_add(o, "rule",
	                       j->by == TAGGED_RULE ? json_object_new_string(j->rule) : NULL);
	return o;
}

static void print_human(FILE *f, const struct jitter_list *jl)
{
	static const char *const hdr[] = {"TID",    "PID", "COMM", "USER",
	                                  "CGROUP", "CPU", "CORE", "TAGGED-BY"};
	struct table t;

	table_init(&t, 8, hdr);
	for (size_t i = 0; i < jl->n; i++) {
		const struct jitter_task *j = &jl->v[i];
		char tid[16], pid[16], cpu[16], core[16], by[96], user[128];

		snprintf(tid, sizeof(tid), "%d", (int)j->task.tid);
		snprintf(pid, sizeof(pid), "%d", (int)j->task.tgid);
		snprintf(cpu, sizeof(cpu), "%d", j->task.cpu);
		if (j->core >= 0)
			snprintf(core, sizeof(core), "%d", j->core);
		else
			snprintf(core, sizeof(core), "-");
		if (j->task.euid == (uid_t)-1)
			snprintf(user, sizeof(user), "?");
		else
			cli_user_name(j->task.euid, user, sizeof(user));
		/* The table wants the short name: drop " (uid N)" when a name was found. */
		if (strchr(user, '('))
			*strchr(user, ' ') = '\0';
		by_str(j, by, sizeof(by));
		table_add(&t, tid, pid, j->task.comm, user,
		          j->task.cgroup[0] ? j->task.cgroup : "-", cpu, core, by);
	}
	table_print(&t, f);
	table_free(&t);
}

int cmd_tasks(const struct cli_opts *opts, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {NULL, 0, NULL, 0},
	};
	_cleanup_(client_ledger_free) struct client_ledger reg = {0};
	_cleanup_(ts_ledger_free) struct ts_ledger manual = {0};
	_cleanup_(ts_topology_free) struct ts_topology topo = {0};
	_cleanup_(jitter_list_free) struct jitter_list jl = {0};
	bool have_topo;
	int c, r;

	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1)
		return cli_unknown_option(opts->err, "tasks", argv[optind - 1]);
	if (optind < argc) {
		cli_err(opts->err, "tasks takes no arguments");
		return CLI_EXIT_USAGE;
	}
	/* A failed load leaves topo empty: freeing it is a no-op. */
	have_topo = ts_topology_load(&topo) == 0;
	/* Read-only: no lock, the file is replaced atomically. */
	manual_ledger_load(opts->err, &manual);
	client_ledger_load(opts, &reg);
	/* The kernel's own jitter flag (sched) is in the JSON only. */
	r = jitter_scan(have_topo ? &topo : NULL, &manual, &reg,
	                TS_TASK_STATUS | TS_TASK_CGROUP | (opts->json ? TS_TASK_SCHED : 0), &jl);
	if (r < 0) {
		cli_err(opts->err, "cannot list tasks: %s", strerror(-r));
	} else if (opts->json) {
		json_object *root = json_object_new_object(), *arr = json_object_new_array();

		for (size_t i = 0; i < jl.n; i++)
			json_object_array_add(arr, task_json(&jl.v[i]));
		json_object_object_add(root, "tasks", arr);
		json_object_object_add(root, "daemon_running",
		                       json_object_new_boolean(reg.reachable));
		json_print_put(opts->out, root);
	} else {
		print_human(opts->out, &jl);
		if (!reg.reachable)
			cli_err(opts->err, "%s; tasks a daemon rule tagged show as \"unknown\"",
			        reg.why);
	}
	return r < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

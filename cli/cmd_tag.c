/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tag and untag: one walk, two directions, the same report. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "daemon.h"
#include "errors.h"
#include "kernel.h"
#include "output.h"
#include "tag.h"
#include "util.h"

/* A PID argument that failed before any thread was reached. */
struct pid_error {
	pid_t pid;
	int err;
};

static void usage(FILE *f, enum ts_tag_op op)
{
	fprintf(f, "Usage: turboschedctl %s [--thread] PID...\n",
	        op == TS_OP_TAG ? "tag" : "untag");
	fprintf(f, op == TS_OP_TAG
	               ? "Set util_max=0 on every thread of each process (jitter task).\n"
	               : "Restore the clamps recorded when the threads were tagged.\n");
	fprintf(f, "  -t, --thread  each PID is one thread (TID), not a whole process\n");
}

static uid_t owner_of(pid_t tgid, pid_t tid)
{
	struct ts_task t;

	return ts_task_read(tgid, tid, &t) == 0 ? t.euid : (uid_t)-1;
}

static const char *source_str(enum ts_prev_source s)
{
	switch (s) {
	case TS_PREV_STATE:
		return "manual-record";
	case TS_PREV_DAEMON:
		return "daemon-record";
	case TS_PREV_DEFAULT:
		return "default";
	case TS_PREV_NONE:
	default:
		return NULL;
	}
}

static json_object *clamp_value(uint32_t v)
{
	/* TS_UCLAMP_RESET is written as "default": the kernel picks the value. */
	return v == TS_UCLAMP_RESET ? json_object_new_string("default") : json_object_new_int64(v);
}

static void result_message(const struct ts_tag_result *r, bool have_cap, char *buf, size_t len)
{
	if (r->outcome == TS_TAG_FAILED)
		cli_clamp_error(buf, len, r->err, owner_of(r->tgid, r->tid), have_cap);
	else if (r->outcome == TS_TAG_REUSED)
		snprintf(buf, len,
		         "the thread exited and its TID was reused during the write; the "
		         "other task was reset to default clamps");
	else
		buf[0] = '\0';
}

static json_object *result_json(const struct ts_tag_result *r, bool have_cap)
{
	json_object *o = json_object_new_object(), *b = json_object_new_object();
	json_object *a = json_object_new_object();
	const char *src = source_str(r->source);
	char msg[512];

	json_object_object_add(o, "pid", json_object_new_int(r->tgid));
	json_object_object_add(o, "tid", json_object_new_int(r->tid));
	json_object_object_add(o, "comm", r->comm[0] ? json_object_new_string(r->comm) : NULL);
	json_object_object_add(o, "result", json_object_new_string(ts_tag_outcome_str(r->outcome)));
	result_message(r, have_cap, msg, sizeof(msg));
	json_object_object_add(o, "error", msg[0] ? json_object_new_string(msg) : NULL);
	if (r->outcome == TS_TAG_APPLIED || r->outcome == TS_TAG_UNCHANGED) {
		json_object_object_add(b, "util_min", json_object_new_int64(r->before.util_min));
		json_object_object_add(b, "util_max", json_object_new_int64(r->before.util_max));
		json_object_object_add(o, "before", b);
	} else {
		json_object_put(b);
	}
	if (r->outcome == TS_TAG_APPLIED) {
		if (r->min_written)
			json_object_object_add(a, "util_min", clamp_value(r->util_min));
		json_object_object_add(a, "util_max", clamp_value(r->util_max));
		json_object_object_add(o, "written", a);
	} else {
		json_object_put(a);
	}
	json_object_object_add(o, "util_min_changed", json_object_new_boolean(r->min_written));
	json_object_object_add(o, "restored_from", src ? json_object_new_string(src) : NULL);
	return o;
}

static void fmt_clamp(char *buf, size_t len, uint32_t v)
{
	if (v == TS_UCLAMP_RESET)
		snprintf(buf, len, "default");
	else
		snprintf(buf, len, "%u", (unsigned int)v);
}

static void result_human(FILE *f, enum ts_tag_op op, const struct ts_tag_result *r, bool have_cap)
{
	char msg[512], mx[16], mn[16];

	fprintf(f, "%-9s pid %d tid %d (%s)", ts_tag_outcome_str(r->outcome), (int)r->tgid,
	        (int)r->tid, r->comm[0] ? r->comm : "?");
	fmt_clamp(mx, sizeof(mx), r->util_max);
	fmt_clamp(mn, sizeof(mn), r->util_min);
	switch (r->outcome) {
	case TS_TAG_APPLIED:
		fprintf(f, ": util_max %u -> %s", (unsigned int)r->before.util_max, mx);
		if (r->min_written)
			fprintf(f, ", util_min %u -> %s%s", (unsigned int)r->before.util_min, mn,
			        op == TS_OP_TAG ? " (lowered: util_min may not exceed util_max)"
			                        : "");
		if (op == TS_OP_UNTAG)
			fprintf(f, " [%s]", source_str(r->source));
		break;
	case TS_TAG_UNCHANGED:
		fprintf(f, op == TS_OP_TAG ? ": already a jitter task" : ": not a jitter task");
		break;
	case TS_TAG_VANISHED:
		fprintf(f, ": exited during the walk");
		break;
	default:
		result_message(r, have_cap, msg, sizeof(msg));
		fprintf(f, ": %s", msg);
		break;
	}
	fputc('\n', f);
}

/* Notes about the kernel that change what a tag means, printed once before the results. */
static void kernel_notes(const struct cli_opts *o, enum ts_tag_op op)
{
	struct ts_kernel_info k;

	if (op != TS_OP_TAG)
		return;
	ts_kernel_probe(&k);
	/* Without uclamp the writes fail and say so themselves. */
	if (k.uclamp && !k.turbosched)
		fprintf(o->err,
		        "turboschedctl: note: this kernel has no TurboSched "
		        "(no " TS_SYSCTL_PACK "): tags apply, but jitter tasks are not packed\n");
	else if (k.uclamp && k.pack_enabled == 0)
		fprintf(o->err,
		        "turboschedctl: note: packing is switched off (%s is 0): tags apply, "
		        "packing resumes when it is set to 1\n",
		        TS_SYSCTL_PACK);
	ts_kernel_info_free(&k);
}

static void state_open(const struct cli_opts *o, enum ts_tag_op op, struct ts_tag_state *st,
                       bool *have)
{
	char path[4096];
	int r = ts_state_load(st, true);

	ts_path(path, sizeof(path), TS_STATE_FILE);
	*have = r == 0;
	if (r < 0) {
		fprintf(o->err, "turboschedctl: warning: cannot use the state file %s (%s): %s\n",
		        path, strerror(-r),
		        op == TS_OP_TAG ? "previous clamps are not recorded, untag will restore "
		                          "the defaults"
		                        : "recorded clamps are unknown, defaults are restored");
		return;
	}
	if (st->bad_lines)
		fprintf(o->err,
		        "turboschedctl: warning: %s: %zu corrupt line(s) skipped; those threads "
		        "untag to the default clamps\n",
		        path, st->bad_lines);
	ts_state_prune(st);
}

static int parse_args(const struct cli_opts *o, enum ts_tag_op op, int argc, char **argv,
                      bool *thread, pid_t **pids, int *npids)
{
	static const struct option longopts[] = {
	    {"thread", no_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	*thread = false;
	while ((c = getopt_long(argc, argv, "+th", longopts, NULL)) != -1) {
		if (c == 't') {
			*thread = true;
		} else if (c == 'h') {
			usage(o->out, op);
			return -1;
		} else {
			fprintf(o->err, "turboschedctl: unknown option '%s'\n", argv[optind - 1]);
			usage(o->err, op);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(o->err, "turboschedctl: %s needs at least one PID\n", argv[0]);
		usage(o->err, op);
		return CLI_EXIT_USAGE;
	}
	*npids = argc - optind;
	*pids = calloc((size_t)*npids, sizeof(**pids));
	if (!*pids)
		return CLI_EXIT_FAILURE;
	for (int i = 0; i < *npids; i++) {
		if (ts_parse_pid(argv[optind + i], &(*pids)[i]) < 0) {
			fprintf(o->err, "turboschedctl: '%s' is not a PID (a positive number)\n",
			        argv[optind + i]);
			free(*pids);
			return CLI_EXIT_USAGE;
		}
	}
	return 0;
}

static int run(const struct cli_opts *o, enum ts_tag_op op, int argc, char **argv)
{
	struct ts_tag_report rep = {0};
	struct daemon_registry reg = {0};
	struct ts_tag_state st;
	struct ts_tag_opts topts = {0};
	struct pid_error *perr;
	size_t nperr = 0, failed;
	bool thread, have_state, have_cap = cli_have_cap_sys_nice(), said_no_uclamp = false;
	pid_t *pids;
	int npids, r, rc;

	r = parse_args(o, op, argc, argv, &thread, &pids, &npids);
	if (r)
		return r < 0 ? CLI_EXIT_OK : r;
	perr = calloc((size_t)npids, sizeof(*perr));
	if (!perr) {
		free(pids);
		return CLI_EXIT_FAILURE;
	}
	kernel_notes(o, op);
	state_open(o, op, &st, &have_state);
	topts.thread_only = thread;
	topts.state = have_state ? &st : NULL;
	if (op == TS_OP_UNTAG) {
		/* The daemon recorded what its own tags replaced. */
		daemon_registry_load(o, &reg);
		topts.daemon_lookup = reg.reachable ? daemon_registry_lookup : NULL;
		topts.daemon_ctx = &reg;
	}

	for (int i = 0; i < npids; i++) {
		size_t first = rep.n;

		r = ts_tag_pid(op, pids[i], &topts, &rep);
		if (r < 0) {
			perr[nperr].pid = pids[i];
			perr[nperr++].err = -r;
			continue;
		}
		/* Without uclamp every thread fails alike: say why once, report every PID. */
		if (!said_no_uclamp && rep.n > first && rep.v[first].outcome == TS_TAG_FAILED &&
		    rep.v[first].err == EOPNOTSUPP) {
			fprintf(o->err, "turboschedctl: %s\n", ts_sched_strerror(EOPNOTSUPP));
			said_no_uclamp = true;
		}
	}
	if (have_state) {
		r = ts_state_save(&st);
		if (r < 0)
			fprintf(o->err, "turboschedctl: warning: cannot write the state file: %s\n",
			        strerror(-r));
	}

	if (o->json) {
		json_object *root = json_object_new_object(), *arr = json_object_new_array();
		json_object *errs = json_object_new_array();

		for (size_t i = 0; i < rep.n; i++)
			json_object_array_add(arr, result_json(&rep.v[i], have_cap));
		for (size_t i = 0; i < nperr; i++) {
			json_object *e = json_object_new_object();

			json_object_object_add(e, "pid", json_object_new_int(perr[i].pid));
			json_object_object_add(
			    e, "error", json_object_new_string(ts_sched_strerror(perr[i].err)));
			json_object_array_add(errs, e);
		}
		json_object_object_add(root, "threads", arr);
		json_object_object_add(root, "pid_errors", errs);
		json_object_object_add(
		    root, "applied",
		    json_object_new_int64((int64_t)ts_tag_report_count(&rep, TS_TAG_APPLIED)));
		json_object_object_add(
		    root, "failed",
		    json_object_new_int64(
		        (int64_t)(ts_tag_report_count(&rep, TS_TAG_FAILED) + nperr)));
		json_print_put(o->out, root);
	} else {
		for (size_t i = 0; i < rep.n; i++)
			result_human(o->out, op, &rep.v[i], have_cap);
		for (size_t i = 0; i < nperr; i++)
			fprintf(o->err, "turboschedctl: pid %d: %s\n", (int)perr[i].pid,
			        ts_sched_strerror(perr[i].err));
	}
	failed = ts_tag_report_count(&rep, TS_TAG_FAILED) + nperr;
	if (failed && !o->json)
		fprintf(o->err, "turboschedctl: %zu of %zu failed; the lines above say which\n",
		        failed, rep.n + nperr);
	rc = failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;

	daemon_registry_free(&reg);
	if (have_state)
		ts_state_close(&st);
	ts_tag_report_free(&rep);
	free(perr);
	free(pids);
	return rc;
}

int cmd_tag(const struct cli_opts *opts, int argc, char **argv)
{
	return run(opts, TS_OP_TAG, argc, argv);
}

int cmd_untag(const struct cli_opts *opts, int argc, char **argv)
{
	return run(opts, TS_OP_UNTAG, argc, argv);
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tag and untag: one walk, two directions, the same report. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "client.h"
#include "ledger.h"
#include "macro.h"
#include "scan.h"
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

static uid_t owner_of(pid_t tgid, pid_t tid)
{
	struct ts_task t;

	return ts_task_read(tgid, tid, &t) == 0 ? t.euid : (uid_t)-1;
}

/* Where untag took the clamp it restored from: a result's note. */
enum restored_from {
	FROM_NONE,    /* tag, or nothing restored */
	FROM_MANUAL,  /* turboschedctl's ledger */
	FROM_DAEMON,  /* the daemon's ledger */
	FROM_DEFAULT, /* no record: reset to the kernel defaults */
};

static const char *source_str(int s)
{
	switch (s) {
	case FROM_MANUAL:
		return "manual-record";
	case FROM_DAEMON:
		return "daemon-record";
	case FROM_DEFAULT:
		return "default";
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
	const char *src = source_str(r->note);
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
			fprintf(f, " [%s]", source_str(r->note));
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
		cli_err(o->err, "note: this kernel has no TurboSched (no " TS_SYSCTL_PACK
		                "): tags apply, but jitter tasks are not packed");
	else if (k.uclamp && k.pack_enabled == 0)
		cli_err(o->err,
		        "note: packing is switched off (%s is 0): tags apply, packing resumes "
		        "when it is set to 1",
		        TS_SYSCTL_PACK);
	ts_kernel_info_free(&k);
}

/* turboschedctl's ledger, locked for read-modify-write; -errno when it cannot be used. */
static int ledger_open(const struct cli_opts *o, enum ts_tag_op op, struct ts_ledger *l)
{
	char lock[4096];
	int fd = ts_path(lock, sizeof(lock), "%s", TS_LEDGER_MANUAL_LOCK);

	if (fd == 0)
		fd = ts_ledger_lock(lock);
	if (fd < 0 || manual_ledger_load(o->err, l) < 0) {
		if (fd < 0)
			cli_err(o->err, "warning: cannot lock %s (%s): %s", lock, strerror(-fd),
			        op == TS_OP_TAG
			            ? "previous clamps are not recorded, untag will "
			              "restore the defaults"
			            : "recorded clamps are unknown, defaults are restored");
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	ts_ledger_prune(l);
	return fd;
}

/*
 * Before the write: what untag restores. The clamp recorded by whoever tagged: by hand (this
 * ledger), else by a daemon rule (the daemon's), else the kernel defaults.
 */
static void choose_restore(struct ts_tag_result *res, const struct ts_ledger *manual,
                           const struct client_ledger *daemon)
{
	const struct ts_ledger_entry *m = ts_ledger_get(manual, res->tid, res->starttime);
	const struct ts_ledger_entry *d = ts_ledger_get(&daemon->l, res->tid, res->starttime);

	if (m && m->owner == TS_OWNER_MANUAL)
		d = m;
	res->restore_given = d != NULL;
	if (d)
		res->restore = d->prev;
	res->note = !d ? FROM_DEFAULT : d == m ? FROM_MANUAL : FROM_DAEMON;
}

/*
 * After the write: who owns the task now. A tag makes it the admin's (also one a rule had made:
 * the clamp to restore is then the rule's record); an untag too: rules leave a task untagged by
 * hand alone until it exits, and the daemon, which reads this ledger, drops its own entry.
 */
static void record(struct ts_ledger *manual, const struct client_ledger *daemon, enum ts_tag_op op,
                   const struct ts_tag_result *res)
{
	const struct ts_ledger_entry *d = ts_ledger_get(&daemon->l, res->tid, res->starttime);
	struct ts_ledger_entry e = {.tid = res->tid,
	                            .tgid = res->tgid,
	                            .starttime = res->starttime,
	                            .since = time(NULL),
	                            .owner = op == TS_OP_TAG ? TS_OWNER_MANUAL : TS_OWNER_UNTAGGED};

	if (op == TS_OP_TAG && res->outcome == TS_TAG_APPLIED)
		e.prev =
		    (struct ts_prev){res->before.util_min, res->before.util_max, res->min_written};
	else if (op == TS_OP_TAG && res->outcome == TS_TAG_UNCHANGED && d)
		e.prev = d->prev;
	else if (op == TS_OP_TAG || res->outcome != TS_TAG_APPLIED)
		return; /* someone else's tag stays theirs; nothing changed hands */
	if (!ts_ledger_put(manual, &e))
		cli_err(stderr, "out of memory: task %d not recorded", (int)e.tid);
}

/* Writes turboschedctl's ledger back when it changed (the caller holds its lock). */
static void ledger_save(const struct cli_opts *o, struct ts_ledger *manual)
{
	char path[4096];
	int r;

	if (!manual->dirty)
		return;
	r = ts_path(path, sizeof(path), "%s", TS_LEDGER_MANUAL);
	if (r == 0)
		r = ts_ledger_save(manual, path);
	if (r < 0)
		cli_err(o->err, "warning: cannot write %s: %s", path, strerror(-r));
}

/* One PID: the walk, a restore chosen and an owner recorded for every thread. */
static int tag_one(enum ts_tag_op op, pid_t pid, bool thread, struct ts_ledger *manual,
                   const struct client_ledger *daemon, struct ts_tag_report *rep)
{
	struct ts_tag_walk w;
	int r = ts_tag_walk_start(&w, pid, thread, rep);

	while (r == 0 && (r = ts_tag_walk_next(&w, rep)) > 0) {
		for (size_t i = rep->n - (size_t)r; i < rep->n; i++) {
			struct ts_tag_result *res = &rep->v[i];

			if (res->outcome != TS_TAG_PENDING)
				continue;
			if (op == TS_OP_UNTAG)
				choose_restore(res, manual, daemon);
			ts_tag_apply(op, res);
			record(manual, daemon, op, res);
		}
		r = 0;
	}
	return r;
}

static int parse_args(const struct cli_opts *o, enum ts_tag_op op, int argc, char **argv,
                      bool *thread, pid_t **pids, int *npids)
{
	static const struct option longopts[] = {
	    {"thread", no_argument, NULL, 't'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	*thread = false;
	while ((c = getopt_long(argc, argv, "+t", longopts, NULL)) != -1) {
		if (c != 't')
			return cli_unknown_option(o->err, argv[0], argv[optind - 1]);
		*thread = true;
	}
	if (optind >= argc) {
		cli_err(o->err, "%s needs at least one PID; see turboschedctl %s --help", argv[0],
		        argv[0]);
		return CLI_EXIT_USAGE;
	}
	*npids = argc - optind;
	*pids = calloc((size_t)*npids, sizeof(**pids));
	if (!*pids)
		return CLI_EXIT_FAILURE;
	for (int i = 0; i < *npids; i++) {
		if (ts_parse_pid(argv[optind + i], &(*pids)[i]) < 0) {
			cli_err(o->err, "'%s' is not a PID (a positive number)%s", argv[optind + i],
			        op == TS_OP_TAG ? "; to start a command as a jitter task: "
			                          "turboschedctl run COMMAND [ARGS...]"
			                        : "");
			free(*pids);
			*pids = NULL;
			return CLI_EXIT_USAGE;
		}
	}
	return 0;
}

static void print_json(FILE *f, const struct ts_tag_report *rep, const struct pid_error *perr,
                       size_t nperr, bool have_cap)
{
	json_object *root = json_object_new_object(), *arr = json_object_new_array();
	json_object *errs = json_object_new_array();

	for (size_t i = 0; i < rep->n; i++)
		json_object_array_add(arr, result_json(&rep->v[i], have_cap));
	for (size_t i = 0; i < nperr; i++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "pid", json_object_new_int(perr[i].pid));
		json_object_object_add(e, "error",
		                       json_object_new_string(ts_sched_strerror(perr[i].err)));
		json_object_array_add(errs, e);
	}
	json_object_object_add(root, "threads", arr);
	json_object_object_add(root, "pid_errors", errs);
	json_object_object_add(
	    root, "applied",
	    json_object_new_int64((int64_t)ts_tag_report_count(rep, TS_TAG_APPLIED)));
	json_object_object_add(
	    root, "failed",
	    json_object_new_int64((int64_t)(ts_tag_report_count(rep, TS_TAG_FAILED) + nperr)));
	json_print_put(f, root);
}

static int run(const struct cli_opts *o, enum ts_tag_op op, int argc, char **argv)
{
	_cleanup_(ts_tag_report_free) struct ts_tag_report rep = {0};
	_cleanup_(client_ledger_free) struct client_ledger daemon = {0};
	_cleanup_(ts_ledger_free) struct ts_ledger manual = {0};
	_cleanup_free_ struct pid_error *perr = NULL;
	_cleanup_free_ pid_t *pids = NULL;
	size_t nperr = 0, failed;
	bool thread, have_cap = cli_have_cap_sys_nice(), said_no_uclamp = false;
	int npids = 0, r;

	r = parse_args(o, op, argc, argv, &thread, &pids, &npids);
	if (r)
		return r < 0 ? CLI_EXIT_OK : r;
	perr = calloc((size_t)npids, sizeof(*perr));
	if (!perr)
		return CLI_EXIT_FAILURE;
	kernel_notes(o, op);
	_cleanup_close_ int lock = ledger_open(o, op, &manual);
	/* The daemon recorded what its own tags replaced. */
	if (op == TS_OP_UNTAG)
		client_ledger_load(o, &daemon);

	for (int i = 0; i < npids; i++) {
		size_t first = rep.n;

		r = tag_one(op, pids[i], thread, &manual, &daemon, &rep);
		if (r < 0) {
			perr[nperr].pid = pids[i];
			perr[nperr++].err = -r;
			continue;
		}
		/* Without uclamp every thread fails alike: say why once, report every PID. */
		if (!said_no_uclamp && rep.n > first && rep.v[first].outcome == TS_TAG_FAILED &&
		    rep.v[first].err == EOPNOTSUPP) {
			cli_err(o->err, "%s", ts_sched_strerror(EOPNOTSUPP));
			said_no_uclamp = true;
		}
	}
	if (lock >= 0)
		ledger_save(o, &manual);

	if (o->json) {
		print_json(o->out, &rep, perr, nperr, have_cap);
	} else {
		for (size_t i = 0; i < rep.n; i++)
			result_human(o->out, op, &rep.v[i], have_cap);
		for (size_t i = 0; i < nperr; i++)
			cli_err(o->err, "pid %d: %s", (int)perr[i].pid,
			        ts_sched_strerror(perr[i].err));
	}
	failed = ts_tag_report_count(&rep, TS_TAG_FAILED) + nperr;
	if (failed && !o->json)
		cli_err(o->err, "%zu of %zu failed; the lines above say which", failed,
		        rep.n + nperr);
	return failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

int cmd_tag(const struct cli_opts *opts, int argc, char **argv)
{
	return run(opts, TS_OP_TAG, argc, argv);
}

int cmd_untag(const struct cli_opts *opts, int argc, char **argv)
{
	return run(opts, TS_OP_UNTAG, argc, argv);
}

/*
 * run: tags this very process (one thread), records it as a manual tag, then execs the command, as
 * uclampset, chrt and taskset do: the command never runs untagged, and its children inherit the
 * clamp.
 */
int cmd_run(const struct cli_opts *opts, int argc, char **argv)
{
	_cleanup_(ts_tag_report_free) struct ts_tag_report rep = {0};
	_cleanup_(ts_ledger_free) struct ts_ledger manual = {0};
	struct client_ledger daemon = {0};
	char msg[512];
	int c, r, e;

	while ((c = getopt(argc, argv, "+")) != -1)
		return cli_unknown_option(opts->err, "run", argv[optind - 1]);
	if (optind >= argc) {
		cli_err(opts->err, "run needs a command to start; see turboschedctl run --help");
		return CLI_EXIT_USAGE;
	}
	kernel_notes(opts, TS_OP_TAG);
	int lock = ledger_open(opts, TS_OP_TAG, &manual);

	r = tag_one(TS_OP_TAG, getpid(), true, &manual, &daemon, &rep);
	if (r == 0 && (rep.n != 1 || (rep.v[0].outcome != TS_TAG_APPLIED &&
	                              rep.v[0].outcome != TS_TAG_UNCHANGED)))
		r = rep.n ? -rep.v[0].err : -ESRCH;
	if (lock >= 0) {
		if (r == 0)
			ledger_save(opts, &manual);
		close(lock);
	}
	if (r < 0) {
		cli_clamp_error(msg, sizeof(msg), r, getuid(), cli_have_cap_sys_nice());
		cli_err(opts->err, "cannot tag '%s' before starting it: %s", argv[optind], msg);
		return CLI_EXIT_FAILURE;
	}
	fflush(opts->out);
	fflush(opts->err);
	execvp(argv[optind], argv + optind);
	e = errno;
	cli_err(opts->err, "cannot run '%s': %s", argv[optind], strerror(e));
	/* The shell's codes: 127 not found, 126 found but not runnable. */
	return e == ENOENT ? 127 : 126;
}

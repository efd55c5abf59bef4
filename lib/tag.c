/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

void ts_tag_report_free(struct ts_tag_report *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

size_t ts_tag_report_count(const struct ts_tag_report *r, enum ts_tag_outcome o)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->v[i].outcome == o;
	return n;
}

static struct ts_tag_result *report_add(struct ts_tag_report *r)
{
	if (!ts_grow(&r->v, &r->cap, r->n))
		return NULL;
	return &r->v[r->n++];
}

const char *ts_tag_outcome_str(enum ts_tag_outcome o)
{
	switch (o) {
	case TS_TAG_APPLIED:
		return "applied";
	case TS_TAG_UNCHANGED:
		return "unchanged";
	case TS_TAG_VANISHED:
		return "exited";
	case TS_TAG_REUSED:
		return "pid-reused";
	case TS_TAG_PENDING:
		return "pending";
	case TS_TAG_FAILED:
	default:
		return "failed";
	}
}

/*
 * Is (tid, starttime) still the same task? 1 yes, 0 gone or replaced, -errno on a read error.
 * Looked up as /proc/TID (tgid 0), which finds whichever task holds the TID now, even a stranger in
 * another process: /proc/TGID/task/TID would just say "gone" and hide a reuse.
 */
static int same_task(pid_t tid, unsigned long long starttime)
{
	unsigned long long now;
	int r = ts_task_starttime(0, tid, &now);

	if (r == -ESRCH)
		return 0;
	if (r < 0)
		return r;
	return now == starttime;
}

/* Decides what untag writes: the clamp handed over, or the kernel defaults. */
static void untag_target(struct ts_tag_result *res)
{
	if (!res->restore_given) {
		/* Reset both: util_min may have been lowered when tagging (RT tasks). */
		res->util_min = TS_UCLAMP_RESET;
		res->util_max = TS_UCLAMP_RESET;
		res->min_written = true;
		return;
	}
	/* A record of util_max 0 would re-tag: the only sensible "previous" then is the default. */
	res->util_max =
	    res->restore.util_max == TS_JITTER_UTIL_MAX ? TS_UCLAMP_RESET : res->restore.util_max;
	res->min_written = res->restore.min_lowered;
	res->util_min = res->restore.util_min;
}

enum ts_tag_outcome ts_tag_apply(enum ts_tag_op op, struct ts_tag_result *res)
{
	pid_t tid = res->tid;
	unsigned long long starttime = res->starttime;
	int r;

	if (res->outcome != TS_TAG_PENDING)
		return res->outcome;
	res->err = 0;
	res->min_written = false;
	r = ts_clamp_get(tid, &res->before);
	if (r == -ESRCH)
		return res->outcome = TS_TAG_VANISHED;
	if (r < 0)
		goto fail;
	/* The clamps just read must belong to our task, not to a successor with the same TID. */
	r = same_task(tid, starttime);
	if (r == 0)
		return res->outcome = TS_TAG_VANISHED;
	if (r < 0)
		goto fail;

	if (op == TS_OP_TAG) {
		if (ts_clamp_is_jitter(&res->before))
			return res->outcome = TS_TAG_UNCHANGED;
		res->util_max = TS_JITTER_UTIL_MAX;
		res->util_min = 0;
		/* util_min > util_max is refused (EINVAL): RT tasks default to util_min 1024. */
		res->min_written = res->before.util_min > 0;
	} else {
		if (!ts_clamp_is_jitter(&res->before))
			return res->outcome = TS_TAG_UNCHANGED;
		untag_target(res);
	}

	r = ts_clamp_set(tid, res->min_written, res->util_min, res->util_max);
	if (r == -ESRCH)
		return res->outcome = TS_TAG_VANISHED;
	if (r < 0)
		goto fail;

	r = same_task(tid, starttime);
	if (r == 0) {
		unsigned long long now;

		if (ts_task_starttime(0, tid, &now) == -ESRCH)
			return res->outcome = TS_TAG_VANISHED;
		/*
		 * The TID now belongs to another task, which our write may have hit. Its previous
		 * clamp is unknown, so the safest undo of a tag is the default; an untag is left as
		 * is.
		 */
		if (op == TS_OP_TAG)
			ts_clamp_set(tid, res->min_written, TS_UCLAMP_RESET, TS_UCLAMP_RESET);
		return res->outcome = TS_TAG_REUSED;
	}

	return res->outcome = TS_TAG_APPLIED;
fail:
	res->err = -r;
	return res->outcome = TS_TAG_FAILED;
}

enum ts_tag_outcome ts_tag_thread(enum ts_tag_op op, pid_t tgid, pid_t tid,
                                  unsigned long long starttime, const struct ts_prev *restore,
                                  struct ts_tag_result *res)
{
	res->tid = tid;
	res->tgid = tgid;
	res->starttime = starttime;
	res->outcome = TS_TAG_PENDING;
	res->restore_given = restore != NULL;
	if (restore)
		res->restore = *restore;
	return ts_tag_apply(op, res);
}

static bool seen(const struct ts_tag_report *rep, size_t from, pid_t tid)
{
	for (size_t i = from; i < rep->n; i++)
		if (rep->v[i].tid == tid)
			return true;
	return false;
}

/* Appends the result for one listed thread, read but not applied. */
static int list_one(pid_t tgid, pid_t tid, struct ts_tag_report *rep)
{
	struct ts_tag_result *res = report_add(rep);
	struct ts_task t;
	int r;

	if (!res)
		return -ENOMEM;
	memset(res, 0, sizeof(*res));
	res->tid = tid;
	res->tgid = tgid;
	r = ts_task_read(tgid, tid, &t);
	if (r == -ESRCH) {
		res->outcome = TS_TAG_VANISHED; /* listed, then exited before we got to it */
		return 0;
	}
	if (r < 0) {
		res->outcome = TS_TAG_FAILED;
		res->err = -r;
		return 0;
	}
	res->starttime = t.starttime;
	res->outcome = TS_TAG_PENDING;
	memcpy(res->comm, t.comm, sizeof(res->comm));
	return 0;
}

int ts_tag_walk_start(struct ts_tag_walk *w, pid_t pid, bool thread_only,
                      const struct ts_tag_report *rep)
{
	struct ts_task leader;

	/* tgid 0: the argument may be any thread; its status says which process it belongs to. */
	int r = ts_task_read(0, pid, &leader);
	if (r < 0)
		return r;
	*w = (struct ts_tag_walk){
	    .pid = pid, .tgid = leader.tgid, .thread_only = thread_only, .first = rep->n};
	return 0;
}

int ts_tag_walk_next(struct ts_tag_walk *w, struct ts_tag_report *rep)
{
	size_t before = rep->n;
	int r;

	if (w->pass >= (w->thread_only ? 1 : TS_TAG_PASSES))
		return 0;
	w->pass++;
	if (w->thread_only) {
		r = list_one(w->tgid, w->pid, rep);
		return r < 0 ? r : (int)(rep->n - before);
	}
	struct ts_pidlist threads = {0};
	r = ts_list_threads(w->tgid, &threads);
	if (r == -ESRCH && rep->n > w->first)
		r = 0; /* the whole process exited during the walk */
	for (size_t i = 0; r == 0 && i < threads.n; i++)
		if (!seen(rep, w->first, threads.v[i]))
			r = list_one(w->tgid, threads.v[i], rep);
	ts_pidlist_free(&threads);
	return r < 0 ? r : (int)(rep->n - before);
}

int ts_tag_pid(enum ts_tag_op op, pid_t pid, bool thread_only, struct ts_tag_report *rep)
{
	struct ts_tag_walk w;
	int r = ts_tag_walk_start(&w, pid, thread_only, rep);

	while (r == 0 && (r = ts_tag_walk_next(&w, rep)) > 0) {
		for (size_t i = rep->n - (size_t)r; i < rep->n; i++)
			ts_tag_apply(op, &rep->v[i]);
		r = 0;
	}
	return r;
}

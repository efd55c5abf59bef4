/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* New threads may appear while we walk; re-list this many times at most to catch them. */
#define MAX_PASSES 4

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
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct ts_tag_result *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		r->v = v;
		r->cap = cap;
	}
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

/* Decides what untag writes: the recorded previous clamp, or the kernel defaults. */
static void untag_target(pid_t tid, unsigned long long starttime, const struct ts_tag_opts *o,
                         struct ts_tag_result *res)
{
	struct ts_state_entry *e = o->state ? ts_state_find(o->state, tid, starttime) : NULL;
	struct ts_prev prev;

	if (e) {
		prev.util_min = e->util_min;
		prev.util_max = e->util_max;
		prev.min_lowered = e->min_lowered;
		res->source = TS_PREV_STATE;
	} else if (o->daemon_lookup && o->daemon_lookup(o->daemon_ctx, tid, starttime, &prev)) {
		res->source = TS_PREV_DAEMON;
	} else {
		/* Reset both: util_min may have been lowered when tagging (RT tasks). */
		res->source = TS_PREV_DEFAULT;
		res->util_min = TS_UCLAMP_RESET;
		res->util_max = TS_UCLAMP_RESET;
		res->min_written = true;
		return;
	}
	/* A record of util_max 0 would re-tag: the only sensible "previous" then is the default. */
	res->util_max = prev.util_max == TS_JITTER_UTIL_MAX ? TS_UCLAMP_RESET : prev.util_max;
	res->min_written = prev.min_lowered;
	res->util_min = prev.util_min;
}

enum ts_tag_outcome ts_tag_thread(enum ts_tag_op op, pid_t tgid, pid_t tid,
                                  unsigned long long starttime, const struct ts_tag_opts *o,
                                  struct ts_tag_result *res)
{
	int r;

	res->tid = tid;
	res->tgid = tgid;
	res->starttime = starttime;
	res->err = 0;
	res->min_written = false;
	res->source = TS_PREV_NONE;

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
		if (!ts_clamp_is_jitter(&res->before)) {
			if (o->state)
				ts_state_remove(o->state, tid, starttime); /* stale record */
			return res->outcome = TS_TAG_UNCHANGED;
		}
		untag_target(tid, starttime, o, res);
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

	if (o->state) {
		if (op == TS_OP_TAG) {
			struct ts_state_entry e = {
			    .tid = tid,
			    .starttime = starttime,
			    .util_min = res->before.util_min,
			    .util_max = res->before.util_max,
			    .min_lowered = res->min_written,
			};

			if (ts_state_put(o->state, &e) < 0) {
				res->err = ENOMEM;
				return res->outcome =
				           TS_TAG_APPLIED; /* applied, but not recorded */
			}
		} else {
			ts_state_remove(o->state, tid, starttime);
		}
	}
	return res->outcome = TS_TAG_APPLIED;
fail:
	res->err = -r;
	return res->outcome = TS_TAG_FAILED;
}

static bool seen(const struct ts_tag_report *rep, size_t from, pid_t tid)
{
	for (size_t i = from; i < rep->n; i++)
		if (rep->v[i].tid == tid)
			return true;
	return false;
}

static int do_one(enum ts_tag_op op, pid_t tgid, pid_t tid, const struct ts_tag_opts *o,
                  struct ts_tag_report *rep)
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
	ts_tag_thread(op, tgid, tid, t.starttime, o, res);
	memcpy(res->comm, t.comm, sizeof(res->comm));
	return 0;
}

int ts_tag_pid(enum ts_tag_op op, pid_t pid, const struct ts_tag_opts *o, struct ts_tag_report *rep)
{
	struct ts_pidlist threads = {0};
	struct ts_task leader;
	size_t first = rep->n;
	int r;

	/* tgid 0: the argument may be any thread; its status says which process it belongs to. */
	r = ts_task_read(0, pid, &leader);
	if (r < 0)
		return r;
	if (o->thread_only)
		return do_one(op, leader.tgid, pid, o, rep);

	for (int pass = 0; pass < MAX_PASSES; pass++) {
		size_t before = rep->n;

		r = ts_list_threads(leader.tgid, &threads);
		if (r == -ESRCH && rep->n > first)
			break; /* the whole process exited during the walk */
		if (r < 0)
			goto out;
		for (size_t i = 0; i < threads.n; i++) {
			if (seen(rep, first, threads.v[i]))
				continue;
			r = do_one(op, leader.tgid, threads.v[i], o, rep);
			if (r < 0)
				goto out;
		}
		if (rep->n == before)
			break; /* no thread appeared since the last listing */
	}
	r = 0;
out:
	ts_pidlist_free(&threads);
	return r;
}

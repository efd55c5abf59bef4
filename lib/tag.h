/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tagging (util_max = 0) and untagging one thread or every thread of a process, with what the
 * caller hands over: untag writes the clamp the caller gives (from its ledger), else the kernel
 * defaults. This module keeps no records and calls nothing back.
 *
 * Each thread is identified by (tid, starttime) read when the walk lists it; the start time is read
 * again after the write, so a TID reused by a stranger in between is detected and reverted rather
 * than silently tagged. A thread that exits during the walk is normal (TS_TAG_VANISHED), not an
 * error. Every thread gets one result so callers can list what was changed and what failed.
 */
#ifndef TS_TAG_H
#define TS_TAG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sched_attr.h"
#include "task.h"

enum ts_tag_op {
	TS_OP_TAG,
	TS_OP_UNTAG,
};

enum ts_tag_outcome {
	TS_TAG_APPLIED,   /* the clamp was written */
	TS_TAG_UNCHANGED, /* already in the requested state */
	TS_TAG_VANISHED,  /* exited during the walk: normal */
	TS_TAG_REUSED, /* TID taken over by another task during the write; the write was reverted */
	TS_TAG_FAILED, /* err says why */
	TS_TAG_PENDING, /* listed by a walk, not applied yet */
};

/* The clamp to restore on untag, as recorded by whoever tagged. */
struct ts_prev {
	uint32_t util_min;
	uint32_t util_max;
	bool min_lowered; /* the tag lowered util_min, so restore it too */
};

struct ts_tag_result {
	pid_t tid;
	pid_t tgid;
	unsigned long long starttime;
	char comm[TS_COMM_LEN];
	enum ts_tag_outcome outcome;
	int err;                /* positive errno for TS_TAG_FAILED */
	struct ts_clamp before; /* clamps read before the write */
	uint32_t util_min;      /* what was written (TS_UCLAMP_RESET = default) */
	uint32_t util_max;
	bool min_written; /* util_min was written too (lowered for tag, restored for untag) */
	/* Untag: the caller's clamp to restore (restore_given), else the kernel defaults. */
	bool restore_given;
	struct ts_prev restore;
	int note; /* the caller's own: lib never reads or writes it */
};

struct ts_tag_report {
	struct ts_tag_result *v;
	size_t n, cap;
};
void ts_tag_report_free(struct ts_tag_report *r);
/* Counts results with the given outcome. */
size_t ts_tag_report_count(const struct ts_tag_report *r, enum ts_tag_outcome o);

/*
 * A walk over the threads of a process (or one thread): each step lists the threads not met yet
 * and appends one TS_TAG_PENDING result for each (or TS_TAG_VANISHED / TS_TAG_FAILED when it could
 * not be read), which the caller then hands to ts_tag_apply(). Threads created meanwhile are met
 * by the next step; a walk ends after TS_TAG_PASSES listings.
 */
#define TS_TAG_PASSES 4
struct ts_tag_walk {
	pid_t pid, tgid;
	bool thread_only;
	size_t first; /* this walk's first result in the report */
	int pass;
};
/* Starts a walk over pid. 0, -ESRCH when there is no such task, or another -errno. */
int ts_tag_walk_start(struct ts_tag_walk *w, pid_t pid, bool thread_only,
                      const struct ts_tag_report *rep);
/* The next step: how many results were appended (0: the walk is done), or -errno. */
int ts_tag_walk_next(struct ts_tag_walk *w, struct ts_tag_report *rep);

/* Applies op to a TS_TAG_PENDING result (others are left as they are). Returns res->outcome. */
enum ts_tag_outcome ts_tag_apply(enum ts_tag_op op, struct ts_tag_result *res);

/*
 * A whole walk, applying op to every thread; untag restores the kernel defaults. Returns 0 when
 * the walk ran (threads may still have failed: see rep), -ESRCH when pid does not exist, or
 * another -errno when the threads cannot be listed.
 */
int ts_tag_pid(enum ts_tag_op op, pid_t pid, bool thread_only, struct ts_tag_report *rep);

/* Tags or untags one known thread (identity tid + starttime); restore as in ts_tag_result. */
enum ts_tag_outcome ts_tag_thread(enum ts_tag_op op, pid_t tgid, pid_t tid,
                                  unsigned long long starttime, const struct ts_prev *restore,
                                  struct ts_tag_result *res);

const char *ts_tag_outcome_str(enum ts_tag_outcome o);

#endif

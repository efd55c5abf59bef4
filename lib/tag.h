/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tagging (util_max = 0) and untagging one thread or every thread of a process.
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
#include "tag_state.h"

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
};

/* Where untag took the clamp it restored from. */
enum ts_prev_source {
	TS_PREV_NONE,    /* tag, or nothing restored */
	TS_PREV_STATE,   /* the manual-tag state file */
	TS_PREV_DAEMON,  /* the daemon's registry */
	TS_PREV_DEFAULT, /* no record: reset to the kernel defaults */
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
	enum ts_prev_source source;
};

struct ts_tag_report {
	struct ts_tag_result *v;
	size_t n, cap;
};
void ts_tag_report_free(struct ts_tag_report *r);
/* Counts results with the given outcome. */
size_t ts_tag_report_count(const struct ts_tag_report *r, enum ts_tag_outcome o);

/* The clamp to restore on untag, as recorded by whoever tagged. */
struct ts_prev {
	uint32_t util_min;
	uint32_t util_max;
	bool min_lowered; /* the tag lowered util_min, so restore it too */
};
/* Optional lookup into the daemon's registry; returns true and fills *out when it has a record. */
typedef bool (*ts_prev_lookup_fn)(void *ctx, pid_t tid, unsigned long long starttime,
                                  struct ts_prev *out);

struct ts_tag_opts {
	bool thread_only; /* pid is a TID: only that thread */
	struct ts_tag_state
	    *state; /* manual-tag records, updated in memory; NULL: keep no records */
	ts_prev_lookup_fn daemon_lookup;
	void *daemon_ctx;
};

/*
 * Tags or untags pid (all its threads, or the one thread). Appends one result per thread to rep.
 * Returns 0 when the walk ran (individual threads may still have failed: see rep), -ESRCH when pid
 * does not exist, or another -errno when the threads cannot be listed.
 */
int ts_tag_pid(enum ts_tag_op op, pid_t pid, const struct ts_tag_opts *opts,
               struct ts_tag_report *rep);

/* Tags or untags one known thread (identity tid + starttime). Fills *res; returns res->outcome. */
enum ts_tag_outcome ts_tag_thread(enum ts_tag_op op, pid_t tgid, pid_t tid,
                                  unsigned long long starttime, const struct ts_tag_opts *opts,
                                  struct ts_tag_result *res);

const char *ts_tag_outcome_str(enum ts_tag_outcome o);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Classification: reads tasks (lib/task), decides with the rules (lib/rules), tags and restores
 * (lib/tag), and keeps the daemon's ledger (lib/ledger). It reads turboschedctl's ledger too and
 * leaves every task in it alone: tagged or untagged by hand, it is the admin's. Knows nothing of
 * sockets or netlink: the loop feeds it events, so the tests drive it with a fake /proc tree and
 * fake sched ops.
 */
#ifndef TSD_ENGINE_H
#define TSD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "ledger.h"

struct engine_stats {
	unsigned long long events;   /* proc connector events handled */
	unsigned long long scans;    /* full scans (start, recheck, reload, rescan) */
	unsigned long long rescans;  /* of those, after lost events (ENOBUFS) */
	unsigned long long tagged;   /* tags applied */
	unsigned long long restored; /* our tags undone */
	unsigned long long vanished; /* tasks that exited mid-operation */
	unsigned long long failures; /* clamp writes that failed */
	unsigned long long external; /* matching tasks left alone: tagged by someone else */
	unsigned long long skipped;  /* events not acted on: made moot by a later one (batch) */
	/* Events done more than ENGINE_LATE_MS after the kernel sent them, and the worst delay. */
	unsigned long long late;
	unsigned long long lag_max_us;
};

/* Failed clamp writes by cause (errno); the last slot counts every other cause. */
#define ENGINE_CAUSES 6
struct engine_cause {
	int err;                     /* 0: slot unused */
	unsigned long long count;    /* failures of this cause */
	unsigned long long unlogged; /* of those, not logged since the last message */
	long long logged_ms;         /* ts_now_ms() of the last message, 0: never */
};
/* Repeated failures of one cause are logged at most this often (with how many were not). */
#define ENGINE_FAIL_LOG_MS 60000

/* A matching task that lives shorter than this may exit untagged once the daemon is this late. */
#define ENGINE_LATE_MS 10

struct engine {
	const struct ts_config *cfg; /* not owned */
	unsigned int parts;          /* what of a task the rules look at: ts_ruleset_parts() */
	struct ts_ledger ledger;     /* what the daemon tagged: owners rule and inherited */
	/* turboschedctl's ledger (owners manual and untagged), read-only, re-read when it changes
	 */
	struct ts_ledger manual;
	const char *manual_path; /* NULL: TS_LEDGER_MANUAL below ts_root_get() */
	struct {
		unsigned long long ino, size;
		long long mtime_ns;
		bool exists;
	} manual_id;
	struct engine_stats st;
	struct engine_cause causes[ENGINE_CAUSES];
	long long fail_log_ms; /* ENGINE_FAIL_LOG_MS; tests shorten it */
};

/* "EPERM 3, EINVAL 2": the failures by cause (empty when none), into buf. */
void engine_causes_str(const struct engine *e, char *buf, size_t len);

void engine_init(struct engine *e, const struct ts_config *cfg);
void engine_free(struct engine *e);

/* Re-evaluates one thread (tgid may be 0: looked up). */
void engine_eval(struct engine *e, pid_t tgid, pid_t tid);
/* Every thread of every process; then forgets ledger entries of tasks that are gone. */
void engine_scan(struct engine *e);

/* Proc connector events. */
void engine_on_fork(struct engine *e, pid_t ptgid, pid_t ptid, pid_t ctgid, pid_t ctid);
void engine_on_exec(struct engine *e, pid_t tgid, pid_t tid);
/* comm or uid changed. */
void engine_on_change(struct engine *e, pid_t tgid, pid_t tid);
void engine_on_exit(struct engine *e, pid_t tgid, pid_t tid);

struct pc_event;
/* Dispatches one proc connector event to the functions above. */
void engine_on_event(void *engine, const struct pc_event *ev);
/*
 * Handles a batch of events in order, but reads no task that a later event of the batch shows
 * to be gone (an exit), nor a new process at fork that execs later in the batch: a daemon that
 * falls behind in a fork storm catches up instead of reading /proc for tasks long dead.
 */
void engine_on_events(struct engine *e, const struct pc_event *ev, size_t n);

/* Switches to a new configuration and re-evaluates every task. */
void engine_set_config(struct engine *e, const struct ts_config *cfg);

/* Undoes every tag the rules made (stop). Returns how many were restored. */
size_t engine_restore_all(struct engine *e);

/*
 * Takes over the entries of a previous run's ledger (ts_ledger_load()) whose task is still the
 * same (tid + starttime) and, for tags, still has util_max 0: they are ours again, to untag and
 * restore as if this run had tagged them. Others are dropped (exited, TID reused, or re-clamped
 * by someone else, who then owns it). Call before the first engine_scan().
 */
struct adopt_stats {
	size_t adopted, dropped;
};
struct adopt_stats engine_adopt(struct engine *e, const struct ts_ledger *saved);

/*
 * Re-reads turboschedctl's ledger when the file changed, and drops the daemon's entries of tasks
 * it names: the admin tagged or untagged them by hand, so they are no longer the daemon's (the
 * clamp was already written by turboschedctl). Called before every scan, event batch and control
 * request, so counts and answers never lag behind a manual tag or untag.
 */
void engine_sync_manual(struct engine *e);

#endif

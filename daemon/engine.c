/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "engine.h"

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "macro.h"
#include "procconn.h"
#include "rules.h"
#include "tag.h"
#include "task.h"
#include "util.h"

void engine_init(struct engine *e, const struct ts_config *cfg)
{
	memset(e, 0, sizeof(*e));
	e->fail_log_ms = ENGINE_FAIL_LOG_MS;
	e->cfg = cfg;
	e->parts = ts_ruleset_parts(&cfg->rules);
}

void engine_free(struct engine *e)
{
	ts_ledger_free(&e->ledger);
	ts_ledger_free(&e->manual);
}

static bool ours(const struct ts_ledger_entry *r)
{
	return ts_owner_is_daemon(r->owner);
}

static void record(struct engine *e, const struct ts_task *t, const char *rule, enum ts_owner how,
                   const struct ts_prev *prev)
{
	struct ts_ledger_entry n = {
	    .tid = t->tid,
	    .tgid = t->tgid,
	    .starttime = t->starttime,
	    .since = time(NULL),
	    .prev = *prev,
	    .owner = how,
	    .seen = true,
	    .rule = rule,
	};
	if (!ts_ledger_put(&e->ledger, &n))
		log_err("out of memory: task %d tagged but not recorded", (int)t->tid);
}

static struct engine_cause *cause_of(struct engine *e, int err)
{
	for (size_t i = 0; i < ENGINE_CAUSES - 1; i++) {
		if (e->causes[i].err == err || !e->causes[i].err) {
			e->causes[i].err = err;
			return &e->causes[i];
		}
	}
	e->causes[ENGINE_CAUSES - 1].err = -1;
	return &e->causes[ENGINE_CAUSES - 1];
}

static const char *err_name(int err)
{
	const char *n = err > 0 ? strerrorname_np(err) : NULL;
	return n ? n : "other";
}

void engine_causes_str(const struct engine *e, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < ENGINE_CAUSES && e->causes[i].err && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s %llu", off ? ", " : "",
		                 err_name(e->causes[i].err), e->causes[i].count);
		off += n > 0 ? (size_t)n : 0;
	}
}

/*
 * Every cause is logged as a warning the first time and then at most every fail_log_ms, with
 * the count of those not logged: a persistent cause (no uclamp, no CAP_SYS_NICE) neither floods
 * the journal nor falls silent.
 */
static void failed(struct engine *e, const char *what, const struct ts_tag_result *res)
{
	struct engine_cause *c = cause_of(e, res->err);
	long long now = ts_now_ms();

	e->st.failures++;
	c->count++;
	if (c->logged_ms && now - c->logged_ms < e->fail_log_ms) {
		c->unlogged++;
		log_debug("cannot %s task %d (%s): %s", what, (int)res->tid, res->comm,
		          ts_sched_strerror(res->err));
		return;
	}
	if (c->unlogged)
		log_warning("cannot %s task %d (%s): %s (and %llu more failures of this cause in "
		            "the last %lld s)",
		            what, (int)res->tid, res->comm, ts_sched_strerror(res->err),
		            c->unlogged, (now - c->logged_ms + 999) / 1000);
	else
		log_warning("cannot %s task %d (%s): %s", what, (int)res->tid, res->comm,
		            ts_sched_strerror(res->err));
	c->unlogged = 0;
	c->logged_ms = now;
}

static void tag_task(struct engine *e, const struct ts_task *t, const char *rule)
{
	struct ts_tag_result res;

	memset(&res, 0, sizeof(res));
	snprintf(res.comm, sizeof(res.comm), "%s", t->comm);
	switch (ts_tag_thread(TS_OP_TAG, t->tgid, t->tid, t->starttime, NULL, &res)) {
	case TS_TAG_APPLIED: {
		struct ts_prev prev = {res.before.util_min, res.before.util_max, res.min_written};
		record(e, t, rule, TS_OWNER_RULE, &prev);
		e->st.tagged++;
		log_info("tagged task %d (%s) by rule %s", (int)t->tid, t->comm, rule);
		break;
	}
	case TS_TAG_UNCHANGED:
		/* util_max 0 set by someone else: a manual or external tag, not ours to manage. */
		e->st.external++;
		log_debug("task %d (%s) matches rule %s but is already tagged by someone else",
		          (int)t->tid, t->comm, rule);
		break;
	case TS_TAG_VANISHED:
	case TS_TAG_REUSED:
		e->st.vanished++;
		log_debug("task %d (%s) exited while being tagged", (int)t->tid, t->comm);
		break;
	case TS_TAG_FAILED:
	case TS_TAG_PENDING:
		failed(e, "tag", &res);
		break;
	}
}

/* Undoes our tag; the entry is gone afterwards unless the write failed (kept for a retry). */
static void restore(struct engine *e, struct ts_ledger_entry *ent, const char *why)
{
	struct ts_tag_result res;
	pid_t tid = ent->tid;

	memset(&res, 0, sizeof(res));
	switch (ts_tag_thread(TS_OP_UNTAG, ent->tgid, tid, ent->starttime, &ent->prev, &res)) {
	case TS_TAG_APPLIED:
		e->st.restored++;
		log_info("untagged task %d (rule %s): %s", (int)tid, ent->rule, why);
		break;
	case TS_TAG_UNCHANGED:
		log_debug(
		    "task %d: clamp changed by someone else since we tagged it; forgetting it",
		    (int)tid);
		break;
	case TS_TAG_VANISHED:
	case TS_TAG_REUSED:
		e->st.vanished++;
		log_debug("task %d exited while being untagged", (int)tid);
		break;
	case TS_TAG_FAILED:
	case TS_TAG_PENDING:
		failed(e, "untag", &res);
		return;
	}
	ts_ledger_remove(&e->ledger, ent);
}

/* The admin took over a task of ours by hand: its clamp is the admin's now, nothing to restore. */
static void forget_manual(struct engine *e, struct ts_ledger_entry *ent)
{
	const struct ts_ledger_entry *m = ts_ledger_get(&e->manual, ent->tid, ent->starttime);

	log_info("task %d (rule %s) was %s by hand; leaving it to the admin", (int)ent->tid,
	         ent->rule, m && m->owner == TS_OWNER_MANUAL ? "tagged" : "untagged");
	ts_ledger_remove(&e->ledger, ent);
}

/* The entry a new task's inherited clamp came from, if it was one of our tags. */
static struct ts_ledger_entry *inherited_from(struct engine *e, pid_t ptid, pid_t ctgid)
{
	struct ts_ledger_entry *pe = ts_ledger_find(&e->ledger, ptid);
	if (pe && ours(pe))
		return pe;
	/*
	 * A new thread's event names the process's parent, not the creating thread: most often
	 * the thread copied the leader's clamp; else any tagged thread of the process will do.
	 */
	pe = ts_ledger_find(&e->ledger, ctgid);
	if (pe && ours(pe))
		return pe;
	for (size_t i = 0; i < e->ledger.n; i++)
		if (e->ledger.v[i].tgid == ctgid && ours(&e->ledger.v[i]))
			return &e->ledger.v[i];
	return NULL;
}

/*
 * A task we have no entry for that carries util_max 0 copied from one of our tags (its creating
 * thread parent_tid, or another thread of its process) is ours too: recorded as inherited, with
 * the clamp to restore taken from where it came from. The fork event says who the parent was;
 * after lost events the full scan only has the parent process (ppid), which is enough.
 */
static struct ts_ledger_entry *claim_inherited(struct engine *e, const struct ts_task *t,
                                               pid_t parent_tid)
{
	struct ts_clamp c;
	struct ts_ledger_entry *src = inherited_from(e, parent_tid, t->tgid);

	if (!src || src->tid == t->tid || ts_clamp_get(t->tid, &c) < 0 || !ts_clamp_is_jitter(&c))
		return NULL;
	/* src moves or goes when the ledger grows; its name and clamp do not. */
	struct ts_prev prev = src->prev;
	const char *rule = src->rule;
	record(e, t, rule, TS_OWNER_INHERITED, &prev);
	return ts_ledger_find(&e->ledger, t->tid);
}

/* Decides for a task already read; `t` and its process leader `p`. */
static void eval_task(struct engine *e, const struct ts_task *t, const struct ts_task *p)
{
	struct ts_ledger_entry *ent = ts_ledger_find(&e->ledger, t->tid);

	if (ent && ent->starttime != t->starttime) {
		/* The TID belongs to a new task now: the old one exited unseen. Nothing to restore.
		 */
		log_debug("task %d was replaced by a new task with the same TID", (int)t->tid);
		ts_ledger_remove(&e->ledger, ent);
		ent = NULL;
	}
	if (ts_ledger_get(&e->manual, t->tid, t->starttime)) {
		/* Tagged or untagged by hand: the admin's, whatever the rules say. */
		if (ent)
			forget_manual(e, ent);
		return;
	}
	if (!ent)
		ent = claim_inherited(e, t, t->ppid);
	if (ent)
		ent->seen = true;

	struct ts_subject ts, ps;
	ts_subject_from_task(t, &ts);
	ts_subject_from_task(p, &ps);
	struct ts_verdict v = ts_ruleset_match(&e->cfg->rules, &ts, &ps);

	if (v.kind == TS_VERDICT_TAG) {
		if (!ent)
			tag_task(e, t, v.rule->name);
		else if (strcmp(ent->rule, v.rule->name) != 0 &&
		         !ts_ledger_set_rule(&e->ledger, ent, v.rule->name))
			log_err("out of memory: task %d keeps rule %s in the ledger", (int)t->tid,
			        ent->rule);
		return;
	}
	if (ent) {
		char why[96];
		if (v.kind == TS_VERDICT_EXCLUDED)
			snprintf(why, sizeof(why), "excluded by [exclude %s]", v.rule->name);
		else
			snprintf(why, sizeof(why), "no rule matches any more");
		restore(e, ent, why);
	}
}

/*
 * Reads thread and leader, with the parts the rules need and `extra`; false when the thread is
 * gone (its entry is then dropped).
 */
static bool read_pair(struct engine *e, pid_t tgid, pid_t tid, unsigned int extra,
                      struct ts_task *t, struct ts_task *p)
{
	int r = ts_rules_read_task(tgid, tid, e->parts | extra, t, p);
	if (r < 0) {
		struct ts_ledger_entry *ent = ts_ledger_find(&e->ledger, tid);
		if (r == -ESRCH) {
			e->st.vanished++;
			log_debug("task %d exited before it could be classified", (int)tid);
			if (ent)
				ts_ledger_remove(&e->ledger, ent);
		} else {
			log_debug("cannot read task %d: %s", (int)tid, strerror(-r));
		}
		return false;
	}
	return true;
}

void engine_eval(struct engine *e, pid_t tgid, pid_t tid)
{
	struct ts_task t, p;
	if (read_pair(e, tgid, tid, 0, &t, &p))
		eval_task(e, &t, &p);
}

static void eval_process(struct engine *e, pid_t tgid, bool scan)
{
	_cleanup_(ts_pidlist_free) struct ts_pidlist threads = {0};

	if (ts_list_threads(tgid, &threads) < 0)
		return;
	for (size_t i = 0; i < threads.n; i++) {
		struct ts_task t, p;
		/* A scan reads the status for the real tgid: /proc/TID of a non-leader is a thread
		 * directory of its own, reachable although readdir() does not list it. */
		if (!read_pair(e, tgid, threads.v[i], scan ? TS_TASK_STATUS : 0, &t, &p))
			continue;
		if (scan && t.tgid != tgid)
			break;
		eval_task(e, &t, &p);
	}
}

void engine_scan(struct engine *e)
{
	struct ts_pidlist procs = {0};

	e->st.scans++;
	engine_sync_manual(e);
	for (size_t i = 0; i < e->ledger.n; i++)
		e->ledger.v[i].seen = false;
	int r = ts_list_processes(&procs);
	if (r < 0) {
		log_err("cannot list processes: %s", strerror(-r));
		return;
	}
	for (size_t i = 0; i < procs.n; i++)
		eval_process(e, procs.v[i], true);
	ts_pidlist_free(&procs);

	/* Whatever the scan did not meet has exited; its exit event was lost or not yet read. */
	for (size_t i = e->ledger.n; i-- > 0;) {
		if (!e->ledger.v[i].seen) {
			log_debug("task %d is gone", (int)e->ledger.v[i].tid);
			ts_ledger_remove(&e->ledger, &e->ledger.v[i]);
		}
	}
}

void engine_on_fork(struct engine *e, pid_t ptgid, pid_t ptid, pid_t ctgid, pid_t ctid)
{
	struct ts_task t, p;

	(void)ptgid;
	e->st.events++;
	/*
	 * A new process is a copy of the thread that forked it: same comm, uids and cgroup. When
	 * that thread is not in the ledger it matched no rule, so neither does the child, until
	 * it execs, or changes comm or uid: events of their own. Reading the child now would
	 * also make the daemon wait for that exec, since /proc/PID/stat takes the task's exec
	 * lock; in a fork-and-exec storm that wait made the daemon fall seconds behind. (A child
	 * born into another cgroup with clone3() and no exec waits for the next re-check.)
	 */
	if (ctid == ctgid && !ts_ledger_find(&e->ledger, ptid)) {
		e->st.skipped++;
		return;
	}
	if (!read_pair(e, ctgid, ctid, 0, &t, &p))
		return;
	/*
	 * The kernel copies the clamp on fork: a child of our tagged task is tagged too, and it is
	 * ours to undo (e.g. when it execs something that matches no rule).
	 */
	if (!ts_ledger_find(&e->ledger, ctid))
		claim_inherited(e, &t, ptid);
	eval_task(e, &t, &p);
}

void engine_on_exec(struct engine *e, pid_t tgid, pid_t tid)
{
	e->st.events++;
	engine_eval(e, tgid, tid);
}

void engine_on_change(struct engine *e, pid_t tgid, pid_t tid)
{
	e->st.events++;
	/* The leader's comm and uid are the process's: threads=all rules see them on every thread.
	 */
	if (tid == tgid)
		eval_process(e, tgid, false);
	else
		engine_eval(e, tgid, tid);
}

void engine_on_exit(struct engine *e, pid_t tgid, pid_t tid)
{
	(void)tgid;
	e->st.events++;
	struct ts_ledger_entry *ent = ts_ledger_find(&e->ledger, tid);
	if (ent) {
		log_debug("task %d (rule %s) exited", (int)tid, ent->rule);
		ts_ledger_remove(&e->ledger, ent);
	}
}

void engine_on_event(void *engine, const struct pc_event *ev)
{
	struct engine *e = engine;
	switch (ev->what) {
	case PC_FORK:
		engine_on_fork(e, ev->ptgid, ev->ptid, ev->tgid, ev->tid);
		break;
	case PC_EXEC:
		engine_on_exec(e, ev->tgid, ev->tid);
		break;
	case PC_COMM:
	case PC_UID:
		engine_on_change(e, ev->tgid, ev->tid);
		break;
	case PC_EXIT:
		engine_on_exit(e, ev->tgid, ev->tid);
		break;
	}
}

/* Whether an event after ev[i] for the same task is of kind what. */
static bool later(const struct pc_event *ev, size_t n, size_t i, enum pc_what what)
{
	for (size_t j = i + 1; j < n; j++)
		if (ev[j].tid == ev[i].tid && ev[j].what == what)
			return true;
	return false;
}

/*
 * How far behind the kernel the daemon is: measured when the whole batch is done, so an
 * upper bound for each event in it. Events without a timestamp (0: tests) do not count.
 */
static void account_lag(struct engine *e, const struct pc_event *ev, size_t n)
{
	struct timespec now;

	if (n == 0 || clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return;
	unsigned long long now_ns =
	    (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].ts_ns == 0 || ev[i].ts_ns > now_ns)
			continue;
		unsigned long long us = (now_ns - ev[i].ts_ns) / 1000;
		if (us > ENGINE_LATE_MS * 1000ULL)
			e->st.late++;
		if (us > e->st.lag_max_us)
			e->st.lag_max_us = us;
	}
}

void engine_on_events(struct engine *e, const struct pc_event *ev, size_t n)
{
	engine_sync_manual(e);
	for (size_t i = 0; i < n; i++) {
		bool moot = false;
		if (ev[i].what != PC_EXIT)
			moot = later(ev, n, i, PC_EXIT);
		/* The exec evaluates it anyway; only a clamp inherited from a thread of ours
		 * needs the fork's parent. */
		if (!moot && ev[i].what == PC_FORK && ev[i].tid == ev[i].tgid) {
			const struct ts_ledger_entry *pe = ts_ledger_find(&e->ledger, ev[i].ptid);
			moot = !(pe && ours(pe)) && later(ev, n, i, PC_EXEC);
		}
		if (moot) {
			e->st.events++;
			e->st.skipped++;
			continue;
		}
		engine_on_event(e, &ev[i]);
	}
	account_lag(e, ev, n);
}

void engine_set_config(struct engine *e, const struct ts_config *cfg)
{
	e->cfg = cfg;
	e->parts = ts_ruleset_parts(&cfg->rules);
	engine_scan(e);
}

size_t engine_restore_all(struct engine *e)
{
	unsigned long long before = e->st.restored;

	/* Backwards: removing entry i moves an already visited entry into its place. */
	for (size_t i = e->ledger.n; i-- > 0;)
		if (ours(&e->ledger.v[i]))
			restore(e, &e->ledger.v[i], "daemon stopping");
	return (size_t)(e->st.restored - before);
}

struct adopt_stats engine_adopt(struct engine *e, const struct ts_ledger *saved)
{
	struct adopt_stats st = {0};

	engine_sync_manual(e);
	for (size_t i = 0; i < saved->n; i++) {
		const struct ts_ledger_entry *s = &saved->v[i];
		unsigned long long start;
		struct ts_clamp c;
		const char *why = NULL;

		if (ts_task_starttime(s->tgid, s->tid, &start) < 0)
			why = "exited";
		else if (start != s->starttime)
			why = "its TID now belongs to another task";
		else if (!ours(s))
			why = "not a tag of the daemon's";
		else if (ts_ledger_get(&e->manual, s->tid, s->starttime))
			why = "tagged or untagged by hand meanwhile";
		else if (ts_clamp_get(s->tid, &c) < 0 || !ts_clamp_is_jitter(&c))
			why = "its clamp was changed by someone else meanwhile";
		if (why) {
			st.dropped++;
			log_debug("ledger: not adopting task %d (rule %s): %s", (int)s->tid,
			          s->rule, why);
			continue;
		}
		struct ts_ledger_entry n = *s;
		n.seen = true;
		if (!ts_ledger_put(&e->ledger, &n)) {
			log_err("out of memory adopting task %d", (int)s->tid);
			break;
		}
		st.adopted++;
	}
	return st;
}

/* Identity of the file at path: inode, size, mtime; false when it does not exist. */
static bool file_id(const char *path, unsigned long long *ino, unsigned long long *size,
                    long long *mtime_ns)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return false;
	*ino = (unsigned long long)st.st_ino;
	*size = (unsigned long long)st.st_size;
	*mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	return true;
}

void engine_sync_manual(struct engine *e)
{
	char path[PATH_MAX];
	unsigned long long ino = 0, size = 0;
	long long mtime = 0;

	if (e->manual_path)
		snprintf(path, sizeof(path), "%s", e->manual_path);
	else if (ts_path(path, sizeof(path), "%s", TS_LEDGER_MANUAL) < 0)
		return;
	bool exists = file_id(path, &ino, &size, &mtime);
	if (exists == e->manual_id.exists && ino == e->manual_id.ino && size == e->manual_id.size &&
	    mtime == e->manual_id.mtime_ns)
		return;
	struct ts_ledger fresh = {0};
	struct ts_ledger_report rep;
	int r = exists ? ts_ledger_load(&fresh, path, &rep) : 0;
	if (r < 0) {
		/* Keep the last good copy; a later change is read again. */
		log_warning("cannot read turboschedctl's ledger %s: %s", path,
		            r == -EINVAL ? rep.why : strerror(-r));
		ts_ledger_free(&fresh);
	} else {
		ts_ledger_free(&e->manual);
		e->manual = fresh;
	}
	e->manual_id.exists = exists;
	e->manual_id.ino = ino;
	e->manual_id.size = size;
	e->manual_id.mtime_ns = mtime;
	for (size_t i = e->ledger.n; i-- > 0;)
		if (ts_ledger_get(&e->manual, e->ledger.v[i].tid, e->ledger.v[i].starttime))
			forget_manual(e, &e->ledger.v[i]);
}

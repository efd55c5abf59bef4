/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ledger: who tagged which task, and the clamp the tag replaced. One entry per thread, keyed by
 * (tid, starttime), so a reused TID is never mistaken for the task that was tagged. The daemon
 * and turboschedctl keep one each, in the same format, written by this module only:
 *
 * - RUNSTATEDIR/turboschedd/ledger is written by turboschedd (its system user), with the
 *   owners rule and inherited;
 * - RUNSTATEDIR/turbosched/ledger is written by turboschedctl (root), with the owners manual
 *   and untagged.
 *
 * Each side reads the other's: turboschedctl asks the daemon for its entries ("tasks", lib/proto)
 * to restore what a rule replaced and to say who tagged what; the daemon reads turboschedctl's file
 * (read-only, world-readable) and leaves every task in it alone: a task tagged or untagged by hand
 * is the admin's until it exits, across reloads and daemon restarts.
 *
 * Format (text, one entry a line, after a header line):
 *   # turbosched ledger v1
 *   TID TGID STARTTIME SINCE UTIL_MIN UTIL_MAX MIN_LOWERED OWNER[ RULE]
 * RULE is the rest of the line (rule names may hold blanks). Written atomically (temp file in the
 * same directory, fsync, rename, fsync of the directory), mode 0644 whatever the umask; a writer
 * that reads, changes and writes holds ts_ledger_lock() meanwhile.
 */
#ifndef TS_LEDGER_H
#define TS_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "build_config.h"
#include "tag.h"

#define TS_LEDGER_HEADER "# turbosched ledger v1"
/* turboschedctl's ledger and its lock, below ts_root_get(). */
#define TS_LEDGER_MANUAL_DIR  RUNSTATEDIR "/turbosched"
#define TS_LEDGER_MANUAL      TS_LEDGER_MANUAL_DIR "/ledger"
#define TS_LEDGER_MANUAL_LOCK TS_LEDGER_MANUAL_DIR "/ledger.lock"
/* The longest rule name a ledger may hold: a bound for reading, not a config limit. */
#define TS_LEDGER_RULE_MAX 4096

enum ts_owner {
	TS_OWNER_RULE,      /* tagged by the daemon because a rule matched */
	TS_OWNER_INHERITED, /* forked from a thread the daemon tagged: the kernel copied the clamp
	                     */
	TS_OWNER_MANUAL,    /* tagged by hand (turboschedctl tag) */
	TS_OWNER_UNTAGGED,  /* untagged by hand (turboschedctl untag): rules keep off */
	TS_OWNER_EXTERNAL,  /* util_max 0 set by someone else (uclampset); never in a ledger */
	TS_OWNER_COUNT,
};

struct ts_ledger_entry {
	pid_t tid, tgid;
	unsigned long long starttime;
	/* The rule's name, "" when none. ts_ledger_put() keeps its own copy, one per distinct
	 * name: entries point into the ledger for as long as it lives. */
	const char *rule;
	time_t since;
	struct ts_prev prev; /* the clamp the tag replaced */
	enum ts_owner owner;
	bool seen; /* mark for the daemon's full-scan sweep */
};

/*
 * Entries live in a dense array (v[0..n)); an open-addressed index (tid -> position + 1, 0 =
 * free) finds one by TID in constant time, so every proc event stays cheap with thousands of
 * tagged threads. At most one entry per TID.
 */
struct ts_ledger {
	struct ts_ledger_entry *v;
	size_t n, cap;
	uint32_t *slot;
	size_t nslot; /* a power of two, at least twice cap; 0 until the first put */
	bool dirty;   /* changed since the last ts_ledger_save() */
	char **names; /* the distinct rule names of entries ever put */
	size_t nnames, names_cap;
};

void ts_ledger_free(struct ts_ledger *l);
/* The entry for tid (any start time), or NULL. */
struct ts_ledger_entry *ts_ledger_find(const struct ts_ledger *l, pid_t tid);
/* The entry for exactly (tid, starttime), or NULL. */
struct ts_ledger_entry *ts_ledger_get(const struct ts_ledger *l, pid_t tid,
                                      unsigned long long starttime);
/*
 * Adds (or replaces the entry of the same tid), with l's own copy of e->rule (NULL: ""). NULL when
 * out of memory. Entry pointers stay valid until the next ts_ledger_put() or ts_ledger_remove().
 */
struct ts_ledger_entry *ts_ledger_put(struct ts_ledger *l, const struct ts_ledger_entry *e);
/* Renames the rule of an entry of l; false when out of memory (the entry is unchanged). */
bool ts_ledger_set_rule(struct ts_ledger *l, struct ts_ledger_entry *e, const char *rule);
/* Removes e; the last entry moves into its place (iterate backwards when removing in a loop). */
void ts_ledger_remove(struct ts_ledger *l, struct ts_ledger_entry *e);
/* Entries whose task holds a tag (rule, inherited, manual). */
size_t ts_ledger_count_tagged(const struct ts_ledger *l);
/* Drops entries whose thread no longer exists with that start time; how many were dropped. */
size_t ts_ledger_prune(struct ts_ledger *l);

/* "rule", "inherited", "manual", "untagged", "external". */
const char *ts_owner_name(enum ts_owner o);
/* The name's value; -1 when unknown. */
int ts_owner_from_name(const char *name);
/* Whether a tag of this owner is the daemon's to undo. */
static inline bool ts_owner_is_daemon(enum ts_owner o)
{
	return o == TS_OWNER_RULE || o == TS_OWNER_INHERITED;
}

struct ts_ledger_report {
	size_t entries; /* read */
	size_t bad;     /* lines skipped as malformed */
	char why[160];  /* when the whole file was unusable (-EINVAL) */
};
/*
 * Parses ledger text into l (appends). 0, -EINVAL when it is not a ledger of this version
 * (rep->why says why; l is left empty), or -ENOMEM.
 */
int ts_ledger_parse(struct ts_ledger *l, const char *text, struct ts_ledger_report *rep);
/* Reads the file at path into l. 0 (also for a missing file: an empty ledger), or -errno. */
int ts_ledger_load(struct ts_ledger *l, const char *path, struct ts_ledger_report *rep);
/* Writes l atomically to path. 0 or -errno (the old file is then untouched). Clears l->dirty. */
int ts_ledger_save(struct ts_ledger *l, const char *path);
/*
 * Creates path's directory (0755) and takes an exclusive flock on the lock file path: held until
 * the returned descriptor is closed. -errno on failure.
 */
int ts_ledger_lock(const char *lock_path);

#endif

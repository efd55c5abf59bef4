/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the daemon tagged: one entry per thread, keyed by (tid, starttime), with the rule, the
 * time, and the clamp it had before, so the daemon untags only its own tags and restores exactly.
 * Manual requests over the control socket are recorded too, so rules leave those threads alone.
 */
#ifndef TSD_REGISTRY_H
#define TSD_REGISTRY_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "tag.h"

enum reg_how {
	REG_RULE,         /* tagged because a rule matched */
	REG_INHERITED,    /* forked from a thread we tagged: the kernel copied the clamp */
	REG_MANUAL_TAG,   /* tagged on request (turboschedctl via the socket) */
	REG_MANUAL_UNTAG, /* untagged on request: rules must not re-tag it */
};

struct reg_entry {
	pid_t tid, tgid;
	unsigned long long starttime;
	/* The rule's name, "" for manual. registry_put() keeps its own copy, one per distinct name
	 * (10 000 entries of two rules then cost pointers, not 10 000 names): entries in a registry
	 * point into it for as long as the registry lives. */
	const char *rule;
	time_t since;
	struct ts_prev prev;
	enum reg_how how;
	bool seen; /* mark for the full scan's sweep */
};

/*
 * Entries live in a dense array (v[0..n)), which the scan, the stop and the "tasks" reply walk;
 * an open-addressed index (tid -> position + 1, 0 = free) finds one by TID in constant time, so
 * that every proc event stays cheap with thousands of tagged threads.
 */
struct registry {
	struct reg_entry *v;
	size_t n, cap;
	uint32_t *slot;
	size_t nslot; /* a power of two, at least twice cap; 0 until the first put */
	bool dirty;   /* changed since the last registry_save() */
	char **names; /* the distinct rule names of entries ever put; few, never freed before r */
	size_t nnames;
};

/* The longest rule name a registry file may hold: a bound for reading, not a config limit. */
#define REG_RULE_MAX 4096

void registry_free(struct registry *r);
/* The entry for tid (any start time), or NULL. */
struct reg_entry *registry_find(struct registry *r, pid_t tid);
/*
 * Adds (or replaces the entry of the same tid), with r's own copy of e->rule (NULL: ""). NULL on
 * allocation failure. Entry pointers stay valid until the next registry_put() or registry_remove().
 */
struct reg_entry *registry_put(struct registry *r, const struct reg_entry *e);
/* Renames the rule of an entry of r; false when out of memory (the entry is unchanged). */
bool registry_set_rule(struct registry *r, struct reg_entry *e, const char *rule);
/* Removes e; the last entry moves into its place (iterate backwards when removing in a loop). */
void registry_remove(struct registry *r, struct reg_entry *e);
/* Entries that hold a tag of ours (rule or inherited). */
size_t registry_count_tagged(const struct registry *r);
/* ts_prev_lookup_fn over a struct registry: the clamp to restore for (tid, starttime). */
bool registry_prev_lookup(void *ctx, pid_t tid, unsigned long long starttime, struct ts_prev *out);
const char *registry_how_name(enum reg_how h);
/* The name's enum value; -1 when unknown. */
int registry_how_from_name(const char *name);

/*
 * The JSON form of an entry: what the control socket's "tasks" sends (turboschedctl reads it,
 * cli/daemon.h) and what the registry file holds: tid, tgid, starttime, rule, how, since,
 * util_min, util_max, min_lowered.
 */
json_object *registry_entry_to_json(const struct reg_entry *e);
/*
 * A JSON array of the entries (those of manual untags only when with_untag) that is written
 * entry by entry when serialized; r must outlive it and not change before it is serialized.
 * NULL when out of memory.
 */
json_object *registry_to_json_array(const struct registry *r, bool with_untag);
/*
 * The reverse; 0, or -EINVAL when a field is missing or out of range. out->rule points into o:
 * registry_put() copies it.
 */
int registry_entry_from_json(json_object *o, struct reg_entry *out);

/*
 * The registry file (RUNSTATEDIR/turboschedd/registry), so that a daemon killed without its
 * orderly stop (kill -9, a crash, the watchdog) can adopt its tags on restart instead of taking
 * them for someone else's:
 *   {"format":"turboschedd-registry","version":1,"pid":N,"saved":UNIX-TIME,"entries":[...]}
 * Written atomically (temp file in the same directory, fsync, rename, fsync of the directory),
 * mode 0644 whatever the umask.
 */
#define REGISTRY_FORMAT  "turboschedd-registry"
#define REGISTRY_VERSION 1
/* 0 or -errno (the old file is then untouched). Clears r->dirty on success. */
int registry_save(struct registry *r, const char *path);

struct registry_load_report {
	size_t entries; /* read */
	size_t bad;     /* entries skipped as malformed */
	char why[160];  /* when the whole file was unusable (load returns -EINVAL) */
};
/*
 * Reads the file into r (appends). 0 (also for a missing file: nothing to adopt), -EINVAL when the
 * file is not a registry of this version (rep->why says what is wrong; r is left empty), or
 * another -errno when it cannot be read.
 */
int registry_load(struct registry *r, const char *path, struct registry_load_report *rep);

#endif

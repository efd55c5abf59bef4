/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The manual-tag state file: for each thread turboschedctl tagged, the clamp it had before, so
 * untag can restore it. The daemon keeps its own registry; this file is only for tags made by hand.
 *
 * Format (text, one thread per line): "tid starttime util_min util_max min_lowered". It is written
 * atomically (temp file + rename) under an flock'd lock file, so concurrent turboschedctl runs do
 * not lose records; a missing file is an empty state, a corrupt line is skipped and counted.
 */
#ifndef TS_TAG_STATE_H
#define TS_TAG_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TS_STATE_DIR  "/run/turbosched"
#define TS_STATE_FILE "/run/turbosched/manual-tags"
#define TS_STATE_LOCK "/run/turbosched/manual-tags.lock"

struct ts_state_entry {
	pid_t tid;
	unsigned long long starttime;
	uint32_t util_min;
	uint32_t util_max;
	bool min_lowered;
};

struct ts_tag_state {
	struct ts_state_entry *v;
	size_t n, cap;
	bool missing;     /* no state file existed */
	size_t bad_lines; /* lines skipped because they did not parse */
	int lock_fd;      /* -1 unless loaded with lock */
};

/* Parses state file content into s (appends). Bad lines are counted in s->bad_lines. 0 or -ENOMEM.
 */
int ts_state_parse(struct ts_tag_state *s, const char *content);

/*
 * Loads the state file below the root. lock: create TS_STATE_DIR and hold an exclusive flock until
 * ts_state_close (for read-modify-write). Returns 0 (also when missing: s->missing) or -errno when
 * the lock cannot be taken or the file cannot be read for a reason other than absence.
 */
int ts_state_load(struct ts_tag_state *s, bool lock);
/* Writes the state atomically. 0 or -errno. */
int ts_state_save(const struct ts_tag_state *s);
void ts_state_close(struct ts_tag_state *s);

struct ts_state_entry *ts_state_find(struct ts_tag_state *s, pid_t tid,
                                     unsigned long long starttime);
/* Adds or replaces the entry for (tid, starttime). 0 or -ENOMEM. */
int ts_state_put(struct ts_tag_state *s, const struct ts_state_entry *e);
/* Removes the entry for (tid, starttime); true when there was one. */
bool ts_state_remove(struct ts_tag_state *s, pid_t tid, unsigned long long starttime);
/* Drops entries whose thread no longer exists with that start time. Returns how many were dropped.
 */
size_t ts_state_prune(struct ts_tag_state *s);

#endif

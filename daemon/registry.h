/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the daemon tagged: one entry per thread, keyed by (tid, starttime), with the rule, the
 * time, and the clamp it had before, so the daemon untags only its own tags and restores exactly.
 * Manual requests over the control socket are recorded too, so rules leave those threads alone.
 */
#ifndef TSD_REGISTRY_H
#define TSD_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
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
	char rule[64]; /* rule name, "" for manual */
	time_t since;
	struct ts_prev prev;
	enum reg_how how;
	bool seen; /* mark for the full scan's sweep */
};

struct registry {
	struct reg_entry *v;
	size_t n, cap;
};

void registry_free(struct registry *r);
/* The entry for tid (any start time), or NULL. */
struct reg_entry *registry_find(struct registry *r, pid_t tid);
/* Adds (or replaces the entry of the same tid). NULL on allocation failure. */
struct reg_entry *registry_put(struct registry *r, const struct reg_entry *e);
void registry_remove(struct registry *r, struct reg_entry *e);
/* Entries that hold a tag of ours (rule or inherited). */
size_t registry_count_tagged(const struct registry *r);
/* ts_prev_lookup_fn over a struct registry: the clamp to restore for (tid, starttime). */
bool registry_prev_lookup(void *ctx, pid_t tid, unsigned long long starttime, struct ts_prev *out);
const char *registry_how_name(enum reg_how h);

#endif

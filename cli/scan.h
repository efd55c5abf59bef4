/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Finding every jitter task (util_max == 0, as sched_getattr reports it) and deciding who tagged
 * it: shared by "status" (per-core view) and "tasks".
 */
#ifndef TS_CLI_SCAN_H
#define TS_CLI_SCAN_H

#include <stddef.h>
#include <stdio.h>

#include "client.h"
#include "sched_attr.h"
#include "ledger.h"
#include "task.h"
#include "topology.h"

enum tagged_by {
	TAGGED_RULE,     /* a daemon rule (rule says which) */
	TAGGED_MANUAL,   /* turboschedctl tag (its ledger) */
	TAGGED_EXTERNAL, /* someone else, e.g. uclampset -M 0 */
	TAGGED_UNKNOWN,  /* not manual, and the daemon cannot be asked */
};

struct jitter_task {
	struct ts_task task;
	struct ts_clamp clamp;
	int core; /* core index of task.cpu, -1 unknown */
	enum tagged_by by;
	char rule[64];
};

struct jitter_list {
	struct jitter_task *v;
	size_t n, cap;
};

/*
 * Scans all threads. topo may be NULL (core stays -1); manual (turboschedctl's ledger) and
 * daemon (the daemon's) may be NULL (no classification). parts (TS_TASK_*) says which /proc
 * files beyond stat each jitter task's fields come from: every file is a cost at 10 000 tasks.
 * Threads exiting during the scan are skipped. 0 or -errno (cannot list /proc).
 */
int jitter_scan(const struct ts_topology *topo, const struct ts_ledger *manual,
                const struct client_ledger *daemon, unsigned int parts, struct jitter_list *out);
void jitter_list_free(struct jitter_list *l);

/*
 * Reads turboschedctl's ledger (TS_LEDGER_MANUAL below the root) into l, warning on err about what
 * cannot be used. 0 or -errno (l is then empty).
 */
int manual_ledger_load(FILE *err, struct ts_ledger *l);

/* "rule", "manual", "external", "unknown". */
const char *tagged_by_str(enum tagged_by b);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "scan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tagged_by_str(enum tagged_by b)
{
	switch (b) {
	case TAGGED_RULE:
		return "rule";
	case TAGGED_MANUAL:
		return "manual";
	case TAGGED_EXTERNAL:
		return "external";
	case TAGGED_UNKNOWN:
	default:
		return "unknown";
	}
}

static void classify(struct jitter_task *j, struct ts_tag_state *state,
                     const struct daemon_registry *reg)
{
	const char *rule =
	    reg ? daemon_registry_rule(reg, j->task.tid, j->task.starttime, NULL) : NULL;

	if (rule) {
		j->by = TAGGED_RULE;
		snprintf(j->rule, sizeof(j->rule), "%s", rule);
	} else if (state && ts_state_find(state, j->task.tid, j->task.starttime)) {
		j->by = TAGGED_MANUAL;
	} else if (reg && reg->reachable) {
		j->by = TAGGED_EXTERNAL;
	} else {
		j->by = TAGGED_UNKNOWN; /* could be a daemon rule we cannot see */
	}
}

static int add(struct jitter_list *l, const struct jitter_task *j)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		struct jitter_task *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *j;
	return 0;
}

int jitter_scan(const struct ts_topology *topo, struct ts_tag_state *state,
                const struct daemon_registry *reg, struct jitter_list *out)
{
	struct ts_pidlist procs = {0}, threads = {0};
	int r;

	memset(out, 0, sizeof(*out));
	r = ts_list_processes(&procs);
	if (r < 0)
		return r;
	for (size_t p = 0; p < procs.n && r == 0; p++) {
		if (ts_list_threads(procs.v[p], &threads) < 0)
			continue; /* exited meanwhile, or a kernel thread we cannot read */
		for (size_t t = 0; t < threads.n && r == 0; t++) {
			struct jitter_task j;

			memset(&j, 0, sizeof(j));
			if (ts_clamp_get(threads.v[t], &j.clamp) < 0 ||
			    !ts_clamp_is_jitter(&j.clamp))
				continue;
			if (ts_task_read(procs.v[p], threads.v[t], &j.task) < 0)
				continue;
			j.core = topo ? ts_topology_core_of(topo, j.task.cpu) : -1;
			classify(&j, state, reg);
			r = add(out, &j);
		}
	}
	ts_pidlist_free(&threads);
	ts_pidlist_free(&procs);
	return r;
}

void jitter_list_free(struct jitter_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "errors.h"
#include "scan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "util.h"

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

static void classify(struct jitter_task *j, const struct ts_ledger *manual,
                     const struct client_ledger *daemon)
{
	const struct ts_ledger_entry *m =
	    manual ? ts_ledger_get(manual, j->task.tid, j->task.starttime) : NULL;
	const struct ts_ledger_entry *d =
	    daemon ? ts_ledger_get(&daemon->l, j->task.tid, j->task.starttime) : NULL;

	if (m && m->owner == TS_OWNER_MANUAL) {
		j->by = TAGGED_MANUAL; /* the hand wins: the daemon leaves such tasks alone */
	} else if (d) {
		j->by = TAGGED_RULE;
		snprintf(j->rule, sizeof(j->rule), "%s", d->rule);
	} else if (daemon && daemon->reachable) {
		j->by = TAGGED_EXTERNAL;
	} else {
		j->by = TAGGED_UNKNOWN; /* could be a daemon rule we cannot see */
	}
}

int jitter_scan(const struct ts_topology *topo, const struct ts_ledger *manual,
                const struct client_ledger *daemon, unsigned int parts, struct jitter_list *out)
{
	_cleanup_(ts_pidlist_free) struct ts_pidlist procs = {0}, threads = {0};
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
			if (ts_task_read_parts(procs.v[p], threads.v[t], parts, &j.task) < 0)
				continue;
			j.core = topo ? ts_topology_core_of(topo, j.task.cpu) : -1;
			classify(&j, manual, daemon);
			if (!ts_grow(&out->v, &out->cap, out->n))
				r = -ENOMEM;
			else
				out->v[out->n++] = j;
		}
	}
	return r;
}

void jitter_list_free(struct jitter_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int manual_ledger_load(FILE *err, struct ts_ledger *l)
{
	char path[4096];
	struct ts_ledger_report rep;
	int r = ts_path(path, sizeof(path), "%s", TS_LEDGER_MANUAL);

	memset(l, 0, sizeof(*l));
	if (r == 0)
		r = ts_ledger_load(l, path, &rep);
	if (r < 0)
		cli_err(err, "warning: cannot use %s: %s", path,
		        r == -EINVAL ? rep.why : strerror(-r));
	else if (rep.bad)
		cli_err(err,
		        "warning: %s: %zu corrupt line(s) skipped; those threads untag to the "
		        "default clamps",
		        path, rep.bad);
	return r;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `status` gathers once per round, shared by its text and JSON output (cmd_status.c) and its
 * Prometheus output (metrics.c).
 */
#ifndef TS_CLI_STATUS_H
#define TS_CLI_STATUS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

#include "client.h"
#include "kernel.h"
#include "proto.h"
#include "scan.h"
#include "topology.h"

struct core_view {
	int busy_pct; /* -1 unknown */
	size_t njitter;
	int domain; /* dense index of its turbo domain, -1 unknown */
};

/* Whether the daemon answers, why not, and what it said. */
struct daemon_reach {
	bool reachable;
	char why[256];
	json_object *resp; /* holds the strings of st */
	struct ts_status st;
};

struct status_view {
	struct ts_kernel_info k;
	struct daemon_reach reg;
	struct ts_topology topo;
	int topo_err;            /* 0: topo loaded */
	struct core_view *cv;    /* topo.ncores (+1) entries */
	const char *domain_kind; /* "llc" or "node": what a turbo domain is on this architecture */
	struct jitter_list jl;
	struct client_ledger ledger; /* the daemon's, for tags per rule (prometheus only) */
};

/* The metrics in the node_exporter textfile format (turboschedctl(8) lists them). */
void status_prometheus(FILE *f, const struct status_view *v);

#endif

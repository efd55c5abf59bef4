/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPU topology from sysfs: which CPUs share a core (SMT siblings), a package, a NUMA node and a
 * last-level cache, and which CPUs are online. Cores are what packing is about, so they get a dense
 * index.
 */
#ifndef TS_TOPOLOGY_H
#define TS_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

/* CPU numbers this library can handle; larger IDs in a cpulist are rejected. */
#define TS_MAX_CPUS 4096

struct ts_cpu {
	bool present; /* has a cpuN directory */
	bool online;
	int core; /* index into ts_topology.cores, -1 when unknown (offline CPUs have no topology)
	           */
	int package; /* physical_package_id, -1 unknown */
	int node;    /* NUMA node, -1 unknown */
	int llc;     /* index of the LLC group: lowest CPU of shared_cpu_list, -1 unknown */
};

struct ts_core {
	int package;
	int core_id; /* core_id from sysfs (only unique within a package) */
	int node;
	size_t ncpus;
	int *cpus; /* ascending */
};

struct ts_topology {
	size_t ncpus;             /* length of cpus[]: highest CPU number + 1 */
	struct ts_cpu *cpus;      /* indexed by CPU number */
	size_t ncores, cores_cap; /* cores_cap: room in cores[] (ts_grow) */
	struct ts_core *cores;    /* ordered by their lowest CPU */
	int nnodes;               /* number of node directories found (0 without NUMA info) */
};

/*
 * Parses a cpulist ("0-3,8,10-11\n") into ascending CPU numbers. Returns the count (<= max) or
 * -EINVAL (malformed, descending range, CPU >= TS_MAX_CPUS) / -E2BIG (more than max).
 */
int ts_cpulist_parse(const char *s, int *cpus, size_t max);

/* Loads the topology below the root. 0 or -errno (-ENOENT: no /sys/devices/system/cpu). */
int ts_topology_load(struct ts_topology *out);
void ts_topology_free(struct ts_topology *t);

/* Core index of a CPU, -1 when unknown/out of range. */
int ts_topology_core_of(const struct ts_topology *t, int cpu);

#endif

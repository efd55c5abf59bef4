/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the running kernel offers: utilization clamping at all, TurboSched, the runtime switch, the
 * debugfs counters; and the per-CPU time counters of /proc/stat used for the short busy sample.
 */
#ifndef TS_KERNEL_H
#define TS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TS_SYSCTL_UCLAMP "/proc/sys/kernel/sched_util_clamp_max"
#define TS_SYSCTL_PACK   "/proc/sys/kernel/sched_pack_jitter"
#define TS_DEBUGFS_ROOT  "/sys/kernel/debug"
#define TS_DEBUGFS_STATS "/sys/kernel/debug/sched/pack_jitter/stats"

enum ts_counters_state {
	TS_COUNTERS_OK,
	TS_COUNTERS_NO_DEBUGFS, /* debugfs not mounted */
	TS_COUNTERS_DENIED,     /* debugfs is root only */
	TS_COUNTERS_ABSENT,     /* debugfs mounted but no pack_jitter stats: no TurboSched */
	TS_COUNTERS_ERROR,      /* unreadable or malformed */
};

struct ts_counter {
	char name[48];
	long long value;
};

struct ts_kernel_info {
	bool uclamp;      /* /proc/sys/kernel/sched_util_clamp_max exists */
	bool turbosched;  /* /proc/sys/kernel/sched_pack_jitter exists */
	int pack_enabled; /* content of the switch: 1, 0, or -1 unknown */
	enum ts_counters_state counters_state;
	int counters_errno; /* for TS_COUNTERS_ERROR */
	size_t ncounters;
	struct ts_counter *counters; /* in file order; unknown names kept */
};

/* Utilization clamping exists (the uclamp sysctl is present below the root). */
bool ts_kernel_has_uclamp(void);

/* Probes below the root. Never fails as a whole; what cannot be found is reported in the fields. */
void ts_kernel_probe(struct ts_kernel_info *out);
void ts_kernel_info_free(struct ts_kernel_info *k);

/* Parses "name value" lines (blank lines ignored). 0, -EINVAL on a malformed line, -ENOMEM. */
int ts_counters_parse(const char *content, struct ts_counter **out, size_t *n);
/* Looks a counter up by name: pointer to it or NULL. */
const struct ts_counter *ts_counter_find(const struct ts_kernel_info *k, const char *name);
/* Human sentence for a counters state ("debugfs is not mounted: mount -t debugfs none
 * /sys/kernel/debug"). */
const char *ts_counters_state_str(enum ts_counters_state s);

/* Per-CPU time from /proc/stat, in clock ticks. */
struct ts_cpu_times {
	bool valid;
	unsigned long long busy;  /* user+nice+system+irq+softirq+steal */
	unsigned long long total; /* busy + idle + iowait */
};

/*
 * Parses /proc/stat content: the "cpuN" lines into times[N] (N < ncpus; others ignored, missing
 * ones left invalid). 0 or -EINVAL.
 */
int ts_cpustat_parse(const char *content, struct ts_cpu_times *times, size_t ncpus);
/* Reads /proc/stat below the root into times[ncpus]. 0 or -errno. */
int ts_cpustat_read(struct ts_cpu_times *times, size_t ncpus);
/* Busy share between two samples in percent (0..100), -1 when unknown (invalid or no time passed).
 */
int ts_cpu_busy_pct(const struct ts_cpu_times *before, const struct ts_cpu_times *after);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by the benchmark programs of bench/ (on top of tests/guest/ktest.h):
 * latency sample sets with percentiles, time arithmetic and the "BENCH key=value" report line
 * that bench/run parses.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A growable set of samples (microseconds). */
struct bn_samples {
	double *v;
	size_t n, cap;
};

void bn_samples_add(struct bn_samples *s, double v);
void bn_samples_merge(struct bn_samples *dst, const struct bn_samples *src);
/* Sorts the set in place; @q in [0, 1]; NAN when empty. */
double bn_quantile(struct bn_samples *s, double q);
double bn_max(const struct bn_samples *s);
double bn_mean(const struct bn_samples *s);

void bn_ts_add_ns(struct timespec *ts, long long ns);
/* a - b in microseconds. */
double bn_ts_diff_us(const struct timespec *a, const struct timespec *b);
/* Sleep for a fixed measurement window (not a synchronisation). */
void bn_sleep(double seconds);

/* One line "BENCH k=v k=v ...": bn_begin(), then bn_kv*() calls, then bn_end(). */
void bn_begin(const char *what, const char *label);
void bn_kv(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bn_end(void);

/* The cores (first CPU of each) in spreading order: alternate NUMA nodes, then cores. */
int bn_spread_cpus(int *out, int max);

/* Per-CPU rq_cpu_time of /proc/schedstat (ns that tasks other than idle ran there); 0 if absent. */
void bn_schedstat_read(unsigned long long *ns, int max);
/* Sum of sum_exec_runtime (ns) over the threads of @pid (/proc/PID/task/[*]/schedstat). */
unsigned long long bn_proc_runtime_ns(int pid);
/* The same, and in *wait_ns the time they waited on a runqueue, runnable but not running. */
unsigned long long bn_proc_sched_ns(int pid, unsigned long long *wait_ns);

/* A KiB field of /proc/PID/status ("VmRSS", "VmHWM"), -1 if unknown. */
long bn_status_kib(int pid, const char *field);
/* Resident set of a process in KiB (VmRSS), -1 if unknown. */
long bn_rss_kib(int pid);

#endif

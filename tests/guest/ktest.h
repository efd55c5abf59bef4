/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers for the in-guest kernel tests: TAP output, the sched_setattr() call the tests make,
 * and readers for what the kernel exposes (/proc/PID/sched, debugfs counters, /proc/stat).
 * These programs run inside QEMU guests on the patched and the baseline kernel; they link
 * statically and need nothing but the kernel.
 */
#ifndef KTEST_H
#define KTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define KT_MAX_CPUS 64

/* TAP */
void kt_plan(int n);
void kt_ok(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kt_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void kt_bail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int kt_exit_status(void);

/*
 * Whether the harness booted a kernel with the series (tskernel=patched on the command line) or
 * Debian's unpatched tree (tskernel=baseline).  Without tskernel=, tsvariant= says it: callers
 * that boot only unpatched baselines need not know about packing switched off at boot.
 */
bool kt_patched(void);
/*
 * What kernel.sched_pack_jitter should read at boot: -1 on the unpatched tree, 0 when a
 * patched kernel is the baseline (switched off on its command line), 1 otherwise.
 */
int kt_sysctl_pack_at_boot(void);

/* sched_setattr() on @tid changing only util_max (and util_min when @util_min >= 0). */
int kt_set_util_max(pid_t tid, int util_max, int util_min, bool reset_on_fork);

/* The "jitter" line of /proc/PID/task/TID/sched: 0 or 1, -1 if the line is absent. */
int kt_task_jitter(pid_t pid, pid_t tid);

/* A counter of /sys/kernel/debug/sched/pack_jitter/stats, -1 if absent. */
long kt_stat(const char *name);
/*
 * The counters @names[0..@n) of that file from one read of it, so that they are a consistent
 * snapshot, into @out (-1 for each one the kernel lacks).
 */
void kt_stats(const char *const *names, int n, long *out);
/* Wait until kt_stat(@name) == @want, at most @timeout_ms; returns the last value read. */
long kt_stat_wait(const char *name, long want, int timeout_ms);

/* kernel.sched_pack_jitter: 0/1, -1 if the sysctl does not exist. */
int kt_sysctl_pack(void);
int kt_sysctl_pack_set(int on);

int kt_nr_cpus(void);
/* The integer a /proc or /sys file starts with, -1 if it cannot be read. */
int kt_read_int(const char *path);
/* The CPU @pid last ran on (field 39 of /proc/PID/stat), -1 if unknown. */
int kt_task_cpu(pid_t pid);
/*
 * Whether SMT is active, as the scheduler's sched_smt_active() sees it: smt/active in sysfs,
 * else whether any online CPU has a sibling.  Packing needs it.
 */
bool kt_smt_active(void);
/* The first CPU of @cpu's core (thread_siblings_list), and its NUMA node. */
int kt_core_of(int cpu);
int kt_node_of(int cpu);

/* Busy and total jiffies of one CPU from /proc/stat. */
struct kt_cpustat {
	unsigned long long busy[KT_MAX_CPUS];
	unsigned long long total[KT_MAX_CPUS];
};
void kt_cpustat_read(struct kt_cpustat *s);

/* Parse "0,2-3" into a bitmask of CPUs; returns -1 on a malformed list. */
int kt_parse_cpulist(const char *list, uint64_t *mask);

double kt_now(void);
double kt_thread_cpu(void);
/* Burns @seconds of this thread's CPU time. */
void kt_spin_for(double seconds);
/*
 * A hog pinned to @cpu (left where the scheduler puts it if @cpu < 0), busy @duty percent of
 * each 10 ms (100: always); never returns.
 */
_Noreturn void kt_hog(int cpu, int duty);
void kt_pin(pid_t tid, uint64_t mask);

#endif

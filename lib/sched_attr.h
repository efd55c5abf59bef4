/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched_getattr/sched_setattr wrappers for utilization clamps.
 *
 * Jitter classification is util_max == 0 (and only 0). Every write uses SCHED_FLAG_KEEP_POLICY |
 * SCHED_FLAG_KEEP_PARAMS so policy, nice and RT priority are never touched. The raw syscalls go
 * through a replaceable struct of function pointers, so unit tests can inject fakes without root or
 * uclamp.
 */
#ifndef TS_SCHED_ATTR_H
#define TS_SCHED_ATTR_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "build_config.h"

/*
 * The kernel's own names (include/uapi/linux/sched.h, sched/types.h), defined here only where the
 * C library's headers do not, as util-linux's schedutils/sched_attr.h does: glibc 2.41 declares
 * struct sched_attr in <sched.h>, Debian 12's 2.36 does not (meson checks: HAVE_STRUCT_SCHED_ATTR).
 * <linux/sched/types.h> is not included: it clashes with a glibc that has the struct.
 */
#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif
#ifndef SCHED_FLAG_KEEP_POLICY
#define SCHED_FLAG_KEEP_POLICY 0x08
#endif
#ifndef SCHED_FLAG_KEEP_PARAMS
#define SCHED_FLAG_KEEP_PARAMS 0x10
#endif
#ifndef SCHED_FLAG_UTIL_CLAMP_MIN
#define SCHED_FLAG_UTIL_CLAMP_MIN 0x20
#endif
#ifndef SCHED_FLAG_UTIL_CLAMP_MAX
#define SCHED_FLAG_UTIL_CLAMP_MAX 0x40
#endif

/* Size of struct sched_attr with the utilization clamp fields. */
#ifndef SCHED_ATTR_SIZE_VER1
#define SCHED_ATTR_SIZE_VER1 56
#endif

#ifndef HAVE_STRUCT_SCHED_ATTR
struct sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
	uint32_t sched_util_min;
	uint32_t sched_util_max;
};
#endif

/* Maximum clamp value (SCHED_CAPACITY_SCALE). */
#define TS_UCLAMP_MAX_VALUE 1024u
/* Writing this value resets a clamp to the kernel default (util_max 1024; util_min 0, RT default).
 */
#define TS_UCLAMP_RESET UINT32_MAX
/* The one util_max value that means "jitter task". */
#define TS_JITTER_UTIL_MAX 0u

/* The syscall layer. Both return 0 or -1 with errno set, like the raw syscalls. */
struct ts_sched_ops {
	int (*setattr)(pid_t tid, struct sched_attr *attr, unsigned int flags);
	int (*getattr)(pid_t tid, struct sched_attr *attr, unsigned int size, unsigned int flags);
};

/* The real syscalls. */
extern const struct ts_sched_ops ts_sched_ops_syscall;
/* Replaces the syscall layer (NULL restores the real one). Not thread-safe: call at start-up. */
void ts_sched_ops_set(const struct ts_sched_ops *ops);

/* A task's current scheduling policy and requested clamps, as sched_getattr reports them. */
struct ts_clamp {
	uint32_t policy;
	uint32_t util_min;
	uint32_t util_max;
	/*
	 * false on a kernel without CONFIG_UCLAMP_TASK: sched_getattr then reports util_max 0 for
	 * every task, which must not read as "jitter"; util_min/util_max hold the defaults instead.
	 */
	bool valid;
};

/*
 * Reads the clamps of one thread. 0 or -errno (-ESRCH when gone). Whether the kernel has uclamp at
 * all is checked through ts_kernel_has_uclamp() (below the configurable root).
 */
int ts_clamp_get(pid_t tid, struct ts_clamp *out);

/*
 * Builds the attribute for a clamp-only change. TS_UCLAMP_RESET in a field means "reset to
 * default"; set_min false leaves util_min alone (the UTIL_CLAMP_MIN flag is not set).
 */
void ts_sched_attr_encode(struct sched_attr *attr, bool set_min, uint32_t util_min,
                          uint32_t util_max);

/* Writes util_max (and util_min when set_min). 0 or -errno. */
int ts_clamp_set(pid_t tid, bool set_min, uint32_t util_min, uint32_t util_max);

/* True when this clamp classifies the task as a jitter task (valid and util_max == 0). */
bool ts_clamp_is_jitter(const struct ts_clamp *c);

/* True for SCHED_FIFO/SCHED_RR, whose util_min defaults to 1024. */
bool ts_policy_is_rt(uint32_t policy);
/* "normal", "fifo", "rr", "batch", "idle", "deadline" or "unknown". */
const char *ts_policy_name(uint32_t policy);

/*
 * A message a person can act on for an errno returned by ts_clamp_set/ts_clamp_get, e.g. EOPNOTSUPP
 * -> "this kernel has no utilization clamping (CONFIG_UCLAMP_TASK)". Never NULL.
 */
const char *ts_sched_strerror(int err);

#endif

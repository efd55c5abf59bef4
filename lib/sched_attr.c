/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "sched_attr.h"

#include "kernel.h"

#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

/* Whoever declared it, it must hold the clamp fields at the kernel's offsets. */
_Static_assert(sizeof(struct sched_attr) >= SCHED_ATTR_SIZE_VER1, "struct sched_attr lacks VER1");
_Static_assert(offsetof(struct sched_attr, sched_util_max) == SCHED_ATTR_SIZE_VER1 - 4,
               "struct sched_attr: util_max not where the kernel reads it");

static int sys_setattr(pid_t tid, struct sched_attr *attr, unsigned int flags)
{
	return (int)syscall(SYS_sched_setattr, tid, attr, flags);
}

static int sys_getattr(pid_t tid, struct sched_attr *attr, unsigned int size, unsigned int flags)
{
	return (int)syscall(SYS_sched_getattr, tid, attr, size, flags);
}

const struct ts_sched_ops ts_sched_ops_syscall = {
    .setattr = sys_setattr,
    .getattr = sys_getattr,
};

static const struct ts_sched_ops *ops = &ts_sched_ops_syscall;

void ts_sched_ops_set(const struct ts_sched_ops *o)
{
	ops = o ? o : &ts_sched_ops_syscall;
}

int ts_clamp_get(pid_t tid, struct ts_clamp *out)
{
	struct sched_attr attr;

	memset(&attr, 0, sizeof(attr));
	if (ops->getattr(tid, &attr, sizeof(attr), 0) < 0)
		return -errno;
	out->policy = attr.sched_policy;
	/* Without uclamp the kernel still copies 56 bytes, with the clamp fields left 0. */
	out->valid = attr.size >= SCHED_ATTR_SIZE_VER1 && ts_kernel_has_uclamp();
	if (!out->valid) {
		out->util_min = 0;
		out->util_max = TS_UCLAMP_MAX_VALUE;
	} else {
		out->util_min = attr.sched_util_min;
		out->util_max = attr.sched_util_max;
	}
	return 0;
}

void ts_sched_attr_encode(struct sched_attr *attr, bool set_min, uint32_t util_min,
                          uint32_t util_max)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = SCHED_ATTR_SIZE_VER1;
	/* KEEP_* make the kernel ignore policy, nice and priority: only the clamps change. */
	attr->sched_flags =
	    SCHED_FLAG_KEEP_POLICY | SCHED_FLAG_KEEP_PARAMS | SCHED_FLAG_UTIL_CLAMP_MAX;
	attr->sched_util_max = util_max;
	if (set_min) {
		attr->sched_flags |= SCHED_FLAG_UTIL_CLAMP_MIN;
		attr->sched_util_min = util_min;
	}
}

int ts_clamp_set(pid_t tid, bool set_min, uint32_t util_min, uint32_t util_max)
{
	struct sched_attr attr;

	ts_sched_attr_encode(&attr, set_min, util_min, util_max);
	if (ops->setattr(tid, &attr, 0) < 0)
		return -errno;
	return 0;
}

bool ts_clamp_is_jitter(const struct ts_clamp *c)
{
	return c->valid && c->util_max == TS_JITTER_UTIL_MAX;
}

bool ts_policy_is_rt(uint32_t policy)
{
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

const char *ts_policy_name(uint32_t policy)
{
	switch (policy) {
	case SCHED_OTHER:
		return "normal";
	case SCHED_FIFO:
		return "fifo";
	case SCHED_RR:
		return "rr";
	case SCHED_BATCH:
		return "batch";
	case SCHED_IDLE:
		return "idle";
	case SCHED_DEADLINE:
		return "deadline";
	default:
		return "unknown";
	}
}

const char *ts_sched_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EOPNOTSUPP:
		return "this kernel has no utilization clamping (CONFIG_UCLAMP_TASK)";
	case ESRCH:
		return "no such process";
	case EPERM:
		return "permission denied: changing another user's task needs CAP_SYS_NICE";
	case EINVAL:
		return "the kernel refused the clamp values (util_min above util_max, or out of "
		       "range)";
	case E2BIG:
		return "the kernel does not know the sched_attr layout used";
	case ENOSYS:
		return "this kernel has no sched_setattr system call";
	default:
		return strerror(err);
	}
}

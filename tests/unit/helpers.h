/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test helpers for the lib/cli tests: temporary /proc trees written by the test, and an in-memory
 * replacement for sched_getattr/sched_setattr (no root, no uclamp needed).
 */
#ifndef TS_TEST_HELPERS_H
#define TS_TEST_HELPERS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sched_attr.h"

/* Runs every test of s; the process exit status (EXIT_SUCCESS when none failed). */
int run_suite(Suite *s);

/*
 * Appends one netlink message carrying a cn_msg (connector idx, CN_VAL_PROC) of evlen payload
 * bytes at buf + *len, as the kernel's proc connector sends it; returns the payload to fill in
 * (zeroed) and advances *len by the aligned message size.
 */
struct proc_event;
struct proc_event *nl_put_proc_event(void *buf, size_t *len, unsigned int idx, size_t evlen);

/* Path of a committed fixture tree (FIXTURES environment variable set by meson). */
const char *fixture(const char *name);

/* A fresh temporary root with proc/sys/kernel/sched_util_clamp_max; ts_root_set() to it. */
const char *tree_new(void);
/* Removes the tree and resets the root. */
void tree_free(void);
/* Writes root/relpath (creating directories). */
void tree_write(const char *relpath, const char *content);
void tree_remove(const char *relpath);
/* Makes root/relpath (creating directories) a symbolic link to target. */
void tree_symlink(const char *relpath, const char *target);
/*
 * Adds thread tid of process tgid: proc/TGID/task/TID/{stat,status,cgroup} and, as the kernel
 * resolves /proc/TID for any thread, proc/TID/task/TID/stat too.
 */
void tree_add_task(pid_t tgid, pid_t tid, const char *comm, unsigned long long starttime, int cpu,
                   uid_t uid);
/* tree_add_task() with a parent process other than 1. */
void tree_add_child(pid_t ppid, pid_t tgid, pid_t tid, const char *comm, unsigned long long st,
                    int cpu, uid_t uid);
/* Rewrites the start time of tid in both places (a reused TID). */
void tree_set_starttime(pid_t tgid, pid_t tid, unsigned long long starttime);
/* Removes a thread (it exited). */
void tree_remove_task(pid_t tgid, pid_t tid);

/* The fake syscall layer. */
#define FAKE_MAX 2048
struct fake_task {
	pid_t tid;
	bool exists;
	uint32_t policy, util_min, util_max;
	int set_errno; /* setattr fails with this when non-zero */
};
struct fake_sched {
	struct fake_task t[FAKE_MAX];
	int n;
	int nset;               /* setattr calls */
	struct sched_attr last; /* the last attr passed to setattr */
	unsigned int last_flags;
	/* Called after a successful setattr of tid (for reuse simulation). */
	void (*after_set)(pid_t tid);
	/* Called at getattr of tid (for "vanishes mid-walk" simulation). */
	void (*before_get)(pid_t tid);
};
extern struct fake_sched fake;
/* Resets the fake and installs it as the syscall layer. */
void fake_install(void);
struct fake_task *fake_add(pid_t tid, uint32_t policy, uint32_t util_min, uint32_t util_max);
struct fake_task *fake_get(pid_t tid);

#endif

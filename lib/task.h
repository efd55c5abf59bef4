/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading one task (thread) from /proc, and listing processes and threads.
 *
 * A task's identity is (tid, starttime): a bare TID can be reused by a stranger between two reads,
 * the start time (field 22 of stat, clock ticks since boot) cannot repeat for the same TID in
 * practice.
 */
#ifndef TS_TASK_H
#define TS_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TS_COMM_LEN 64
/* The kernel builds /proc/PID/cgroup lines in a PATH_MAX buffer: every real path fits. */
#define TS_CGROUP_LEN 4096

/* The fields of /proc/PID/task/TID/stat the project uses. */
struct ts_stat {
	char comm[TS_COMM_LEN]; /* between the first '(' and the LAST ')' */
	char state;
	pid_t ppid;
	unsigned long long starttime; /* field 22 */
	int cpu;                      /* field 39: CPU it last ran on */
	unsigned int policy;          /* field 41 */
};

/* Parses one stat line. 0 or -EINVAL when malformed. */
int ts_stat_parse(const char *line, struct ts_stat *out);

/*
 * Picks the cgroup path from /proc/PID/cgroup content: the v2 "0::" line if present, else the v1
 * line of the cpu controller, else name=systemd. -ENOENT when there is none, -ENAMETOOLONG when too
 * long.
 */
int ts_cgroup_parse(const char *content, char *out, size_t len);

struct ts_task {
	pid_t tid;
	pid_t tgid;
	pid_t ppid; /* the parent process (stat field 4) */
	unsigned long long starttime;
	char comm[TS_COMM_LEN];
	char state;
	int cpu;
	unsigned int policy;
	uid_t ruid, euid;           /* from status "Uid:" */
	char cgroup[TS_CGROUP_LEN]; /* "" when unknown (unreadable or longer than the kernel allows)
	                             */
	int jitter; /* from .../sched "jitter": 1, 0, or -1 when the line is absent */
};

/* The optional parts of a task; stat (identity, comm, parent, CPU) is always read. */
enum ts_task_part {
	TS_TASK_STATUS = 1 << 0, /* ruid, euid; also read whenever the tgid is to be looked up */
	TS_TASK_CGROUP = 1 << 1,
	TS_TASK_SCHED = 1 << 2, /* jitter */
	TS_TASK_ALL = TS_TASK_STATUS | TS_TASK_CGROUP | TS_TASK_SCHED,
};

/*
 * Reads a task below the root: stat (required), and of status, cgroup and sched (optional;
 * missing ones leave defaults) those in `parts`. tgid 0 means "look up the tgid" (tid is read
 * from /proc/TID). Returns 0, -ESRCH when the task does not exist (any more), or another -errno.
 */
int ts_task_read_parts(pid_t tgid, pid_t tid, unsigned int parts, struct ts_task *out);

/* ts_task_read_parts() with TS_TASK_ALL. */
int ts_task_read(pid_t tgid, pid_t tid, struct ts_task *out);

/* Only the start time (cheap, for identity re-checks). 0, -ESRCH or -errno. */
int ts_task_starttime(pid_t tgid, pid_t tid, unsigned long long *out);

/* Value of the "jitter" line of a /proc/.../sched file's content: 1, 0, or -1 when absent. */
int ts_sched_jitter_parse(const char *content);

/* A growable list of PIDs/TIDs. */
struct ts_pidlist {
	pid_t *v;
	size_t n, cap;
};
void ts_pidlist_free(struct ts_pidlist *l);

/* All processes (numeric entries of /proc), ascending. 0 or -errno. */
int ts_list_processes(struct ts_pidlist *out);
/* All threads of a process (/proc/TGID/task), ascending. -ESRCH when the process is gone. */
int ts_list_threads(pid_t tgid, struct ts_pidlist *out);

#endif

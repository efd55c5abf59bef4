// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Classification and accounting: util_max = 0 (and only 0) makes a jitter task, visible in
 * /proc/PID/sched and in the debugfs counters; the count and the static key return to where
 * they started after fork/exit storms, reset-on-fork and exec of tagged threads.
 *
 * On the baseline kernel the same steps must show no jitter state at all.
 */
#define _GNU_SOURCE
#include "ktest.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STORM 1000
/*
 * A reaped task stays counted until its final context switch, which may come after the
 * parent's waitpid() returned (often so on the debug kernel): wait for the count, bounded.
 */
#define DEAD_SWITCH_MS 2000

static pid_t self(void)
{
	return gettid();
}

/* What a kernel is expected to show for a task that is (1) or is not (0) a jitter task. */
static int want(int jitter)
{
	return kt_patched() ? jitter : -1;
}

static long want_count(long patched_value)
{
	return kt_patched() ? patched_value : -1;
}

static void test_values(long base)
{
	static const int not_jitter[] = {1, 204, 205, 1024};

	kt_ok(kt_set_util_max(0, 0, -1, false) == 0, "sched_setattr util_max=0: %s",
	      strerror(errno));
	kt_ok(kt_task_jitter(getpid(), self()) == want(1), "util_max=0 shows as jitter (%d)",
	      kt_task_jitter(getpid(), self()));
	kt_ok(kt_stat("jitter_tasks") == want_count(base + 1), "jitter_tasks counts it (%ld)",
	      kt_stat("jitter_tasks"));
	kt_ok(kt_stat("key") == want_count(1), "static key on with a jitter task (%ld)",
	      kt_stat("key"));
	for (unsigned int i = 0; i < sizeof(not_jitter) / sizeof(not_jitter[0]); i++) {
		kt_set_util_max(0, not_jitter[i], -1, false);
		kt_ok(kt_task_jitter(getpid(), self()) == want(0) &&
		          kt_stat("jitter_tasks") == want_count(base),
		      "util_max=%d is not jitter (jitter %d, count %ld)", not_jitter[i],
		      kt_task_jitter(getpid(), self()), kt_stat("jitter_tasks"));
		kt_set_util_max(0, 0, -1, false);
	}
	kt_set_util_max(0, 1024, -1, false);
}

static void test_storm(long base)
{
	int fd[2], bad = 0;
	long count;
	pid_t watched;
	char c;

	kt_set_util_max(0, 0, -1, false);
	if (pipe(fd))
		kt_bail("pipe: %s", strerror(errno));
	watched = fork();
	if (watched == 0) {
		read(fd[0], &c, 1); /* held until the parent has looked at it */
		_exit(0);
	}
	kt_ok(kt_task_jitter(watched, watched) == want(1), "a child inherits the class (%d)",
	      kt_task_jitter(watched, watched));
	kt_ok(kt_stat("jitter_tasks") == want_count(base + 2), "and is counted (%ld)",
	      kt_stat("jitter_tasks"));
	write(fd[1], "x", 1);
	waitpid(watched, NULL, 0);

	for (int i = 0; i < STORM; i++) {
		pid_t pid = fork();

		if (pid < 0)
			kt_bail("fork %d: %s", i, strerror(errno));
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, NULL, 0) != pid)
			bad++;
	}
	count = kt_stat_wait("jitter_tasks", want_count(base + 1), DEAD_SWITCH_MS);
	kt_ok(bad == 0 && count == want_count(base + 1),
	      "count back to parent-only after %d tagged children forked and exited (%ld)", STORM,
	      count);
	kt_set_util_max(0, 1024, -1, false);
	kt_ok(kt_stat("jitter_tasks") == want_count(base), "count back to start (%ld)",
	      kt_stat("jitter_tasks"));
}

static void test_reset_on_fork(long base)
{
	int fd[2];
	pid_t child;
	char c;

	kt_set_util_max(0, 0, -1, true);
	if (pipe(fd))
		kt_bail("pipe: %s", strerror(errno));
	child = fork();
	if (child == 0) {
		read(fd[0], &c, 1);
		_exit(0);
	}
	kt_ok(kt_task_jitter(child, child) == want(0) &&
	          kt_stat("jitter_tasks") == want_count(base + 1),
	      "reset-on-fork: the child is not jitter (%d, count %ld)",
	      kt_task_jitter(child, child), kt_stat("jitter_tasks"));
	write(fd[1], "x", 1);
	waitpid(child, NULL, 0);
	kt_set_util_max(0, 1024, -1, false);
}

static pthread_barrier_t barrier;

static void *tagged_thread(void *arg)
{
	kt_set_util_max(0, 0, -1, false);
	pthread_barrier_wait(&barrier);
	if (arg) /* the exec'ing thread: de_thread() kills the others */
		execl("/proc/self/exe", "t_lifecycle", "--exec-child", (char *)NULL);
	for (;;)
		pause();
	return NULL;
}

static void test_exec(long base, const char *self_path)
{
	int status = -1;
	long count;
	pid_t pid = fork();

	(void)self_path;
	if (pid == 0) {
		pthread_t t[4];

		pthread_barrier_init(&barrier, NULL, 5);
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, tagged_thread, i == 3 ? (void *)1 : NULL);
		pthread_barrier_wait(&barrier);
		for (;;)
			pause();
	}
	waitpid(pid, &status, 0);
	kt_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "a tagged thread keeps its class across exec (status %d)", status);
	count = kt_stat_wait("jitter_tasks", want_count(base), DEAD_SWITCH_MS);
	kt_ok(count == want_count(base),
	      "count back to start after tagged threads exec and exit (%ld)", count);
}

static void test_rt(void)
{
	struct sched_param sp = {.sched_priority = 10};
	int einval, ok;

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		kt_bail("SCHED_FIFO: %s", strerror(errno));
	einval = kt_set_util_max(0, 0, -1, false) != 0 && errno == EINVAL;
	ok = kt_set_util_max(0, 0, 0, false) == 0;
	kt_ok(einval && ok && kt_task_jitter(getpid(), self()) == want(1),
	      "RT task: util_max=0 alone is EINVAL, with util_min=0 it is jitter");
	kt_set_util_max(0, 1024, 1024, false);
	sp.sched_priority = 0;
	sched_setscheduler(0, SCHED_OTHER, &sp);
}

int main(int argc, char **argv)
{
	long base, key_end;

	if (argc > 1 && strcmp(argv[1], "--exec-child") == 0)
		return kt_task_jitter(getpid(), gettid()) == want(1) ? 0 : 3;
	setvbuf(stdout, NULL, _IOLBF, 0);
	base = kt_patched() ? kt_stat("jitter_tasks") : -1;
	if (kt_patched() && base < 0)
		kt_bail("patched kernel without /sys/kernel/debug/sched/pack_jitter/stats");
	if (base < 0)
		base = 0;
	kt_plan(18);
	kt_ok(kt_sysctl_pack() == kt_sysctl_pack_at_boot(),
	      "kernel.sched_pack_jitter is %d (want %d)", kt_sysctl_pack(),
	      kt_sysctl_pack_at_boot());
	test_values(base);
	test_storm(base);
	test_reset_on_fork(base);
	test_exec(base, argv[0]);
	test_rt();
	key_end = kt_stat_wait("key", want_count(0), 5000);
	kt_ok(key_end == want_count(0) && kt_stat("jitter_tasks") == want_count(base),
	      "with no jitter task left the key turns off (key %ld, count %ld)", key_end,
	      kt_stat("jitter_tasks"));
	return kt_exit_status();
}

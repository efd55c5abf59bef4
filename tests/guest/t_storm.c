// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress the jitter accounting: several threads fork and reap tagged children while others
 * tag and untag those children (and each other) as fast as they can, some with
 * reset-on-fork, some exec'ing.  Afterwards the jitter count and the static key must be back
 * exactly where they started.  Run it on a debug kernel (lockdep, atomic-sleep checks): the
 * harness fails the boot on any splat.
 *
 *   t_storm [--seconds S] [--forkers N] [--taggers N]
 */
#define _GNU_SOURCE
#include "ktest.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS 64

static atomic_int stop;
static _Atomic pid_t victims[SLOTS];
static atomic_long forks, tags, execs;

static void *forker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	kt_set_util_max(0, 0, -1, false);
	while (!stop) {
		int how = rand_r(&seed) % 8;
		pid_t pid;

		/* Some children are born with reset-on-fork, some exec, the rest just live. */
		kt_set_util_max(0, 0, -1, how == 0);
		pid = fork();
		if (pid < 0)
			continue;
		if (pid == 0) {
			if (how == 1)
				execl("/proc/self/exe", "t_storm", "--exec-child", (char *)NULL);
			for (int i = 0; i < 200; i++)
				sched_yield();
			_exit(0);
		}
		atomic_store(&victims[rand_r(&seed) % SLOTS], pid);
		waitpid(pid, NULL, 0);
		forks++;
		if (how == 1)
			execs++;
	}
	kt_set_util_max(0, 1024, -1, false);
	return NULL;
}

static void *tagger(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!stop) {
		pid_t pid = atomic_load(&victims[rand_r(&seed) % SLOTS]);
		int value = (rand_r(&seed) % 2) ? 0 : (int)(rand_r(&seed) % 1025);

		/* Tasks that are gone or exiting are fair game: ESRCH is expected. */
		if (pid > 0 && kt_set_util_max(pid, value, -1, false) == 0)
			tags++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = 10, nforkers = 3, ntaggers = 3, c;
	pthread_t threads[32];
	long base, key0, end, key, runnable;
	int n = 0;

	if (argc > 1 && strcmp(argv[1], "--exec-child") == 0)
		return 0;
	while ((c = getopt(argc, argv, "s:f:t:")) != -1) {
		switch (c) {
		case 's':
			seconds = atoi(optarg);
			break;
		case 'f':
			nforkers = atoi(optarg);
			break;
		case 't':
			ntaggers = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: t_storm [-s SECONDS] [-f FORKERS] [-t TAGGERS]\n");
			return 2;
		}
	}
	if (nforkers + ntaggers > 32)
		kt_bail("at most 32 threads");
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGCHLD, SIG_DFL);
	base = kt_stat("jitter_tasks");
	key0 = kt_stat_wait("key", kt_patched() ? 0 : -1, 5000);
	kt_plan(5);
	kt_ok(kt_patched() ? base == 0 && key0 == 0 : base == -1,
	      "start: %ld jitter tasks, key %ld", base, key0);

	for (int i = 0; i < nforkers; i++)
		pthread_create(&threads[n++], NULL, forker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < ntaggers; i++)
		pthread_create(&threads[n++], NULL, tagger, (void *)(uintptr_t)(i + 100));
	struct timespec t = {seconds, 0};
	nanosleep(&t, NULL);
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);

	kt_diag("RESULT forks=%ld execs=%ld setattrs=%ld", (long)forks, (long)execs, (long)tags);
	kt_ok(forks > 100 && tags > 100, "storm ran: %ld forks, %ld successful setattrs",
	      (long)forks, (long)tags);
	end = kt_stat("jitter_tasks");
	kt_ok(end == base, "jitter count back to %ld (now %ld)", base, end);
	key = kt_stat_wait("key", key0, 5000);
	kt_ok(key == key0, "static key back to %ld (now %ld)", key0, key);
	/* With no jitter task left, every runnable one counted must have been uncounted. */
	runnable = kt_stat("jitter_runnable");
	kt_ok(runnable == (kt_patched() ? 0 : -1), "runnable jitter tasks counted: %ld (want %d)",
	      runnable, kt_patched() ? 0 : -1);
	return kt_exit_status();
}

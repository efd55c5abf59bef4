// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The workload of the end-to-end guests, installed under several names so the daemon's comm
 * rules can tell the copies apart (the comm is the name it was started as):
 *
 *   e2e-worker [--work-ms W] [--period-ms P] [--seconds S] [--warmup S] [--report FILE]
 *   e2e-worker --spin
 *   e2e-worker --children N --affinity LIST [periodic options]
 *   e2e-worker --threads N [periodic options]
 *
 * Periodic (the default, 1 ms of work every 10 ms, forever): a jitter-like task.  With
 * --report, it attributes its own CPU time to the CPU it runs on (sched_getcpu() while it
 * works, after --warmup seconds) and writes "cpu N SECONDS" lines and "periods N" to FILE
 * when --seconds have passed or on SIGTERM, then exits.  --spin: a CPU hog, forever.
 *
 * --children N: a parent that waits (polling its own clamp, 30 s at most) until it has been
 * tagged (util_max 0, by a daemon rule on its name), then forks N periodic children, which
 * inherit the tag at fork, so the kernel places them as jitter tasks from their first run;
 * each sets its affinity to LIST (e.g. 0-3) and reports to FILE.1 ... FILE.N.  Child i starts
 * its periods (i - 1) / N of a period after child 1: children forked back to back would
 * otherwise wake together all run, and each would find the other running on the busy CPU,
 * which the kernel does not count as busy (docs/known-problems.md).
 *
 * --threads N: the process has N threads in all; the N - 1 extra ones only block, so that
 * tagging "every thread of a process" has several threads to find.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CPUS 64

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void add_us(struct timespec *ts, long us)
{
	ts->tv_nsec += us * 1000L;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

struct sched_attr_v1 {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};

static long util_max_self(void)
{
	struct sched_attr_v1 a;

	memset(&a, 0, sizeof(a));
	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) || a.size < sizeof(a))
		return -1; /* a kernel without uclamp fills no util fields */
	return a.sched_util_max;
}

static void *blocked_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int set_affinity(const char *list)
{
	cpu_set_t set;
	char *copy = strdup(list), *tok, *save = NULL;

	CPU_ZERO(&set);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int a = atoi(tok), b = strchr(tok, '-') ? atoi(strchr(tok, '-') + 1) : a;

		for (int c = a; c <= b && c < CPU_SETSIZE; c++)
			CPU_SET(c, &set);
	}
	free(copy);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void usage(void)
{
	fprintf(stderr, "usage: e2e-worker [--work-ms W] [--period-ms P] [--seconds S] "
	                "[--warmup S] [--report FILE] [--threads N] | --spin\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"work-ms", 1, 0, 'w'},  {"period-ms", 1, 0, 'p'},
	    {"seconds", 1, 0, 's'},  {"warmup", 1, 0, 'W'},
	    {"report", 1, 0, 'r'},   {"spin", 0, 0, 'S'},
	    {"children", 1, 0, 'c'}, {"affinity", 1, 0, 'a'},
	    {"threads", 1, 0, 't'},  {0, 0, 0, 0},
	};
	long work_ms = 1, period_ms = 10;
	double seconds = 0, warmup = 1;
	const char *report = NULL, *affinity = NULL;
	int spin = 0, children = 0, threads = 1, c;
	long phase_us = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'w':
			work_ms = atol(optarg);
			break;
		case 'p':
			period_ms = atol(optarg);
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'W':
			warmup = atof(optarg);
			break;
		case 'r':
			report = optarg;
			break;
		case 'S':
			spin = 1;
			break;
		case 'c':
			children = atoi(optarg);
			break;
		case 'a':
			affinity = optarg;
			break;
		case 't':
			threads = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || work_ms < 0 || period_ms <= 0 || work_ms > period_ms || threads < 1)
		usage();
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	for (int i = 1; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, blocked_thread, NULL)) {
			fprintf(stderr, "e2e-worker: cannot start thread %d of %d\n", i + 1,
			        threads);
			return 1;
		}
	}
	if (children > 0) {
		struct timespec poll = {0, 10 * 1000 * 1000};
		char path[4096];
		int i;

		for (i = 0; i < 3000 && util_max_self() != 0; i++)
			nanosleep(&poll, NULL);
		if (util_max_self() != 0) {
			fprintf(stderr, "e2e-worker: not tagged within 30 s: no child started\n");
			return 1;
		}
		for (i = 1; i <= children; i++) {
			pid_t p = fork();

			if (p < 0)
				return 1;
			if (p == 0) {
				if (affinity && set_affinity(affinity))
					_exit(1);
				if (report) {
					snprintf(path, sizeof(path), "%s.%d", report, i);
					report = strdup(path);
				}
				phase_us = (i - 1) * period_ms * 1000L / children;
				children = 0;
				break;
			}
		}
		if (children > 0) {
			int st, bad = 0;

			while (wait(&st) > 0)
				bad |= !WIFEXITED(st) || WEXITSTATUS(st);
			return bad;
		}
	}
	if (spin) {
		while (!stop)
			;
		return 0;
	}

	static double cpu_time[MAX_CPUS];
	long periods = 0;
	double start = now(CLOCK_MONOTONIC);
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	if (phase_us) {
		add_us(&next, phase_us);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	while (!stop) {
		double t = now(CLOCK_MONOTONIC) - start;
		int measuring = t >= warmup;
		double last = now(CLOCK_THREAD_CPUTIME_ID), end = last + work_ms / 1000.0;

		if (seconds > 0 && t >= warmup + seconds)
			break;
		while (last < end) {
			int cpu = sched_getcpu();
			double n = now(CLOCK_THREAD_CPUTIME_ID);

			if (measuring && cpu >= 0 && cpu < MAX_CPUS)
				cpu_time[cpu] += n - last;
			last = n;
		}
		periods += measuring;
		add_us(&next, period_ms * 1000L);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR &&
		       !stop)
			;
	}
	if (report) {
		FILE *f = fopen(report, "w");

		if (!f) {
			fprintf(stderr, "e2e-worker: cannot write %s: %s\n", report,
			        strerror(errno));
			return 1;
		}
		for (int i = 0; i < MAX_CPUS; i++)
			if (cpu_time[i] > 0)
				fprintf(f, "cpu %d %.6f\n", i, cpu_time[i]);
		fprintf(f, "periods %ld\n", periods);
		if (fclose(f)) {
			fprintf(stderr, "e2e-worker: cannot write %s: %s\n", report,
			        strerror(errno));
			return 1;
		}
	}
	return 0;
}

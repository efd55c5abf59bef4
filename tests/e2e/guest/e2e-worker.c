// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The workload of the end-to-end guests, installed under several names so the daemon's comm
 * rules can tell the copies apart (the comm is the name it was started as):
 *
 *   e2e-worker [--work-ms W] [--period-ms P] [--seconds S] [--warmup S] [--report FILE]
 *   e2e-worker --spin
 *
 * Periodic (the default, 1 ms of work every 10 ms, forever): a jitter-like task.  With
 * --report, it attributes its own CPU time to the CPU it runs on (sched_getcpu() while it
 * works, after --warmup seconds) and writes "cpu N SECONDS" lines and "periods N" to FILE
 * when --seconds have passed or on SIGTERM, then exits.  --spin: a CPU hog, forever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

static void add_ms(struct timespec *ts, long ms)
{
	ts->tv_nsec += ms * 1000000L;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: e2e-worker [--work-ms W] [--period-ms P] [--seconds S] "
			"[--warmup S] [--report FILE] | --spin\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "work-ms", 1, 0, 'w' }, { "period-ms", 1, 0, 'p' }, { "seconds", 1, 0, 's' },
		{ "warmup", 1, 0, 'W' },  { "report", 1, 0, 'r' },    { "spin", 0, 0, 'S' },
		{ 0, 0, 0, 0 },
	};
	long work_ms = 1, period_ms = 10;
	double seconds = 0, warmup = 1;
	const char *report = NULL;
	int spin = 0, c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'w': work_ms = atol(optarg); break;
		case 'p': period_ms = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'W': warmup = atof(optarg); break;
		case 'r': report = optarg; break;
		case 'S': spin = 1; break;
		default: usage();
		}
	}
	if (optind != argc || work_ms < 0 || period_ms <= 0 || work_ms > period_ms)
		usage();
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
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
		add_ms(&next, period_ms);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR && !stop)
			;
	}
	if (report) {
		FILE *f = fopen(report, "w");

		if (!f) {
			fprintf(stderr, "e2e-worker: cannot write %s: %s\n", report, strerror(errno));
			return 1;
		}
		for (int i = 0; i < MAX_CPUS; i++)
			if (cpu_time[i] > 0)
				fprintf(f, "cpu %d %.6f\n", i, cpu_time[i]);
		fprintf(f, "periods %ld\n", periods);
		if (fclose(f)) {
			fprintf(stderr, "e2e-worker: cannot write %s: %s\n", report, strerror(errno));
			return 1;
		}
	}
	return 0;
}

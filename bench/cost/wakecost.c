// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cost of placing a jitter task at wake-up, in the guest: periodic tasks with util_max = 0
 * wake up again and again, optionally beside CPU hogs, and the benchmark-only kernel patch
 * bench/cost/measure-select.patch times each ->select_task_rq() call for such tasks into a
 * histogram (/sys/kernel/debug/wakecost).  Under QEMU's -icount the guest clock counts
 * instructions (2^shift ns each); a call during which QEMU runs other vCPUs counts theirs too,
 * so the median is the figure, and bench/cost/run checks it by calibration.
 *
 *   wakecost --label NAME [--hogs LIST] [--jitter N] [--work-us W] [--period-us P]
 *            [--seconds S] [--pack on|off]
 *
 * Prints one line "RESULT label=NAME cpus=N pack=... n=... p50_ns=... mean_ns=... p90_ns=...
 * p99_ns=... packed=... fallback=..." for the wake-ups (fork and exec placements are left out).
 */
#define _GNU_SOURCE
#include "../../tests/guest/ktest.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HIST_PATH "/sys/kernel/debug/wakecost"
#define MAX_BUCKETS 4096
#define MAX_TASKS 256
#define BUCKET_NS 40 /* WAKECOST_NS of measure-select.patch */

struct hist {
	long ns[MAX_BUCKETS];
	unsigned long long count[MAX_BUCKETS];
	int n;
	unsigned long long total;
};

static void add_us(struct timespec *ts, long us)
{
	ts->tv_nsec += us * 1000;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

static _Noreturn void jitter(long work_us, long period_us, volatile int *stop)
{
	struct timespec next;

	if (kt_set_util_max(0, 0, -1, false))
		kt_bail("cannot set util_max = 0: %s", strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!*stop) {
		kt_spin_for(work_us / 1e6);
		add_us(&next, period_us);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	_exit(0);
}

static void hist_clear(void)
{
	FILE *f = fopen(HIST_PATH, "w");

	if (!f || fputs("0\n", f) < 0 || fclose(f))
		kt_bail("cannot clear %s (kernel without bench/cost/measure-select.patch?): %s",
		        HIST_PATH, strerror(errno));
}

/* The "ttwu" line: "ttwu NS:COUNT NS:COUNT ..." */
static void hist_read(struct hist *h)
{
	static char line[1 << 16];
	FILE *f = fopen(HIST_PATH, "r");

	memset(h, 0, sizeof(*h));
	if (!f)
		kt_bail("cannot read %s: %s", HIST_PATH, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *tok, *save = NULL;

		if (strncmp(line, "ttwu", 4))
			continue;
		strtok_r(line, " \n", &save);
		while ((tok = strtok_r(NULL, " \n", &save)) && h->n < MAX_BUCKETS) {
			long ns;
			unsigned long long c;

			if (sscanf(tok, "%ld:%llu", &ns, &c) != 2)
				kt_bail("bad histogram entry '%s' in %s", tok, HIST_PATH);
			h->ns[h->n] = ns;
			h->count[h->n++] = c;
			h->total += c;
		}
	}
	fclose(f);
}

/* The bucket holding the @q quantile, reported at its middle. */
static long hist_quantile(const struct hist *h, double q)
{
	unsigned long long want = (unsigned long long)(q * h->total), seen = 0;

	for (int i = 0; i < h->n; i++) {
		seen += h->count[i];
		if (seen > want)
			return h->ns[i] + BUCKET_NS / 2;
	}
	return h->n ? h->ns[h->n - 1] + BUCKET_NS / 2 : -1;
}

static double hist_mean(const struct hist *h)
{
	double sum = 0;

	for (int i = 0; i < h->n; i++)
		sum += (h->ns[i] + BUCKET_NS / 2.0) * h->count[i];
	return h->total ? sum / h->total : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: wakecost --label NAME [--hogs LIST] [--jitter N] [--work-us W] "
	                "[--period-us P] [--seconds S] [--pack on|off]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *label = NULL, *pack = NULL;
	long work_us = 50, period_us = 2000;
	int njitter = 8, nhogs = 0, nkids = 0;
	double seconds = 5;
	uint64_t hogs = 0;
	pid_t kids[MAX_TASKS];
	static const char *const counters[] = {"packed", "fallback"};
	long c0[2], c1[2];
	volatile int *stop;
	struct hist h;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val)
			usage();
		if (!strcmp(arg, "--label"))
			label = val;
		else if (!strcmp(arg, "--hogs") && kt_parse_cpulist(val, &hogs) == 0)
			;
		else if (!strcmp(arg, "--jitter"))
			njitter = atoi(val);
		else if (!strcmp(arg, "--work-us"))
			work_us = atol(val);
		else if (!strcmp(arg, "--period-us"))
			period_us = atol(val);
		else if (!strcmp(arg, "--seconds"))
			seconds = atof(val);
		else if (!strcmp(arg, "--pack"))
			pack = val;
		else
			usage();
		i++;
	}
	if (!label || njitter < 1 || njitter + 64 > MAX_TASKS || work_us < 1 ||
	    period_us <= work_us || seconds <= 0)
		usage();
	if (pack && kt_sysctl_pack() >= 0 && kt_sysctl_pack_set(!strcmp(pack, "on")))
		kt_bail("cannot switch kernel.sched_pack_jitter %s", pack);

	stop = mmap(NULL, sizeof(*stop), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stop == MAP_FAILED)
		kt_bail("mmap: %s", strerror(errno));
	*stop = 0;
	for (int c = 0; c < 64; c++) {
		if (!(hogs & (1ULL << c)))
			continue;
		kids[nkids] = fork();
		if (kids[nkids] == 0)
			kt_hog(c, 100);
		nkids++;
		nhogs++;
	}
	for (int i = 0; i < njitter; i++) {
		kids[nkids] = fork();
		if (kids[nkids] == 0)
			jitter(work_us, period_us, stop);
		nkids++;
	}

	struct timespec settle = {1, 0}, window = {(time_t)seconds,
	                                           (long)((seconds - (time_t)seconds) * 1e9)};

	nanosleep(&settle, NULL); /* placement settles; then the measured window */
	kt_stats(counters, 2, c0);
	hist_clear();
	nanosleep(&window, NULL);
	hist_read(&h);
	kt_stats(counters, 2, c1);

	*stop = 1;
	for (int i = 0; i < nkids; i++) {
		if (i < nhogs)
			kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}

	printf("RESULT label=%s cpus=%d hogs=%d jitter=%d pack=%d n=%llu p50_ns=%ld mean_ns=%.0f "
	       "p90_ns=%ld p99_ns=%ld packed=%ld fallback=%ld\n",
	       label, kt_nr_cpus(), nhogs, njitter, kt_sysctl_pack(), h.total,
	       hist_quantile(&h, 0.5), hist_mean(&h), hist_quantile(&h, 0.9),
	       hist_quantile(&h, 0.99), c0[0] >= 0 ? c1[0] - c0[0] : -1,
	       c0[1] >= 0 ? c1[1] - c0[1] : -1);
	return h.total > 0 ? 0 : 1;
}

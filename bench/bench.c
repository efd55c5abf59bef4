// SPDX-License-Identifier: GPL-2.0-or-later
#define _GNU_SOURCE
#include "bench.h"
#include "ktest.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bn_samples_add(struct bn_samples *s, double v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			kt_bail("out of memory for samples");
	}
	s->v[s->n++] = v;
}

void bn_samples_merge(struct bn_samples *dst, const struct bn_samples *src)
{
	for (size_t i = 0; i < src->n; i++)
		bn_samples_add(dst, src->v[i]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bn_quantile(struct bn_samples *s, double q)
{
	size_t i;

	if (!s->n)
		return NAN;
	qsort(s->v, s->n, sizeof(*s->v), cmp_double);
	/* Nearest rank: the smallest sample with at least q of the samples at or below it. */
	i = (size_t)ceil(q * (double)s->n);
	if (i > 0)
		i--;
	if (i >= s->n)
		i = s->n - 1;
	return s->v[i];
}

double bn_max(const struct bn_samples *s)
{
	double m = NAN;

	for (size_t i = 0; i < s->n; i++)
		if (isnan(m) || s->v[i] > m)
			m = s->v[i];
	return m;
}

double bn_mean(const struct bn_samples *s)
{
	double t = 0;

	for (size_t i = 0; i < s->n; i++)
		t += s->v[i];
	return s->n ? t / (double)s->n : NAN;
}

void bn_ts_add_ns(struct timespec *ts, long long ns)
{
	ns += ts->tv_nsec;
	ts->tv_sec += ns / 1000000000LL;
	ts->tv_nsec = ns % 1000000000LL;
}

double bn_ts_diff_us(const struct timespec *a, const struct timespec *b)
{
	return (double)(a->tv_sec - b->tv_sec) * 1e6 + (double)(a->tv_nsec - b->tv_nsec) / 1e3;
}

void bn_sleep(double seconds)
{
	struct timespec end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	bn_ts_add_ns(&end, (long long)(seconds * 1e9));
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL))
		;
}

static char line[8192];
static size_t used;

void bn_begin(const char *what, const char *label)
{
	used = (size_t)snprintf(line, sizeof(line), "BENCH %s label=%s", what, label);
}

void bn_kv(const char *key, const char *fmt, ...)
{
	va_list ap;

	if (used >= sizeof(line) - 2)
		return;
	used += (size_t)snprintf(line + used, sizeof(line) - used, " %s=", key);
	if (used >= sizeof(line) - 2)
		return;
	va_start(ap, fmt);
	used += (size_t)vsnprintf(line + used, sizeof(line) - used, fmt, ap);
	va_end(ap);
}

void bn_end(void)
{
	printf("%s\n", line);
	fflush(stdout);
}

int bn_spread_cpus(int *out, int max)
{
	int nr = kt_nr_cpus(), n = 0, cores[KT_MAX_CPUS], nodes[KT_MAX_CPUS], nc = 0;
	int maxnode = 0;

	for (int c = 0; c < nr && c < KT_MAX_CPUS; c++)
		if (kt_core_of(c) == c) {
			cores[nc] = c;
			nodes[nc] = kt_node_of(c);
			if (nodes[nc] > maxnode)
				maxnode = nodes[nc];
			nc++;
		}
	/* Round-robin over the nodes: node 0's first core, node 1's first core, ... */
	for (int round = 0; n < nc && n < max; round++)
		for (int node = 0; node <= maxnode && n < max; node++) {
			int seen = 0;

			for (int i = 0; i < nc; i++)
				if (nodes[i] == node && seen++ == round)
					out[n++] = cores[i];
		}
	return n;
}

long bn_status_kib(int pid, const char *field)
{
	char path[64], buf[256], fmt[32];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	snprintf(fmt, sizeof(fmt), "%s: %%ld", field);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, fmt, &kib) == 1)
			break;
	fclose(f);
	return kib;
}

long bn_rss_kib(int pid)
{
	return bn_status_kib(pid, "VmRSS");
}

void bn_schedstat_read(unsigned long long *ns, int max)
{
	FILE *f = fopen("/proc/schedstat", "r");
	char buf[512];

	memset(ns, 0, (size_t)max * sizeof(*ns));
	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f)) {
		unsigned long long v[7];
		int cpu;

		/* cpuN yld_count 0 sched_count sched_goidle ttwu_count ttwu_local rq_cpu_time ...
		 */
		if (sscanf(buf, "cpu%d %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
		           &v[2], &v[3], &v[4], &v[5], &v[6]) == 8 &&
		    cpu >= 0 && cpu < max)
			ns[cpu] = v[6];
	}
	fclose(f);
}

unsigned long long bn_proc_runtime_ns(int pid)
{
	unsigned long long wait;

	return bn_proc_sched_ns(pid, &wait);
}

unsigned long long bn_proc_sched_ns(int pid, unsigned long long *wait_ns)
{
	char path[64], file[400];
	unsigned long long total = 0;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	*wait_ns = 0;
	while ((d = readdir(dir))) {
		unsigned long long ns, wait;
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s/schedstat", path, d->d_name);
		f = fopen(file, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu %llu", &ns, &wait) == 2) {
			total += ns;
			*wait_ns += wait;
		}
		fclose(f);
	}
	closedir(dir);
	return total;
}

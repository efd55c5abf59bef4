// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsbench: a turbo_bench-style workload for TurboSched.  N CPU-bound threads ("hogs", each
 * pinned to one core unless --no-pin) and M periodic "jitter" threads that each do R µs of
 * CPU work every P µs and tag themselves with util_max = 0 (--tag self, the default), or are
 * created by a tagged spawner thread and inherit the tag (--tag parent), or stay untagged
 * (--tag none).  After a warm-up it measures for a fixed window and prints one line
 *
 *   BENCH pack label=L kernel=patched pack=1 hogs=N jitter=M ... share_busy=0.998 ...
 *
 * with: hog and jitter throughput (work units per second), the share of the jitter threads'
 * CPU time spent on the hogs' cores (each jitter thread samples sched_getcpu() between work
 * units and attributes its CLOCK_THREAD_CPUTIME_ID time to that CPU), the idle share of the
 * other cores (/proc/stat), how many cores the workload ran on, the wake-up lateness of the
 * jitter threads (actual minus requested wake-up of an absolute clock_nanosleep) as
 * percentiles, and the kernel's packed / fallback (idle, full) / lb_refused counters.  Then
 * per-thread residency lines ("BENCH res") and a timeline of jitter CPU time per CPU
 * ("BENCH tl").
 *
 *   tsbench --hogs 2 --jitter 4 --run-us 1000 --period-us 10000 --seconds 10 --label x
 *
 * --jitter-cpus LIST confines the jitter threads to LIST once started, which takes the
 * scheduler's choice out of a case: the benchmark uses it to measure how the emulated machine
 * alone delays wake-ups on a given vCPU.
 *
 * Loads that look like servers: --no-pin lets the scheduler place the hogs (busy cores are then
 * found per timeline bucket, from where the hogs ran); --hog-duty PCT makes each hog a service
 * busy PCT % of every 10 ms and asleep the rest; --turn-at S turns jitter thread 0 CPU-bound S
 * seconds into the window (a tagged task whose load changed), reported apart from the others.
 *
 * --observe PID measures another program's threads (rt-app's) as the jitter threads.  With
 * --start hogs they begin next to the hogs like tsbench's own: once the hogs run, thread i of
 * PID (in the order of their IDs, the main thread left out) moves to the node of hog i mod N
 * and is then free to run anywhere.
 */
#define _GNU_SOURCE
#include "bench.h"
#include "ktest.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UNIT_ITERS 1000
/* --hog-duty: the period of a hog's busy/asleep cycle. */
#define HOG_PERIOD_NS 10000000LL

enum { WARMUP, MEASURE, STOP };
enum { TAG_SELF, TAG_PARENT, TAG_NONE };

struct opts {
	int hogs, jitter, run_us, period_us, tag, pin, pack, bucket_ms, timeline, observe;
	int start_hogs; /* --start hogs: each jitter thread begins on the node of a hog */
	int hog_duty;   /* --hog-duty: percent of each 10 ms a hog is busy (100: always) */
	double warmup, seconds;
	double turn_at; /* --turn-at: seconds into the window jitter thread 0 turns CPU-bound */
	uint64_t busy, hog_mask;
	/* --jitter-cpus: where the jitter threads run once started; 0: anywhere */
	uint64_t jitter_cpus;
	const char *label;
};

struct thr {
	int idx, jitter, cpu; /* cpu: where a hog is pinned, -1 if not */
	pthread_t th;
	pid_t tid;
	int tag_rc;
	unsigned long ops; /* work units, read by main with __atomic */
	double *cpu_time;  /* [nr] thread CPU seconds per CPU, during the window */
	double *tl;        /* [nbuckets][nr] the same per timeline bucket */
	double *turn_time; /* [nr] CPU seconds per CPU after turning CPU-bound (--turn-at) */
	int turned;
	struct bn_samples lat;
	long periods, overruns;
};

static struct opts o;
static int nr, nbuckets, phase = WARMUP;
static struct timespec t_measure;
static struct thr *thr;
static volatile uint64_t sink;
static pthread_barrier_t spawned;

static int get_phase(void)
{
	return __atomic_load_n(&phase, __ATOMIC_ACQUIRE);
}

static inline uint64_t work_unit(uint64_t x)
{
	for (int i = 0; i < UNIT_ITERS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

static void attribute(struct thr *t, double secs)
{
	int cpu = sched_getcpu();
	struct timespec now;

	if (cpu < 0 || cpu >= nr)
		return;
	if (t->turned) { /* kept apart: one CPU-bound task would swamp the jitter figures */
		t->turn_time[cpu] += secs;
		return;
	}
	t->cpu_time[cpu] += secs;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long b = (long)(bn_ts_diff_us(&now, &t_measure) / 1000.0 / o.bucket_ms);
	if (b >= 0 && b < nbuckets)
		t->tl[b * nr + cpu] += secs;
}

static void *hog(void *arg)
{
	struct thr *t = arg;
	uint64_t x = 88172645463325252ULL + (uint64_t)t->idx;
	double last = kt_thread_cpu();

	struct timespec next, now_ts;
	double period_cpu0 = last, budget = o.hog_duty * (HOG_PERIOD_NS / 1e9) / 100;

	t->tid = (pid_t)syscall(SYS_gettid);
	if (t->cpu >= 0)
		kt_pin(0, 1ULL << t->cpu);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (get_phase() != STOP) {
		/* A service (--hog-duty) checks its budget after every unit, a hog every 16. */
		for (int i = 0; i < (o.hog_duty < 100 ? 1 : 16); i++) {
			x = work_unit(x);
			__atomic_store_n(&t->ops, t->ops + 1, __ATOMIC_RELAXED);
		}
		double now = kt_thread_cpu();

		if (get_phase() == MEASURE)
			attribute(t, now - last);
		last = now;
		if (o.hog_duty >= 100 || now - period_cpu0 < budget)
			continue;
		/* Budget spent: sleep to the next period; one that fell behind starts afresh. */
		bn_ts_add_ns(&next, HOG_PERIOD_NS);
		clock_gettime(CLOCK_MONOTONIC, &now_ts);
		if (bn_ts_diff_us(&now_ts, &next) > 0)
			next = now_ts;
		else
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		period_cpu0 = last = kt_thread_cpu();
	}
	sink = x;
	return NULL;
}

/* The node of hog @idx mod N, or 0 without hogs; @all gets every CPU. */
static uint64_t hog_node_cpus(int idx, uint64_t *all)
{
	int hog_cpu = o.hogs > 0 ? thr[idx % o.hogs].cpu : -1;
	uint64_t node = 0;

	*all = 0;
	for (int c = 0; c < nr; c++) {
		*all |= 1ULL << c;
		if (hog_cpu >= 0 && kt_node_of(c) == kt_node_of(hog_cpu))
			node |= 1ULL << c;
	}
	return node;
}

/*
 * --start hogs: move the calling jitter thread onto the node of hog idx % N, then let it run
 * anywhere again; it stays where it is until the kernel places it.  The node a new thread is
 * born on is the fork balancer's choice, and packing by design never moves a task out of its
 * turbo domain (the LLC, here the node): left to chance, N = 1 measured on which node the two
 * threads were born (0.31 and 0.00 of jitter time on the busy core in two runs).
 */
static void start_near_hog(int idx)
{
	uint64_t all, node = hog_node_cpus(idx, &all);

	if (!node)
		return;
	kt_pin(0, node);
	kt_pin(0, all);
}

/* The CPU thread @tid of @pid last ran on (field 39 of its stat), or -1. */
static int task_cpu_of(pid_t pid, pid_t tid)
{
	char path[64], buf[1024], *p;
	int cpu = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')'))) {
		/* Fields 3..38 after the command, then the processor. */
		for (int field = 2; field < 39 && p; field++)
			p = strchr(p + 1, ' ');
		if (p)
			cpu = atoi(p + 1);
	}
	fclose(f);
	return cpu;
}

static int cmp_pid(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

/*
 * --observe with --start hogs: the observed program's threads start next to the hogs.  A
 * sleeping thread does not move when its affinity changes, only when it next wakes up, so
 * each keeps the node's mask until it has run there (a periodic thread wakes within its
 * period; 5 s at most).
 */
static void start_observed_near_hogs(pid_t pid)
{
	char path[64];
	pid_t tids[KT_MAX_CPUS * 8];
	uint64_t node[KT_MAX_CPUS * 8], all = 0;
	int n = 0, left;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		kt_bail("%s: %s (did the observed program exit?)", path, strerror(errno));
	while ((e = readdir(d)) && n < (int)(sizeof(tids) / sizeof(tids[0]))) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid > 0 && tid != pid)
			tids[n++] = tid;
	}
	closedir(d);
	qsort(tids, (size_t)n, sizeof(tids[0]), cmp_pid);
	left = 0;
	for (int i = 0; i < n; i++) {
		node[i] = hog_node_cpus(i, &all);
		if (node[i]) {
			kt_pin(tids[i], node[i]);
			left++;
		}
	}
	for (int tries = 0; left > 0 && tries < 5000; tries++) {
		struct timespec ms = {0, 1000000};

		for (int i = 0; i < n; i++) {
			int cpu = node[i] ? task_cpu_of(pid, tids[i]) : -1;

			if (node[i] && cpu >= 0 && (node[i] & (1ULL << cpu))) {
				kt_pin(tids[i], all);
				node[i] = 0;
				left--;
			}
		}
		nanosleep(&ms, NULL);
	}
	if (left)
		kt_bail("%d of the observed threads did not run on their hog's node within 5 s",
		        left);
}

static void *jitter(void *arg)
{
	struct thr *t = arg;
	uint64_t x = 0x9E3779B97F4A7C15ULL + (uint64_t)t->idx;
	struct timespec next, woke;

	t->tid = (pid_t)syscall(SYS_gettid);
	if (o.tag == TAG_SELF)
		t->tag_rc = kt_set_util_max(0, 0, -1, false) ? errno : 0;
	if (o.start_hogs)
		start_near_hog(t->idx);
	if (o.jitter_cpus)
		kt_pin(0, o.jitter_cpus);
	/* Spread the phases over the period, deterministically. */
	clock_gettime(CLOCK_MONOTONIC, &next);
	bn_ts_add_ns(&next, (long long)o.period_us * 1000 * t->idx / o.jitter);
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	while (get_phase() != STOP) {
		double last = kt_thread_cpu(), end = last + o.run_us / 1e6;
		int measuring = get_phase() == MEASURE;

		if (t->idx == 0 && o.turn_at > 0 && measuring) {
			struct timespec now_ts;

			clock_gettime(CLOCK_MONOTONIC, &now_ts);
			if (bn_ts_diff_us(&now_ts, &t_measure) >= o.turn_at * 1e6) {
				/* Turned CPU-bound: work without sleeping until the end. */
				t->turned = 1;
				while (get_phase() == MEASURE) {
					x = work_unit(x);
					double now = kt_thread_cpu();

					attribute(t, now - last);
					last = now;
				}
				break;
			}
		}

		while (last < end) {
			x = work_unit(x);
			__atomic_store_n(&t->ops, t->ops + 1, __ATOMIC_RELAXED);
			double now = kt_thread_cpu();

			if (measuring)
				attribute(t, now - last);
			last = now;
		}
		if (measuring)
			t->periods++;
		bn_ts_add_ns(&next, (long long)o.period_us * 1000);
		clock_gettime(CLOCK_MONOTONIC, &woke);
		if (bn_ts_diff_us(&woke, &next) >= 0) {
			/* Overran the period: skip to the next period start, count it, no sample.
			 */
			if (measuring)
				t->overruns++;
			while (bn_ts_diff_us(&woke, &next) >= 0)
				bn_ts_add_ns(&next, (long long)o.period_us * 1000);
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		clock_gettime(CLOCK_MONOTONIC, &woke);
		if (measuring && get_phase() == MEASURE)
			bn_samples_add(&t->lat, bn_ts_diff_us(&woke, &next));
	}
	sink = x;
	return NULL;
}

/* --tag parent: this thread tags itself, then creates the jitter threads (they inherit). */
static void *spawner(void *arg)
{
	int *rc = arg;

	*rc = kt_set_util_max(0, 0, -1, false) ? errno : 0;
	for (int i = 0; i < o.jitter; i++) {
		struct thr *t = &thr[o.hogs + i];

		if (pthread_create(&t->th, NULL, jitter, t))
			kt_bail("pthread_create: %s", strerror(errno));
	}
	pthread_barrier_wait(&spawned);
	return NULL;
}

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: tsbench [--hogs N] [--hog-cpus LIST] [--no-pin] [--jitter M] [--run-us R]\n"
	    "               [--period-us P] [--warmup S] [--seconds S] [--tag self|parent|none]\n"
	    "               [--pack on|off] [--busy LIST] [--bucket-ms MS] [--no-timeline]\n"
	    "               [--label NAME] [--observe PID] [--start hogs|free]\n"
	    "               [--jitter-cpus LIST] [--hog-duty PCT] [--turn-at S]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"hogs", 1, 0, 'h'},        {"hog-cpus", 1, 0, 'H'},
	    {"no-pin", 0, 0, 'n'},      {"jitter", 1, 0, 'j'},
	    {"run-us", 1, 0, 'r'},      {"period-us", 1, 0, 'p'},
	    {"warmup", 1, 0, 'W'},      {"seconds", 1, 0, 's'},
	    {"tag", 1, 0, 't'},         {"pack", 1, 0, 'P'},
	    {"busy", 1, 0, 'b'},        {"bucket-ms", 1, 0, 'B'},
	    {"no-timeline", 0, 0, 'T'}, {"label", 1, 0, 'l'},
	    {"observe", 1, 0, 'O'},     {"start", 1, 0, 'S'},
	    {"jitter-cpus", 1, 0, 'J'}, {"hog-duty", 1, 0, 'D'},
	    {"turn-at", 1, 0, 'U'},     {0, 0, 0, 0},
	};
	int c;

	o = (struct opts){.hogs = 2,
	                  .jitter = 4,
	                  .run_us = 1000,
	                  .period_us = 10000,
	                  .tag = TAG_SELF,
	                  .pin = 1,
	                  .pack = -1,
	                  .bucket_ms = 500,
	                  .timeline = 1,
	                  .start_hogs = 1,
	                  .hog_duty = 100,
	                  .warmup = 2,
	                  .seconds = 10,
	                  .label = "-"};
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'h':
			o.hogs = atoi(optarg);
			break;
		case 'H':
			if (kt_parse_cpulist(optarg, &o.hog_mask))
				usage();
			break;
		case 'n':
			o.pin = 0;
			break;
		case 'j':
			o.jitter = atoi(optarg);
			break;
		case 'r':
			o.run_us = atoi(optarg);
			break;
		case 'p':
			o.period_us = atoi(optarg);
			break;
		case 'W':
			o.warmup = atof(optarg);
			break;
		case 's':
			o.seconds = atof(optarg);
			break;
		case 'S':
			if (strcmp(optarg, "hogs") && strcmp(optarg, "free"))
				usage();
			o.start_hogs = !strcmp(optarg, "hogs");
			break;
		case 't':
			if (!strcmp(optarg, "self"))
				o.tag = TAG_SELF;
			else if (!strcmp(optarg, "parent"))
				o.tag = TAG_PARENT;
			else if (!strcmp(optarg, "none"))
				o.tag = TAG_NONE;
			else
				usage();
			break;
		case 'P':
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				usage();
			o.pack = !strcmp(optarg, "on");
			break;
		case 'b':
			if (kt_parse_cpulist(optarg, &o.busy))
				usage();
			break;
		case 'J':
			if (kt_parse_cpulist(optarg, &o.jitter_cpus) || !o.jitter_cpus)
				usage();
			break;
		case 'B':
			o.bucket_ms = atoi(optarg);
			break;
		case 'T':
			o.timeline = 0;
			break;
		case 'l':
			o.label = optarg;
			break;
		case 'O':
			o.observe = atoi(optarg);
			break;
		case 'D':
			o.hog_duty = atoi(optarg);
			break;
		case 'U':
			o.turn_at = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (o.hogs < 0 || o.jitter < 0 || (o.hogs + o.jitter == 0 && !o.observe) || o.run_us < 1 ||
	    o.period_us <= o.run_us || o.seconds <= 0 || o.bucket_ms < 1 || o.hog_duty < 1 ||
	    o.hog_duty > 100 || o.turn_at < 0 || o.turn_at >= o.seconds ||
	    (o.turn_at > 0 && o.jitter < 1))
		usage();
}

static char *cpu_list_of(const double *v, double total, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int c = 0; c < nr; c++) {
		if (v[c] <= 0 || used >= len)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%d:%.3f", used ? "," : "", c,
		                         total > 0 ? v[c] / total : 0);
	}
	if (!used)
		snprintf(buf, len, "-");
	return buf;
}

/*
 * The wake-up lateness of every period as a sparse histogram of 10 us buckets, "BENCH lathist
 * label=L n=N h=B:C,B:C,..." (B the bucket's lower bound in us): runs can then be pooled, so
 * that a percentile is quoted only where enough samples lie beyond it (bench/latency).
 */
static void lat_hist_line(struct bn_samples *lat, const char *label)
{
	size_t i = 0;

	bn_quantile(lat, 0); /* sorts */
	printf("BENCH lathist label=%s n=%zu h=", label, lat->n);
	while (i < lat->n) {
		long b = lat->v[i] < 0 ? 0 : (long)(lat->v[i] / 10);
		size_t c = 0;

		while (i < lat->n && (lat->v[i] < 0 ? 0 : (long)(lat->v[i] / 10)) == b) {
			c++;
			i++;
		}
		printf("%s%ld:%zu", c == i ? "" : ",", b * 10, c);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	int spread[KT_MAX_CPUS], nspread, nthr, sysctl_was, spawner_rc = 0;
	unsigned long *ops0;
	/* The kernel's packing counters (debugfs), read around the window; -1 where absent. */
	static const char *const counters[] = {"packed", "fallback", "fallback_idle",
	                                       "fallback_full", "lb_refused"};
	enum { NCOUNTERS = sizeof(counters) / sizeof(counters[0]) };
	long count0[NCOUNTERS], count1[NCOUNTERS];
	struct kt_cpustat before, after;
	unsigned long long ss0[KT_MAX_CPUS], ss1[KT_MAX_CPUS], obs0 = 0, obs1 = 0;
	pthread_t sp;
	uint64_t busy = 0;
	const char *variant = getenv("tsvariant");

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	nr = kt_nr_cpus();
	if (nr > KT_MAX_CPUS)
		nr = KT_MAX_CPUS;
	/* Unpinned hogs need the timeline: it says which cores were busy when. */
	nbuckets = o.timeline || !o.pin ? (int)ceil(o.seconds * 1000 / o.bucket_ms) : 0;
	nthr = o.hogs + o.jitter;
	thr = calloc((size_t)nthr, sizeof(*thr));
	ops0 = calloc((size_t)nthr, sizeof(*ops0));
	if (!thr || !ops0)
		kt_bail("out of memory");

	/* Hog CPUs: --hog-cpus, or one CPU per core spreading over the nodes (0, 4, 2, 6, ...). */
	nspread = bn_spread_cpus(spread, KT_MAX_CPUS);
	if (o.hog_mask) {
		nspread = 0;
		for (int c = 0; c < nr; c++)
			if (o.hog_mask & (1ULL << c))
				spread[nspread++] = c;
	}
	if (o.pin && o.hogs > nspread)
		kt_bail("%d hogs but only %d cores to pin them to", o.hogs, nspread);
	for (int i = 0; i < nthr; i++) {
		struct thr *t = &thr[i];

		t->idx = i < o.hogs ? i : i - o.hogs;
		t->jitter = i >= o.hogs;
		t->cpu = !t->jitter && o.pin ? spread[i] : -1;
		t->cpu_time = calloc((size_t)nr, sizeof(double));
		t->tl = calloc((size_t)(nbuckets ? nbuckets : 1) * (size_t)nr, sizeof(double));
		t->turn_time = calloc((size_t)nr, sizeof(double));
		if (!t->cpu_time || !t->tl || !t->turn_time)
			kt_bail("out of memory");
		if (t->cpu >= 0)
			for (int c = 0; c < nr; c++)
				if (kt_core_of(c) == kt_core_of(t->cpu))
					busy |= 1ULL << c;
	}
	if (o.busy)
		busy = o.busy;

	sysctl_was = kt_sysctl_pack();
	if (o.pack >= 0 && kt_sysctl_pack_set(o.pack))
		kt_bail("cannot set kernel.sched_pack_jitter=%d", o.pack);

	for (int i = 0; i < o.hogs; i++)
		if (pthread_create(&thr[i].th, NULL, hog, &thr[i]))
			kt_bail("pthread_create: %s", strerror(errno));
	if (o.observe && o.start_hogs)
		start_observed_near_hogs(o.observe);
	if (o.tag == TAG_PARENT) {
		pthread_barrier_init(&spawned, NULL, 2);
		if (pthread_create(&sp, NULL, spawner, &spawner_rc))
			kt_bail("pthread_create: %s", strerror(errno));
		pthread_barrier_wait(&spawned);
		pthread_join(sp, NULL);
	} else {
		for (int i = o.hogs; i < nthr; i++)
			if (pthread_create(&thr[i].th, NULL, jitter, &thr[i]))
				kt_bail("pthread_create: %s", strerror(errno));
	}

	bn_sleep(o.warmup);
	kt_stats(counters, NCOUNTERS, count0);
	kt_cpustat_read(&before);
	bn_schedstat_read(ss0, KT_MAX_CPUS);
	if (o.observe)
		obs0 = bn_proc_runtime_ns(o.observe);
	for (int i = 0; i < nthr; i++)
		ops0[i] = __atomic_load_n(&thr[i].ops, __ATOMIC_RELAXED);
	clock_gettime(CLOCK_MONOTONIC, &t_measure);
	__atomic_store_n(&phase, MEASURE, __ATOMIC_RELEASE);
	bn_sleep(o.seconds);

	struct timespec t_end;
	double hog_ops = 0, jit_ops = 0, window;
	long key = kt_stat("key"), pack_now = kt_sysctl_pack(), njit = kt_stat("jitter_tasks");

	clock_gettime(CLOCK_MONOTONIC, &t_end);
	for (int i = 0; i < nthr; i++) {
		double d = (double)(__atomic_load_n(&thr[i].ops, __ATOMIC_RELAXED) - ops0[i]);

		if (thr[i].jitter)
			jit_ops += d;
		else
			hog_ops += d;
	}
	kt_cpustat_read(&after);
	bn_schedstat_read(ss1, KT_MAX_CPUS);
	if (o.observe)
		obs1 = bn_proc_runtime_ns(o.observe);
	kt_stats(counters, NCOUNTERS, count1);

	__atomic_store_n(&phase, STOP, __ATOMIC_RELEASE);
	for (int i = 0; i < nthr; i++)
		pthread_join(thr[i].th, NULL);
	if (o.pack >= 0 && sysctl_was >= 0)
		kt_sysctl_pack_set(sysctl_was);
	window = bn_ts_diff_us(&t_end, &t_measure) / 1e6;

	/*
	 * Unpinned hogs: the cores they ran on for at least a tenth of the window are busy (the
	 * others are spare, for spare-core idle); the share on busy cores is counted per timeline
	 * bucket, a core being busy in a bucket where hogs ran on it at least half the time.
	 */
	double tl_busy = 0, tl_total = 0;

	if (!o.pin && !o.busy) {
		double *core_hog = calloc((size_t)nr, sizeof(double)),
		       bucket_s = o.bucket_ms / 1000.0;

		for (int b = 0; b < nbuckets; b++) {
			uint64_t busy_b = 0;

			for (int c = 0; c < nr; c++)
				core_hog[c] = 0;
			for (int i = 0; i < o.hogs; i++)
				for (int c = 0; c < nr; c++)
					core_hog[kt_core_of(c)] += thr[i].tl[b * nr + c];
			for (int c = 0; c < nr; c++)
				if (core_hog[kt_core_of(c)] >= 0.5 * bucket_s)
					busy_b |= 1ULL << c;
			for (int i = o.hogs; i < nthr; i++)
				for (int c = 0; c < nr; c++) {
					tl_total += thr[i].tl[b * nr + c];
					if (busy_b & (1ULL << c))
						tl_busy += thr[i].tl[b * nr + c];
				}
		}
		for (int c = 0; c < nr; c++)
			core_hog[c] = 0;
		for (int i = 0; i < o.hogs; i++)
			for (int c = 0; c < nr; c++)
				core_hog[kt_core_of(c)] += thr[i].cpu_time[c];
		for (int c = 0; c < nr; c++)
			if (core_hog[kt_core_of(c)] >= 0.1 * window)
				busy |= 1ULL << c;
		free(core_hog);
	}

	/* Where the jitter time went, and which cores the workload used. */
	double jit_total = 0, jit_busy = 0, *jit_cpu = calloc((size_t)nr, sizeof(double));
	uint64_t used_cores = 0, spare_used = 0;
	unsigned long long spare_busy = 0, spare_all = 0;
	int spare_cores = 0, tag_failed = spawner_rc ? o.jitter : 0;
	long periods = 0, overruns = 0;
	struct bn_samples lat = {0};

	for (int i = 0; i < nthr; i++) {
		struct thr *t = &thr[i];

		for (int c = 0; c < nr; c++) {
			if (t->cpu_time[c] <= 0)
				continue;
			used_cores |= 1ULL << kt_core_of(c);
			if (!t->jitter)
				continue;
			jit_cpu[c] += t->cpu_time[c];
			jit_total += t->cpu_time[c];
			if (busy & (1ULL << c))
				jit_busy += t->cpu_time[c];
			else
				spare_used |= 1ULL << kt_core_of(c);
		}
		if (t->jitter) {
			bn_samples_merge(&lat, &t->lat);
			periods += t->periods;
			overruns += t->overruns;
			tag_failed += t->tag_rc != 0;
		}
	}
	/*
	 * The kernel's view (/proc/schedstat): a core counts as woken when any task but idle ran
	 * on one of its CPUs in the window; the run time on spare cores bounds the jitter time
	 * there from above (it includes kernel threads), which gives a conservative share for
	 * tasks this program cannot sample itself (--observe: rt-app threads).
	 */
	uint64_t woken = 0;
	double spare_run_s = 0;

	for (int c = 0; c < nr; c++) {
		if (ss1[c] > ss0[c])
			woken |= 1ULL << kt_core_of(c);
		if (busy & (1ULL << c))
			continue;
		if (kt_core_of(c) == c)
			spare_cores++;
		spare_busy += after.busy[c] - before.busy[c];
		spare_all += after.total[c] - before.total[c];
		spare_run_s += (double)(ss1[c] - ss0[c]) / 1e9;
	}
	double obs_s = (double)(obs1 - obs0) / 1e9, ext_total = o.observe ? obs_s : jit_total;
	double share = jit_total > 0 ? jit_busy / jit_total : NAN;

	if (!o.pin && !o.busy)
		share = tl_total > 0 ? tl_busy / tl_total : NAN;
	/* --turn-at: how much of a CPU the turned task got after turning, and where. */
	double turn_s = 0, turn_busy = 0;

	if (o.turn_at > 0)
		for (int c = 0; c < nr; c++) {
			turn_s += thr[o.hogs].turn_time[c];
			if (busy & (1ULL << c))
				turn_busy += thr[o.hogs].turn_time[c];
		}

	bn_begin("pack", o.label);
	bn_kv("kernel", "%s", variant ? variant : "unknown");
	bn_kv("pack", "%ld", pack_now);
	bn_kv("key", "%ld", key);
	bn_kv("jitter_tasks", "%ld", njit);
	bn_kv("hogs", "%d", o.hogs);
	bn_kv("jitter", "%d", o.jitter);
	bn_kv("run_us", "%d", o.run_us);
	bn_kv("period_us", "%d", o.period_us);
	bn_kv("tag", "%s", o.tag == TAG_SELF ? "self" : o.tag == TAG_PARENT ? "parent" : "none");
	bn_kv("tag_failed", "%d", tag_failed);
	bn_kv("start", "%s", o.start_hogs ? "hogs" : "free");
	bn_kv("jitter_cpus_mask", "0x%llx", (unsigned long long)o.jitter_cpus);
	bn_kv("window_s", "%.3f", window);
	bn_kv("hog_ops_s", "%.1f", hog_ops / window);
	bn_kv("jitter_ops_s", "%.1f", jit_ops / window);
	bn_kv("jitter_cpu_s", "%.3f", jit_total);
	bn_kv("pin", "%d", o.pin);
	bn_kv("hog_duty", "%d", o.hog_duty);
	bn_kv("share_busy", "%.4f", share);
	bn_kv("spare_cores", "%d", spare_cores);
	bn_kv("spare_idle", "%.4f", spare_all ? 1.0 - (double)spare_busy / (double)spare_all : NAN);
	bn_kv("cores_used", "%d", __builtin_popcountll(used_cores));
	bn_kv("cores_woken", "%d", __builtin_popcountll(woken));
	bn_kv("spare_run_s", "%.3f", spare_run_s);
	if (o.observe)
		bn_kv("observed_cpu_s", "%.3f", obs_s);
	/* The schedstat estimate, for the sampled jitter threads or the observed process. */
	bn_kv("share_busy_ss", "%.4f", ext_total > 0 ? 1.0 - spare_run_s / ext_total : NAN);
	bn_kv("spare_cores_used", "%d", __builtin_popcountll(spare_used));
	bn_kv("periods", "%ld", periods);
	bn_kv("overruns", "%ld", overruns);
	bn_kv("lat_n", "%zu", lat.n);
	bn_kv("lat_p50_us", "%.1f", bn_quantile(&lat, 0.50));
	bn_kv("lat_p99_us", "%.1f", bn_quantile(&lat, 0.99));
	bn_kv("lat_p999_us", "%.1f", bn_quantile(&lat, 0.999));
	bn_kv("lat_max_us", "%.1f", bn_max(&lat));
	for (int i = 0; i < NCOUNTERS; i++)
		bn_kv(counters[i], "%ld", count1[i] >= 0 ? count1[i] - count0[i] : -1);
	if (o.turn_at > 0) {
		bn_kv("turn_at_s", "%.3f", o.turn_at);
		bn_kv("turned", "%d", thr[o.hogs].turned);
		bn_kv("turn_cpu_frac", "%.4f", turn_s / (window - o.turn_at));
		bn_kv("turn_on_busy", "%.4f", turn_s > 0 ? turn_busy / turn_s : NAN);
	}
	char buf[1024];

	bn_kv("jitter_cpus", "%s", cpu_list_of(jit_cpu, jit_total, buf, sizeof(buf)));
	bn_end();
	lat_hist_line(&lat, o.label);

	/* Per-thread residency: the share of each thread's window CPU time on each CPU. */
	for (int i = 0; i < nthr; i++) {
		struct thr *t = &thr[i];
		double tot = 0;

		for (int c = 0; c < nr; c++)
			tot += t->cpu_time[c];
		bn_begin("res", o.label);
		bn_kv("thread", "%s%d", t->jitter ? "j" : "h", t->idx);
		bn_kv("tid", "%d", t->tid);
		bn_kv("cpu_s", "%.3f", tot);
		bn_kv("cpus", "%s", cpu_list_of(t->cpu_time, tot, buf, sizeof(buf)));
		bn_end();
	}
	/* Timeline: jitter CPU seconds per CPU in each bucket. */
	for (int b = 0; o.timeline && b < nbuckets; b++) {
		size_t u = 0;

		for (int c = 0; c < nr; c++) {
			double s = 0;

			for (int i = o.hogs; i < nthr; i++)
				s += thr[i].tl[b * nr + c];
			u += (size_t)snprintf(buf + u, sizeof(buf) - u, "%s%.4f", c ? "," : "", s);
		}
		bn_begin("tl", o.label);
		bn_kv("t", "%.3f", (b + 1) * o.bucket_ms / 1000.0);
		bn_kv("jitter_s", "%s", buf);
		bn_end();
	}
	return 0;
}

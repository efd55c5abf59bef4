// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Placement test: CPU hogs on some CPUs, periodic jitter tasks forked by one (tagged) parent,
 * and where the jitter tasks' CPU time went.  Every threshold comes from the command line so
 * the suite states, per kernel, what must hold:
 *
 *   t_pack --hogs 0,4 --jitter 4 --work-ms 3 --period-ms 10 --seconds 10 --share-min 0.95
 *
 * Each jitter task attributes its own CPU time (CLOCK_THREAD_CPUTIME_ID) to the CPU it samples
 * with sched_getcpu() while it works, so the share is measured, not inferred.  It also reads
 * the time it waited on a runqueue (run_delay in /proc/thread-self/schedstat): a wait behind
 * other work that the kernel accounts, which the emulator's own delays do not enter.
 */
#define _GNU_SOURCE
#include "ktest.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_JITTER 64

struct shared {
	volatile int measuring, stop;
	double cpu_time[MAX_JITTER][KT_MAX_CPUS];
	long periods[MAX_JITTER];
	long skipped[MAX_JITTER];
	double max_late_us[MAX_JITTER];
	/* run_delay (ns) at the first and the latest period of the window */
	unsigned long long delay_first[MAX_JITTER], delay_last[MAX_JITTER];
	/*
	 * --float-hogs: the CPUs of the cores the hogs run on right now (sampled every 20 ms by
	 * the parent), and each jitter task's time on such a core.
	 */
	volatile uint64_t hog_cores;
	double busy_time[MAX_JITTER];
};

struct opts {
	uint64_t hogs, jitter_hogs, start, mask, busy;
	int hog_duty, jitter, work_ms, period_ms, tagged, pack_off;
	int float_hogs; /* hogs the scheduler places itself */
	int hog_cookie; /* each hog in a core-scheduling group of its own */
	int smt_off;    /* SMT switched off through sysfs for the run */
	/* load-balance attempts with packing on, over packing off: the range allowed */
	double lb_attempts_min, lb_attempts_max, lb_failed_max;
	int lb_pairs;
	double warmup, seconds;
	double share_min, share_max, idle_min, outside_node_max, outside_mask_max;
	long min_periods;
	long packed_min, packed_max, fallback_min, fallback_max;
	long fallback_full_max; /* fall-backs because busy cores were full */
	long fallback_idle_max; /* fall-backs because no usable core was busy */
	int key;
};

static void ts_add_ms(struct timespec *ts, int ms)
{
	ts->tv_nsec += (long)ms * 1000000L;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

/* The calling thread's time spent waiting on a runqueue, in ns; 0 if unknown. */
static unsigned long long run_delay_ns(void)
{
	unsigned long long run, delay = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &run, &delay) != 2)
			delay = 0;
		fclose(f);
	}
	return delay;
}

static _Noreturn void jitter(struct shared *sh, int idx, const struct opts *o)
{
	struct timespec next;

	/* --start only places the fork: the children may then go anywhere but outside --mask */
	if (o->mask || o->start)
		kt_pin(0, o->mask              ? o->mask
		          : kt_nr_cpus() >= 64 ? ~0ULL
		                               : (1ULL << kt_nr_cpus()) - 1);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!sh->stop) {
		double end = kt_thread_cpu() + o->work_ms / 1000.0, last = kt_thread_cpu();

		while (last < end) {
			int cpu = sched_getcpu();
			double now = kt_thread_cpu();

			if (sh->measuring && cpu >= 0 && cpu < KT_MAX_CPUS) {
				sh->cpu_time[idx][cpu] += now - last;
				if (sh->hog_cores & (1ULL << cpu))
					sh->busy_time[idx] += now - last;
			}
			last = now;
		}
		if (sh->measuring) {
			sh->delay_last[idx] = run_delay_ns();
			if (!sh->periods[idx]++)
				sh->delay_first[idx] = sh->delay_last[idx];
		}
		ts_add_ms(&next, o->period_ms);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		if (sh->measuring) {
			struct timespec woke;
			double late;

			clock_gettime(CLOCK_MONOTONIC, &woke);
			late =
			    (woke.tv_sec - next.tv_sec) * 1e6 + (woke.tv_nsec - next.tv_nsec) / 1e3;
			if (late > sh->max_late_us[idx])
				sh->max_late_us[idx] = late;
		}
		/*
		 * A periodic housekeeping task that overran skips the periods it missed rather
		 * than running them back to back: under TCG a host stall of the vCPU would
		 * otherwise turn the task CPU-bound for a while, and a full core is rightly
		 * not packed onto.
		 */
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - next.tv_sec) * 1000 + (now.tv_nsec - next.tv_nsec) / 1000000 >=
		    o->period_ms) {
			next = now;
			if (sh->measuring)
				sh->skipped[idx]++;
		}
	}
	_exit(0);
}

/* The jitter parent: tags itself, so the children inherit the class at fork. */
static _Noreturn void jitter_parent(struct shared *sh, const struct opts *o)
{
	pid_t kids[MAX_JITTER];

	if (o->start)
		kt_pin(0, o->start);
	if (o->tagged && kt_set_util_max(0, 0, -1, false))
		kt_bail("tagging the jitter parent failed: %s", strerror(errno));
	for (int i = 0; i < o->jitter; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			kt_bail("fork: %s", strerror(errno));
		if (kids[i] == 0)
			jitter(sh, i, o);
	}
	for (int i = 0; i < o->jitter; i++)
		waitpid(kids[i], NULL, 0);
	_exit(0);
}

#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE        62
#define PR_SCHED_CORE_CREATE 1
#endif
#ifndef PR_SCHED_CORE_SCOPE_THREAD
#define PR_SCHED_CORE_SCOPE_THREAD 0
#endif

/*
 * A hog on @cpu, or with @cpu < 0 where the scheduler puts it within @mask (0: anywhere); with
 * @cookie in a core-scheduling group of its own, so that only its own threads may share its
 * core; with @tagged a jitter task itself.
 */
static pid_t start_hog(int cpu, uint64_t mask, int duty, bool cookie, bool tagged)
{
	pid_t pid = fork();

	if (pid < 0)
		kt_bail("fork: %s", strerror(errno));
	if (pid)
		return pid;
	if (cookie && prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0, PR_SCHED_CORE_SCOPE_THREAD, 0))
		kt_bail("cannot give the hog a core-scheduling cookie (CONFIG_SCHED_CORE?): %s",
		        strerror(errno));
	if (tagged && kt_set_util_max(0, 0, -1, false))
		kt_bail("cannot tag the jitter hog on cpu%d: %s", cpu, strerror(errno));
	if (cpu < 0 && mask)
		kt_pin(0, mask);
	kt_hog(cpu, duty);
}

/* SMT switched on or off at run time, as an admin does; nosmt at boot has the same effect. */
static void smt_control(const char *state)
{
	FILE *f = fopen("/sys/devices/system/cpu/smt/control", "w");

	if (!f)
		kt_bail("cannot open /sys/devices/system/cpu/smt/control: %s", strerror(errno));
	fprintf(f, "%s\n", state);
	if (fclose(f))
		kt_bail("writing '%s' to /sys/devices/system/cpu/smt/control: %s", state,
		        strerror(errno));
}

/*
 * Load-balance attempts and failures, summed over every CPU and domain, per
 * idle type of /proc/schedstat (busy, idle, newly idle) and in all.
 */
struct lb_stats {
	unsigned long long count, failed;
	unsigned long long type_count[3], type_failed[3];
};

static struct lb_stats lb_delta(struct lb_stats a, struct lb_stats b)
{
	struct lb_stats d = {b.count - a.count, b.failed - a.failed, {0}, {0}};

	for (int t = 0; t < 3; t++) {
		d.type_count[t] = b.type_count[t] - a.type_count[t];
		d.type_failed[t] = b.type_failed[t] - a.type_failed[t];
	}
	return d;
}

static struct lb_stats lb_read(void)
{
	struct lb_stats lb = {0};
	char line[1024];
	FILE *f = fopen("/proc/schedstat", "r");

	if (!f)
		kt_bail("cannot read /proc/schedstat: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[24];
		char *pos;
		int n = 0;

		if (strncmp(line, "domain", 6))
			continue;
		/* "domainN MASK" then 8 counters per idle type: lb_count, lb_balanced, lb_failed...
		 */
		pos = strchr(line, ' ');
		pos = pos ? strchr(pos + 1, ' ') : NULL;
		while (pos && n < 24) {
			char *end;

			v[n] = strtoull(pos, &end, 10);
			if (end == pos)
				break;
			pos = end;
			n++;
		}
		if (n < 24)
			kt_bail("unexpected /proc/schedstat domain line: %s", line);
		for (int t = 0; t < 3; t++) {
			lb.type_count[t] += v[8 * t];
			lb.type_failed[t] += v[8 * t + 2];
			lb.count += v[8 * t];
			lb.failed += v[8 * t + 2];
		}
	}
	fclose(f);
	return lb;
}

static void sleep_s(double seconds)
{
	struct timespec t = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};

	nanosleep(&t, NULL);
}

/*
 * The balancer's control: the same load with packing off, in the same boot.
 * Attempts drift within a boot: two 8 s windows in a row, packing off in both,
 * differed by up to 3.1x.  So packing is switched on (@on_value, the boot's
 * own setting: 0 in the switched-off boot, which makes its run an A/A check)
 * and off in 1 s slices, ABBA, and each side sums its slices.
 */
static void lb_compare_slices(int pairs, int on_value, struct lb_stats *on, struct lb_stats *off)
{
	for (int i = 0; i < 2 * pairs; i++) {
		bool packing = i % 4 == 0 || i % 4 == 3;
		struct lb_stats a, d, *sum = packing ? on : off;

		if (kt_sysctl_pack_set(packing ? on_value : 0))
			kt_bail("cannot switch kernel.sched_pack_jitter to %d",
			        packing ? on_value : 0);
		sleep_s(0.2); /* a jitter task wakes every 20 ms: time for each to be placed anew */
		a = lb_read();
		sleep_s(1.0);
		d = lb_delta(a, lb_read());
		sum->count += d.count;
		sum->failed += d.failed;
		for (int t = 0; t < 3; t++) {
			sum->type_count[t] += d.type_count[t];
			sum->type_failed[t] += d.type_failed[t];
		}
	}
	kt_sysctl_pack_set(on_value);
}

static void write_sysctl(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%s\n", value) < 0 || fclose(f))
		kt_bail("cannot write %s to %s: %s", value, path, strerror(errno));
}

static uint64_t cores_of(uint64_t cpus, int nr);

/*
 * Hogs the scheduler places itself: for @seconds, every 20 ms, publish the cores the hogs run
 * on for the jitter tasks to attribute their time by, and count in @presence how often each
 * CPU's core hosted a hog (@samples samples).
 */
static void follow_hogs(struct shared *sh, const pid_t *hogs, int nhogs, double seconds, int nr,
                        long *presence, long *samples)
{
	double end = kt_now() + seconds;

	while (kt_now() < end) {
		uint64_t cpus = 0, cores;

		for (int i = 0; i < nhogs; i++) {
			int cpu = kt_task_cpu(hogs[i]);

			if (cpu >= 0 && cpu < nr)
				cpus |= 1ULL << cpu;
		}
		cores = cores_of(cpus, nr);
		sh->hog_cores = cores;
		for (int c = 0; c < nr; c++)
			presence[c] += !!(cores & (1ULL << c));
		(*samples)++;
		sleep_s(0.02);
	}
}

static uint64_t cores_of(uint64_t cpus, int nr)
{
	uint64_t out = 0;

	for (int c = 0; c < nr; c++)
		for (int h = 0; h < nr; h++)
			if ((cpus & (1ULL << h)) && kt_core_of(c) == kt_core_of(h))
				out |= 1ULL << c;
	return out;
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: t_pack --hogs LIST --jitter N --work-ms W --period-ms P "
	        "--seconds S [--warmup S] [--hog-duty PCT] [--untagged] [--pack-off] "
	        "[--start LIST] [--mask LIST] [--busy LIST] [--share-min X] [--share-max X] "
	        "[--idle-min X] [--outside-node-max X] [--outside-mask-max X] "
	        "[--min-periods N] [--packed-min N] [--packed-max N] [--fallback-min N] "
	        "[--fallback-max N] [--fallback-full-max N] [--fallback-idle-max N] "
	        "[--jitter-hogs LIST] [--key 0|1|-1] [--float-hogs N] [--hog-cookie] "
	        "[--smt-off] [--lb-attempts-min RATIO] [--lb-attempts-max RATIO] "
	        "[--lb-failed-max RATIO] [--lb-pairs N]\n");
	exit(2);
}

static uint64_t cpulist_arg(const char *arg)
{
	uint64_t mask;

	if (kt_parse_cpulist(arg, &mask))
		kt_bail("bad CPU list '%s'", arg);
	return mask;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
	    {"hogs", 1, 0, 'H'},
	    {"hog-duty", 1, 0, 'd'},
	    {"jitter", 1, 0, 'j'},
	    {"work-ms", 1, 0, 'w'},
	    {"period-ms", 1, 0, 'p'},
	    {"seconds", 1, 0, 's'},
	    {"warmup", 1, 0, 'W'},
	    {"untagged", 0, 0, 'u'},
	    {"pack-off", 0, 0, 'o'},
	    {"start", 1, 0, 'S'},
	    {"mask", 1, 0, 'm'},
	    {"busy", 1, 0, 'b'},
	    {"share-min", 1, 0, 1},
	    {"share-max", 1, 0, 2},
	    {"idle-min", 1, 0, 3},
	    {"outside-node-max", 1, 0, 4},
	    {"outside-mask-max", 1, 0, 5},
	    {"min-periods", 1, 0, 6},
	    {"packed-min", 1, 0, 7},
	    {"packed-max", 1, 0, 8},
	    {"fallback-min", 1, 0, 9},
	    {"key", 1, 0, 10},
	    {"fallback-max", 1, 0, 11},
	    {"jitter-hogs", 1, 0, 12},
	    {"fallback-full-max", 1, 0, 13},
	    {"fallback-idle-max", 1, 0, 14},
	    {"float-hogs", 1, 0, 15},
	    {"hog-cookie", 0, 0, 16},
	    {"smt-off", 0, 0, 17},
	    {"lb-attempts-max", 1, 0, 18},
	    {"lb-attempts-min", 1, 0, 19},
	    {"lb-failed-max", 1, 0, 20},
	    {"lb-pairs", 1, 0, 21},
	    {0, 0, 0, 0},
	};
	int c;

	*o = (struct opts){.hog_duty = 100,
	                   .jitter = 4,
	                   .work_ms = 3,
	                   .period_ms = 10,
	                   .tagged = 1,
	                   .warmup = 2,
	                   .seconds = 10,
	                   .share_min = -1,
	                   .share_max = 2,
	                   .idle_min = -1,
	                   .outside_node_max = 2,
	                   .outside_mask_max = 2,
	                   .packed_min = -1,
	                   .packed_max = -1,
	                   .fallback_min = -1,
	                   .fallback_max = -1,
	                   .fallback_full_max = -1,
	                   .fallback_idle_max = -1,
	                   .lb_attempts_max = -1,
	                   .lb_attempts_min = -1,
	                   .lb_failed_max = -1,
	                   .lb_pairs = 8,
	                   .key = -2};
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'H':
			o->hogs = cpulist_arg(optarg);
			break;
		case 'd':
			o->hog_duty = atoi(optarg);
			break;
		case 'j':
			o->jitter = atoi(optarg);
			break;
		case 'w':
			o->work_ms = atoi(optarg);
			break;
		case 'p':
			o->period_ms = atoi(optarg);
			break;
		case 's':
			o->seconds = atof(optarg);
			break;
		case 'W':
			o->warmup = atof(optarg);
			break;
		case 'u':
			o->tagged = 0;
			break;
		case 'o':
			o->pack_off = 1;
			break;
		case 'S':
			o->start = cpulist_arg(optarg);
			break;
		case 'm':
			o->mask = cpulist_arg(optarg);
			break;
		case 'b':
			o->busy = cpulist_arg(optarg);
			break;
		case 1:
			o->share_min = atof(optarg);
			break;
		case 2:
			o->share_max = atof(optarg);
			break;
		case 3:
			o->idle_min = atof(optarg);
			break;
		case 4:
			o->outside_node_max = atof(optarg);
			break;
		case 5:
			o->outside_mask_max = atof(optarg);
			break;
		case 6:
			o->min_periods = atol(optarg);
			break;
		case 7:
			o->packed_min = atol(optarg);
			break;
		case 8:
			o->packed_max = atol(optarg);
			break;
		case 9:
			o->fallback_min = atol(optarg);
			break;
		case 10:
			o->key = atoi(optarg);
			break;
		case 11:
			o->fallback_max = atol(optarg);
			break;
		case 12:
			o->jitter_hogs = cpulist_arg(optarg);
			break;
		case 13:
			o->fallback_full_max = atol(optarg);
			break;
		case 14:
			o->fallback_idle_max = atol(optarg);
			break;
		case 15:
			o->float_hogs = atoi(optarg);
			break;
		case 16:
			o->hog_cookie = 1;
			break;
		case 17:
			o->smt_off = 1;
			break;
		case 18:
			o->lb_attempts_max = atof(optarg);
			break;
		case 19:
			o->lb_attempts_min = atof(optarg);
			break;
		case 20:
			o->lb_failed_max = atof(optarg);
			break;
		case 21:
			o->lb_pairs = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (o->jitter < 1 || o->jitter > MAX_JITTER || o->work_ms < 1 || o->period_ms <= o->work_ms)
		usage();
}

int main(int argc, char **argv)
{
	int nr = kt_nr_cpus(), start_node = 0, hog_pids[2 * KT_MAX_CPUS], nhogs = 0;
	struct kt_cpustat before, after;
	double total = 0, on_busy = 0, outside_node = 0, outside_mask = 0, late = 0;
	unsigned long long spare_busy = 0, spare_total = 0;
	/* The kernel's packing counters, read around the window; -1 where absent. */
	static const char *const counters[] = {"packed", "fallback", "fallback_idle",
	                                       "fallback_full", "packed_transient"};
	enum { PACKED, FALLBACK, FALLBACK_IDLE, FALLBACK_FULL, PACKED_TRANSIENT, NCOUNTERS };
	long count0[NCOUNTERS], count1[NCOUNTERS], delta[NCOUNTERS];
	long periods = 0, skipped = 0, key;
	unsigned long long delay_ns = 0;
	struct lb_stats lb_on = {0}, lb_off = {0};
	long presence[KT_MAX_CPUS] = {0}, samples = 0;
	struct opts o;
	struct shared *sh;
	uint64_t busy;
	pid_t parent;
	int sysctl_was = kt_sysctl_pack();

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv, &o);
	busy = o.busy ? o.busy : cores_of(o.hogs, nr);
	if (o.start)
		start_node = kt_node_of(__builtin_ctzll(o.start));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		kt_bail("mmap: %s", strerror(errno));
	if (o.pack_off && kt_sysctl_pack_set(0))
		kt_bail("cannot switch kernel.sched_pack_jitter off");

	if (o.smt_off) {
		smt_control("off");
		kt_diag("SMT switched off: smt/active %d, %d CPUs online",
		        kt_read_int("/sys/devices/system/cpu/smt/active"),
		        (int)sysconf(_SC_NPROCESSORS_ONLN));
	}
	bool lb_compare = o.lb_attempts_max >= 0 || o.lb_attempts_min >= 0 || o.lb_failed_max >= 0;

	if (lb_compare)
		write_sysctl("/proc/sys/kernel/sched_schedstats", "1");
	for (int c = 0; c < nr; c++)
		if (o.hogs & (1ULL << c))
			hog_pids[nhogs++] = start_hog(c, 0, o.hog_duty, o.hog_cookie, false);
	for (int i = 0; i < o.float_hogs; i++)
		hog_pids[nhogs++] = start_hog(-1, o.mask, o.hog_duty, o.hog_cookie, false);
	/*
	 * A CPU-bound jitter task beside a hog: it is the running task there
	 * about half the time, while the hog waits, and the core must still
	 * count as busy for the periodic ones.
	 */
	for (int c = 0; c < nr; c++)
		if (o.jitter_hogs & (1ULL << c))
			hog_pids[nhogs++] = start_hog(c, 0, 100, false, true);
	parent = fork();
	if (parent == 0)
		jitter_parent(sh, &o);

	/* Let placement settle; then measure for a fixed time. */
	if (o.float_hogs)
		follow_hogs(sh, hog_pids, nhogs, o.warmup, nr, presence, &samples);
	else
		sleep_s(o.warmup);
	memset(presence, 0, sizeof(presence));
	samples = 0;
	kt_stats(counters, NCOUNTERS, count0);
	kt_cpustat_read(&before);
	sh->measuring = 1;
	if (o.float_hogs)
		follow_hogs(sh, hog_pids, nhogs, o.seconds, nr, presence, &samples);
	else
		sleep_s(o.seconds);
	sh->measuring = 0;
	key = kt_stat("key");
	kt_cpustat_read(&after);
	kt_stats(counters, NCOUNTERS, count1);
	for (int i = 0; i < NCOUNTERS; i++)
		delta[i] = count1[i] >= 0 ? count1[i] - count0[i] : -1;
	if (lb_compare)
		lb_compare_slices(o.lb_pairs, sysctl_was, &lb_on, &lb_off);
	sh->stop = 1;
	waitpid(parent, NULL, 0);
	for (int i = 0; i < nhogs; i++) {
		kill(hog_pids[i], SIGKILL);
		waitpid(hog_pids[i], NULL, 0);
	}
	if (o.pack_off && sysctl_was >= 0)
		kt_sysctl_pack_set(sysctl_was);
	if (o.smt_off)
		smt_control("on");
	/*
	 * Hogs the scheduler places itself move: a jitter task's time counts as on a busy core
	 * when a hog ran on that core at that moment (the 20 ms samples), and a core is spare
	 * when a hog was there in under a tenth of the samples.
	 */
	if (o.float_hogs && !o.busy) {
		for (int c = 0; c < nr; c++)
			if (samples && presence[c] * 10 >= samples)
				busy |= 1ULL << c;
		kt_diag("cores that hosted a hog in at least a tenth of %ld samples: %#llx",
		        samples, (unsigned long long)busy);
	}

	for (int c = 0; c < nr; c++) {
		double cpu_total = 0;

		for (int i = 0; i < o.jitter; i++)
			cpu_total += sh->cpu_time[i][c];
		total += cpu_total;
		if (busy & (1ULL << c))
			on_busy += cpu_total;
		else {
			spare_busy += after.busy[c] - before.busy[c];
			spare_total += after.total[c] - before.total[c];
		}
		if (kt_node_of(c) != start_node)
			outside_node += cpu_total;
		if (o.mask && !(o.mask & (1ULL << c)))
			outside_mask += cpu_total;
		kt_diag("cpu%d core%d node%d: jitter %.3fs, cpu busy %.1f%%", c, kt_core_of(c),
		        kt_node_of(c), cpu_total,
		        100.0 * (after.busy[c] - before.busy[c]) /
		            (double)(after.total[c] - before.total[c] +
		                     !(after.total[c] - before.total[c])));
	}
	for (int i = 0; i < o.jitter; i++) {
		periods += sh->periods[i];
		skipped += sh->skipped[i];
		delay_ns += sh->delay_last[i] - sh->delay_first[i];
		if (sh->max_late_us[i] > late)
			late = sh->max_late_us[i];
	}

	if (o.float_hogs && !o.busy) {
		on_busy = 0;
		for (int i = 0; i < o.jitter; i++)
			on_busy += sh->busy_time[i];
	}
	double share = total > 0 ? on_busy / total : 0;
	double idle = spare_total ? 1.0 - (double)spare_busy / spare_total : 1.0;
	double delay_us = periods ? delay_ns / 1e3 / periods : 0;

	kt_diag("kernel %s, tagged %d, pack sysctl %d%s", kt_patched() ? "patched" : "baseline",
	        o.tagged, kt_sysctl_pack(), o.pack_off ? " (switched off for this run)" : "");
	kt_diag("RESULT share_on_busy=%.4f spare_idle=%.4f outside_node=%.4f outside_mask=%.4f "
	        "periods=%ld skipped=%ld jitter_cpu_s=%.3f max_wakeup_late_us=%.0f "
	        "runqueue_wait_us_per_period=%.1f packed=%ld fallback=%ld fallback_idle=%ld "
	        "fallback_full=%ld packed_transient=%ld",
	        share, idle, total > 0 ? outside_node / total : 0,
	        total > 0 ? outside_mask / total : 0, periods, skipped, total, late, delay_us,
	        delta[PACKED], delta[FALLBACK], delta[FALLBACK_IDLE], delta[FALLBACK_FULL],
	        delta[PACKED_TRANSIENT]);

	if (lb_compare)
		kt_diag("RESULT-LB balance attempts on/off %llu/%llu, failed %llu/%llu; "
		        "by idle type busy/idle/newidle: attempts on %llu/%llu/%llu off "
		        "%llu/%llu/%llu, failed on %llu/%llu/%llu off %llu/%llu/%llu",
		        lb_on.count, lb_off.count, lb_on.failed, lb_off.failed, lb_on.type_count[0],
		        lb_on.type_count[1], lb_on.type_count[2], lb_off.type_count[0],
		        lb_off.type_count[1], lb_off.type_count[2], lb_on.type_failed[0],
		        lb_on.type_failed[1], lb_on.type_failed[2], lb_off.type_failed[0],
		        lb_off.type_failed[1], lb_off.type_failed[2]);
	kt_plan(16);
	kt_ok(total > 0 && periods >= o.min_periods, "jitter tasks ran %ld periods (want >= %ld)",
	      periods, o.min_periods);
	kt_ok(share >= o.share_min && share <= o.share_max,
	      "share of jitter time on busy cores %.3f within [%.2f, %.2f]", share, o.share_min,
	      o.share_max);
	kt_ok(idle >= o.idle_min, "spare cores idle %.3f (want >= %.2f)", idle, o.idle_min);
	kt_ok(total > 0 && outside_node / total <= o.outside_node_max,
	      "jitter time outside the start node %.3f (want <= %.2f)",
	      total > 0 ? outside_node / total : 0, o.outside_node_max);
	kt_ok(total > 0 && outside_mask / total <= o.outside_mask_max,
	      "jitter time outside the affinity mask %.4f (want <= %.4f)",
	      total > 0 ? outside_mask / total : 0, o.outside_mask_max);
	long packed = delta[PACKED], fallback = delta[FALLBACK];

	kt_ok(o.packed_min < 0 || packed >= o.packed_min,
	      "kernel counted %ld packed placements "
	      "(want >= %ld)",
	      packed, o.packed_min);
	kt_ok(o.packed_max < 0 || (packed >= 0 && packed <= o.packed_max),
	      "kernel counted %ld packed placements (want <= %ld)", packed, o.packed_max);
	kt_ok(o.fallback_min < 0 || fallback >= o.fallback_min,
	      "kernel counted %ld fall-backs to the normal path (want >= %ld)", fallback,
	      o.fallback_min);
	kt_ok(o.fallback_max < 0 || (fallback >= 0 && fallback <= o.fallback_max),
	      "kernel counted %ld fall-backs to the normal path (want <= %ld)", fallback,
	      o.fallback_max);
	long full = delta[FALLBACK_FULL], idle_fb = delta[FALLBACK_IDLE];

	kt_ok(o.fallback_full_max < 0 || (full >= 0 && full <= o.fallback_full_max),
	      "kernel counted %ld fall-backs for busy cores without room (want <= %ld)", full,
	      o.fallback_full_max);
	kt_ok(o.fallback_idle_max < 0 || (idle_fb >= 0 && idle_fb <= o.fallback_idle_max),
	      "kernel counted %ld fall-backs for finding no busy core (want <= %ld)", idle_fb,
	      o.fallback_idle_max);
	kt_ok(o.key == -2 || key == o.key, "static key while measuring: %ld (want %d)", key, o.key);
	kt_ok(o.lb_attempts_max < 0 || lb_on.count <= o.lb_attempts_max * lb_off.count,
	      "load-balance attempts with packing %llu, without %llu (want at most %.2fx)",
	      lb_on.count, lb_off.count, o.lb_attempts_max);
	kt_ok(o.lb_attempts_min < 0 || lb_on.count >= o.lb_attempts_min * lb_off.count,
	      "load-balance attempts with packing %llu, without %llu (want at least %.2fx)",
	      lb_on.count, lb_off.count, o.lb_attempts_min);
	/* Failures are rare (about 1 % of attempts): below 20 a ratio says nothing */
	kt_ok(o.lb_failed_max < 0 ||
	          lb_on.failed <= o.lb_failed_max * (lb_off.failed > 20 ? lb_off.failed : 20),
	      "load-balance failures with packing %llu, without %llu (want at most %.2fx, "
	      "counting fewer than 20 as 20)",
	      lb_on.failed, lb_off.failed, o.lb_failed_max);
	kt_ok(kt_sysctl_pack_at_boot() != 0 || packed == 0,
	      "baseline switched off at boot counted %ld packed placements (want 0)", packed);
	return kt_exit_status();
}

// SPDX-License-Identifier: GPL-2.0-or-later
#define _GNU_SOURCE
#include "ktest.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int test_no, failed;

void kt_plan(int n)
{
	printf("1..%d\n", n);
	fflush(stdout);
}

void kt_ok(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failed++;
}

void kt_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void kt_bail(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(2);
}

int kt_exit_status(void)
{
	return failed ? 1 : 0;
}

static const char *variant(void)
{
	const char *v = getenv("tsvariant");

	if (!v)
		kt_bail("tsvariant is not set: the harness passes tsvariant=patched|baseline");
	return v;
}

bool kt_patched(void)
{
	const char *k = getenv("tskernel");

	return strcmp(k ? k : variant(), "patched") == 0;
}

int kt_sysctl_pack_at_boot(void)
{
	if (!kt_patched())
		return -1;
	return strcmp(variant(), "patched") == 0 ? 1 : 0;
}

/* include/uapi/linux/sched/types.h, SCHED_ATTR_SIZE_VER1; glibc 2.36 has no sched_attr. */
struct kt_sched_attr {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};

#define SCHED_FLAG_RESET_ON_FORK  0x01
#define SCHED_FLAG_KEEP_POLICY    0x08
#define SCHED_FLAG_KEEP_PARAMS    0x10
#define SCHED_FLAG_UTIL_CLAMP_MIN 0x20
#define SCHED_FLAG_UTIL_CLAMP_MAX 0x40

int kt_set_util_max(pid_t tid, int util_max, int util_min, bool reset_on_fork)
{
	struct kt_sched_attr attr = {
	    .size = sizeof(attr),
	    .sched_flags =
	        SCHED_FLAG_KEEP_POLICY | SCHED_FLAG_KEEP_PARAMS | SCHED_FLAG_UTIL_CLAMP_MAX,
	    .sched_util_max = (uint32_t)util_max,
	};

	if (util_min >= 0) {
		attr.sched_flags |= SCHED_FLAG_UTIL_CLAMP_MIN;
		attr.sched_util_min = (uint32_t)util_min;
	}
	if (reset_on_fork) {
		/* KEEP_POLICY would keep the old reset-on-fork setting too: name the policy. */
		attr.sched_flags &= ~(uint64_t)SCHED_FLAG_KEEP_POLICY;
		attr.sched_flags |= SCHED_FLAG_RESET_ON_FORK;
		attr.sched_policy = SCHED_OTHER;
	}
	return (int)syscall(SYS_sched_setattr, tid, &attr, 0);
}

int kt_task_jitter(pid_t pid, pid_t tid)
{
	char path[64], line[256];
	FILE *f;
	int val = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/sched", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "jitter ", 7) == 0 && colon)
			val = atoi(colon + 1);
	}
	fclose(f);
	return val;
}

void kt_stats(const char *const *names, int n, long *out)
{
	FILE *f = fopen("/sys/kernel/debug/sched/pack_jitter/stats", "r");
	char key[64];
	long val;

	for (int i = 0; i < n; i++)
		out[i] = -1;
	if (!f)
		return;
	while (fscanf(f, "%63s %ld", key, &val) == 2) {
		for (int i = 0; i < n; i++)
			if (strcmp(key, names[i]) == 0)
				out[i] = val;
	}
	fclose(f);
}

long kt_stat(const char *name)
{
	long val;

	kt_stats(&name, 1, &val);
	return val;
}

long kt_stat_wait(const char *name, long want, int timeout_ms)
{
	double deadline = kt_now() + timeout_ms / 1000.0;
	struct timespec tick = {0, 20 * 1000 * 1000};
	long val;

	/* The key turns off from a workqueue after a delay: poll for the state, bounded. */
	while ((val = kt_stat(name)) != want && kt_now() < deadline)
		nanosleep(&tick, NULL);
	return val;
}

int kt_read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int val = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

int kt_sysctl_pack(void)
{
	return kt_read_int("/proc/sys/kernel/sched_pack_jitter");
}

int kt_sysctl_pack_set(int on)
{
	FILE *f = fopen("/proc/sys/kernel/sched_pack_jitter", "w");

	if (!f)
		return -1;
	fprintf(f, "%d\n", on);
	return fclose(f);
}

int kt_nr_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

int kt_task_cpu(pid_t pid)
{
	char path[64], buf[1024], *p;
	int cpu = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')'))) {
		/* fields after ")" start at 3; the CPU is field 39 */
		for (int field = 3; p && field <= 39; field++)
			p = strchr(p + 1, ' ');
		if (p)
			cpu = atoi(p + 1);
	}
	fclose(f);
	return cpu;
}

bool kt_smt_active(void)
{
	int active = kt_read_int("/sys/devices/system/cpu/smt/active");
	FILE *f;

	if (active >= 0)
		return active == 1;
	for (int c = 0; c < kt_nr_cpus(); c++) {
		char path[96], buf[64];

		snprintf(path, sizeof(path),
		         "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && strpbrk(buf, ",-"))
			active = 1;
		fclose(f);
		if (active == 1)
			return true;
	}
	return false;
}

int kt_core_of(int cpu)
{
	char path[96], buf[64];
	FILE *f;
	int first = cpu;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
	         cpu);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f))
		first = atoi(buf);
	if (f)
		fclose(f);
	return first;
}

int kt_node_of(int cpu)
{
	char path[96];

	for (int node = 0; node < KT_MAX_CPUS; node++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/node%d", cpu, node);
		if (access(path, F_OK) == 0)
			return node;
	}
	return 0;
}

void kt_cpustat_read(struct kt_cpustat *s)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512];

	memset(s, 0, sizeof(*s));
	if (!f)
		kt_bail("cannot read /proc/stat: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[10] = {0};
		int cpu;

		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0],
		           &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 5 ||
		    cpu < 0 || cpu >= KT_MAX_CPUS)
			continue;
		for (int i = 0; i < 8; i++)
			s->total[cpu] += v[i];
		s->busy[cpu] = s->total[cpu] - v[3] - v[4]; /* idle and iowait */
	}
	fclose(f);
}

int kt_parse_cpulist(const char *list, uint64_t *mask)
{
	const char *p = list;

	*mask = 0;
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			return -1;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p)
				return -1;
		}
		if (lo < 0 || hi >= KT_MAX_CPUS || lo > hi)
			return -1;
		for (long c = lo; c <= hi; c++)
			*mask |= 1ULL << c;
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	return 0;
}

double kt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double kt_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void kt_spin_for(double seconds)
{
	double end = kt_thread_cpu() + seconds;

	while (kt_thread_cpu() < end)
		;
}

_Noreturn void kt_hog(int cpu, int duty)
{
	if (cpu >= 0)
		kt_pin(0, 1ULL << cpu);
	for (;;) {
		if (duty >= 100) {
			kt_spin_for(1.0);
			continue;
		}
		kt_spin_for(duty / 10000.0); /* of a 10 ms period */
		struct timespec rest = {0, (100 - duty) * 100 * 1000};
		nanosleep(&rest, NULL);
	}
}

void kt_pin(pid_t tid, uint64_t mask)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int c = 0; c < KT_MAX_CPUS; c++)
		if (mask & (1ULL << c))
			CPU_SET(c, &set);
	if (sched_setaffinity(tid, sizeof(set), &set))
		kt_bail("sched_setaffinity(%d): %s", tid, strerror(errno));
}

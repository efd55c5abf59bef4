/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "kernel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "macro.h"
#include "util.h"

static bool exists(const char *p)
{
	char path[4096];
	struct stat st;

	return ts_path(path, sizeof(path), "%s", p) == 0 && stat(path, &st) == 0;
}

int ts_counters_parse(const char *content, struct ts_counter **out, size_t *n)
{
	_cleanup_free_ struct ts_counter *v = NULL;
	size_t cnt = 0, cap = 0;
	const char *line = content;

	/* Generic "name value" pairs: new counters in a later kernel must show up without a code
	 * change. */
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[128], name[48];
		long long val;
		char extra;
		int k;

		if (len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, line, len);
		buf[len] = '\0';
		line = nl ? nl + 1 : NULL;
		if (strspn(buf, " \t") == len)
			continue;
		k = sscanf(buf, "%47s %lld %c", name, &val, &extra);
		if (k != 2)
			return -EINVAL;
		if (!ts_grow(&v, &cap, cnt))
			return -ENOMEM;
		snprintf(v[cnt].name, sizeof(v[cnt].name), "%s", name);
		v[cnt].value = val;
		cnt++;
	}
	*out = TAKE_PTR(v);
	*n = cnt;
	return 0;
}

static int read_switch(void)
{
	long long v;
	char *buf;
	int r;

	if (ts_read_pathf(&buf, TS_SYSCTL_PACK) < 0)
		return -1;
	r = ts_parse_ll(buf, &v);
	free(buf);
	return r < 0 ? -1 : (v != 0);
}

/* debugfs is mounted iff its root is a different filesystem than its parent (or has content). */
static bool debugfs_mounted(void)
{
	char path[4096], parent[4096];
	struct stat a, b;

	if (ts_path(path, sizeof(path), TS_DEBUGFS_ROOT) < 0 ||
	    ts_path(parent, sizeof(parent), "/sys/kernel") < 0)
		return false;
	if (stat(path, &a) < 0)
		return false;
	if (stat(parent, &b) == 0 && a.st_dev != b.st_dev)
		return true;
	/* Same device: a fixture tree, or an empty mount point. A "sched" directory means mounted.
	 */
	return exists(TS_DEBUGFS_ROOT "/sched");
}

static void probe_counters(struct ts_kernel_info *k)
{
	char *buf;
	int r;

	r = ts_read_pathf(&buf, TS_DEBUGFS_STATS);
	if (r == -EACCES || r == -EPERM) {
		k->counters_state = TS_COUNTERS_DENIED;
		return;
	}
	if (r == -ENOENT) {
		/* /sys/kernel/debug itself is mode 0700: a non-root caller cannot even look inside.
		 */
		char path[4096];
		struct stat st;

		if (ts_path(path, sizeof(path), "%s", TS_DEBUGFS_ROOT "/sched") == 0 &&
		    stat(path, &st) < 0 && errno == EACCES)
			k->counters_state = TS_COUNTERS_DENIED;
		else
			k->counters_state =
			    debugfs_mounted() ? TS_COUNTERS_ABSENT : TS_COUNTERS_NO_DEBUGFS;
		return;
	}
	if (r < 0) {
		k->counters_state = TS_COUNTERS_ERROR;
		k->counters_errno = -r;
		return;
	}
	r = ts_counters_parse(buf, &k->counters, &k->ncounters);
	free(buf);
	if (r < 0) {
		k->counters_state = TS_COUNTERS_ERROR;
		k->counters_errno = -r;
		return;
	}
	k->counters_state = TS_COUNTERS_OK;
}

bool ts_kernel_has_uclamp(void)
{
	return exists(TS_SYSCTL_UCLAMP);
}

void ts_kernel_probe(struct ts_kernel_info *k)
{
	memset(k, 0, sizeof(*k));
	k->uclamp = ts_kernel_has_uclamp();
	k->turbosched = exists(TS_SYSCTL_PACK);
	k->pack_enabled = k->turbosched ? read_switch() : -1;
	probe_counters(k);
}

void ts_kernel_info_free(struct ts_kernel_info *k)
{
	free(k->counters);
	k->counters = NULL;
	k->ncounters = 0;
}

const struct ts_counter *ts_counter_find(const struct ts_kernel_info *k, const char *name)
{
	for (size_t i = 0; i < k->ncounters; i++)
		if (strcmp(k->counters[i].name, name) == 0)
			return &k->counters[i];
	return NULL;
}

const char *ts_counters_state_str(enum ts_counters_state s)
{
	switch (s) {
	case TS_COUNTERS_OK:
		return "available";
	case TS_COUNTERS_NO_DEBUGFS:
		return "debugfs is not mounted (mount -t debugfs none /sys/kernel/debug)";
	case TS_COUNTERS_DENIED:
		return "debugfs is readable by root only (run as root to see the counters)";
	case TS_COUNTERS_ABSENT:
		return "no sched/pack_jitter/stats in debugfs (kernel without TurboSched)";
	case TS_COUNTERS_ERROR:
	default:
		return "the counters file could not be read";
	}
}

int ts_cpustat_parse(const char *content, struct ts_cpu_times *times, size_t ncpus)
{
	const char *line = content;

	for (size_t i = 0; i < ncpus; i++)
		times[i].valid = false;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		unsigned long long f[8] = {0};
		unsigned int cpu;
		int n;

		/* Only "cpuN" lines: the "cpu " total has no number (and %u would skip blanks). */
		if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9') {
			line = nl ? nl + 1 : NULL;
			continue;
		}
		n = sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &f[0],
		           &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7]);
		if (n >= 5 && cpu < ncpus) {
			/* user nice system idle iowait irq softirq steal; guest time is inside
			 * user. */
			times[cpu].busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
			times[cpu].total = times[cpu].busy + f[3] + f[4];
			times[cpu].valid = true;
		} else if (n < 5) {
			return -EINVAL;
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

int ts_cpustat_read(struct ts_cpu_times *times, size_t ncpus)
{
	char *buf;
	int r;

	r = ts_read_pathf(&buf, "/proc/stat");
	if (r < 0)
		return r;
	r = ts_cpustat_parse(buf, times, ncpus);
	free(buf);
	return r;
}

int ts_cpu_busy_pct(const struct ts_cpu_times *a, const struct ts_cpu_times *b)
{
	unsigned long long dt, db;

	if (!a->valid || !b->valid || b->total <= a->total || b->busy < a->busy)
		return -1;
	dt = b->total - a->total;
	db = b->busy - a->busy;
	if (db > dt)
		db = dt;
	return (int)((db * 100 + dt / 2) / dt);
}

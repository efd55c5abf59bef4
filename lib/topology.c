/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "topology.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define CPU_DIR "/sys/devices/system/cpu"

static int parse_num(const char **p, int *out)
{
	long v = 0;
	int digits = 0;

	while (**p >= '0' && **p <= '9') {
		v = v * 10 + (**p - '0');
		if (v >= TS_MAX_CPUS)
			return -EINVAL;
		(*p)++;
		digits++;
	}
	if (!digits)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

int ts_cpulist_parse(const char *s, int *cpus, size_t max)
{
	const char *p = s;
	size_t n = 0;

	while (*p == ' ')
		p++;
	if (*p == '\n' || !*p)
		return 0; /* an empty list is valid (a memory-only NUMA node) */
	for (;;) {
		int a, b;

		if (parse_num(&p, &a) < 0)
			return -EINVAL;
		b = a;
		if (*p == '-') {
			p++;
			if (parse_num(&p, &b) < 0 || b < a)
				return -EINVAL;
		}
		for (int c = a; c <= b; c++) {
			if (n >= max)
				return -E2BIG;
			cpus[n++] = c;
		}
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n' || !*p)
			break;
		return -EINVAL;
	}
	return (int)n;
}

/* Reads a cpulist file (path formatted from fmt) into a malloc'd array; returns count or -errno. */
static int read_cpulist(int **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int read_cpulist(int **out, const char *fmt, ...)
{
	char *buf;
	int *cpus, r;
	va_list ap;

	va_start(ap, fmt);
	r = ts_vread_pathf(&buf, fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	cpus = malloc(sizeof(*cpus) * TS_MAX_CPUS);
	if (!cpus) {
		free(buf);
		return -ENOMEM;
	}
	r = ts_cpulist_parse(buf, cpus, TS_MAX_CPUS);
	free(buf);
	if (r < 0) {
		free(cpus);
		return r;
	}
	*out = cpus;
	return r;
}

static int read_int(int *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int read_int(int *out, const char *fmt, ...)
{
	long long v;
	char *buf;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = ts_vread_pathf(&buf, fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	r = ts_parse_ll(buf, &v);
	free(buf);
	if (r == 0)
		*out = (int)v;
	return r;
}

/* cpuN directories: which CPUs exist, and the highest number. */
static int scan_present(struct ts_topology *t)
{
	char path[4096];
	struct dirent *de;
	int max = -1, r;
	DIR *d;

	r = ts_path(path, sizeof(path), CPU_DIR);
	if (r < 0)
		return r;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		const char *p = de->d_name + 3;
		int n;

		if (strncmp(de->d_name, "cpu", 3) || parse_num(&p, &n) < 0 || *p)
			continue;
		if (n > max)
			max = n;
	}
	closedir(d);
	if (max < 0)
		return -ENOENT;
	t->ncpus = (size_t)max + 1;
	t->cpus = calloc(t->ncpus, sizeof(*t->cpus));
	if (!t->cpus)
		return -ENOMEM;
	for (size_t i = 0; i < t->ncpus; i++) {
		char p2[4096];
		DIR *cd;

		t->cpus[i].core = t->cpus[i].package = t->cpus[i].node = t->cpus[i].llc = -1;
		if (ts_path(p2, sizeof(p2), CPU_DIR "/cpu%zu", i) == 0 && (cd = opendir(p2))) {
			t->cpus[i].present = true;
			closedir(cd);
		}
	}
	return 0;
}

static void mark_online(struct ts_topology *t)
{
	int *cpus, n;

	n = read_cpulist(&cpus, CPU_DIR "/online");
	if (n < 0) {
		/* No "online" file (old or minimal sysfs): every present CPU is taken as online. */
		for (size_t i = 0; i < t->ncpus; i++)
			t->cpus[i].online = t->cpus[i].present;
		return;
	}
	for (int i = 0; i < n; i++)
		if ((size_t)cpus[i] < t->ncpus)
			t->cpus[cpus[i]].online = t->cpus[cpus[i]].present;
	free(cpus);
}

static int add_core(struct ts_topology *t, int cpu)
{
	struct ts_core *nc = realloc(t->cores, (t->ncores + 1) * sizeof(*nc));

	if (!nc)
		return -ENOMEM;
	t->cores = nc;
	nc = &t->cores[t->ncores];
	memset(nc, 0, sizeof(*nc));
	nc->package = t->cpus[cpu].package;
	nc->node = t->cpus[cpu].node;
	nc->core_id = -1;
	read_int(&nc->core_id, CPU_DIR "/cpu%d/topology/core_id", cpu);
	nc->cpus = malloc(t->ncpus * sizeof(int));
	if (!nc->cpus)
		return -ENOMEM;
	return (int)t->ncores++;
}

/*
 * Groups online CPUs into cores by thread_siblings_list. Walking CPUs in ascending order and keying
 * a core by its lowest sibling keeps cores ordered by their first CPU.
 */
static int build_cores(struct ts_topology *t)
{
	for (size_t i = 0; i < t->ncpus; i++) {
		struct ts_cpu *c = &t->cpus[i];
		int *sib = NULL, nsib, key, core = -1;

		if (!c->online)
			continue;
		read_int(&c->package, CPU_DIR "/cpu%d/topology/physical_package_id", (int)i);
		nsib = read_cpulist(&sib, CPU_DIR "/cpu%d/topology/thread_siblings_list", (int)i);
		key = nsib > 0 ? sib[0] : (int)i;
		free(sib);
		if ((size_t)key < t->ncpus && key < (int)i)
			core = t->cpus[key].core;
		if (core < 0) {
			core = add_core(t, (int)i);
			if (core < 0)
				return core;
		}
		c->core = core;
		t->cores[core].cpus[t->cores[core].ncpus++] = (int)i;
	}
	return 0;
}

static void map_nodes(struct ts_topology *t)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	if (ts_path(path, sizeof(path), "/sys/devices/system/node") < 0 || !(d = opendir(path)))
		return; /* no NUMA information: nodes stay -1 */
	while ((de = readdir(d))) {
		const char *p = de->d_name + 4;
		int node, *cpus, n;

		if (strncmp(de->d_name, "node", 4) || parse_num(&p, &node) < 0 || *p)
			continue;
		t->nnodes++;
		n = read_cpulist(&cpus, "/sys/devices/system/node/node%d/cpulist", node);
		for (int i = 0; i < n; i++)
			if ((size_t)cpus[i] < t->ncpus)
				t->cpus[cpus[i]].node = node;
		if (n >= 0)
			free(cpus);
	}
	closedir(d);
}

static void map_llc(struct ts_topology *t)
{
	for (size_t i = 0; i < t->ncpus; i++) {
		int *cpus, n;

		if (!t->cpus[i].online)
			continue;
		n = read_cpulist(&cpus, CPU_DIR "/cpu%d/cache/index3/shared_cpu_list", (int)i);
		if (n < 0)
			continue;
		if (n > 0)
			t->cpus[i].llc = cpus[0];
		free(cpus);
	}
}

int ts_topology_load(struct ts_topology *t)
{
	int r;

	memset(t, 0, sizeof(*t));
	r = scan_present(t);
	if (r < 0)
		goto fail;
	mark_online(t);
	/* Nodes before cores: a core takes the node of its first CPU. */
	map_nodes(t);
	map_llc(t);
	r = build_cores(t);
	if (r < 0)
		goto fail;
	return 0;
fail:
	ts_topology_free(t);
	return r;
}

void ts_topology_free(struct ts_topology *t)
{
	for (size_t c = 0; c < t->ncores; c++)
		free(t->cores[c].cpus);
	free(t->cores);
	free(t->cpus);
	memset(t, 0, sizeof(*t));
}

int ts_topology_core_of(const struct ts_topology *t, int cpu)
{
	if (cpu < 0 || (size_t)cpu >= t->ncpus)
		return -1;
	return t->cpus[cpu].core;
}

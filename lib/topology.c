/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "topology.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
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

/* A cpulist into a malloc'd array (int **out); returns count or -errno. */
static int parse_cpulist(const char *text, void *out)
{
	_cleanup_free_ int *cpus = malloc(sizeof(*cpus) * TS_MAX_CPUS);
	int r;

	if (!cpus)
		return -ENOMEM;
	r = ts_cpulist_parse(text, cpus, TS_MAX_CPUS);
	if (r >= 0)
		*(int **)out = TAKE_PTR(cpus);
	return r;
}

/* One number (int *out); 0 or -errno. */
static int parse_int(const char *text, void *out)
{
	long long v;
	int r = ts_parse_ll(text, &v);

	if (r == 0)
		*(int *)out = (int)v;
	return r;
}

/* Reads the file (path formatted from fmt) and hands its text to parse: -errno or its result. */
static int read_parsed(int (*parse)(const char *text, void *out), void *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int read_parsed(int (*parse)(const char *text, void *out), void *out, const char *fmt, ...)
{
	_cleanup_free_ char *buf = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = ts_vread_pathf(&buf, fmt, ap);
	va_end(ap);
	return r < 0 ? r : parse(buf, out);
}
#define read_cpulist(cpus, ...) read_parsed(parse_cpulist, (int **){cpus}, __VA_ARGS__)
#define read_int(n, ...)        read_parsed(parse_int, (int *){n}, __VA_ARGS__)

/* cpuN directories: which CPUs exist, and the highest number. */
static int scan_present(struct ts_topology *t)
{
	char path[4096];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int max = -1, r;

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
	if (max < 0)
		return -ENOENT;
	t->ncpus = (size_t)max + 1;
	t->cpus = calloc(t->ncpus, sizeof(*t->cpus));
	if (!t->cpus)
		return -ENOMEM;
	for (size_t i = 0; i < t->ncpus; i++) {
		_cleanup_closedir_ DIR *cd = NULL;
		char p2[4096];

		t->cpus[i].core = t->cpus[i].package = t->cpus[i].node = t->cpus[i].llc = -1;
		if (ts_path(p2, sizeof(p2), CPU_DIR "/cpu%zu", i) == 0 && (cd = opendir(p2)))
			t->cpus[i].present = true;
	}
	return 0;
}

static void mark_online(struct ts_topology *t)
{
	_cleanup_free_ int *cpus = NULL;
	int n;

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
}

static int add_core(struct ts_topology *t, int cpu)
{
	struct ts_core *nc;

	if (!ts_grow(&t->cores, &t->cores_cap, t->ncores))
		return -ENOMEM;
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
		_cleanup_free_ int *sib = NULL;
		int nsib, key, core = -1;

		if (!c->online)
			continue;
		read_int(&c->package, CPU_DIR "/cpu%d/topology/physical_package_id", (int)i);
		nsib = read_cpulist(&sib, CPU_DIR "/cpu%d/topology/thread_siblings_list", (int)i);
		key = nsib > 0 ? sib[0] : (int)i;
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
	_cleanup_closedir_ DIR *d = NULL;
	char path[4096];
	struct dirent *de;

	if (ts_path(path, sizeof(path), "/sys/devices/system/node") < 0 || !(d = opendir(path)))
		return; /* no NUMA information: nodes stay -1 */
	while ((de = readdir(d))) {
		const char *p = de->d_name + 4;
		_cleanup_free_ int *cpus = NULL;
		int node, n;

		if (strncmp(de->d_name, "node", 4) || parse_num(&p, &node) < 0 || *p)
			continue;
		t->nnodes++;
		n = read_cpulist(&cpus, "/sys/devices/system/node/node%d/cpulist", node);
		for (int i = 0; i < n; i++)
			if ((size_t)cpus[i] < t->ncpus)
				t->cpus[cpus[i]].node = node;
	}
}

static void map_llc(struct ts_topology *t)
{
	for (size_t i = 0; i < t->ncpus; i++) {
		_cleanup_free_ int *cpus = NULL;

		if (!t->cpus[i].online)
			continue;
		if (read_cpulist(&cpus, CPU_DIR "/cpu%d/cache/index3/shared_cpu_list", (int)i) > 0)
			t->cpus[i].llc = cpus[0];
	}
}

int ts_topology_load(struct ts_topology *t)
{
	int r;

	memset(t, 0, sizeof(*t));
	r = scan_present(t);
	if (r >= 0) {
		mark_online(t);
		/* Nodes before cores: a core takes the node of its first CPU. */
		map_nodes(t);
		map_llc(t);
		r = build_cores(t);
	}
	if (r < 0)
		ts_topology_free(t);
	return r < 0 ? r : 0;
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

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Jitter tasks keep running while the machine changes under them: CPUs go offline and come
 * back (a hog core's sibling, a whole core, the CPU a jitter task last ran on), affinity masks
 * change, and the runtime switch flips.  After each step every jitter task must make progress,
 * and at the end packing must resume (patched kernel).  The harness fails the boot on any
 * kernel splat.
 */
#define _GNU_SOURCE
#include "ktest.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NJ 4

struct shared {
	volatile long periods[NJ];
	volatile int stop;
};

static struct shared *sh;
static pid_t jitter_pid[NJ];
static pid_t hog_pid[2];
static int hog_cpu[2];

static _Noreturn void jitter(int idx)
{
	struct timespec period = {0, 9 * 1000 * 1000};

	while (!sh->stop) {
		kt_spin_for(0.001);
		sh->periods[idx]++;
		nanosleep(&period, NULL);
	}
	_exit(0);
}

static int set_online(int cpu, int on)
{
	char path[80];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", on);
	return fclose(f);
}

/* Every jitter task completes a few more periods: bounded wait on the condition itself. */
static bool all_progress(int periods, int timeout_ms)
{
	long start[NJ];
	double deadline = kt_now() + timeout_ms / 1000.0;
	struct timespec tick = {0, 10 * 1000 * 1000};

	for (int i = 0; i < NJ; i++)
		start[i] = sh->periods[i];
	while (kt_now() < deadline) {
		bool done = true;

		for (int i = 0; i < NJ; i++)
			done &= sh->periods[i] >= start[i] + periods;
		if (done)
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

static void hotplug_step(const char *what, const int *cpus, int n)
{
	bool ok = true;

	for (int i = 0; i < n; i++)
		ok &= set_online(cpus[i], 0) == 0;
	bool ran_off = all_progress(5, 10000);

	for (int i = 0; i < n; i++)
		ok &= set_online(cpus[i], 1) == 0;
	/*
	 * Taking a hog's CPU away widens the hog's mask to every CPU, and it stays wide when the
	 * CPU returns: pin it back, or the later "packing resumed" depends on where it wandered.
	 */
	for (int i = 0; i < 2; i++)
		kt_pin(hog_pid[i], 1ULL << hog_cpu[i]);
	kt_ok(ok && ran_off && all_progress(5, 10000), "offline/online %s: tasks kept running",
	      what);
}

struct step {
	char what[64];
	int cpus[8], n;
};

/* "cpu3" or "cpus 5,6,7", then " (why)". */
static void name_step(struct step *st, const char *why)
{
	size_t len = (size_t)snprintf(st->what, sizeof(st->what), "cpu%s", st->n > 1 ? "s " : "");

	for (int i = 0; i < st->n && len < sizeof(st->what); i++)
		len += (size_t)snprintf(st->what + len, sizeof(st->what) - len, "%s%d",
		                        i ? "," : "", st->cpus[i]);
	if (len < sizeof(st->what))
		snprintf(st->what + len, sizeof(st->what) - len, " (%s)", why);
}

/*
 * The hotplug steps, from the topology: a hog's SMT sibling (none on one-thread cores), the
 * first whole core without a hog, and the last node's CPUs but its hog.
 */
static int plan_steps(struct step *st, const int *hog, int nr)
{
	int n = 0;

	for (int c = 1; c < nr; c++)
		if (kt_core_of(c) == kt_core_of(hog[0])) {
			st[n].cpus[0] = c;
			st[n].n = 1;
			name_step(&st[n++], "sibling of a hog");
			break;
		}
	for (int c = 1; c < nr; c++) {
		int core = kt_core_of(c);

		if (core == kt_core_of(0) || core == kt_core_of(hog[0]) ||
		    core == kt_core_of(hog[1]))
			continue;
		st[n].n = 0;
		for (int d = 0; d < nr && st[n].n < 8; d++)
			if (kt_core_of(d) == core)
				st[n].cpus[st[n].n++] = d;
		name_step(&st[n++], "a whole core");
		break;
	}
	st[n].n = 0;
	for (int c = 1; c < nr && st[n].n < 8; c++)
		if (kt_node_of(c) == kt_node_of(hog[1]) && c != hog[1])
			st[n].cpus[st[n].n++] = c;
	if (st[n].n > 0)
		name_step(&st[n++], "the last node but its hog");
	return n;
}

int main(void)
{
	int nr = kt_nr_cpus(), nsteps;
	uint64_t all;
	long packed0, packed1;
	struct step steps[3];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (nr < 4 || nr > 64)
		kt_bail("needs 4 to 64 CPUs on two NUMA nodes, found %d CPUs", nr);
	all = nr == 64 ? ~0ULL : (1ULL << nr) - 1;
	/* One hog on the first CPU of the first and of the last node. */
	for (int c = 0; c < nr; c++)
		if (kt_node_of(c) > kt_node_of(hog_cpu[1]))
			hog_cpu[1] = c;
	while (hog_cpu[1] > 0 && kt_node_of(hog_cpu[1] - 1) == kt_node_of(hog_cpu[1]))
		hog_cpu[1]--;
	if (hog_cpu[1] == 0)
		kt_bail("needs two NUMA nodes");
	nsteps = plan_steps(steps, hog_cpu, nr);
	/*
	 * A one-thread core busy all the time has no room left for a jitter task: half-busy hogs
	 * there (as in suite-ppc64le's pack-node), so that "packing resumed" can be seen.
	 */
	int duty = kt_core_of(1) == kt_core_of(0) ? 100 : 50;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 2; i++) {
		hog_pid[i] = fork();
		if (hog_pid[i] == 0)
			kt_hog(hog_cpu[i], duty);
	}
	kt_set_util_max(0, 0, -1, false);
	for (int i = 0; i < NJ; i++) {
		jitter_pid[i] = fork();
		if (jitter_pid[i] == 0)
			jitter(i);
	}
	kt_set_util_max(0, 1024, -1, false);

	kt_plan(6 + nsteps);
	kt_ok(all_progress(20, 10000), "jitter tasks run");

	int last = kt_task_cpu(jitter_pid[0]);

	for (int i = 0; i < nsteps; i++)
		hotplug_step(steps[i].what, steps[i].cpus, steps[i].n);
	if (last <= 0)
		last = 1; /* cpu0 cannot go offline */
	int lastv[] = {last};
	char what[64];

	snprintf(what, sizeof(what), "cpu%d (where a jitter task last ran)", last);
	hotplug_step(what, lastv, 1);

	/* Affinity churn: each task gets a random mask of online CPUs, many times. */
	unsigned int seed = 1;
	for (int round = 0; round < 300; round++) {
		uint64_t mask = ((uint64_t)rand_r(&seed) & all) | 1ULL << (rand_r(&seed) % nr);

		kt_pin(jitter_pid[round % NJ], mask);
	}
	kt_pin(0, all);
	for (int i = 0; i < NJ; i++)
		kt_pin(jitter_pid[i], all);
	kt_ok(all_progress(5, 10000), "affinity churn: tasks kept running");

	/* The runtime switch flipping under load. */
	int sysctl_was = kt_sysctl_pack();
	for (int i = 0; i < 200 && sysctl_was >= 0; i++)
		kt_sysctl_pack_set(i % 2);
	if (sysctl_was >= 0)
		kt_sysctl_pack_set(sysctl_was);
	kt_ok(all_progress(5, 10000), "switch toggled 200 times: tasks kept running");

	/* Back as it was at boot: counted placements resume only if packing was on. */
	packed0 = kt_stat("packed");
	all_progress(50, 20000);
	packed1 = kt_stat("packed");
	if (kt_sysctl_pack_at_boot() == 1 && kt_smt_active())
		kt_ok(packed0 >= 0 && packed1 > packed0, "packing resumed (%ld placements)",
		      packed1 - packed0);
	else if (kt_sysctl_pack_at_boot() == 1)
		kt_ok(packed0 >= 0 && packed1 == packed0,
		      "no SMT, so no packing (patch 0006): no placements counted (%ld)",
		      packed1 - packed0);
	else if (kt_patched())
		kt_ok(packed0 >= 0 && packed1 == packed0,
		      "switched off again as at boot: no placements counted (%ld)",
		      packed1 - packed0);
	else
		kt_ok(packed1 == -1, "baseline has no packing counters");

	sh->stop = 1;
	for (int i = 0; i < NJ; i++)
		waitpid(jitter_pid[i], NULL, 0);
	for (int i = 0; i < 2; i++) {
		kill(hog_pid[i], SIGKILL);
		waitpid(hog_pid[i], NULL, 0);
	}
	/* After hotplug moved them around, every jitter task counted runnable was uncounted. */
	long runnable = kt_stat("jitter_runnable");

	kt_ok(runnable == (kt_patched() ? 0 : -1), "runnable jitter tasks counted: %ld (want %d)",
	      runnable, kt_patched() ? 0 : -1);
	return kt_exit_status();
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A jitter task that turns CPU-bound must be able to leave a full core.  Two hogs keep both
 * threads of the core of --core busy; a tagged task confined to that core runs 1 ms every
 * 10 ms, then spins without sleeping, and then its affinity opens to every CPU.  From then on
 * only the load balancer can move it (it never wakes up again), and it should, as with packing
 * off: packing is for small tasks, and this one no longer fits beside the core's other work.
 * The test samples the task's CPU time every 250 ms and passes when some 1 s window ending
 * within --within seconds of the opening gave it at least --cpu-min of a CPU.
 *
 *   t_turn --core CPU [--within S] [--cpu-min X] [--cpu-max X]
 */
#define _GNU_SOURCE
#include "ktest.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STEP_S    0.25
#define MAX_STEPS 200

struct shared {
	volatile int spinning; /* set by the task once it turned CPU-bound */
	volatile int last_cpu;
};

static _Noreturn void turner(struct shared *sh, uint64_t core)
{
	struct timespec period = {0, 9 * 1000 * 1000};

	kt_pin(0, core);
	if (kt_set_util_max(0, 0, -1, false))
		kt_bail("cannot tag the task: %s", strerror(errno));
	for (int i = 0; i < 100; i++) { /* 1 s of a small periodic task */
		kt_spin_for(0.001);
		nanosleep(&period, NULL);
	}
	sh->spinning = 1;
	for (;;) {
		sh->last_cpu = sched_getcpu();
		kt_spin_for(0.001);
	}
}

/* The CPU time of @pid in seconds, from /proc/PID/schedstat. */
static double cpu_time_of(pid_t pid)
{
	char path[64];
	unsigned long long run = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &run) != 1)
		kt_bail("cannot read %s", path);
	fclose(f);
	return run / 1e9;
}

static void sleep_s(double s)
{
	struct timespec t = {(time_t)s, (long)((s - (time_t)s) * 1e9)};

	nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	int core_cpu = -1, nr = kt_nr_cpus(), steps, best_end = -1;
	double within = 5, cpu_min = -1, cpu_max = 2, samples[MAX_STEPS + 1], best = 0;
	uint64_t core = 0, all = nr >= 64 ? ~0ULL : (1ULL << nr) - 1;
	pid_t hogs[2], task;
	struct shared *sh;
	int nhogs = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--core"))
			core_cpu = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--within"))
			within = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--cpu-min"))
			cpu_min = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--cpu-max"))
			cpu_max = atof(argv[i + 1]);
		else
			core_cpu = -1, i = argc;
	}
	if (core_cpu < 0 || argc % 2 == 0 || within < 1 || within / STEP_S > MAX_STEPS) {
		fprintf(stderr,
		        "usage: t_turn --core CPU [--within S] [--cpu-min X] [--cpu-max X]\n");
		return 2;
	}
	for (int c = 0; c < nr; c++)
		if (kt_core_of(c) == kt_core_of(core_cpu))
			core |= 1ULL << c;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		kt_bail("mmap: %s", strerror(errno));

	for (int c = 0; c < nr && nhogs < 2; c++) {
		if (!(core & (1ULL << c)))
			continue;
		hogs[nhogs] = fork();
		if (hogs[nhogs] == 0)
			kt_hog(c, 100);
		nhogs++;
	}
	task = fork();
	if (task == 0)
		turner(sh, core);

	/* Bounded wait on the task's own flag: it turns CPU-bound after about 1 s. */
	for (int i = 0; i < 1000 && !sh->spinning; i++)
		sleep_s(0.01);
	sleep_s(1); /* a second as a CPU-bound task on the full core */
	kt_pin(task, all);
	steps = (int)(within / STEP_S);
	samples[0] = cpu_time_of(task);
	for (int i = 1; i <= steps; i++) {
		sleep_s(STEP_S);
		samples[i] = cpu_time_of(task);
	}
	int last_cpu = sh->last_cpu;

	kill(task, SIGKILL);
	waitpid(task, NULL, 0);
	for (int i = 0; i < nhogs; i++) {
		kill(hogs[i], SIGKILL);
		waitpid(hogs[i], NULL, 0);
	}

	/* The best 1 s window that ends within the allowed time. */
	int win = (int)(1 / STEP_S);

	for (int end = win; end <= steps; end++) {
		double got = samples[end] - samples[end - win];

		if (got > best) {
			best = got;
			best_end = end;
		}
	}
	kt_diag("RESULT best_cpu_per_s=%.3f window_end_s=%.2f first_s=%.3f last_s=%.3f "
	        "last_cpu=%d (core of cpu%d: %#llx)",
	        best, best_end * STEP_S, samples[win] - samples[0],
	        samples[steps] - samples[steps - win], last_cpu, core_cpu,
	        (unsigned long long)core);
	kt_plan(2);
	kt_ok(best >= cpu_min, "best 1 s share of a CPU within %.0f s: %.3f (want >= %.2f)", within,
	      best, cpu_min);
	kt_ok(best <= cpu_max, "best 1 s share of a CPU within %.0f s: %.3f (want <= %.2f)", within,
	      best, cpu_max);
	return kt_exit_status();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * poke-storm SECONDS: flip the sched_schedstats static key as fast as the kernel allows while
 * every other CPU wakes tasks across CPUs, so that x86 text poking of the key's branch sites
 * (enqueue, dequeue and wake-up paths) races with vCPUs executing them.
 *
 * This is the reproducer of docs/known-problems.md: the series flips its own key rarely, and
 * upstream keys once per boot, which makes the stale-int3 oops a few-percent-per-boot event;
 * thousands of flips a run make it frequent enough to compare QEMU's TCG modes.  Prints
 * "poke-storm: N flips in S s" and exits 0, unless the kernel oopses first.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Two processes on two CPUs bounce a byte through two pipes: each hop is a remote wake-up. */
static pid_t bouncer(int cpu, int in, int out, int starts)
{
	pid_t pid = fork();
	char c = 0;

	if (pid != 0)
		return pid;
	pin(cpu);
	if (starts && write(out, &c, 1) != 1)
		_exit(1);
	for (;;) {
		if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
			_exit(1);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 20, start;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), flips = 0;
	pid_t kids[64];
	int nkids = 0, fd;

	fd = open("/proc/sys/kernel/sched_schedstats", O_WRONLY);
	if (fd < 0) {
		perror("poke-storm: /proc/sys/kernel/sched_schedstats (needs CONFIG_SCHEDSTATS)");
		return 2;
	}
	for (int cpu = 1; cpu + 1 < ncpu && nkids + 2 <= 64; cpu += 2) {
		int ab[2], ba[2];

		if (pipe(ab) || pipe(ba))
			return 2;
		kids[nkids++] = bouncer(cpu, ba[0], ab[1], 1);
		kids[nkids++] = bouncer(cpu + 1, ab[0], ba[1], 0);
	}
	pin(0);
	start = now();
	while (now() - start < seconds) {
		if (pwrite(fd, flips & 1 ? "0" : "1", 1, 0) != 1) {
			perror("poke-storm: write sched_schedstats");
			return 2;
		}
		flips++;
	}
	for (int i = 0; i < nkids; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	printf("poke-storm: %ld flips in %.0f s\n", flips, seconds);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsd-match: the process the daemon benchmark (tsdaemon) execs; its comm matches the
 * benchmark's rule.  Modes:
 *
 *   tsd-match lat T0_NS      poll (every 100 us) until this task is tagged (util_max = 0),
 *                            print the time since T0_NS (CLOCK_MONOTONIC, taken just
 *                            before execve) in ns;
 *                            exit 1 if not tagged within 5 s
 *   tsd-match storm LIFE_MS  live LIFE_MS from the execve, then exit 0 if tagged, 3 if not
 *                            (LIFE_MS 0: exit at once)
 *   tsd-match hold THREADS   run THREADS threads in all (small stacks), write one byte to
 *                            stdout when they exist, then block until stdin closes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct attr {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};

static int tagged(void)
{
	struct attr a;

	memset(&a, 0, sizeof(a));
	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0))
		return -1;
	return a.sched_util_max == 0;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *block(void *arg)
{
	char c;

	(void)arg;
	while (read(0, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "lat")) {
		long long t0 = atoll(argv[2]), deadline = now_ns() + 5000000000LL;

		/*
		 * Poll every 100 us rather than spin: under -icount all vCPUs share one
		 * instruction budget, so a spinning waiter would slow down the very daemon it
		 * waits for (on hardware it would just use a core of its own).
		 */
		struct timespec poll = {0, 100 * 1000};

		while (tagged() != 1) {
			if (now_ns() > deadline)
				return 1;
			nanosleep(&poll, NULL);
		}
		printf("%lld\n", now_ns() - t0);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "storm")) {
		long long life = atoll(argv[2]) * 1000000LL;
		struct timespec end;

		if (life <= 0)
			return 0;
		/* Measured from process start: CLOCK_MONOTONIC now is just after the exec. */
		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += life / 1000000000LL;
		end.tv_nsec += life % 1000000000LL;
		if (end.tv_nsec >= 1000000000L) {
			end.tv_sec++;
			end.tv_nsec -= 1000000000L;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) == EINTR)
			;
		return tagged() == 1 ? 0 : 3;
	}
	if (argc == 3 && !strcmp(argv[1], "hold")) {
		int n = atoi(argv[2]);
		pthread_attr_t pa;
		pthread_t t;

		pthread_attr_init(&pa);
		pthread_attr_setstacksize(&pa, PTHREAD_STACK_MIN);
		for (int i = 1; i < n; i++)
			if (pthread_create(&t, &pa, block, NULL)) {
				fprintf(stderr, "tsd-match: thread %d: %s\n", i, strerror(errno));
				return 1;
			}
		if (write(1, "r", 1) != 1)
			return 1;
		block(NULL);
		return 0;
	}
	fprintf(stderr, "usage: tsd-match lat T0_NS | storm LIFE_MS | hold THREADS\n");
	return 2;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsmsg: a hackbench-style messaging benchmark, wake-up heavy and without jitter tasks.
 * G groups of F sender and F receiver processes; each sender writes L messages of S bytes to
 * every receiver of its group over AF_UNIX stream sockets, each receiver reads F*L messages.
 * One run is timed from the moment every task is ready (they block on a "go" pipe) to the
 * last exit.  --repeats R runs it R times and prints one line per run and a summary:
 *
 *   BENCH msg label=L kernel=patched pack=1 key=0 run=3 seconds=1.234
 *   BENCH msgsum label=L kernel=patched ... runs=5 median_s=1.230 min_s=... max_s=...
 *
 * --pipe N runs the ping-pong of `perf bench sched pipe` instead: two processes pass one byte
 * back and forth over two pipes N times, two wake-ups a round, nothing else running.  Its run
 * time spreads far less than the messaging's under -icount, whose 40 tasks interleave
 * differently every run.
 *
 * --idle-tagged forks one tagged task that only sleeps, so the patched kernel's static key is
 * on and every wake-up takes the packing check (which must not find anything to do for
 * untagged tasks); without it, the key is off and the hook is a patched-out branch.
 */
#define _GNU_SOURCE
#include "bench.h"
#include "ktest.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int groups = 2, fds = 10, loops = 100, msgsize = 100, repeats = 5, idle_tagged, rounds;
static const char *label = "-";

static void xwrite(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(3);
		p += n;
		len -= (size_t)n;
	}
}

static void ready_and_wait(int ready, int go)
{
	char c = 0;

	xwrite(ready, &c, 1);
	/* Blocks until the parent closes the write end: everyone starts together. */
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
}

static _Noreturn void sender(int *out, int ready, int go)
{
	char msg[4096] = {0};

	ready_and_wait(ready, go);
	for (int l = 0; l < loops; l++)
		for (int i = 0; i < fds; i++)
			xwrite(out[i], msg, (size_t)msgsize);
	_exit(0);
}

static _Noreturn void receiver(int in, int ready, int go)
{
	char msg[4096];
	long want = (long)fds * loops * msgsize;

	ready_and_wait(ready, go);
	while (want > 0) {
		ssize_t n = read(in, msg, (size_t)(want < msgsize ? want : msgsize));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(4);
		want -= n;
	}
	_exit(0);
}

/* --pipe: the side that starts writes first; each waits for the other's byte. */
static _Noreturn void pinger(int out, int in, int starts, int ready, int go)
{
	char c = 0;

	ready_and_wait(ready, go);
	for (int r = 0; r < rounds; r++) {
		if (starts)
			xwrite(out, &c, 1);
		while (read(in, &c, 1) != 1)
			if (errno != EINTR)
				_exit(4);
		if (!starts)
			xwrite(out, &c, 1);
	}
	_exit(0);
}

/* Times the tasks from the moment all of them are ready to the last exit. */
static double time_tasks(pid_t *kids, int nkids, int ready[2], int go[2])
{
	double t0, t1;
	int bad = 0;
	char c;

	for (int i = 0; i < nkids; i++)
		if (read(ready[0], &c, 1) != 1)
			kt_bail("a task died before it was ready");
	t0 = kt_now();
	close(go[1]);
	for (int i = 0; i < nkids; i++) {
		int st;

		waitpid(kids[i], &st, 0);
		bad += !WIFEXITED(st) || WEXITSTATUS(st);
	}
	t1 = kt_now();
	close(go[0]);
	close(ready[0]);
	close(ready[1]);
	if (bad)
		kt_bail("%d benchmark tasks failed", bad);
	return t1 - t0;
}

static double pipe_run(void)
{
	int ready[2], go[2], ab[2], ba[2];
	pid_t kids[2];

	if (pipe(ready) || pipe(go) || pipe(ab) || pipe(ba))
		kt_bail("pipe: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			kt_bail("fork: %s", strerror(errno));
		if (kids[i] == 0) {
			close(go[1]);
			if (i == 0)
				pinger(ab[1], ba[0], 1, ready[1], go[0]);
			pinger(ba[1], ab[0], 0, ready[1], go[0]);
		}
	}
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	return time_tasks(kids, 2, ready, go);
}

static double one_run(void)
{
	int ready[2], go[2], ntask = 2 * groups * fds, nkids = 0;
	pid_t *kids = calloc((size_t)ntask, sizeof(pid_t));
	double s;

	if (!kids || pipe(ready) || pipe(go))
		kt_bail("pipe: %s", strerror(errno));
	for (int g = 0; g < groups; g++) {
		int out[64], in[64];

		for (int i = 0; i < fds; i++) {
			int sv[2];

			if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
				kt_bail("socketpair: %s", strerror(errno));
			in[i] = sv[0];
			out[i] = sv[1];
		}
		for (int i = 0; i < fds; i++) {
			pid_t p = fork();

			if (p < 0)
				kt_bail("fork: %s", strerror(errno));
			if (p == 0) {
				close(go[1]);
				receiver(in[i], ready[1], go[0]);
			}
			kids[nkids++] = p;
		}
		for (int i = 0; i < fds; i++) {
			pid_t p = fork();

			if (p < 0)
				kt_bail("fork: %s", strerror(errno));
			if (p == 0) {
				close(go[1]);
				sender(out, ready[1], go[0]);
			}
			kids[nkids++] = p;
		}
		for (int i = 0; i < fds; i++) {
			close(in[i]);
			close(out[i]);
		}
	}
	s = time_tasks(kids, nkids, ready, go);
	free(kids);
	return s;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"groups", 1, 0, 'g'}, {"fds", 1, 0, 'f'},     {"loops", 1, 0, 'l'},
	    {"size", 1, 0, 's'},   {"repeats", 1, 0, 'r'}, {"idle-tagged", 0, 0, 'i'},
	    {"label", 1, 0, 'L'},  {"pipe", 1, 0, 'p'},    {0, 0, 0, 0},
	};
	const char *variant = getenv("tsvariant");
	struct bn_samples runs = {0};
	int c, alive[2];
	pid_t tagged = -1;
	long key;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'g':
			groups = atoi(optarg);
			break;
		case 'f':
			fds = atoi(optarg);
			break;
		case 'l':
			loops = atoi(optarg);
			break;
		case 's':
			msgsize = atoi(optarg);
			break;
		case 'r':
			repeats = atoi(optarg);
			break;
		case 'i':
			idle_tagged = 1;
			break;
		case 'L':
			label = optarg;
			break;
		case 'p':
			rounds = atoi(optarg);
			if (rounds < 1)
				kt_bail("--pipe takes a number of rounds, not '%s'", optarg);
			break;
		default:
			fprintf(stderr,
			        "usage: tsmsg [--groups G] [--fds F] [--loops L] [--size S] "
			        "[--repeats R] [--idle-tagged] [--label NAME] [--pipe ROUNDS]\n");
			return 2;
		}
	}
	if (groups < 1 || fds < 1 || fds > 64 || loops < 1 || msgsize < 1 || msgsize > 4096 ||
	    repeats < 1)
		kt_bail("bad arguments");

	if (idle_tagged) {
		if (pipe(alive))
			kt_bail("pipe: %s", strerror(errno));
		tagged = fork();
		if (tagged == 0) {
			char ch;

			close(alive[1]);
			if (kt_set_util_max(0, 0, -1, false))
				_exit(1);
			while (read(alive[0], &ch, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		close(alive[0]);
		/* The key is switched on from a work item: wait for that state (bounded). */
		if (kt_stat("key") >= 0)
			kt_stat_wait("key", 1, 5000);
	} else if (kt_stat("key") > 0) {
		/* An earlier run's tagged tasks are gone; the key goes off after a delay. */
		kt_stat_wait("key", 0, 10000);
	}
	key = kt_stat("key");
	for (int r = 0; r < repeats; r++) {
		double s = rounds ? pipe_run() : one_run();

		bn_samples_add(&runs, s);
		bn_begin("msg", label);
		bn_kv("kernel", "%s", variant ? variant : "unknown");
		bn_kv("pack", "%d", kt_sysctl_pack());
		bn_kv("key", "%ld", key);
		bn_kv("run", "%d", r);
		bn_kv("seconds", "%.6f", s);
		bn_end();
	}
	bn_begin("msgsum", label);
	bn_kv("kernel", "%s", variant ? variant : "unknown");
	bn_kv("pack", "%d", kt_sysctl_pack());
	bn_kv("key", "%ld", key);
	bn_kv("tasks", "%d", rounds ? 2 : 2 * groups * fds);
	bn_kv("messages", "%ld", rounds ? 2L * rounds : (long)groups * fds * fds * loops);
	bn_kv("runs", "%d", repeats);
	bn_kv("min_s", "%.6f", bn_quantile(&runs, 0));
	bn_kv("median_s", "%.6f", bn_quantile(&runs, 0.5));
	bn_kv("max_s", "%.6f", bn_max(&runs));
	bn_end();
	if (tagged > 0) {
		close(alive[1]);
		waitpid(tagged, NULL, 0);
	}
	return 0;
}

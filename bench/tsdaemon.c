// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsdaemon: the daemon benchmark, run in a guest on the patched kernel.  It starts
 * turboschedd --foreground with a one-rule configuration (comm = tsd-match), waits for READY=1
 * on its own NOTIFY_SOCKET, and measures:
 *
 *   latency  exec -> tagged over --execs sequential execs of tsd-match: from just before
 *            execve() to the moment the new process sees util_max = 0 (sched_getattr)
 *   storm    --storm short-lived tsd-match processes forked as fast as possible (at most
 *            --storm-alive at once); every --long-every'th lives --long-ms and reports whether
 *            it was tagged by then; the daemon's rescans after lost events (ENOBUFS)
 *   idle     context switches (wake-ups) and CPU time of the daemon over --quiet seconds
 *   tasks    --procs processes of --threads threads each: time until the daemon's registry
 *            holds all of them, its VmRSS / VmHWM then, and the time `turboschedctl tasks`
 *            takes to list them beside `ps -eLo tid,psr,comm` (median of 3 each, alternated)
 *
 * Each part prints one "BENCH daemon-PART ..." line.
 */
#define _GNU_SOURCE
#include "bench.h"
#include "ktest.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DIR_ "/tmp/tsd"
#define SOCK DIR_ "/control"
#define CONF DIR_ "/turboschedd.conf"

static const char *daemon_bin = "turboschedd", *ctl_bin = "turboschedctl",
                  *match = "/tests/tsd-match";
static int daemon_nice;
static int execs = 1000, storm = 5000, storm_alive = 64, long_every = 10, long_ms = 60, quiet = 60,
           procs = 100, threads = 100, recheck = 30;
static pid_t dpid;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One request on the control socket; returns the malloc'd JSON response or NULL. */
static char *ctl_request(const char *req)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	unsigned char hdr[4];
	uint32_t len = (uint32_t)strlen(req), got = 0;
	char *buf = NULL;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", SOCK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto out;
	hdr[0] = (unsigned char)(len >> 24);
	hdr[1] = (unsigned char)(len >> 16);
	hdr[2] = (unsigned char)(len >> 8);
	hdr[3] = (unsigned char)len;
	if (write(fd, hdr, 4) != 4 || write(fd, req, len) != (ssize_t)len)
		goto out;
	for (got = 0; got < 4;) {
		ssize_t n = read(fd, hdr + got, 4 - got);

		if (n <= 0)
			goto out;
		got += (uint32_t)n;
	}
	len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
	buf = calloc(1, (size_t)len + 1);
	for (got = 0; buf && got < len;) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n <= 0) {
			free(buf);
			buf = NULL;
			break;
		}
		got += (uint32_t)n;
	}
out:
	if (fd >= 0)
		close(fd);
	return buf;
}

/* The first integer value of "key" in @json (the daemon's status object), -1 if absent. */
static long long json_int(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	p = json ? strstr(json, pat) : NULL;
	if (!p)
		return -1;
	p += strlen(pat);
	while (*p == ' ' || *p == ':')
		p++;
	return atoll(p);
}

struct dstat {
	long long tagged, scans, rescans, events, late;
};

static struct dstat dstatus(void)
{
	char *j = ctl_request("{\"v\":1,\"cmd\":\"status\"}");
	/* "tagged" first appears at the top level (the registry), then in "stats". */
	const char *stats = j ? strstr(j, "\"stats\"") : NULL;
	struct dstat s = {json_int(j, "tagged"), json_int(stats, "scans"),
	                  json_int(stats, "rescans"), json_int(stats, "events"),
	                  json_int(stats, "late")};

	free(j);
	return s;
}

static void start_daemon(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t salen;
	int ns = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	long long t0 = now_ns(), t1 = 0;
	FILE *f;

	mkdir(DIR_, 0755);
	f = fopen(CONF, "w");
	if (!f)
		kt_bail("cannot write %s", CONF);
	fprintf(f,
	        "[daemon]\nrecheck_interval = %ds\nlog_level = notice\n\n"
	        "[rule bench]\ncomm = tsd-match\n",
	        recheck);
	fclose(f);
	/* Abstract NOTIFY_SOCKET: READY=1 tells when the first scan is done. */
	sa.sun_path[0] = '\0';
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "tsbench-notify-%d", getpid());
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1));
	if (ns < 0 || bind(ns, (struct sockaddr *)&sa, salen))
		kt_bail("notify socket: %s", strerror(errno));
	char env[128];

	snprintf(env, sizeof(env), "NOTIFY_SOCKET=@%s", sa.sun_path + 1);
	dpid = fork();
	if (dpid == 0) {
		int log = open(DIR_ "/daemon.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		putenv(env);
		dup2(log, 2);
		/* As systemd/turboschedd.service's Nice= would. */
		if (setpriority(PRIO_PROCESS, 0, daemon_nice))
			dprintf(log, "tsdaemon: setpriority(%d): %s\n", daemon_nice,
			        strerror(errno));
		execlp(daemon_bin, daemon_bin, "--foreground", "--config", CONF, "--socket", SOCK,
		       (char *)NULL);
		_exit(127);
	}
	for (;;) {
		struct pollfd p = {ns, POLLIN, 0};
		char msg[512];
		ssize_t n;

		if (poll(&p, 1, 60000) <= 0)
			kt_bail("turboschedd sent no READY=1 within 60 s (see " DIR_
			        "/daemon.log)");
		n = recv(ns, msg, sizeof(msg) - 1, 0);
		if (n <= 0)
			continue;
		msg[n] = '\0';
		if (strstr(msg, "READY=1")) {
			t1 = now_ns();
			break;
		}
	}
	close(ns); /* later notifications fail at once instead of filling a queue */
	bn_begin("daemon-start", "daemon");
	bn_kv("ready_ms", "%.1f", (t1 - t0) / 1e6);
	bn_kv("rss_kib", "%ld", bn_rss_kib(dpid));
	errno = 0;
	int prio = getpriority(PRIO_PROCESS, (id_t)dpid);
	bn_kv("nice", "%d", errno ? 99 : prio);
	bn_end();
}

static void bench_latency(void)
{
	struct bn_samples lat = {0};
	int missed = 0;
	long long t_all = now_ns();

	for (int i = 0; i < execs; i++) {
		int pfd[2];
		char buf[64] = {0}, t0s[32];
		pid_t p;
		int st;

		if (pipe(pfd))
			kt_bail("pipe: %s", strerror(errno));
		p = fork();
		if (p == 0) {
			dup2(pfd[1], 1);
			close(pfd[0]);
			snprintf(t0s, sizeof(t0s), "%lld", now_ns());
			execl(match, "tsd-match", "lat", t0s, (char *)NULL);
			_exit(127);
		}
		close(pfd[1]);
		ssize_t n = read(pfd[0], buf, sizeof(buf) - 1);

		close(pfd[0]);
		waitpid(p, &st, 0);
		if (n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			bn_samples_add(&lat, atoll(buf) / 1e3);
		else
			missed++;
	}
	bn_begin("daemon-latency", "daemon");
	bn_kv("execs", "%d", execs);
	bn_kv("missed", "%d", missed);
	bn_kv("seconds", "%.2f", (now_ns() - t_all) / 1e9);
	bn_kv("p50_us", "%.0f", bn_quantile(&lat, 0.5));
	bn_kv("p90_us", "%.0f", bn_quantile(&lat, 0.9));
	bn_kv("p99_us", "%.0f", bn_quantile(&lat, 0.99));
	bn_kv("max_us", "%.0f", bn_max(&lat));
	bn_end();
}

struct storm_result {
	int long_n, long_missed, failed;
};

/* Runs in a child of its own, so that waitpid(-1) sees the storm's processes only. */
static _Noreturn void storm_loop(struct storm_result *r)
{
	int alive = 0, long_n = 0, long_missed = 0, failed = 0;

	for (int i = 0; i < storm || alive > 0;) {
		int st;
		pid_t p;

		/* Reap what has exited; block only at the concurrency cap or when all are out. */
		while ((p = waitpid(-1, &st, (alive >= storm_alive || i >= storm) ? 0 : WNOHANG)) >
		       0) {
			alive--;
			if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3))
				failed++;
			else if (WEXITSTATUS(st) == 3)
				long_missed++;
			if (alive < storm_alive && i < storm)
				break;
		}
		if (i >= storm)
			continue;
		int is_long = i % long_every == 0;
		char life[16];

		snprintf(life, sizeof(life), "%d", is_long ? long_ms : 0);
		p = fork();
		if (p == 0) {
			execl(match, "tsd-match", "storm", life, (char *)NULL);
			_exit(127);
		}
		if (p < 0)
			kt_bail("fork: %s", strerror(errno));
		alive++;
		long_n += is_long;
		i++;
	}
	r->long_n = long_n;
	r->long_missed = long_missed;
	r->failed = failed;
	_exit(0);
}

static void bench_storm(void)
{
	struct storm_result *r =
	    mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct dstat s0 = dstatus(), s1;
	unsigned long long wait0, wait1, cpu0 = bn_proc_sched_ns(dpid, &wait0), cpu1;
	long long t0 = now_ns(), t1;
	int long_n, long_ok, long_missed, failed;
	pid_t runner;

	if (r == MAP_FAILED)
		kt_bail("mmap: %s", strerror(errno));
	r->failed = -1;
	runner = fork();
	if (runner == 0)
		storm_loop(r);
	waitpid(runner, NULL, 0);
	t1 = now_ns();
	long_n = r->long_n;
	long_missed = r->long_missed;
	failed = r->failed;
	long_ok = long_n - long_missed;
	s1 = dstatus();
	cpu1 = bn_proc_sched_ns(dpid, &wait1);
	bn_begin("daemon-storm", "daemon");
	bn_kv("procs", "%d", storm);
	bn_kv("seconds", "%.2f", (t1 - t0) / 1e9);
	bn_kv("procs_per_s", "%.0f", storm / ((t1 - t0) / 1e9));
	bn_kv("long_lived", "%d", long_n);
	bn_kv("long_ms", "%d", long_ms);
	bn_kv("long_tagged", "%d", long_ok);
	bn_kv("long_missed", "%d", long_missed);
	bn_kv("failed", "%d", failed);
	bn_kv("events", "%lld", s1.events - s0.events);
	bn_kv("scans", "%lld", s1.scans - s0.scans);
	bn_kv("enobufs_rescans", "%lld", s1.rescans - s0.rescans);
	/* Late: done more than 10 ms after the kernel sent them (the daemon's own count). */
	bn_kv("late_events", "%lld", s1.late - s0.late);
	bn_kv("daemon_cpu_ms", "%.0f", (cpu1 - cpu0) / 1e6);
	bn_kv("daemon_cpu_pct", "%.0f", 100.0 * (cpu1 - cpu0) / (t1 - t0));
	/* Runnable but not running: the CPU went to other tasks (the storm's own). */
	bn_kv("daemon_wait_ms", "%.0f", (wait1 - wait0) / 1e6);
	bn_end();
}

static void task_counters(pid_t pid, long long *csw, long long *ncsw)
{
	char path[64], buf[256];
	FILE *f;

	*csw = *ncsw = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f)) {
		sscanf(buf, "voluntary_ctxt_switches: %lld", csw);
		sscanf(buf, "nonvoluntary_ctxt_switches: %lld", ncsw);
	}
	fclose(f);
}

static void bench_idle(void)
{
	long long c0, n0, c1, n1;
	unsigned long long r0, r1;
	struct timespec settle = {1, 0};
	struct dstat s0, s1;

	/*
	 * Process events of the quiet minute (a kernel thread forking is one) wake the daemon for
	 * work that is its job, not idle cost: count them, from its status before and after.
	 * Asking for the status wakes it too, so the first request comes before the settle and the
	 * second after the counters are read.
	 */
	s0 = dstatus();
	nanosleep(&settle, NULL); /* let the storm's last events drain; not a correctness check */
	task_counters(dpid, &c0, &n0);
	r0 = bn_proc_runtime_ns(dpid);
	bn_sleep(quiet);
	task_counters(dpid, &c1, &n1);
	r1 = bn_proc_runtime_ns(dpid);
	s1 = dstatus();
	bn_begin("daemon-idle", "daemon");
	bn_kv("seconds", "%d", quiet);
	bn_kv("recheck_s", "%d", recheck);
	bn_kv("expected_wakeups", "%d", recheck ? quiet / recheck : 0);
	/*
	 * Each wake-up ends a voluntary context switch: the daemon blocked and something woke it.
	 * An involuntary one is a preemption of a daemon that was running anyway, so it is counted
	 * apart.
	 */
	bn_kv("wakeups", "%lld", c1 - c0);
	bn_kv("wakeups_per_s", "%.3f", (c1 - c0) / (double)quiet);
	bn_kv("preempted", "%lld", n1 - n0);
	/* Includes the storm's last events if any arrived during the settle. */
	bn_kv("events", "%lld", s1.events - s0.events);
	bn_kv("cpu_ms", "%.3f", (double)(r1 - r0) / 1e6);
	bn_kv("cpu_pct", "%.5f", (double)(r1 - r0) / 1e7 / quiet);
	bn_kv("rss_kib", "%ld", bn_rss_kib(dpid));
	bn_end();
}

/*
 * Run @argv with its output into a file, as a user's terminal would take it; the wall time in
 * ms, and in @lines the lines it printed (-1 if it failed).
 */
static double run_timed(char *const argv[], long *lines)
{
	long long t0 = now_ns();
	pid_t p = fork();
	int st;

	if (p == 0) {
		int out = open(DIR_ "/listing.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(out, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	waitpid(p, &st, 0);
	double ms = (now_ns() - t0) / 1e6;
	FILE *f = fopen(DIR_ "/listing.out", "r");
	int c;

	*lines = 0;
	while (f && (c = fgetc(f)) != EOF)
		*lines += c == '\n';
	if (f)
		fclose(f);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		*lines = -1;
	return ms;
}

static void bench_tasks(void)
{
	int want = procs * threads, (*pipes)[2] = calloc((size_t)procs, sizeof(*pipes));
	pid_t *kids = calloc((size_t)procs, sizeof(pid_t));
	long long t0, t_ready, t_tagged = -1, base = dstatus().tagged, t_gone = -1;
	long rss0 = bn_rss_kib(dpid);
	struct dstat s;
	FILE *f = fopen("/proc/sys/kernel/threads-max", "w");

	if (f) { /* a 1 GiB guest defaults to about 8000 */
		fprintf(f, "%d\n", want + 20000);
		fclose(f);
	}
	t0 = now_ns();
	for (int i = 0; i < procs; i++) {
		int ready[2];
		char nt[16], c;

		if (pipe(pipes[i]) || pipe(ready))
			kt_bail("pipe: %s", strerror(errno));
		snprintf(nt, sizeof(nt), "%d", threads);
		kids[i] = fork();
		if (kids[i] == 0) {
			dup2(pipes[i][0], 0);
			dup2(ready[1], 1);
			close(pipes[i][1]);
			close(ready[0]);
			execl(match, "tsd-match", "hold", nt, (char *)NULL);
			_exit(127);
		}
		close(pipes[i][0]);
		close(ready[1]);
		if (read(ready[0], &c, 1) != 1)
			kt_bail("holder %d died before its threads existed", i);
		close(ready[0]);
	}
	t_ready = now_ns();
	/* Wait for the registry to hold every thread (state polling, bounded). */
	for (;;) {
		s = dstatus();
		if (s.tagged - base >= want) {
			t_tagged = now_ns();
			break;
		}
		if (now_ns() - t_ready > 300000000000LL)
			break;
		struct timespec tick = {0, 50 * 1000 * 1000};

		nanosleep(&tick, NULL);
	}
	long rss = bn_rss_kib(dpid), hwm = bn_status_kib(dpid, "VmHWM"), lines[3], ps_lines[3];
	double ms[3], ps_ms[3];
	struct bn_samples msv = {0}, psv = {0};
	char *const ctl_argv[] = {(char *)ctl_bin, "--socket", SOCK, "tasks", NULL};
	/* What an admin would compare it with: every thread, its CPU and its name */
	char *const ps_argv[] = {"ps", "-eLo", "tid,psr,comm", NULL};

	/* Alternate the two, so that both see the same guest state */
	for (int r = 0; r < 3; r++) {
		ms[r] = run_timed(ctl_argv, &lines[r]);
		bn_samples_add(&msv, ms[r]);
		ps_ms[r] = run_timed(ps_argv, &ps_lines[r]);
		bn_samples_add(&psv, ps_ms[r]);
	}
	/* Let them go and time until the registry has dropped them. */
	long long t_close = now_ns();

	for (int i = 0; i < procs; i++)
		close(pipes[i][1]);
	for (int i = 0; i < procs; i++)
		waitpid(kids[i], NULL, 0);
	for (;;) {
		s = dstatus();
		if (s.tagged <= base) {
			t_gone = now_ns();
			break;
		}
		if (now_ns() - t_close > 120000000000LL)
			break;
		struct timespec tick = {0, 50 * 1000 * 1000};

		nanosleep(&tick, NULL);
	}
	bn_begin("daemon-tasks", "daemon");
	bn_kv("tasks", "%d", want);
	bn_kv("procs", "%d", procs);
	bn_kv("threads", "%d", threads);
	bn_kv("spawn_s", "%.2f", (t_ready - t0) / 1e9);
	bn_kv("all_tagged_after_spawn_s", "%.2f", t_tagged < 0 ? -1 : (t_tagged - t_ready) / 1e9);
	bn_kv("registry", "%lld", s.tagged);
	bn_kv("rss_idle_kib", "%ld", rss0);
	bn_kv("rss_kib", "%ld", rss);
	bn_kv("hwm_kib", "%ld", hwm);
	bn_kv("ctl_tasks_ms", "%.0f", bn_quantile(&msv, 0.5));
	bn_kv("ctl_tasks_ms_runs", "%.0f,%.0f,%.0f", ms[0], ms[1], ms[2]);
	bn_kv("ctl_tasks_lines", "%ld", lines[0]);
	bn_kv("ps_ms", "%.0f", bn_quantile(&psv, 0.5));
	bn_kv("ps_ms_runs", "%.0f,%.0f,%.0f", ps_ms[0], ps_ms[1], ps_ms[2]);
	bn_kv("ps_lines", "%ld", ps_lines[0]);
	bn_kv("ctl_tasks_over_ps", "%.2f", bn_quantile(&msv, 0.5) / bn_quantile(&psv, 0.5));
	bn_kv("untracked_after_exit_s", "%.2f", t_gone < 0 ? -1 : (t_gone - t_close) / 1e9);
	bn_end();
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"daemon", 1, 0, 'd'},     {"ctl", 1, 0, 'c'},     {"match", 1, 0, 'm'},
	    {"execs", 1, 0, 'e'},      {"storm", 1, 0, 's'},   {"storm-alive", 1, 0, 'a'},
	    {"long-every", 1, 0, 'L'}, {"long-ms", 1, 0, 'M'}, {"quiet", 1, 0, 'q'},
	    {"procs", 1, 0, 'p'},      {"threads", 1, 0, 't'}, {"recheck", 1, 0, 'r'},
	    {"nice", 1, 0, 'n'},       {0, 0, 0, 0},
	};
	int c, st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			daemon_bin = optarg;
			break;
		case 'c':
			ctl_bin = optarg;
			break;
		case 'm':
			match = optarg;
			break;
		case 'e':
			execs = atoi(optarg);
			break;
		case 's':
			storm = atoi(optarg);
			break;
		case 'a':
			storm_alive = atoi(optarg);
			break;
		case 'L':
			long_every = atoi(optarg);
			break;
		case 'M':
			long_ms = atoi(optarg);
			break;
		case 'q':
			quiet = atoi(optarg);
			break;
		case 'p':
			procs = atoi(optarg);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		case 'r':
			recheck = atoi(optarg);
			break;
		case 'n':
			daemon_nice = atoi(optarg);
			break;
		default:
			fprintf(stderr,
			        "usage: tsdaemon [--daemon BIN] [--ctl BIN] [--match BIN] "
			        "[--execs N] [--storm N] [--storm-alive N] [--long-every K] "
			        "[--long-ms MS] [--quiet S] [--procs P] [--threads T] "
			        "[--recheck S] [--nice N]\n");
			return 2;
		}
	}
	if (long_every < 1 || storm_alive < 1)
		kt_bail("bad arguments");
	signal(SIGPIPE, SIG_IGN);
	start_daemon();
	if (execs > 0)
		bench_latency();
	if (storm > 0)
		bench_storm();
	if (quiet > 0)
		bench_idle();
	if (procs > 0 && threads > 0)
		bench_tasks();
	long long t0 = now_ns();

	kill(dpid, SIGTERM);
	waitpid(dpid, &st, 0);
	bn_begin("daemon-stop", "daemon");
	bn_kv("stop_ms", "%.1f", (now_ns() - t0) / 1e6);
	bn_kv("exit", "%d", WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	bn_end();
	return 0;
}

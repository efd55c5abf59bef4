/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turboschedd: options, start-up order, the event loop, and orderly stop. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "build_config.h"
#include "daemon.h"
#include "log.h"
#include "notify.h"
#include "privs.h"
#include "procconn.h"

static struct daemon D = {.recheck_fd = -1};
static struct loop_source sig_src, nl_src, recheck_src, wd_src;

static void usage(FILE *f)
{
	fprintf(f,
	        "Usage: turboschedd [OPTIONS]\n\n"
	        "Classifies tasks as TurboSched jitter tasks from rules (turboschedd.conf(5)).\n\n"
	        "  -c, --config FILE   configuration file (default %s);\n"
	        "                      drop-ins are read from conf.d/ next to it\n"
	        "  -t, --check-config  validate the configuration and exit\n"
	        "  -f, --foreground    log plainly to stderr (no journal priority prefixes)\n"
	        "  -s, --socket PATH   control socket (default %s)\n"
	        "  -d, --debug         log at debug level whatever log_level says\n"
	        "  -h, --help          show this help\n"
	        "  -V, --version       show the version\n",
	        ts_config_default_path(), ts_proto_default_socket());
}

static void nl_cb(struct loop_source *src, uint32_t events)
{
	(void)events;
	daemon_proc_events(&D, src->fd);
}

static void drain_timer(int fd)
{
	uint64_t n;
	(void)!read(fd, &n, sizeof(n));
}

static void recheck_cb(struct loop_source *src, uint32_t events)
{
	(void)events;
	drain_timer(src->fd);
	engine_scan(&D.eng); /* catches cgroup moves, which have no event */
	daemon_update_status(&D);
}

static void wd_cb(struct loop_source *src, uint32_t events)
{
	(void)events;
	drain_timer(src->fd);
	notify_watchdog();
}

static void sig_cb(struct loop_source *src, uint32_t events)
{
	struct signalfd_siginfo si;
	(void)events;
	while (read(src->fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_info("SIGHUP: reloading the configuration");
			daemon_reload(&D);
		} else {
			log_info("signal %u: stopping", si.ssi_signo);
			D.stop = true;
		}
	}
}

static int add_timer(struct loop_source *src, loop_cb cb, uint64_t period_ms)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	*src = (struct loop_source){.fd = fd, .cb = cb};
	if (period_ms) {
		struct itimerspec its = {
		    .it_interval = {(time_t)(period_ms / 1000),
		                    (long)(period_ms % 1000) * 1000000L},
		    .it_value = {(time_t)(period_ms / 1000), (long)(period_ms % 1000) * 1000000L}};
		timerfd_settime(fd, 0, &its, NULL);
	}
	return loop_add(&D.loop, src, EPOLLIN) < 0 ? -errno : fd;
}

static int setup(const char *socket_path)
{
	sigset_t mask;
	int r;

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	if ((r = loop_init(&D.loop)) < 0)
		return log_err("epoll: %s", strerror(-r)), r;
	int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0)
		return log_err("signalfd: %s", strerror(errno)), -errno;
	sig_src = (struct loop_source){.fd = sfd, .cb = sig_cb};
	loop_add(&D.loop, &sig_src, EPOLLIN);

	r = control_open(&D.ctl, &D.loop, socket_path, daemon_handle, &D);
	if (r == -EADDRINUSE)
		return log_err("another turboschedd answers on %s", socket_path), r;
	if (r < 0)
		return log_err("cannot create the control socket %s: %s", socket_path,
		               D.ctl.err[0] ? D.ctl.err : strerror(-r)),
		       r;

	/* Subscribe before the first scan, so a task started during the scan is not missed. */
	int nfd = procconn_open();
	D.procconn_err = nfd < 0 ? nfd : 0;
	if (nfd < 0) {
		log_err("cannot subscribe to the proc connector (%s): new tasks are only found by "
		        "the periodic re-check",
		        strerror(-nfd));
	} else {
		nl_src = (struct loop_source){.fd = nfd, .cb = nl_cb};
		loop_add(&D.loop, &nl_src, EPOLLIN);
		int kib = procconn_rcvbuf_kib(nfd);
		log_msg(kib < PROCCONN_RCVBUF_KIB ? LOG_NOTICE : LOG_INFO,
		        "proc connector receive buffer: %d KiB%s", kib,
		        kib < PROCCONN_RCVBUF_KIB
		            ? " (net.core.rmem_max; without CAP_NET_ADMIN at start a fork storm "
		              "overflows it sooner and forces full rescans)"
		            : "");
	}

	D.recheck_fd = add_timer(&recheck_src, recheck_cb, 0);
	daemon_arm_recheck(&D);
	uint64_t wd = notify_watchdog_period_ms();
	if (wd)
		add_timer(&wd_src, wd_cb, wd);

	/* Everything that needed privilege is open: keep only what tagging needs. */
	if ((r = privs_drop()) < 0)
		return log_err("cannot drop capabilities: %s", strerror(-r)), r;
	return 0;
}

static void run(void)
{
	while (!D.stop) {
		long long now = loop_now_ms();
		int save = daemon_persist_throttled(&D, now);
		int timeout = control_next_timeout(&D.ctl, now);
		if (save >= 0 && (timeout < 0 || save < timeout))
			timeout = save;
		int r = loop_run_once(&D.loop, timeout);
		if (r < 0) {
			log_err("epoll_wait: %s", strerror(-r));
			break;
		}
		control_expire(&D.ctl, loop_now_ms());
	}
}

/* The daemon's ledger lives next to the control socket (RUNSTATEDIR/turboschedd/ledger). */
static char *ledger_path_for(const char *socket_path)
{
	const char *slash = strrchr(socket_path, '/');
	char *p = NULL;
	if (asprintf(&p, "%.*s/ledger", slash ? (int)(slash - socket_path) : 1,
	             slash ? socket_path : ".") < 0)
		return NULL;
	return p;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'}, {"check-config", no_argument, NULL, 't'},
	    {"foreground", no_argument, NULL, 'f'},   {"socket", required_argument, NULL, 's'},
	    {"debug", no_argument, NULL, 'd'},        {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0}};
	const char *socket_path = ts_proto_default_socket();
	bool check = false, foreground = false;
	int c;

	while ((c = getopt_long(argc, argv, "c:tfs:dhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			D.config_path = optarg;
			break;
		case 't':
			check = true;
			break;
		case 'f':
			foreground = true;
			break;
		case 's':
			socket_path = optarg;
			break;
		case 'd':
			D.debug = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("turboschedd %s\n", TURBOSCHED_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "turboschedd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	/*
	 * A ledger save or a "tasks" reply with thousands of entries needs a buffer of a few
	 * MiB for a moment. With a fixed mmap threshold glibc maps such buffers and unmaps them
	 * when freed; by default it raises the threshold after the first free and keeps them in
	 * the heap, and the daemon's RSS stays at its peak.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	/* The journal reads "<N>" prefixes from a service's stderr as the priority. */
	log_use_journal_prefix(!foreground && getenv("JOURNAL_STREAM") != NULL);

	char *msgs = NULL;
	if (daemon_load_config(&D, &D.cfg, &msgs) < 0) {
		log_err("invalid configuration:\n%s", msgs ? msgs : "out of memory");
		free(msgs);
		return 1;
	}
	if (check) {
		printf("configuration OK: %zu rules, %zu exclusions from",
		       ts_config_count(D.cfg, TS_RULE_TAG),
		       ts_config_count(D.cfg, TS_RULE_EXCLUDE));
		for (size_t i = 0; i < D.cfg->nfiles; i++)
			printf(" %s", D.cfg->files[i]);
		printf("\n");
		ts_config_free(D.cfg);
		return 0;
	}
	log_set_level(D.debug ? LOG_DEBUG : D.cfg->daemon.log_level);
	D.started = D.loaded = time(NULL);
	engine_init(&D.eng, D.cfg);

	char *ledger_path = ledger_path_for(socket_path);
	D.ledger_path = ledger_path;
	int r = setup(socket_path);
	if (r == 0) {
		daemon_adopt(&D);
		engine_scan(&D.eng);
		daemon_persist(&D);
		log_info("started: %zu rules, %zu exclusions, %zu tasks tagged",
		         ts_config_count(D.cfg, TS_RULE_TAG),
		         ts_config_count(D.cfg, TS_RULE_EXCLUDE),
		         ts_ledger_count_tagged(&D.eng.ledger));
		daemon_update_status(&D);
		notify_ready();
		run();
		notify_stopping();
		if (D.cfg->daemon.restore_on_stop)
			log_info("stopping: restored %zu tasks", engine_restore_all(&D.eng));
		else
			log_info("stopping: restore_on_stop = no, %zu tags left in place",
			         ts_ledger_count_tagged(&D.eng.ledger));
		/* What is left (manual tags, failed restores) is adopted by the next start. */
		daemon_persist(&D);
	}
	control_close(&D.ctl);
	if (nl_src.fd > 0)
		procconn_close(nl_src.fd);
	engine_free(&D.eng);
	ts_config_free(D.cfg);
	free(D.reload_error);
	free(ledger_path);
	loop_close(&D.loop);
	return r == 0 ? 0 : 1;
}

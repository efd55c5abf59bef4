/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * turboschedd: options, configuration, start-up order, the event loop (sd-event, as systemd's
 * own daemons: src/oom/oomd.c), and orderly stop.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "build_config.h"
#include "daemon.h"
#include "log.h"
#include "macro.h"
#include "notify.h"
#include "privs.h"
#include "procconn.h"
#include "util.h"

static struct daemon D;
/* The proc connector, unsubscribed at stop (procconn_close()); -1 without one. */
static int procconn_fd = -1;

struct args {
	const char *socket_path;
	bool check, foreground;
};

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

static int on_procconn(sd_event_source *s, int fd, uint32_t events, void *userdata)
{
	daemon_proc_events(&D, fd);
	return 0;
}

static int on_recheck(sd_event_source *s, uint64_t usec, void *userdata)
{
	engine_scan(&D.eng); /* catches cgroup moves, which have no event */
	daemon_update_status(&D);
	daemon_arm_recheck(&D);
	return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	if (si->ssi_signo == SIGHUP) {
		log_info("SIGHUP: reloading the configuration");
		daemon_reload(&D);
		return 0;
	}
	log_info("signal %u: stopping", si->ssi_signo);
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

/* Only wakes the loop: the save itself is on_post()'s, which runs after every dispatch. */
static int on_persist(sd_event_source *s, uint64_t usec, void *userdata)
{
	return 0;
}

/*
 * After whatever woke the loop: save the ledger when due, else wake up when it will be
 * (daemon_persist_throttled() spaces the saves of a fork storm).
 */
static int on_post(sd_event_source *s, void *userdata)
{
	long long now = ts_now_ms();
	int due = daemon_persist_throttled(&D, now);

	if (due < 0)
		return sd_event_source_set_enabled(D.persist, SD_EVENT_OFF);
	int r = sd_event_source_set_time(D.persist, (uint64_t)(now + due) * 1000);
	return r < 0 ? r : sd_event_source_set_enabled(D.persist, SD_EVENT_ONESHOT);
}

static int setup_signals(sd_event *e)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	sigset_t mask;
	int r;

	/* sd-event takes signals through a signalfd: they must not be delivered otherwise. */
	sigemptyset(&mask);
	for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
		sigaddset(&mask, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
		if ((r = sd_event_add_signal(e, NULL, sigs[i], on_signal, NULL)) < 0)
			return r;
	return 0;
}

static void setup_procconn(sd_event *e)
{
	/* Subscribe before the first scan, so a task started during the scan is not missed. */
	int nfd = procconn_open(), r;

	D.procconn_err = nfd < 0 ? nfd : 0;
	if (nfd < 0) {
		log_err("cannot subscribe to the proc connector (%s): new tasks are only found by "
		        "the periodic re-check",
		        strerror(-nfd));
		return;
	}
	r = sd_event_add_io(e, NULL, nfd, EPOLLIN, on_procconn, NULL);
	if (r < 0) {
		procconn_close(nfd);
		D.procconn_err = r;
		log_err("cannot watch the proc connector (%s): new tasks are only found by the "
		        "periodic re-check",
		        strerror(-r));
		return;
	}
	procconn_fd = nfd;
	int kib = procconn_rcvbuf_kib(nfd);
	log_msg(kib < PROCCONN_RCVBUF_KIB ? LOG_NOTICE : LOG_INFO,
	        "proc connector receive buffer: %d KiB%s", kib,
	        kib < PROCCONN_RCVBUF_KIB
	            ? " (net.core.rmem_max; without CAP_NET_ADMIN at start a fork storm "
	              "overflows it sooner and forces full rescans)"
	            : "");
}

static int setup(const char *socket_path)
{
	int r;

	if ((r = sd_event_default(&D.event)) < 0)
		return log_err("cannot create the event loop: %s", strerror(-r)), r;
	if ((r = setup_signals(D.event)) < 0)
		return log_err("cannot watch SIGTERM, SIGINT and SIGHUP: %s", strerror(-r)), r;
	r = control_open(&D.ctl, D.event, socket_path, daemon_handle, &D);
	if (r == -EADDRINUSE)
		return log_err("another turboschedd answers on %s", socket_path), r;
	if (r < 0)
		return log_err("cannot create the control socket %s: %s", socket_path,
		               D.ctl.err[0] ? D.ctl.err : strerror(-r)),
		       r;
	setup_procconn(D.event);
	/* Both timers start off: daemon_arm_recheck() and on_post() arm them. */
	if ((r = sd_event_add_time(D.event, &D.recheck, CLOCK_MONOTONIC, UINT64_MAX, 1000,
	                           on_recheck, NULL)) < 0 ||
	    (r = sd_event_add_time(D.event, &D.persist, CLOCK_MONOTONIC, UINT64_MAX, 1000,
	                           on_persist, NULL)) < 0 ||
	    (r = sd_event_add_post(D.event, NULL, on_post, NULL)) < 0)
		return log_err("cannot add the daemon's timers to the event loop: %s",
		               strerror(-r)),
		       r;
	daemon_arm_recheck(&D);
	/* WATCHDOG=1 at half of WatchdogSec=, when the unit sets one. */
	if ((r = sd_event_set_watchdog(D.event, true)) < 0)
		log_warning("cannot keep systemd's watchdog fed: %s", strerror(-r));

	/* Everything that needed privilege is open: keep only what tagging needs. */
	if ((r = privs_drop()) < 0)
		return log_err("cannot drop capabilities: %s", strerror(-r)), r;
	return 0;
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

/* 0 to go on; 1 after --help or --version; -EINVAL on a usage error (said on stderr). */
static int parse_argv(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'}, {"check-config", no_argument, NULL, 't'},
	    {"foreground", no_argument, NULL, 'f'},   {"socket", required_argument, NULL, 's'},
	    {"debug", no_argument, NULL, 'd'},        {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0}};
	int c;

	*a = (struct args){.socket_path = ts_proto_default_socket()};
	while ((c = getopt_long(argc, argv, "c:tfs:dhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			D.config_path = optarg;
			break;
		case 't':
			a->check = true;
			break;
		case 'f':
			a->foreground = true;
			break;
		case 's':
			a->socket_path = optarg;
			break;
		case 'd':
			D.debug = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("turboschedd %s\n", TURBOSCHED_VERSION);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "turboschedd: unexpected argument '%s'; see turboschedd --help\n",
		        argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* Loads the configuration into D.cfg; with check, says what it holds and frees it (1). */
static int parse_config(bool check)
{
	_cleanup_free_ char *msgs = NULL;

	if (daemon_load_config(&D, &D.cfg, &msgs) < 0) {
		log_err("invalid configuration:\n%s", msgs ? msgs : "out of memory");
		return -EINVAL;
	}
	if (!check)
		return 0;
	printf("configuration OK: %zu rules, %zu exclusions from",
	       ts_config_count(D.cfg, TS_RULE_TAG), ts_config_count(D.cfg, TS_RULE_EXCLUDE));
	for (size_t i = 0; i < D.cfg->nfiles; i++)
		printf(" %s", D.cfg->files[i]);
	printf("\n");
	ts_config_free(TAKE_PTR(D.cfg));
	return 1;
}

/* Start-up, READY=1 after the first scan, the loop until a signal, and the orderly stop. */
static int run(const char *socket_path)
{
	int r = setup(socket_path);

	if (r < 0)
		return r;
	daemon_adopt(&D);
	engine_scan(&D.eng);
	daemon_persist(&D);
	log_info("started: %zu rules, %zu exclusions, %zu tasks tagged",
	         ts_config_count(D.cfg, TS_RULE_TAG), ts_config_count(D.cfg, TS_RULE_EXCLUDE),
	         ts_ledger_count_tagged(&D.eng.ledger));
	daemon_update_status(&D);
	notify_ready();
	r = sd_event_loop(D.event);
	if (r < 0)
		log_err("the event loop failed: %s; stopping", strerror(-r));
	notify_stopping();
	if (D.cfg->daemon.restore_on_stop)
		log_info("stopping: restored %zu tasks", engine_restore_all(&D.eng));
	else
		log_info("stopping: restore_on_stop = no, %zu tags left in place",
		         ts_ledger_count_tagged(&D.eng.ledger));
	/* What is left (manual tags, failed restores) is adopted by the next start. */
	daemon_persist(&D);
	return r;
}

int main(int argc, char **argv)
{
	_cleanup_free_ char *ledger_path = NULL;
	struct args a;
	int r;

	r = parse_argv(argc, argv, &a);
	if (r != 0)
		return r > 0 ? 0 : 2;
	/*
	 * A ledger save or a "tasks" reply with thousands of entries needs a buffer of a few
	 * MiB for a moment. With a fixed mmap threshold glibc maps such buffers and unmaps them
	 * when freed; by default it raises the threshold after the first free and keeps them in
	 * the heap, and the daemon's RSS stays at its peak.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	/* The journal reads "<N>" prefixes from a service's stderr as the priority. */
	log_use_journal_prefix(!a.foreground && getenv("JOURNAL_STREAM") != NULL);
	r = parse_config(a.check);
	if (r != 0)
		return r > 0 ? 0 : 1;
	log_set_level(D.debug ? LOG_DEBUG : D.cfg->daemon.log_level);
	D.started = D.loaded = time(NULL);
	engine_init(&D.eng, D.cfg);
	ledger_path = ledger_path_for(a.socket_path);
	D.ledger_path = ledger_path;

	r = run(a.socket_path);

	control_close(&D.ctl);
	D.recheck = sd_event_source_disable_unref(D.recheck);
	D.persist = sd_event_source_disable_unref(D.persist);
	/* Frees the signal, post and proc connector sources with it. */
	D.event = sd_event_unref(D.event);
	procconn_close(procconn_fd);
	engine_free(&D.eng);
	ts_config_free(D.cfg);
	free(D.reload_error);
	return r < 0 ? 1 : 0;
}

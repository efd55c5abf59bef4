/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The classification engine against a fake /proc tree and fake sched ops: scan, events, exit
 * before tag, PID reuse, inheritance on fork, lost events (ENOBUFS) -> rescan, reload, restore.
 */
#include <check.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "engine.h"
#include "commands.h"
#include "helpers.h"
#include "helpers_cli.h"
#include "log.h"
#include "procconn.h"
#include "util.h"

static struct ts_config *cfg;
static struct engine eng;

static const char fixture_conf[] = "[rule janitor]\n"
                                   "comm = *-janitor, logrotate\n"
                                   "[rule iothreads]\n"
                                   "comm = io-*\n"
                                   "threads = matched\n"
                                   "[exclude keep-fast]\n"
                                   "comm = fast-janitor\n";

static void setup(void)
{
	struct ts_diag d;
	tree_new();
	fake_install();
	log_set_level(LOG_ERR);
	ck_assert_int_eq(ts_config_parse_buffer("e.conf", fixture_conf, sizeof(fixture_conf) - 1,
	                                        NULL, &cfg, &d),
	                 0);
	engine_init(&eng, cfg);
}

static void teardown(void)
{
	engine_free(&eng);
	ts_config_free(cfg);
	tree_free();
}

/* A thread in the tree and in the fake syscall layer, untagged (util_max 1024). */
static void task(pid_t tgid, pid_t tid, const char *comm, unsigned long long st)
{
	tree_add_task(tgid, tid, comm, st, 0, 1000);
	fake_add(tid, 0, 0, 1024);
}

static struct ts_ledger_entry *reg(pid_t tid)
{
	return ts_ledger_find(&eng.ledger, tid);
}

START_TEST(test_scan_tags_matching_processes)
{
	task(100, 100, "logrotate", 10);
	task(100, 101, "worker", 11); /* threads=all: tagged with its process */
	task(200, 200, "bash", 20);
	engine_scan(&eng);
	ck_assert_uint_eq(fake_get(100)->util_max, 0);
	ck_assert_uint_eq(fake_get(101)->util_max, 0);
	ck_assert_uint_eq(fake_get(200)->util_max, 1024);
	ck_assert_int_eq(fake.nset, 2);
	struct ts_ledger_entry *e = reg(101);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->rule, "janitor");
	ck_assert_int_eq(e->owner, TS_OWNER_RULE);
	ck_assert_uint_eq(e->prev.util_max, 1024);
	ck_assert_uint_eq(e->starttime, 11);
	ck_assert_ptr_null(reg(200));
	ck_assert_uint_eq(ts_ledger_count_tagged(&eng.ledger), 2);
	/* A second scan changes nothing. */
	engine_scan(&eng);
	ck_assert_int_eq(fake.nset, 2);
}
END_TEST

START_TEST(test_threads_matched_and_exclusion)
{
	task(300, 300, "qemu", 30);
	task(300, 301, "io-worker", 31);
	task(400, 400, "fast-janitor", 40);
	engine_scan(&eng);
	ck_assert_uint_eq(fake_get(300)->util_max, 1024);
	ck_assert_uint_eq(fake_get(301)->util_max, 0);
	ck_assert_str_eq(reg(301)->rule, "iothreads");
	ck_assert_uint_eq(fake_get(400)->util_max, 1024);
	ck_assert_ptr_null(reg(400));
}
END_TEST

START_TEST(test_external_tag_left_alone)
{
	task(100, 100, "logrotate", 10);
	fake_get(100)->util_max = 0; /* tagged by hand before the daemon saw it */
	engine_scan(&eng);
	ck_assert_int_eq(fake.nset, 0);
	ck_assert_ptr_null(reg(100));
	ck_assert_uint_eq(eng.st.external, 1);
	ck_assert_uint_eq(engine_restore_all(&eng), 0);
	ck_assert_uint_eq(fake_get(100)->util_max, 0);
}
END_TEST

START_TEST(test_exit_before_tag)
{
	/* The exec event arrives after the task is already gone. */
	engine_on_exec(&eng, 500, 500);
	ck_assert_int_eq(fake.nset, 0);
	ck_assert_uint_eq(eng.st.vanished, 1);
	/* In the tree but gone from the scheduler between read and write. */
	tree_add_task(600, 600, "logrotate", 60, 0, 0);
	engine_on_exec(&eng, 600, 600);
	ck_assert_ptr_null(reg(600));
	ck_assert_uint_eq(eng.st.vanished, 2);
	ck_assert_uint_eq(eng.st.failures, 0);
}
END_TEST

START_TEST(test_exec_retags_and_restores)
{
	task(100, 100, "bash", 10);
	engine_scan(&eng);
	ck_assert_ptr_null(reg(100));
	/* bash execs logrotate: tagged on the event, not on a poll. */
	tree_add_task(100, 100, "logrotate", 10, 0, 1000);
	engine_on_exec(&eng, 100, 100);
	ck_assert_uint_eq(fake_get(100)->util_max, 0);
	ck_assert_ptr_nonnull(reg(100));
	/* It renames itself: no rule matches any more, the old clamp comes back. */
	tree_add_task(100, 100, "something", 10, 0, 1000);
	engine_on_change(&eng, 100, 100);
	ck_assert_ptr_null(reg(100));
	ck_assert_uint_eq(eng.st.restored, 1);
	ck_assert_uint_ne(fake_get(100)->util_max, 0);
}
END_TEST

START_TEST(test_pid_reuse)
{
	task(100, 100, "logrotate", 10);
	engine_scan(&eng);
	ck_assert_ptr_nonnull(reg(100));
	int nset = fake.nset;
	/* The task exits unseen and a stranger gets TID 100 (new start time, own clamp). */
	tree_set_starttime(100, 100, 999);
	fake_get(100)->util_max = 512;
	engine_eval(&eng, 100, 100);
	ck_assert_ptr_null(reg(100));
	ck_assert_int_eq(fake.nset, nset); /* the stranger is not "restored" */
	ck_assert_uint_eq(fake_get(100)->util_max, 512);
}
END_TEST

START_TEST(test_fork_inherits_and_exec_restores)
{
	task(100, 100, "logrotate", 10);
	engine_scan(&eng);
	/* logrotate forks: the kernel copied util_max 0 into the child. */
	tree_add_task(700, 700, "logrotate", 70, 0, 1000);
	fake_add(700, 0, 0, 0);
	engine_on_fork(&eng, 100, 100, 700, 700);
	struct ts_ledger_entry *e = reg(700);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->owner, TS_OWNER_INHERITED);
	ck_assert_uint_eq(e->prev.util_max, 1024);
	/* The child execs gzip: that tag is ours to undo. */
	tree_add_task(700, 700, "gzip", 70, 0, 1000);
	engine_on_exec(&eng, 700, 700);
	ck_assert_ptr_null(reg(700));
	ck_assert_uint_ne(fake_get(700)->util_max, 0);
	/* Exit forgets. */
	engine_on_exit(&eng, 100, 100);
	ck_assert_ptr_null(reg(100));
}
END_TEST

START_TEST(test_scan_claims_inherited_after_lost_fork)
{
	/* The fork and exec events of logrotate's child were lost: the scan finds gzip with the
	 * util_max 0 it inherited from our tag; that tag is ours, and gzip matches no rule. */
	task(100, 100, "logrotate", 10);
	engine_scan(&eng);
	tree_add_child(100, 800, 800, "gzip", 80, 0, 1000);
	fake_add(800, 0, 0, 0);
	tree_add_child(100, 801, 801, "logrotate", 81, 0, 1000); /* still matching: kept */
	fake_add(801, 0, 0, 0);
	tree_add_child(1, 802, 802, "gzip", 82, 0, 1000); /* someone else's: left alone */
	fake_add(802, 0, 0, 0);
	engine_scan(&eng);
	ck_assert_uint_eq(fake_get(800)->util_max, 1024);
	ck_assert_ptr_null(reg(800));
	ck_assert_int_eq(reg(801)->owner, TS_OWNER_INHERITED);
	ck_assert_uint_eq(fake_get(802)->util_max, 0);
	ck_assert_ptr_null(reg(802));
}
END_TEST

START_TEST(test_fork_of_untagged_parent)
{
	task(200, 200, "bash", 20);
	task(800, 800, "bash", 80);
	fake_get(800)->util_max = 0; /* someone else's tag copied into the child */
	engine_on_fork(&eng, 200, 200, 800, 800);
	ck_assert_ptr_null(reg(800));
	ck_assert_uint_eq(fake_get(800)->util_max, 0);
}
END_TEST

/*
 * A new process forked by a thread the daemon does not track is not read at its fork (it would
 * wait for the child's exec, /proc/PID/stat takes the exec lock); its exec decides. The child
 * here already shows a matching comm, as one read in the middle of its exec would.
 */
START_TEST(test_fork_of_unmatched_parent_waits_for_exec)
{
	task(200, 200, "bash", 20);
	engine_scan(&eng);
	task(900, 900, "logrotate", 90);
	engine_on_fork(&eng, 200, 200, 900, 900);
	ck_assert_ptr_null(reg(900));
	ck_assert_uint_eq(fake_get(900)->util_max, 1024);
	ck_assert_uint_eq(eng.st.skipped, 1);
	engine_on_exec(&eng, 900, 900);
	ck_assert_ptr_nonnull(reg(900));
	ck_assert_uint_eq(fake_get(900)->util_max, 0);
}
END_TEST

static struct pc_event ev_fork(pid_t ptid, pid_t tid)
{
	return (struct pc_event){
	    .what = PC_FORK, .tgid = tid, .tid = tid, .ptgid = ptid, .ptid = ptid};
}

static struct pc_event ev_of(enum pc_what what, pid_t tid)
{
	return (struct pc_event){.what = what, .tgid = tid, .tid = tid};
}

/*
 * A batch that shows a task gone reads and tags nothing for it, even though /proc still has it
 * (as it would for a task the daemon reads late); a fork followed by its exec is read once.
 */
START_TEST(test_batch_skips_moot_events)
{
	task(200, 200, "bash", 20);
	task(500, 500, "logrotate", 50); /* still readable: a correct engine must not look */
	task(600, 600, "logrotate", 60);
	struct pc_event b[] = {ev_fork(200, 500), ev_of(PC_EXEC, 500), ev_fork(200, 600),
	                       ev_of(PC_EXEC, 600), ev_of(PC_EXIT, 500)};
	engine_on_events(&eng, b, sizeof(b) / sizeof(b[0]));
	ck_assert_uint_eq(fake_get(500)->util_max, 1024);
	ck_assert_ptr_null(reg(500));
	ck_assert_uint_eq(fake_get(600)->util_max, 0);
	ck_assert_int_eq(fake.nset, 1);
	ck_assert_uint_eq(eng.st.skipped, 3); /* 500's fork and exec, 600's fork */
	ck_assert_uint_eq(eng.st.events, 5);
}
END_TEST

/* A child of a task we tagged is claimed at its fork even when it execs in the same batch. */
START_TEST(test_batch_keeps_inheriting_fork)
{
	task(100, 100, "logrotate", 10);
	engine_scan(&eng);
	tree_add_task(700, 700, "gzip", 70, 0, 1000); /* forked (util_max 0 copied), exec'd gzip */
	fake_add(700, 0, 0, 0);
	struct pc_event b[] = {ev_fork(100, 700), ev_of(PC_EXEC, 700)};
	engine_on_events(&eng, b, 2);
	ck_assert_uint_eq(eng.st.skipped, 0);
	ck_assert_ptr_null(reg(700));
	ck_assert_uint_eq(fake_get(700)->util_max, 1024); /* our inherited tag, undone at exec */
}
END_TEST

static unsigned long long mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

/*
 * Events the kernel sent long before the daemon got to them count as late, with the worst
 * delay; fresh ones and ones without a timestamp do not. The stamps are a second in the past
 * or in the future of the clock, so the result does not depend on how fast the test runs.
 */
START_TEST(test_late_events_counted)
{
	unsigned long long now = mono_ns();
	struct pc_event b[] = {ev_of(PC_EXIT, 901), ev_of(PC_EXIT, 902), ev_of(PC_EXIT, 903)};
	b[0].ts_ns = now - 1500000000ULL; /* 1.5 s ago */
	b[1].ts_ns = now + 1000000000ULL; /* "later than now": a clock step, not a delay */
	b[2].ts_ns = 0;                   /* no timestamp */
	engine_on_events(&eng, b, 3);
	ck_assert_uint_eq(eng.st.late, 1);
	ck_assert_uint_ge(eng.st.lag_max_us, 1500000);
	ck_assert_uint_lt(eng.st.lag_max_us, 60000000);
}
END_TEST

START_TEST(test_scan_forgets_gone_tasks)
{
	task(100, 100, "logrotate", 10);
	engine_scan(&eng);
	ck_assert_ptr_nonnull(reg(100));
	tree_remove_task(100, 100); /* exit event lost */
	engine_scan(&eng);
	ck_assert_ptr_null(reg(100));
}
END_TEST

START_TEST(test_restore_all_only_ours)
{
	task(100, 100, "logrotate", 10);
	task(200, 200, "other", 20);
	engine_scan(&eng);
	fake_get(200)->util_max = 0; /* manual tag, not ours */
	ck_assert_uint_eq(engine_restore_all(&eng), 1);
	ck_assert_uint_eq(fake_get(100)->util_max, TS_UCLAMP_MAX_VALUE);
	ck_assert_uint_eq(fake_get(200)->util_max, 0);
	ck_assert_uint_eq(eng.ledger.n, 0);
}
END_TEST

START_TEST(test_restore_failure_keeps_entry)
{
	task(100, 100, "logrotate", 10);
	engine_scan(&eng);
	fake_get(100)->set_errno = EPERM;
	ck_assert_uint_eq(engine_restore_all(&eng), 0);
	ck_assert_ptr_nonnull(reg(100));
	ck_assert_uint_eq(eng.st.failures, 1);
}
END_TEST

START_TEST(test_manual_untag_sticks)
{
	task(100, 100, "logrotate", 10);
	engine_scan(&eng);
	ck_assert_int_eq(reg(100)->owner, TS_OWNER_RULE);
	ck_assert_int_eq(ctl_quiet("untag", "100"), 0);
	ck_assert_uint_eq(fake_get(100)->util_max, 1024);
	engine_scan(&eng); /* the rule still matches, but the admin said no */
	ck_assert_int_eq(ts_ledger_get(&eng.manual, 100, 10)->owner, TS_OWNER_UNTAGGED);
	ck_assert_uint_eq(fake_get(100)->util_max, 1024);
	/* and the daemon no longer counts it as its own */
	ck_assert_ptr_null(reg(100));
	ck_assert_uint_eq(ts_ledger_count_tagged(&eng.ledger), 0);
	/* A manual tag is recorded and survives stop. */
	task(200, 200, "other", 20);
	ck_assert_int_eq(ctl_quiet("tag", "200"), 0);
	engine_scan(&eng);
	ck_assert_int_eq(ts_ledger_get(&eng.manual, 200, 20)->owner, TS_OWNER_MANUAL);
	ck_assert_ptr_null(reg(200));
	ck_assert_uint_eq(engine_restore_all(&eng), 0);
	ck_assert_uint_eq(fake_get(200)->util_max, 0);
}
END_TEST

START_TEST(test_overlong_comm_and_cgroup)
{
	/* What no kernel writes, a fake /proc can: an 800-character comm full of ") (" and a
	 * cgroup path longer than PATH_MAX. Nothing overflows; the long cgroup counts as unknown,
	 * so the cgroup exclusion holds (fail closed) and the comm rule does not tag past it. */
	static const char text[] = "[rule j]\ncomm = logrotate, x*\n"
	                           "[exclude crit]\ncgroup = /critical.slice/*\n";
	struct ts_config *c;
	struct ts_diag d;
	ck_assert_int_eq(ts_config_parse_buffer("o.conf", text, sizeof(text) - 1, NULL, &c, &d), 0);
	engine_free(&eng);
	engine_init(&eng, c);
	char comm[801], *cg = malloc(6000);
	for (int i = 0; i < 800; i++)
		comm[i] = "x) ("[i % 4];
	comm[800] = '\0';
	task(100, 100, comm, 10);
	task(200, 200, "logrotate", 20);
	strcpy(cg, "0::/critical.slice/");
	for (size_t n = strlen(cg); n < 5990; n++)
		cg[n] = 'a' + (char)(n % 26);
	strcpy(cg + 5990, "\n");
	tree_write("proc/200/task/200/cgroup", cg);
	free(cg);
	engine_scan(&eng);
	ck_assert_ptr_nonnull(reg(100)); /* matched on the first 63 characters: "x) (x) ..." */
	ck_assert_uint_eq(fake_get(100)->util_max, 0);
	ck_assert_ptr_null(reg(200));
	ck_assert_uint_eq(fake_get(200)->util_max, 1024);
	ck_assert_uint_eq(eng.st.failures, 0);
	engine_free(&eng);
	engine_init(&eng, cfg);
	ts_config_free(c);
}
END_TEST

/* A daemon around the fixture configuration, without sockets or a registry file. */
static void daemon_over_cfg(struct daemon *d)
{
	memset(d, 0, sizeof(*d));
	d->cfg = cfg;
	engine_init(&d->eng, cfg);
}

static int warnings_seen;
static char summary[1024]; /* the last warning that counted what was not logged */

static void count_warnings(int prio, const char *msg)
{
	if (prio <= LOG_WARNING) {
		warnings_seen++;
		if (strstr(msg, "more failures of this cause in the last"))
			snprintf(summary, sizeof(summary), "%s", msg);
	}
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no '%s' in the status", key);
	return v;
}

/*
 * Issue 19.6: no proc connector and tags that fail (EPERM, as without CAP_SYS_NICE). The status
 * says so in its JSON and in STATUS=; each cause is logged again once its quiet time is over,
 * with the count not logged (before: silent at debug level after the 5th failure, for good).
 */
START_TEST(test_degraded_daemon_says_so)
{
	struct daemon d;
	daemon_over_cfg(&d);
	d.procconn_err = -EPERM;
	d.eng.fail_log_ms = 100;
	log_set_sink(count_warnings);
	log_set_level(LOG_INFO);
	for (pid_t p = 100; p < 108; p++) {
		task(p, p, "logrotate", 10);
		fake_get(p)->set_errno = EPERM;
	}
	task(200, 200, "io-ring", 10);
	fake_get(200)->set_errno = EINVAL;
	engine_scan(&d.eng);
	ck_assert_uint_eq(d.eng.st.failures, 9);
	/* One warning per cause so far, the rest counted. */
	ck_assert_int_eq(warnings_seen, 2);
	/* After the quiet time the cause speaks again, with what it did not say. */
	long long end = ts_now_ms() + 2000;
	while (ts_now_ms() < end && ts_now_ms() - d.eng.causes[0].logged_ms <= 100)
		;
	engine_scan(&d.eng);
	ck_assert_int_ge(warnings_seen, 3);
	ck_assert_str_eq(summary, "cannot tag task 100 (logrotate): permission denied: changing "
	                          "another user's task needs CAP_SYS_NICE (and 7 more failures of "
	                          "this cause in the last 1 s)");

	struct ts_request q = {.cmd = TS_CMD_STATUS};
	struct ucred peer = {0};
	json_object *o = daemon_handle(&d, &q, &peer);
	json_object *pc = get(o, "proc_connector"), *by = get(get(o, "stats"), "failures_by_cause");
	ck_assert(!json_object_get_boolean(get(pc, "subscribed")));
	ck_assert_str_eq(json_object_get_string(get(pc, "error")), "Operation not permitted");
	ck_assert_int_eq(json_object_get_int(get(by, "EPERM")), 16);
	ck_assert_int_eq(json_object_get_int(get(by, "EINVAL")), 2);
	const char *deg = json_object_get_string(get(o, "degraded"));
	ck_assert_str_eq(deg, "no proc connector (Operation not permitted): new tasks wait for "
	                      "the periodic re-check; failed tags by cause: EPERM 16, EINVAL 2");
	json_object_put(o);
	log_set_sink(NULL);
	engine_free(&d.eng);
}
END_TEST

/*
 * Issue 19.5: a configuration with 16 errors printed 11, the last cut, with no "more" marker:
 * log_msg() formatted into 1024 bytes. Every error must reach the journal, each on its own line
 * with its priority, as --check-config, the start and a reload log them.
 */
START_TEST(test_every_config_error_logged)
{
	char dir[] = "/tmp/ts-errs-XXXXXX", path[64], *msgs = NULL, out[16384];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/turboschedd.conf", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("[rule r]\ncomm = x\n", f);
	for (int i = 0; i < 16; i++)
		fprintf(f, "no_such_key_%02d_with_a_name_long_enough_to_fill_a_log_line = 1\n", i);
	fclose(f);
	struct daemon d = {.config_path = path, .dropin_dir = ""};
	struct ts_config *c = NULL;
	ck_assert_int_eq(daemon_load_config(&d, &c, &msgs), -EINVAL);

	/* The journal's view: stderr with "<N>" prefixes. */
	FILE *cap = tmpfile();
	int saved = dup(2);
	dup2(fileno(cap), 2);
	log_set_level(LOG_INFO);
	log_use_journal_prefix(1);
	log_err("invalid configuration:\n%s", msgs);
	log_use_journal_prefix(0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(cap);
	size_t n = fread(out, 1, sizeof(out) - 1, cap);
	out[n] = '\0';
	fclose(cap);
	free(msgs);
	int lines = 0;
	for (const char *l = out; *l; l = strchr(l, '\n') + 1) {
		ck_assert_msg(strncmp(l, "<3>", 3) == 0, "a line without its priority: %.80s", l);
		lines++;
	}
	ck_assert_int_eq(lines, 17);
	for (int i = 0; i < 16; i++) {
		char want[160];
		snprintf(want, sizeof(want),
		         "<3>%s:%d: [rule r] unknown key "
		         "'no_such_key_%02d_with_a_name_long_enough_to_fill_a_log_line'",
		         path, i + 3, i);
		ck_assert_msg(strstr(out, want), "error %d missing or cut:\n%s", i, out);
	}
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Fake netlink receive: ENOBUFS first, then nothing. */
static int recv_calls;
static ssize_t recv_enobufs(int fd, void *buf, size_t len, struct sockaddr_nl *from)
{
	(void)fd, (void)buf, (void)len, (void)from;
	errno = recv_calls++ == 0 ? ENOBUFS : EAGAIN;
	return -1;
}

START_TEST(test_enobufs_rescans)
{
	struct daemon d;
	daemon_over_cfg(&d);
	/* A matching task that started while events were being dropped. */
	task(100, 100, "logrotate", 10);
	procconn_set_recv(recv_enobufs);
	daemon_proc_events(&d, -1);
	procconn_set_recv(NULL);
	ck_assert_uint_eq(d.eng.st.rescans, 1);
	ck_assert_uint_eq(d.eng.st.scans, 1);
	ck_assert_uint_eq(fake_get(100)->util_max, 0);
	engine_free(&d.eng);
}
END_TEST

/* A scripted proc connector: one datagram (one event) or one errno per receive call. */
struct script_item {
	int err; /* 0: deliver ev */
	struct proc_event ev;
};
static struct script_item *script;
static size_t script_n, script_pos;

static ssize_t recv_script(int fd, void *buf, size_t len, struct sockaddr_nl *from)
{
	(void)fd;
	if (script_pos == script_n) {
		errno = EAGAIN;
		return -1;
	}
	struct script_item *it = &script[script_pos++];
	if (it->err) {
		errno = it->err;
		return -1;
	}
	size_t n = 0;
	ck_assert_uint_ge(len, NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(it->ev)));
	memcpy(nl_put_proc_event(buf, &n, CN_IDX_PROC, sizeof(it->ev)), &it->ev, sizeof(it->ev));
	from->nl_pid = 0;
	return (ssize_t)n;
}

static void script_fork(pid_t parent, pid_t child)
{
	struct script_item *it = &script[script_n++];
	memset(it, 0, sizeof(*it));
	it->ev.what = PROC_EVENT_FORK;
	it->ev.event_data.fork.parent_pid = it->ev.event_data.fork.parent_tgid = parent;
	it->ev.event_data.fork.child_pid = it->ev.event_data.fork.child_tgid = child;
}

static void script_exec(pid_t pid)
{
	struct script_item *it = &script[script_n++];
	memset(it, 0, sizeof(*it));
	it->ev.what = PROC_EVENT_EXEC;
	it->ev.event_data.exec.process_pid = it->ev.event_data.exec.process_tgid = pid;
}

START_TEST(test_fork_storm_overrun_misses_nothing)
{
	/*
	 * A fork storm: a tagged logrotate forks 400 children (inherited tags), a shell forks 400
	 * that exec a *-janitor (tagged on exec). The socket overflows half way (ENOBUFS): the
	 * events of the second half never arrive. 100 children exit between their event and our
	 * read of them. Afterwards every live matching task is tagged and recorded, nothing that
	 * exited is, nothing failed, and exactly one rescan ran.
	 */
	enum { N = 400, FIRST = 1000 };
	struct daemon d;
	daemon_over_cfg(&d);
	task(100, 100, "logrotate", 10);
	task(200, 200, "bash", 20);
	engine_scan(&d.eng);
	ck_assert_uint_eq(ts_ledger_count_tagged(&d.eng.ledger), 1);

	script = calloc(4 * N + 4, sizeof(*script));
	script_n = script_pos = 0;
	for (int i = 0; i < 2 * N; i++) {
		pid_t c = FIRST + i;
		bool inherited = i < N;
		tree_add_child(inherited ? 100 : 200, c, c, inherited ? "logrotate" : "db-janitor",
		               1000 + (unsigned)i, 0, 1000);
		fake_add(c, 0, 0, inherited ? 0 : 1024);
		if (i == N / 2 || i == N + N / 2) {
			script[script_n++].err = ENOBUFS; /* the rest of this half is lost */
		}
		bool lost = (i > N / 2 && i < N) || i > N + N / 2;
		if (lost)
			continue;
		script_fork(inherited ? 100 : 200, c);
		if (!inherited)
			script_exec(c);
	}
	/* 100 children exit after their events were queued and before we read them. */
	int exited = 0;
	for (int i = 0; i < 2 * N && exited < 100; i += 7, exited++) {
		tree_remove_task(FIRST + i, FIRST + i);
		fake_get(FIRST + i)->exists = false;
	}
	procconn_set_recv(recv_script);
	daemon_proc_events(&d, -1);
	procconn_set_recv(NULL);
	ck_assert_uint_eq(script_pos, script_n);
	ck_assert_uint_eq(d.eng.st.rescans, 1);

	size_t live = 0;
	for (int i = 0; i < 2 * N; i++) {
		pid_t c = FIRST + i;
		struct fake_task *ft = fake_get(c);
		struct ts_ledger_entry *e = ts_ledger_find(&d.eng.ledger, c);
		if (!ft) {
			ck_assert_msg(e == NULL, "task %d exited but is still recorded", c);
			continue;
		}
		live++;
		ck_assert_msg(ft->util_max == 0, "task %d was missed (util_max %u)", c,
		              ft->util_max);
		ck_assert_msg(e != NULL, "task %d is tagged but not recorded", c);
		/* What the inherited ones must get back on untag is the parent's old clamp. */
		ck_assert_uint_eq(e->prev.util_max, 1024);
	}
	ck_assert_uint_eq(live, 2 * N - 100);
	ck_assert_uint_eq(ts_ledger_count_tagged(&d.eng.ledger), live + 1);
	ck_assert_uint_eq(d.eng.st.failures, 0);
	/* And all of it comes back on stop. */
	ck_assert_uint_eq(engine_restore_all(&d.eng), live + 1);
	for (int i = 0; i < 2 * N; i++)
		if (fake_get(FIRST + i))
			ck_assert_uint_eq(fake_get(FIRST + i)->util_max, 1024);
	free(script);
	engine_free(&d.eng);
}
END_TEST

/* Reload through the daemon: a good file switches and re-evaluates, a bad one changes nothing. */
/* The fixture's rules are comm-only, so events read stat alone: a new configuration with a
 * user rule must make them read the owner as well, or the rule could never match. */
START_TEST(test_new_rules_read_what_they_need)
{
	static const char text[] = "[rule by-user]\nuser = 1000\n";
	struct ts_config *c;
	struct ts_diag d;
	ck_assert_int_eq(ts_config_parse_buffer("u.conf", text, sizeof(text) - 1, NULL, &c, &d), 0);
	engine_set_config(&eng, c);
	task(800, 800, "anything", 80); /* owned by uid 1000 */
	engine_on_exec(&eng, 800, 800);
	ck_assert_uint_eq(fake_get(800)->util_max, 0);
	engine_set_config(&eng, cfg);
	ts_config_free(c);
}
END_TEST

START_TEST(test_reload)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/turboschedd.conf", ts_root_get());
	FILE *f = fopen(path, "w");
	fputs("[rule janitor]\ncomm = logrotate\n", f);
	fclose(f);

	struct daemon d;
	memset(&d, 0, sizeof(d));
	d.config_path = path;
	d.dropin_dir = "";
	char *msgs;
	ck_assert_int_eq(daemon_load_config(&d, &d.cfg, &msgs), 0);
	engine_init(&d.eng, d.cfg);
	task(100, 100, "logrotate", 10);
	task(200, 200, "cron", 20);
	engine_scan(&d.eng);
	ck_assert_uint_eq(fake_get(100)->util_max, 0);

	f = fopen(path, "w");
	fputs("[rule cron]\ncomm = cron\n", f);
	fclose(f);
	ck_assert_int_eq(daemon_reload(&d), 0);
	ck_assert_ptr_null(d.reload_error);
	ck_assert_uint_eq(fake_get(100)->util_max, 1024); /* rule removed: restored */
	ck_assert_uint_eq(fake_get(200)->util_max, 0);    /* rule added: tagged */

	f = fopen(path, "w");
	fputs("[rule cron]\ncomm = cron\nbogus = 1\n", f);
	fclose(f);
	const struct ts_config *before = d.cfg;
	ck_assert_int_eq(daemon_reload(&d), -EINVAL);
	ck_assert_ptr_eq(d.cfg, before);
	char expect[600];
	snprintf(expect, sizeof(expect),
	         "%s:3: [rule cron] unknown key 'bogus'; expected comm, cgroup, user or threads",
	         path);
	ck_assert_str_eq(d.reload_error, expect);
	ck_assert_uint_eq(fake_get(200)->util_max, 0); /* old rules still in force */
	ck_assert_uint_eq(d.reload_failures, 1);
	engine_free(&d.eng);
	ts_config_free(d.cfg);
	free(d.reload_error);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon_engine");
	TCase *tc = tcase_create("engine");
	/* The fork storm writes a few thousand fake /proc files on a shared, busy machine. */
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_scan_tags_matching_processes);
	tcase_add_test(tc, test_threads_matched_and_exclusion);
	tcase_add_test(tc, test_external_tag_left_alone);
	tcase_add_test(tc, test_exit_before_tag);
	tcase_add_test(tc, test_exec_retags_and_restores);
	tcase_add_test(tc, test_pid_reuse);
	tcase_add_test(tc, test_fork_inherits_and_exec_restores);
	tcase_add_test(tc, test_fork_of_untagged_parent);
	tcase_add_test(tc, test_fork_of_unmatched_parent_waits_for_exec);
	tcase_add_test(tc, test_scan_claims_inherited_after_lost_fork);
	tcase_add_test(tc, test_batch_skips_moot_events);
	tcase_add_test(tc, test_batch_keeps_inheriting_fork);
	tcase_add_test(tc, test_late_events_counted);
	tcase_add_test(tc, test_scan_forgets_gone_tasks);
	tcase_add_test(tc, test_restore_all_only_ours);
	tcase_add_test(tc, test_restore_failure_keeps_entry);
	tcase_add_test(tc, test_manual_untag_sticks);
	tcase_add_test(tc, test_overlong_comm_and_cgroup);
	tcase_add_test(tc, test_enobufs_rescans);
	tcase_add_test(tc, test_fork_storm_overrun_misses_nothing);
	tcase_add_test(tc, test_new_rules_read_what_they_need);
	tcase_add_test(tc, test_reload);
	tcase_add_test(tc, test_degraded_daemon_says_so);
	tcase_add_test(tc, test_every_config_error_logged);
	suite_add_tcase(s, tc);
	return run_suite(s);
}

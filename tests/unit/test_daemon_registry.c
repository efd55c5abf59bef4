/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The registry file: a daemon killed without its orderly stop (kill -9) leaves its tags in place;
 * the next start adopts what is still its own (same tid + starttime, still util_max 0), drops the
 * rest, and restores the adopted ones on stop. Written atomically; a corrupt file is a warning.
 * Against a fake /proc tree and fake sched ops.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "engine.h"
#include "commands.h"
#include "helpers.h"
#include "helpers_cli.h"
#include "log.h"
#include "ledger.h"
#include "util.h"

static const char conf[] = "[rule janitor]\ncomm = logrotate, *-janitor\n";
static char path[512];
static int warnings;
static char last_warning[1024];

static void sink(int prio, const char *msg)
{
	if (prio <= LOG_WARNING) {
		warnings++;
		snprintf(last_warning, sizeof(last_warning), "%s", msg);
	}
}

static void setup(void)
{
	tree_new();
	fake_install();
	log_set_sink(sink);
	log_set_level(LOG_INFO);
	warnings = 0;
	last_warning[0] = '\0';
	snprintf(path, sizeof(path), "%s/run/registry", ts_root_get());
}

static void teardown(void)
{
	log_set_sink(NULL);
	tree_free();
}

/* A daemon as main.c makes it, minus sockets: config, engine, registry file. */
static void daemon_start(struct daemon *d)
{
	struct ts_diag diag;
	memset(d, 0, sizeof(*d));
	d->ledger_path = path;
	ck_assert_int_eq(
	    ts_config_parse_buffer("r.conf", conf, sizeof(conf) - 1, NULL, &d->cfg, &diag), 0);
	engine_init(&d->eng, d->cfg);
	daemon_adopt(d);
	engine_scan(&d->eng);
	daemon_persist(d);
}

/* kill -9: the process is gone, its tags stay, nothing is restored. */
static void daemon_kill9(struct daemon *d)
{
	engine_free(&d->eng);
	ts_config_free(d->cfg);
}

static void task(pid_t tgid, pid_t tid, const char *comm, unsigned long long st)
{
	tree_add_task(tgid, tid, comm, st, 0, 1000);
	fake_add(tid, 0, 0, 1024);
}

START_TEST(test_restart_adopts_and_restores)
{
	struct daemon d;
	task(100, 100, "logrotate", 10);  /* tagged by a rule, still the same task */
	task(100, 101, "logrotate", 11);  /* ... its thread, exits while we are down */
	task(200, 200, "db-janitor", 20); /* TID reused by a stranger while we are down */
	task(300, 300, "b-janitor", 30);  /* re-clamped by an admin while we are down */
	task(400, 400, "bash", 40);       /* tagged by hand (turboschedctl tag) */
	task(500, 500, "logrotate", 50);  /* untagged by hand: rules must keep off */
	daemon_start(&d);
	ck_assert_int_eq(ctl_quiet("tag", "400"), 0);
	ck_assert_int_eq(ctl_quiet("untag", "500"), 0);
	/* What the daemon does before its next event, scan or answer: 500 is no longer its own. */
	engine_sync_manual(&d.eng);
	daemon_persist(&d);
	ck_assert_ptr_null(ts_ledger_find(&d.eng.ledger, 500));
	ck_assert_uint_eq(ts_ledger_count_tagged(&d.eng.ledger), 4);
	daemon_kill9(&d);

	/* Meanwhile: */
	tree_remove_task(100, 101);
	fake_get(101)->exists = false;
	tree_set_starttime(200, 200, 999);
	fake_get(200)->util_max = 0; /* the stranger happens to be tagged: still not ours */
	fake_get(300)->util_max = 512;
	int nset = fake.nset;

	daemon_start(&d);
	/* Adopted: 100 (rule), 400 (manual tag), 500 (manual untag). */
	struct ts_ledger_entry *e = ts_ledger_find(&d.eng.ledger, 100);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->owner, TS_OWNER_RULE);
	ck_assert_str_eq(e->rule, "janitor");
	ck_assert_uint_eq(e->prev.util_max, 1024);
	/* The hand's decisions are in turboschedctl's ledger, which the new daemon read first. */
	ck_assert_int_eq(ts_ledger_get(&d.eng.manual, 400, 40)->owner, TS_OWNER_MANUAL);
	ck_assert_int_eq(ts_ledger_get(&d.eng.manual, 500, 50)->owner, TS_OWNER_UNTAGGED);
	ck_assert_ptr_null(ts_ledger_find(&d.eng.ledger, 500));
	ck_assert_ptr_null(ts_ledger_find(&d.eng.ledger, 101));
	ck_assert_ptr_null(ts_ledger_find(&d.eng.ledger, 200));
	ck_assert_uint_eq(fake_get(500)->util_max, 1024);
	/* 300 was re-clamped, so not adopted; its rule still matches, so it is tagged afresh and
	 * the clamp to restore is the admin's 512. That was the only write. */
	ck_assert_int_eq(fake.nset, nset + 1);
	ck_assert_uint_eq(ts_ledger_find(&d.eng.ledger, 300)->prev.util_max, 512);

	/* Orderly stop: the adopted and new rule tags are restored, manual ones and strangers
	 * are not. */
	ck_assert_uint_eq(engine_restore_all(&d.eng), 2);
	ck_assert_uint_eq(fake_get(100)->util_max, 1024);
	ck_assert_uint_eq(fake_get(200)->util_max, 0);
	ck_assert_uint_eq(fake_get(300)->util_max, 512);
	ck_assert_uint_eq(fake_get(400)->util_max, 0);
	daemon_persist(&d);
	daemon_kill9(&d);
	ck_assert_int_eq(warnings, 0);

	/* The daemon's file is empty now; turboschedctl's still holds the manual decisions, which
	 * the next start reads again. */
	struct ts_ledger r = {0};
	struct ts_ledger_report lr;
	char manual[512];
	ck_assert_int_eq(ts_ledger_load(&r, path, &lr), 0);
	ck_assert_uint_eq(lr.entries, 0);
	ts_ledger_free(&r);
	snprintf(manual, sizeof(manual), "%s%s", ts_root_get(), TS_LEDGER_MANUAL);
	ck_assert_int_eq(ts_ledger_load(&r, manual, &lr), 0);
	ck_assert_uint_eq(lr.entries, 2);
	ck_assert_ptr_nonnull(ts_ledger_find(&r, 400));
	ck_assert_ptr_nonnull(ts_ledger_find(&r, 500));
	ts_ledger_free(&r);
}
END_TEST

START_TEST(test_inherited_tags_survive_restart)
{
	struct daemon d;
	task(100, 100, "logrotate", 10);
	daemon_start(&d);
	/* logrotate forks; the kernel copied util_max 0 into the child. */
	tree_add_task(700, 700, "logrotate", 70, 0, 1000);
	fake_add(700, 0, 0, 0);
	engine_on_fork(&d.eng, 100, 100, 700, 700);
	struct ts_ledger_entry *e = ts_ledger_find(&d.eng.ledger, 700);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->owner, TS_OWNER_INHERITED);
	daemon_persist(&d);
	daemon_kill9(&d);

	/* While the daemon is down the child execs gzip (its exec event is lost). */
	tree_add_task(700, 700, "gzip", 70, 0, 1000);
	daemon_start(&d);
	/* gzip matches no rule: the adopted inherited tag is ours, so the first scan undoes it. */
	ck_assert_ptr_null(ts_ledger_find(&d.eng.ledger, 700));
	ck_assert_uint_eq(fake_get(700)->util_max, 1024);
	ck_assert_uint_eq(d.eng.st.restored, 1);
	daemon_kill9(&d);
}
END_TEST

/* One copy per distinct rule name, owned by the registry: the caller's buffer may go. */
START_TEST(test_rule_names_shared)
{
	struct ts_ledger r = {0};
	char buf[16];

	for (int i = 0; i < 1000; i++) {
		snprintf(buf, sizeof(buf), "rule-%d", i % 2);
		struct ts_ledger_entry e = {
		    .tid = 1000 + i, .tgid = 1000 + i, .owner = TS_OWNER_RULE, .rule = buf};
		ck_assert_ptr_nonnull(ts_ledger_put(&r, &e));
	}
	strcpy(buf, "overwritten");
	ck_assert_uint_eq(r.nnames, 2);
	ck_assert_str_eq(ts_ledger_find(&r, 1000)->rule, "rule-0");
	ck_assert_str_eq(ts_ledger_find(&r, 1001)->rule, "rule-1");
	ck_assert_ptr_eq(ts_ledger_find(&r, 1000)->rule, ts_ledger_find(&r, 1998)->rule);
	ck_assert(ts_ledger_set_rule(&r, ts_ledger_find(&r, 1000), "rule-1"));
	ck_assert_ptr_eq(ts_ledger_find(&r, 1000)->rule, ts_ledger_find(&r, 1001)->rule);
	ck_assert_uint_eq(r.nnames, 2);
	struct ts_ledger_entry manual = {.tid = 5, .tgid = 5, .owner = TS_OWNER_MANUAL};
	ck_assert_str_eq(ts_ledger_put(&r, &manual)->rule, "");
	ts_ledger_free(&r);
}
END_TEST

START_TEST(test_atomic_write)
{
	struct ts_ledger r = {0};
	struct ts_ledger_entry e = {
	    .tid = 42,
	    .tgid = 42,
	    .starttime = 18446744073709551615ull,
	    .since = 1700000000,
	    .owner = TS_OWNER_RULE,
	    .prev = {.util_min = 1024, .util_max = 1024, .min_lowered = true},
	    .rule = "a rule \"with\" quotes\\, a\ttab and \xc3\xbc"};
	ck_assert_ptr_nonnull(ts_ledger_put(&r, &e));
	mode_t old = umask(0077); /* the unit's UMask */
	ck_assert_int_eq(ts_ledger_save(&r, path), 0);
	umask(old);
	ck_assert(!r.dirty);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	char tmp[600];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert_int_eq(access(tmp, F_OK), -1); /* no temporary file left behind */

	struct ts_ledger back = {0};
	struct ts_ledger_report lr;
	ck_assert_int_eq(ts_ledger_load(&back, path, &lr), 0);
	ck_assert_uint_eq(back.n, 1);
	ck_assert_str_eq(back.v[0].rule, e.rule);
	ck_assert_uint_eq(back.v[0].starttime, e.starttime);
	ck_assert(back.v[0].prev.min_lowered);
	ck_assert_uint_eq(back.v[0].prev.util_min, 1024);
	ck_assert_int_eq(back.v[0].since, 1700000000);
	ts_ledger_free(&back);

	/* A write that cannot complete leaves the previous file intact. */
	ck_assert_int_eq(mkdir(tmp, 0755), 0); /* the temporary name is taken by a directory */
	e.tid = 43;
	ts_ledger_put(&r, &e);
	ck_assert_int_lt(ts_ledger_save(&r, path), 0);
	ck_assert(r.dirty);
	ck_assert_int_eq(ts_ledger_load(&back, path, &lr), 0);
	ck_assert_uint_eq(back.n, 1);
	ck_assert_int_eq(back.v[0].tid, 42);
	ts_ledger_free(&back);
	rmdir(tmp);
	/* A symlink planted at the temporary name is not followed. */
	char target[600];
	snprintf(target, sizeof(target), "%s/run/elsewhere", ts_root_get());
	ck_assert_int_eq(symlink(target, tmp), 0);
	ck_assert_int_eq(ts_ledger_save(&r, path), 0);
	ck_assert_int_eq(access(target, F_OK), -1);
	ts_ledger_free(&r);
}
END_TEST

static void write_registry(const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* A start over a bad file: a warning naming the file and the problem, no crash, no adoption. */
static void start_over_corrupt(const char *text, const char *problem)
{
	struct daemon d;
	warnings = 0;
	write_registry(text);
	daemon_start(&d);
	ck_assert_int_eq(warnings, 1);
	ck_assert_msg(strstr(last_warning, path) && strstr(last_warning, problem),
	              "warning '%s' does not name %s and '%s'", last_warning, path, problem);
	ck_assert_ptr_null(ts_ledger_find(&d.eng.ledger, 100));
	ck_assert_uint_eq(d.eng.st.external, 1);
	daemon_kill9(&d);
}

START_TEST(test_corrupt_files)
{
	task(100, 100, "logrotate", 10);
	fake_get(100)->util_max = 0; /* tagged by the run that wrote the file */
	start_over_corrupt("", "not a turbosched ledger");
	start_over_corrupt("\x7f"
	                   "ELF\x02\x01\x01\x00\xff\xfe",
	                   "not a turbosched ledger");
	/* the JSON registry of earlier versions */
	start_over_corrupt(
	    "{\"format\":\"turboschedd-registry\",\"version\":1,\"entries\":[{\"tid\"",
	    "not a turbosched ledger");
	start_over_corrupt("# turbosched ledger v2\n", "not a turbosched ledger");
	start_over_corrupt(TS_LEDGER_HEADER, "not a turbosched ledger"); /* cut off */
	start_over_corrupt(TS_LEDGER_HEADER "\n"
	                                    "100 100 10 0 0 1024 rule\n"
	                                    "-5 1 10 0 0 1024 0 rule r\n"
	                                    "100 100 10 0 0 1024 0 bogus r\n"
	                                    "7\n",
	                   "4 malformed entries skipped");
	/* After each start the file was rewritten whole and valid. */
	struct ts_ledger r = {0};
	struct ts_ledger_report lr;
	ck_assert_int_eq(ts_ledger_load(&r, path, &lr), 0);
	ck_assert_uint_eq(lr.bad, 0);
	ts_ledger_free(&r);
}
END_TEST

START_TEST(test_one_bad_entry_among_good)
{
	struct daemon d;
	task(100, 100, "logrotate", 10);
	daemon_start(&d);
	daemon_kill9(&d);
	/* Append a malformed entry to the good file by hand. */
	char *text;
	ck_assert_int_eq(ts_read_file(path, &text), 0);
	char fixed[4096];
	snprintf(fixed, sizeof(fixed), "%sx 1 2 3 4 5 6 rule r\n", text);
	free(text);
	write_registry(fixed);
	daemon_start(&d);
	ck_assert_int_eq(warnings, 1);
	ck_assert_ptr_nonnull(strstr(last_warning, "1 malformed entries skipped"));
	ck_assert_int_eq(ts_ledger_find(&d.eng.ledger, 100)->owner, TS_OWNER_RULE);
	ck_assert_uint_eq(engine_restore_all(&d.eng), 1);
	daemon_kill9(&d);
}
END_TEST

START_TEST(test_unwritable_registry_warns_once)
{
	struct daemon d;
	snprintf(path, sizeof(path), "%s/no/such/dir/registry", ts_root_get());
	task(100, 100, "logrotate", 10);
	daemon_start(&d);
	ck_assert_int_eq(warnings, 1);
	ck_assert_ptr_nonnull(strstr(last_warning, "cannot save the ledger to"));
	ck_assert_ptr_nonnull(strstr(last_warning, "No such file or directory"));
	task(200, 200, "logrotate", 20);
	engine_scan(&d.eng);
	daemon_persist(&d);
	ck_assert_int_eq(warnings, 1); /* the same cause is not repeated per change */
	ck_assert_uint_eq(fake_get(200)->util_max, 0); /* classification goes on regardless */
	daemon_kill9(&d);
}
END_TEST

/* The TID index against a plain list, through puts, replacements and removals in any order. */
START_TEST(test_index_matches_contents)
{
	enum { N = 3000 };
	static bool in[4 * N];
	struct ts_ledger r = {0};
	unsigned int seed = 12345;

	memset(in, 0, sizeof(in));
	for (int step = 0; step < 20 * N; step++) {
		seed = seed * 1103515245u + 12345u;
		/* Consecutive TIDs, as a fork burst makes them, plus scattered ones. */
		pid_t tid = (pid_t)(1 + (seed >> 8) % (4 * N - 1));
		struct ts_ledger_entry *e = ts_ledger_find(&r, tid);
		ck_assert(in[tid] == (e != NULL));
		if (e && (seed & 0x80)) {
			ts_ledger_remove(&r, e);
			in[tid] = false;
		} else {
			struct ts_ledger_entry n = {
			    .tid = tid, .tgid = tid, .starttime = (unsigned)step};
			ck_assert_ptr_nonnull(ts_ledger_put(&r, &n));
			in[tid] = true;
		}
	}
	size_t count = 0;
	for (pid_t tid = 1; tid < 4 * N; tid++) {
		struct ts_ledger_entry *e = ts_ledger_find(&r, tid);
		ck_assert(in[tid] == (e != NULL));
		if (e)
			ck_assert_int_eq(e->tid, tid);
		count += in[tid];
	}
	ck_assert_uint_eq(r.n, count);
	/* Emptying it backwards, as engine_scan() sweeps, leaves nothing findable. */
	for (size_t i = r.n; i-- > 0;)
		ts_ledger_remove(&r, &r.v[i]);
	for (pid_t tid = 1; tid < 4 * N; tid++)
		ck_assert_ptr_null(ts_ledger_find(&r, tid));
	ts_ledger_free(&r);
}
END_TEST

/* How many entries the registry file holds now. */
static size_t saved_entries(void)
{
	struct ts_ledger back = {0};
	struct ts_ledger_report lr;
	ck_assert_int_eq(ts_ledger_load(&back, path, &lr), 0);
	size_t n = back.n;
	ts_ledger_free(&back);
	return n;
}

/* A change after a quiet spell is saved at once; a burst of changes at most every interval. */
START_TEST(test_persist_throttled)
{
	struct daemon d;
	long long t = 1000000;

	task(100, 100, "logrotate", 10);
	daemon_start(&d);
	ck_assert_int_eq(daemon_persist_throttled(&d, t), -1); /* saved by daemon_start */
	ck_assert_uint_eq(saved_entries(), 1);

	task(200, 200, "logrotate", 20);
	engine_scan(&d.eng);
	ck_assert_int_eq(daemon_persist_throttled(&d, t), -1);
	ck_assert_uint_eq(saved_entries(), 2); /* quiet before: written at once */

	/*
	 * The gap is the interval, or ten times the last save's cost when that is longer (saves
	 * take at most a tenth of the time): on a loaded machine the save above may have been slow,
	 * so the test takes the gap the daemon chose, after checking it is at least the interval.
	 */
	long long gap = d.save_gap_ms;
	ck_assert_int_ge(gap, DAEMON_PERSIST_MS);
	task(300, 300, "logrotate", 30);
	engine_scan(&d.eng);
	ck_assert_int_eq(daemon_persist_throttled(&d, t + 100), gap - 100);
	ck_assert_uint_eq(saved_entries(), 2);
	ck_assert(d.eng.ledger.dirty);
	ck_assert_int_eq(daemon_persist_throttled(&d, t + gap - 1), 1);
	ck_assert_uint_eq(saved_entries(), 2);
	ck_assert_int_eq(daemon_persist_throttled(&d, t + gap), -1);
	ck_assert_uint_eq(saved_entries(), 3);
	ck_assert(!d.eng.ledger.dirty);
	daemon_kill9(&d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon_registry");
	TCase *tc = tcase_create("registry");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_restart_adopts_and_restores);
	tcase_add_test(tc, test_inherited_tags_survive_restart);
	tcase_add_test(tc, test_rule_names_shared);
	tcase_add_test(tc, test_atomic_write);
	tcase_add_test(tc, test_corrupt_files);
	tcase_add_test(tc, test_one_bad_entry_among_good);
	tcase_add_test(tc, test_unwritable_registry_warns_once);
	tcase_add_test(tc, test_index_matches_contents);
	tcase_add_test(tc, test_persist_throttled);
	suite_add_tcase(s, tc);
	return run_suite(s);
}

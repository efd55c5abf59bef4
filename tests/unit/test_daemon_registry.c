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
#include "helpers.h"
#include "log.h"
#include "registry.h"
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
	d->recheck_fd = -1;
	d->registry_path = path;
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
	task(400, 400, "bash", 40);       /* tagged by hand through the daemon */
	task(500, 500, "logrotate", 50);  /* untagged by hand: rules must keep off */
	daemon_start(&d);
	struct ts_tag_report rep = {0};
	ck_assert_int_eq(engine_manual(&d.eng, true, 400, false, &rep), 0);
	ts_tag_report_free(&rep);
	ck_assert_int_eq(engine_manual(&d.eng, false, 500, false, &rep), 0);
	ts_tag_report_free(&rep);
	daemon_persist(&d);
	ck_assert_uint_eq(registry_count_tagged(&d.eng.reg), 5);
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
	struct reg_entry *e = registry_find(&d.eng.reg, 100);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->how, REG_RULE);
	ck_assert_str_eq(e->rule, "janitor");
	ck_assert_uint_eq(e->prev.util_max, 1024);
	ck_assert_int_eq(registry_find(&d.eng.reg, 400)->how, REG_MANUAL_TAG);
	ck_assert_int_eq(registry_find(&d.eng.reg, 500)->how, REG_MANUAL_UNTAG);
	ck_assert_ptr_null(registry_find(&d.eng.reg, 101));
	ck_assert_ptr_null(registry_find(&d.eng.reg, 200));
	ck_assert_uint_eq(fake_get(500)->util_max, 1024);
	/* 300 was re-clamped, so not adopted; its rule still matches, so it is tagged afresh and
	 * the clamp to restore is the admin's 512. That was the only write. */
	ck_assert_int_eq(fake.nset, nset + 1);
	ck_assert_uint_eq(registry_find(&d.eng.reg, 300)->prev.util_max, 512);

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

	/* The file now holds only the manual decisions, which the next start adopts again. */
	struct registry r = {0};
	struct registry_load_report lr;
	ck_assert_int_eq(registry_load(&r, path, &lr), 0);
	ck_assert_uint_eq(lr.entries, 2);
	ck_assert_ptr_nonnull(registry_find(&r, 400));
	ck_assert_ptr_nonnull(registry_find(&r, 500));
	registry_free(&r);
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
	struct reg_entry *e = registry_find(&d.eng.reg, 700);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->how, REG_INHERITED);
	daemon_persist(&d);
	daemon_kill9(&d);

	/* While the daemon is down the child execs gzip (its exec event is lost). */
	tree_add_task(700, 700, "gzip", 70, 0, 1000);
	daemon_start(&d);
	/* gzip matches no rule: the adopted inherited tag is ours, so the first scan undoes it. */
	ck_assert_ptr_null(registry_find(&d.eng.reg, 700));
	ck_assert_uint_eq(fake_get(700)->util_max, 1024);
	ck_assert_uint_eq(d.eng.st.restored, 1);
	daemon_kill9(&d);
}
END_TEST

/* One copy per distinct rule name, owned by the registry: the caller's buffer may go. */
START_TEST(test_rule_names_shared)
{
	struct registry r = {0};
	char buf[16];

	for (int i = 0; i < 1000; i++) {
		snprintf(buf, sizeof(buf), "rule-%d", i % 2);
		struct reg_entry e = {
		    .tid = 1000 + i, .tgid = 1000 + i, .how = REG_RULE, .rule = buf};
		ck_assert_ptr_nonnull(registry_put(&r, &e));
	}
	strcpy(buf, "overwritten");
	ck_assert_uint_eq(r.nnames, 2);
	ck_assert_str_eq(registry_find(&r, 1000)->rule, "rule-0");
	ck_assert_str_eq(registry_find(&r, 1001)->rule, "rule-1");
	ck_assert_ptr_eq(registry_find(&r, 1000)->rule, registry_find(&r, 1998)->rule);
	ck_assert(registry_set_rule(&r, registry_find(&r, 1000), "rule-1"));
	ck_assert_ptr_eq(registry_find(&r, 1000)->rule, registry_find(&r, 1001)->rule);
	ck_assert_uint_eq(r.nnames, 2);
	struct reg_entry manual = {.tid = 5, .tgid = 5, .how = REG_MANUAL_TAG};
	ck_assert_str_eq(registry_put(&r, &manual)->rule, "");
	registry_free(&r);
}
END_TEST

START_TEST(test_atomic_write)
{
	struct registry r = {0};
	struct reg_entry e = {.tid = 42,
	                      .tgid = 42,
	                      .starttime = 18446744073709551615ull,
	                      .since = 1700000000,
	                      .how = REG_RULE,
	                      .prev = {.util_min = 1024, .util_max = 1024, .min_lowered = true},
	                      .rule = "a rule \"with\" quotes\\, a\ttab and \xc3\xbc"};
	ck_assert_ptr_nonnull(registry_put(&r, &e));
	mode_t old = umask(0077); /* the unit's UMask */
	ck_assert_int_eq(registry_save(&r, path), 0);
	umask(old);
	ck_assert(!r.dirty);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	char tmp[600];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert_int_eq(access(tmp, F_OK), -1); /* no temporary file left behind */

	struct registry back = {0};
	struct registry_load_report lr;
	ck_assert_int_eq(registry_load(&back, path, &lr), 0);
	ck_assert_uint_eq(back.n, 1);
	ck_assert_str_eq(back.v[0].rule, e.rule);
	ck_assert_uint_eq(back.v[0].starttime, e.starttime);
	ck_assert(back.v[0].prev.min_lowered);
	ck_assert_uint_eq(back.v[0].prev.util_min, 1024);
	ck_assert_int_eq(back.v[0].since, 1700000000);
	registry_free(&back);

	/* A write that cannot complete leaves the previous file intact. */
	ck_assert_int_eq(mkdir(tmp, 0755), 0); /* the temporary name is taken by a directory */
	e.tid = 43;
	registry_put(&r, &e);
	ck_assert_int_lt(registry_save(&r, path), 0);
	ck_assert(r.dirty);
	ck_assert_int_eq(registry_load(&back, path, &lr), 0);
	ck_assert_uint_eq(back.n, 1);
	ck_assert_int_eq(back.v[0].tid, 42);
	registry_free(&back);
	rmdir(tmp);
	/* A symlink planted at the temporary name is not followed. */
	char target[600];
	snprintf(target, sizeof(target), "%s/run/elsewhere", ts_root_get());
	ck_assert_int_eq(symlink(target, tmp), 0);
	ck_assert_int_eq(registry_save(&r, path), 0);
	ck_assert_int_eq(access(target, F_OK), -1);
	registry_free(&r);
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
	ck_assert_ptr_null(registry_find(&d.eng.reg, 100));
	ck_assert_uint_eq(d.eng.st.external, 1);
	daemon_kill9(&d);
}

START_TEST(test_corrupt_files)
{
	task(100, 100, "logrotate", 10);
	fake_get(100)->util_max = 0; /* tagged by the run that wrote the file */
	start_over_corrupt("", "not a JSON object");
	start_over_corrupt("\x7f"
	                   "ELF\x02\x01\x01\x00\xff\xfe",
	                   "not a JSON object");
	start_over_corrupt(
	    "{\"format\":\"turboschedd-registry\",\"version\":1,\"entries\":[{\"tid\"",
	    "not a JSON object");
	start_over_corrupt("[1,2,3]", "not a JSON object");
	start_over_corrupt("{\"version\":1,\"entries\":[]}", "not a turboschedd registry");
	start_over_corrupt("{\"format\":\"turboschedd-registry\",\"version\":2,\"entries\":[]}",
	                   "unsupported version");
	start_over_corrupt("{\"format\":\"turboschedd-registry\",\"version\":1}", "\"entries\"");
	start_over_corrupt(
	    "{\"format\":\"turboschedd-registry\",\"version\":1,\"entries\":[{\"tid\":100},"
	    "{\"tid\":-5,\"tgid\":1,\"starttime\":10,\"rule\":\"r\",\"how\":\"rule\",\"since\":0,"
	    "\"util_min\":0,\"util_max\":1024,\"min_lowered\":false},"
	    "{\"tid\":100,\"tgid\":100,\"starttime\":10,\"rule\":\"r\",\"how\":\"bogus\","
	    "\"since\":0,\"util_min\":0,\"util_max\":1024,\"min_lowered\":false},7]}",
	    "4 malformed entries skipped");
	/* After each start the file was rewritten whole and valid. */
	struct registry r = {0};
	struct registry_load_report lr;
	ck_assert_int_eq(registry_load(&r, path, &lr), 0);
	ck_assert_uint_eq(lr.bad, 0);
	registry_free(&r);
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
	char *end = strrchr(text, ']');
	ck_assert_ptr_nonnull(end);
	char fixed[4096];
	snprintf(fixed, sizeof(fixed), "%.*s,{\"tid\":\"x\"}%s", (int)(end - text), text, end);
	free(text);
	write_registry(fixed);
	daemon_start(&d);
	ck_assert_int_eq(warnings, 1);
	ck_assert_ptr_nonnull(strstr(last_warning, "1 malformed entries skipped"));
	ck_assert_int_eq(registry_find(&d.eng.reg, 100)->how, REG_RULE);
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
	ck_assert_ptr_nonnull(strstr(last_warning, "cannot save the registry to"));
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
	struct registry r = {0};
	unsigned int seed = 12345;

	memset(in, 0, sizeof(in));
	for (int step = 0; step < 20 * N; step++) {
		seed = seed * 1103515245u + 12345u;
		/* Consecutive TIDs, as a fork burst makes them, plus scattered ones. */
		pid_t tid = (pid_t)(1 + (seed >> 8) % (4 * N - 1));
		struct reg_entry *e = registry_find(&r, tid);
		ck_assert(in[tid] == (e != NULL));
		if (e && (seed & 0x80)) {
			registry_remove(&r, e);
			in[tid] = false;
		} else {
			struct reg_entry n = {.tid = tid, .tgid = tid, .starttime = (unsigned)step};
			ck_assert_ptr_nonnull(registry_put(&r, &n));
			in[tid] = true;
		}
	}
	size_t count = 0;
	for (pid_t tid = 1; tid < 4 * N; tid++) {
		struct reg_entry *e = registry_find(&r, tid);
		ck_assert(in[tid] == (e != NULL));
		if (e)
			ck_assert_int_eq(e->tid, tid);
		count += in[tid];
	}
	ck_assert_uint_eq(r.n, count);
	/* Emptying it backwards, as engine_scan() sweeps, leaves nothing findable. */
	for (size_t i = r.n; i-- > 0;)
		registry_remove(&r, &r.v[i]);
	for (pid_t tid = 1; tid < 4 * N; tid++)
		ck_assert_ptr_null(registry_find(&r, tid));
	registry_free(&r);
}
END_TEST

/* How many entries the registry file holds now. */
static size_t saved_entries(void)
{
	struct registry back = {0};
	struct registry_load_report lr;
	ck_assert_int_eq(registry_load(&back, path, &lr), 0);
	size_t n = back.n;
	registry_free(&back);
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

	task(300, 300, "logrotate", 30);
	engine_scan(&d.eng);
	ck_assert_int_eq(daemon_persist_throttled(&d, t + 100), DAEMON_PERSIST_MS - 100);
	ck_assert_uint_eq(saved_entries(), 2);
	ck_assert(d.eng.reg.dirty);
	ck_assert_int_eq(daemon_persist_throttled(&d, t + DAEMON_PERSIST_MS), -1);
	ck_assert_uint_eq(saved_entries(), 3);
	ck_assert(!d.eng.reg.dirty);
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

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ledger (lib/ledger): turboschedctl's and the daemon's record of who tagged what. Round trip,
 * corrupt lines, identity by (tid, starttime), pruning, the lock. (Ported from the tests of the
 * manual-tags state file it replaced.)
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "helpers.h"
#include "ledger.h"
#include "util.h"

static char path[512];

static void setup(void)
{
	tree_new();
	snprintf(path, sizeof(path), "%s%s", ts_root_get(), TS_LEDGER_MANUAL);
	tree_write(TS_LEDGER_MANUAL_DIR "/.keep", "");
}

static void teardown(void)
{
	tree_free();
}

START_TEST(roundtrip_and_identity)
{
	struct ts_ledger l = {0}, back = {0};
	struct ts_ledger_report rep;
	struct ts_ledger_entry e = {.tid = 77,
	                            .tgid = 70,
	                            .starttime = 5,
	                            .since = 1700000000,
	                            .prev = {1024, 1024, true},
	                            .owner = TS_OWNER_MANUAL};

	/* missing file: empty */
	ck_assert_int_eq(ts_ledger_load(&l, path, &rep), 0);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_ptr_nonnull(ts_ledger_put(&l, &e));
	e.tid = 78;
	e.prev = (struct ts_prev){0, 512, false};
	e.owner = TS_OWNER_RULE;
	e.rule = "house keeping"; /* rule names may hold blanks */
	ck_assert_ptr_nonnull(ts_ledger_put(&l, &e));
	e.tid = 79;
	e.owner = TS_OWNER_UNTAGGED;
	e.rule = NULL;
	ck_assert_ptr_nonnull(ts_ledger_put(&l, &e));
	ck_assert_int_eq(ts_ledger_save(&l, path), 0);
	ck_assert(!l.dirty);
	ts_ledger_free(&l);

	ck_assert_int_eq(ts_ledger_load(&back, path, &rep), 0);
	ck_assert_uint_eq(back.n, 3);
	ck_assert_uint_eq(rep.entries, 3);
	ck_assert_ptr_nonnull(ts_ledger_get(&back, 77, 5));
	ck_assert(ts_ledger_get(&back, 77, 5)->prev.min_lowered);
	ck_assert_uint_eq(ts_ledger_get(&back, 77, 5)->prev.util_min, 1024);
	ck_assert_int_eq(ts_ledger_get(&back, 77, 5)->tgid, 70);
	ck_assert_ptr_null(ts_ledger_get(&back, 77, 6)); /* same TID, other start time */
	ck_assert_str_eq(ts_ledger_get(&back, 78, 5)->rule, "house keeping");
	ck_assert_int_eq(ts_ledger_get(&back, 78, 5)->owner, TS_OWNER_RULE);
	ck_assert_int_eq(ts_ledger_get(&back, 79, 5)->owner, TS_OWNER_UNTAGGED);
	ck_assert_str_eq(ts_ledger_get(&back, 79, 5)->rule, "");
	ck_assert_uint_eq(ts_ledger_count_tagged(&back), 2);
	ts_ledger_remove(&back, ts_ledger_get(&back, 77, 5));
	ck_assert_ptr_null(ts_ledger_find(&back, 77));
	ts_ledger_free(&back);
}
END_TEST

START_TEST(corrupt_lines_skipped)
{
	struct ts_ledger l = {0};
	struct ts_ledger_report rep;

	/* corrupt lines are skipped and counted; a cut-off last line too */
	tree_write(TS_LEDGER_MANUAL, TS_LEDGER_HEADER "\n"
	                                              "10 10 20 0 0 1024 0 manual\n"
	                                              "garbage\n"
	                                              "11 11 21 0 0 5000 0 manual\n"
	                                              "12 12 22 0 0 1024 2 manual\n"
	                                              "13 13 23 0 0 1024 1 bogus\n"
	                                              "4294967397 1 111 0 0 1024 0 manual\n"
	                                              "-5 1 1 0 0 1024 0 manual\n"
	                                              "0 1 1 0 0 1024 0 manual\n"
	                                              "15 15 25 0 0 1024 0 external\n"
	                                              "14 14 24 0 0 10");
	ck_assert_int_eq(ts_ledger_load(&l, path, &rep), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(rep.bad, 9);
	ck_assert_int_eq(l.v[0].tid, 10);
	ts_ledger_free(&l);

	/* not a ledger at all: refused, and said why */
	tree_write(TS_LEDGER_MANUAL, "{\"format\":\"turboschedd-registry\"}\n");
	ck_assert_int_eq(ts_ledger_load(&l, path, &rep), -EINVAL);
	ck_assert_ptr_nonnull(strstr(rep.why, "not a turbosched ledger"));
	ck_assert_uint_eq(l.n, 0);
	ts_ledger_free(&l);
}
END_TEST

START_TEST(prune_gone_and_reused)
{
	struct ts_ledger l = {0};
	struct ts_ledger_entry e = {.tid = 300, .tgid = 300, .starttime = 9, .prev = {0, 1024}};

	tree_add_task(300, 300, "alive", 9, 0, 0);
	tree_add_task(301, 301, "reused", 99, 0, 0);
	ts_ledger_put(&l, &e);
	e.tid = 301; /* recorded start time 9, the task now there started at 99 */
	ts_ledger_put(&l, &e);
	e.tid = 302; /* gone */
	ts_ledger_put(&l, &e);
	ck_assert_uint_eq(ts_ledger_prune(&l), 2);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_int_eq(l.v[0].tid, 300);
	ts_ledger_free(&l);
}
END_TEST

START_TEST(lock_is_exclusive)
{
	char lock[512];

	snprintf(lock, sizeof(lock), "%s%s", ts_root_get(), TS_LEDGER_MANUAL_LOCK);
	int fd = ts_ledger_lock(lock);
	ck_assert_int_ge(fd, 0);
	int other = open(lock, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(other, 0);
	ck_assert_int_eq(flock(other, LOCK_EX | LOCK_NB), -1);
	close(fd);
	ck_assert_int_eq(flock(other, LOCK_EX | LOCK_NB), 0);
	close(other);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ledger");
	TCase *tc = tcase_create("ledger");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, roundtrip_and_identity);
	tcase_add_test(tc, corrupt_lines_skipped);
	tcase_add_test(tc, prune_gone_and_reused);
	tcase_add_test(tc, lock_is_exclusive);
	suite_add_tcase(s, tc);
	return run_suite(s);
}

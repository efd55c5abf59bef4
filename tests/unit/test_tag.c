/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sched_attr encoding and the tag/untag walk, through the fake syscall layer on a temporary tree.
 */
#include <check.h>
#include <string.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "helpers.h"
#include "sched_attr.h"
#include "tag.h"
#include "util.h"

static void setup(void)
{
	tree_new();
	fake_install();
}

static void teardown(void)
{
	ts_sched_ops_set(NULL);
	tree_free();
}

START_TEST(encode_keep_flags)
{
	struct sched_attr a;

	ts_sched_attr_encode(&a, false, 0, 0);
	ck_assert_uint_eq(a.size, 56);
	ck_assert_uint_eq(sizeof(a), 56);
	ck_assert_uint_eq(a.sched_flags, 0x08 | 0x10 | 0x40);
	ck_assert_uint_eq(a.sched_util_max, 0);
	ts_sched_attr_encode(&a, true, 0, 0);
	ck_assert_uint_eq(a.sched_flags, 0x08 | 0x10 | 0x20 | 0x40);
	/* policy fields stay zero: the KEEP flags make the kernel ignore them */
	ck_assert_uint_eq(a.sched_policy, 0);
	ck_assert_int_eq(a.sched_nice, 0);
}
END_TEST

START_TEST(clamp_get_without_uclamp)
{
	struct ts_clamp c;

	fake_add(10, SCHED_OTHER, 0, 0);
	fake_add(12, SCHED_OTHER, 0, 1);
	fake_add(13, SCHED_OTHER, 0, 204);
	ck_assert_int_eq(ts_clamp_get(10, &c), 0);
	ck_assert(ts_clamp_is_jitter(&c));
	/* only the value 0 is jitter, not the whole lowest uclamp bucket */
	ck_assert_int_eq(ts_clamp_get(12, &c), 0);
	ck_assert(!ts_clamp_is_jitter(&c));
	ck_assert_int_eq(ts_clamp_get(13, &c), 0);
	ck_assert(!ts_clamp_is_jitter(&c));
	/* A kernel without uclamp reports util_max 0 for everyone: that is not jitter. */
	tree_remove("proc/sys/kernel/sched_util_clamp_max");
	ck_assert_int_eq(ts_clamp_get(10, &c), 0);
	ck_assert(!c.valid);
	ck_assert(!ts_clamp_is_jitter(&c));
	ck_assert_uint_eq(c.util_max, 1024);
	ck_assert_int_eq(ts_clamp_get(11, &c), -ESRCH);
}
END_TEST

START_TEST(strerror_messages)
{
	ck_assert_str_eq(ts_sched_strerror(-EOPNOTSUPP),
	                 "this kernel has no utilization clamping (CONFIG_UCLAMP_TASK)");
	ck_assert_str_eq(ts_sched_strerror(ESRCH), "no such process");
	ck_assert_ptr_nonnull(strstr(ts_sched_strerror(EPERM), "CAP_SYS_NICE"));
}
END_TEST

START_TEST(tag_process_all_threads_and_untag_restores)
{
	struct ts_tag_report rep = {0}, tagged = {0};
	struct ts_tag_walk w;

	tree_add_task(100, 100, "main", 1000, 0, 0);
	tree_add_task(100, 101, "worker", 1001, 1, 0);
	tree_add_task(100, 102, "rt worker", 1002, 2, 0);
	fake_add(100, SCHED_OTHER, 0, 1024);
	fake_add(101, SCHED_OTHER, 0, 512);
	fake_add(102, SCHED_FIFO, 1024, 1024);

	ck_assert_int_eq(ts_tag_pid(TS_OP_TAG, 100, false, &rep), 0);
	ck_assert_uint_eq(rep.n, 3);
	ck_assert_uint_eq(ts_tag_report_count(&rep, TS_TAG_APPLIED), 3);
	ck_assert_uint_eq(fake_get(100)->util_max, 0);
	ck_assert_uint_eq(fake_get(101)->util_max, 0);
	/* RT: util_min had to be lowered, and the result says so */
	ck_assert_uint_eq(fake_get(102)->util_max, 0);
	ck_assert_uint_eq(fake_get(102)->util_min, 0);
	ck_assert(rep.v[2].min_written);
	ck_assert(!rep.v[0].min_written);
	ck_assert_str_eq(rep.v[2].comm, "rt worker");
	/* the policy is never changed */
	ck_assert_uint_eq(fake_get(102)->policy, SCHED_FIFO);
	tagged = rep; /* the caller's record of what the tags replaced */
	memset(&rep, 0, sizeof(rep));

	/* tagging again changes nothing */
	ck_assert_int_eq(ts_tag_pid(TS_OP_TAG, 100, false, &rep), 0);
	ck_assert_uint_eq(ts_tag_report_count(&rep, TS_TAG_UNCHANGED), 3);

	/* untag restores what the caller hands over for each thread */
	ts_tag_report_free(&rep);
	ck_assert_int_eq(ts_tag_walk_start(&w, 100, false, &rep), 0);
	ck_assert_int_eq(ts_tag_walk_next(&w, &rep), 3);
	for (size_t i = 0; i < rep.n; i++) {
		const struct ts_tag_result *t = &tagged.v[i];
		ck_assert_int_eq(rep.v[i].tid, t->tid);
		rep.v[i].restore_given = true;
		rep.v[i].restore =
		    (struct ts_prev){t->before.util_min, t->before.util_max, t->min_written};
		ts_tag_apply(TS_OP_UNTAG, &rep.v[i]);
	}
	ck_assert_int_eq(ts_tag_walk_next(&w, &rep), 0); /* no thread appeared meanwhile */
	ck_assert_uint_eq(ts_tag_report_count(&rep, TS_TAG_APPLIED), 3);
	ck_assert_uint_eq(fake_get(101)->util_max, 512); /* the recorded value, not the default */
	ck_assert_uint_eq(fake_get(102)->util_min, 1024);
	ck_assert_uint_eq(fake_get(102)->util_max, 1024);
	ck_assert(rep.v[1].restore_given);
	ts_tag_report_free(&rep);
	ts_tag_report_free(&tagged);
}
END_TEST

START_TEST(untag_without_record_resets_defaults)
{
	struct ts_tag_report rep = {0};

	tree_add_task(200, 200, "ext", 5, 0, 0);
	fake_add(200, SCHED_RR, 0, 0); /* tagged by someone else, e.g. uclampset -M 0 */
	ck_assert_int_eq(ts_tag_pid(TS_OP_UNTAG, 200, false, &rep), 0);
	ck_assert_int_eq(rep.v[0].outcome, TS_TAG_APPLIED);
	ck_assert(!rep.v[0].restore_given);
	ck_assert_uint_eq(fake.last.sched_util_max, TS_UCLAMP_RESET);
	ck_assert_uint_eq(fake.last.sched_util_min, TS_UCLAMP_RESET);
	ck_assert_uint_eq(fake_get(200)->util_max, 1024);
	ck_assert_uint_eq(fake_get(200)->util_min, 1024); /* RT default */
	ts_tag_report_free(&rep);
}
END_TEST

START_TEST(untag_restores_handed_clamp)
{
	struct ts_prev daemon_record = {.util_min = 0, .util_max = 300};
	struct ts_tag_result res;

	tree_add_task(210, 210, "d", 6, 0, 0);
	fake_add(210, SCHED_OTHER, 0, 0);
	ck_assert_int_eq(ts_tag_thread(TS_OP_UNTAG, 210, 210, 6, &daemon_record, &res),
	                 TS_TAG_APPLIED);
	ck_assert(res.restore_given);
	ck_assert_uint_eq(fake_get(210)->util_max, 300);
}
END_TEST

/* Thread 301 exits when the walk reaches it. */
static void vanish_301(pid_t tid)
{
	if (tid == 301) {
		tree_remove_task(300, 301);
		fake_get(301)->exists = false;
	}
}

START_TEST(thread_vanishes_mid_walk)
{
	struct ts_tag_report rep = {0};

	tree_add_task(300, 300, "a", 1, 0, 0);
	tree_add_task(300, 301, "b", 2, 0, 0);
	tree_add_task(300, 302, "c", 3, 0, 0);
	fake_add(300, SCHED_OTHER, 0, 1024);
	fake_add(301, SCHED_OTHER, 0, 1024);
	fake_add(302, SCHED_OTHER, 0, 1024);
	fake.before_get = vanish_301;
	ck_assert_int_eq(ts_tag_pid(TS_OP_TAG, 300, false, &rep), 0);
	ck_assert_uint_eq(rep.n, 3);
	ck_assert_int_eq(rep.v[1].outcome, TS_TAG_VANISHED);
	ck_assert_uint_eq(ts_tag_report_count(&rep, TS_TAG_APPLIED), 2);
	ck_assert_uint_eq(ts_tag_report_count(&rep, TS_TAG_FAILED), 0);
	ck_assert_uint_eq(fake_get(302)->util_max, 0);
	ts_tag_report_free(&rep);
}
END_TEST

/* After the write, TID 401 belongs to a new task (another start time). */
static void reuse_401(pid_t tid)
{
	if (tid == 401 && fake_get(401)->util_max == 0)
		tree_set_starttime(400, 401, 99999);
}

START_TEST(pid_reuse_is_detected_and_reverted)
{
	struct ts_tag_report rep = {0};

	tree_add_task(400, 400, "a", 1, 0, 0);
	tree_add_task(400, 401, "b", 2, 0, 0);
	fake_add(400, SCHED_OTHER, 0, 1024);
	fake_add(401, SCHED_OTHER, 0, 1024);
	fake.after_set = reuse_401;
	ck_assert_int_eq(ts_tag_pid(TS_OP_TAG, 400, false, &rep), 0);
	ck_assert_int_eq(rep.v[1].outcome, TS_TAG_REUSED);
	/* the stranger is not left tagged, and only the real tag is one a caller would record */
	ck_assert_uint_eq(fake_get(401)->util_max, 1024);
	ck_assert_int_eq(rep.v[0].outcome, TS_TAG_APPLIED);
	ts_tag_report_free(&rep);
}
END_TEST

START_TEST(stale_identity_before_write)
{
	struct ts_tag_result res;

	/* the caller saw start time 7, the TID now holds a task started at 8: not touched */
	tree_add_task(500, 500, "new", 8, 0, 0);
	fake_add(500, SCHED_OTHER, 0, 1024);
	ck_assert_int_eq(ts_tag_thread(TS_OP_TAG, 500, 500, 7, NULL, &res), TS_TAG_VANISHED);
	ck_assert_int_eq(fake.nset, 0);
	ck_assert_uint_eq(fake_get(500)->util_max, 1024);
}
END_TEST

START_TEST(errors_per_thread)
{
	struct ts_tag_report rep = {0};

	tree_add_task(600, 600, "a", 1, 0, 0);
	tree_add_task(600, 601, "b", 2, 0, 0);
	fake_add(600, SCHED_OTHER, 0, 1024);
	fake_add(601, SCHED_OTHER, 0, 1024)->set_errno = EPERM;
	/* --thread: only 601, which fails with EPERM */
	ck_assert_int_eq(ts_tag_pid(TS_OP_TAG, 601, true, &rep), 0);
	ck_assert_uint_eq(rep.n, 1);
	ck_assert_int_eq(rep.v[0].tid, 601);
	ck_assert_int_eq(rep.v[0].tgid, 600);
	ck_assert_int_eq(rep.v[0].outcome, TS_TAG_FAILED);
	ck_assert_int_eq(rep.v[0].err, EPERM);
	ck_assert_uint_eq(fake_get(600)->util_max, 1024);
	fake_get(601)->set_errno = EOPNOTSUPP;
	ts_tag_report_free(&rep);
	ck_assert_int_eq(ts_tag_pid(TS_OP_TAG, 601, true, &rep), 0);
	ck_assert_int_eq(rep.v[0].err, EOPNOTSUPP);
	ts_tag_report_free(&rep);
	ck_assert_int_eq(ts_tag_pid(TS_OP_TAG, 999, true, &rep), -ESRCH);
	ck_assert_uint_eq(rep.n, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tag");
	TCase *tc = tcase_create("tag");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, encode_keep_flags);
	tcase_add_test(tc, clamp_get_without_uclamp);
	tcase_add_test(tc, strerror_messages);
	tcase_add_test(tc, tag_process_all_threads_and_untag_restores);
	tcase_add_test(tc, untag_without_record_resets_defaults);
	tcase_add_test(tc, untag_restores_handed_clamp);
	tcase_add_test(tc, thread_vanishes_mid_walk);
	tcase_add_test(tc, pid_reuse_is_detected_and_reverted);
	tcase_add_test(tc, stale_identity_before_write);
	tcase_add_test(tc, errors_per_thread);
	suite_add_tcase(s, tc);
	return run_suite(s);
}

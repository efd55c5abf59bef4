/* SPDX-License-Identifier: GPL-2.0-or-later */
/* /proc parsing: stat with odd comms, cgroup v1/v2, sched jitter line, missing files. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "helpers.h"
#include "task.h"
#include "util.h"

START_TEST(stat_comm_with_spaces_and_parens)
{
	struct ts_stat st;
	const char *line =
	    "4242 (a) b) (c d) R 7 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 3 0 98765 0 0 0 0 0 "
	    "0 0 0 0 0 0 0 0 0 0 0 11 0 2 0\n";

	ck_assert_int_eq(ts_stat_parse(line, &st), 0);
	ck_assert_str_eq(st.comm, "a) b) (c d");
	ck_assert_int_eq(st.state, 'R');
	ck_assert_int_eq(st.ppid, 7);
	ck_assert_uint_eq(st.starttime, 98765);
	ck_assert_int_eq(st.cpu, 11);
	ck_assert_uint_eq(st.policy, 2);
}
END_TEST

START_TEST(stat_malformed)
{
	struct ts_stat st;

	ck_assert_int_eq(ts_stat_parse("4242 no parens S 1 2 3", &st), -EINVAL);
	ck_assert_int_eq(ts_stat_parse("4242 (short) S 1 2 3\n", &st), -EINVAL);
	ck_assert_int_eq(
	    ts_stat_parse("4242 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 zz 0\n", &st), -EINVAL);
}
END_TEST

START_TEST(cgroup_v2_wins)
{
	char buf[128];

	ck_assert_int_eq(
	    ts_cgroup_parse("5:cpu:/v1path\n0::/system.slice/a:b.service\n", buf, sizeof(buf)), 0);
	/* The path may itself contain ':' */
	ck_assert_str_eq(buf, "/system.slice/a:b.service");
}
END_TEST

START_TEST(cgroup_v1_cpu_then_systemd)
{
	char buf[128];

	ck_assert_int_eq(
	    ts_cgroup_parse("3:memory:/m\n4:cpuacct,cpu:/c\n1:name=systemd:/s\n", buf, sizeof(buf)),
	    0);
	ck_assert_str_eq(buf, "/c");
	/* "cpuset" is not "cpu" */
	ck_assert_int_eq(ts_cgroup_parse("2:cpuset:/x\n1:name=systemd:/s", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/s");
	ck_assert_int_eq(ts_cgroup_parse("2:cpuset:/x\n", buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(ts_cgroup_parse("0::/a/very/long/path\n", buf, 5), -ENAMETOOLONG);
}
END_TEST

START_TEST(sched_jitter_line)
{
	ck_assert_int_eq(ts_sched_jitter_parse("uclamp.max      :     0\n"
	                                       "jitter                                       :     "
	                                       "               1\n"),
	                 1);
	ck_assert_int_eq(ts_sched_jitter_parse("jitter : 0\n"), 0);
	/* "jitter_foo" and a missing line are not the jitter line */
	ck_assert_int_eq(ts_sched_jitter_parse("jitter_foo : 1\nuclamp.max : 0\n"), -1);
}
END_TEST

START_TEST(read_fixture_task)
{
	struct ts_task t;

	ts_root_set(fixture("proc-basic"));
	ck_assert_int_eq(ts_task_read(4242, 4242, &t), 0);
	ck_assert_str_eq(t.comm, "my) (weird) proc");
	ck_assert_uint_eq(t.starttime, 123456);
	ck_assert_int_eq(t.cpu, 5);
	ck_assert_int_eq(t.tgid, 4242);
	ck_assert_uint_eq(t.ruid, 1000);
	ck_assert_uint_eq(t.euid, 1001);
	ck_assert_str_eq(t.cgroup, "/user.slice/user-1000.slice/session-2.scope");
	ck_assert_int_eq(t.jitter, 1);
	ts_root_set("");
}
END_TEST

START_TEST(read_fixture_missing_files)
{
	struct ts_task t;

	ts_root_set(fixture("proc-basic"));
	/* only stat exists: defaults for the rest */
	ck_assert_int_eq(ts_task_read(4242, 4243, &t), 0);
	ck_assert_str_eq(t.comm, "worker 1");
	ck_assert_int_eq(t.tgid, 4242);
	ck_assert_uint_eq(t.euid, (uid_t)-1);
	ck_assert_str_eq(t.cgroup, "");
	ck_assert_int_eq(t.jitter, -1);
	ck_assert_uint_eq(t.policy, 1);
	/* v1-only cgroup file, and no jitter line (kernel without TurboSched) */
	ck_assert_int_eq(ts_task_read(5000, 5000, &t), 0);
	ck_assert_str_eq(t.cgroup, "/system.slice/legacy.service");
	ck_assert_int_eq(t.jitter, -1);
	/* no such task */
	ck_assert_int_eq(ts_task_read(4242, 9999, &t), -ESRCH);
	ck_assert_int_eq(ts_task_read(0, 31337, &t), -ESRCH);
	ts_root_set("");
}
END_TEST

/* Only the parts asked for are read; stat always, status also to look the tgid up. */
START_TEST(read_fixture_parts)
{
	struct ts_task t;

	ts_root_set(fixture("proc-basic"));
	ck_assert_int_eq(ts_task_read_parts(4242, 4242, 0, &t), 0);
	ck_assert_str_eq(t.comm, "my) (weird) proc");
	ck_assert_uint_eq(t.starttime, 123456);
	ck_assert_uint_eq(t.euid, (uid_t)-1);
	ck_assert_str_eq(t.cgroup, "");
	ck_assert_int_eq(t.jitter, -1);
	ck_assert_int_eq(ts_task_read_parts(4242, 4242, TS_TASK_CGROUP, &t), 0);
	ck_assert_str_eq(t.cgroup, "/user.slice/user-1000.slice/session-2.scope");
	ck_assert_uint_eq(t.euid, (uid_t)-1);
	ck_assert_int_eq(ts_task_read_parts(0, 4242, 0, &t), 0);
	ck_assert_int_eq(t.tgid, 4242);
	ck_assert_uint_eq(t.euid, 1001);
	ck_assert_str_eq(t.cgroup, "");
	ts_root_set("");
}
END_TEST

START_TEST(list_fixture)
{
	struct ts_pidlist l = {0};

	ts_root_set(fixture("proc-basic"));
	ck_assert_int_eq(ts_list_processes(&l), 0);
	/* "sys" and "stat" are not processes */
	ck_assert_uint_eq(l.n, 2);
	ck_assert_int_eq(l.v[0], 4242);
	ck_assert_int_eq(l.v[1], 5000);
	ck_assert_int_eq(ts_list_threads(4242, &l), 0);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_int_eq(l.v[1], 4243);
	ck_assert_int_eq(ts_list_threads(777, &l), -ESRCH);
	ts_pidlist_free(&l);
	ts_root_set("");
}
END_TEST

START_TEST(parse_pid)
{
	pid_t p;

	ck_assert_int_eq(ts_parse_pid("123", &p), 0);
	ck_assert_int_eq(p, 123);
	ck_assert_int_eq(ts_parse_pid("0", &p), -EINVAL);
	ck_assert_int_eq(ts_parse_pid("-5", &p), -EINVAL);
	ck_assert_int_eq(ts_parse_pid("+5", &p), -EINVAL);
	ck_assert_int_eq(ts_parse_pid("12x", &p), -EINVAL);
	ck_assert_int_eq(ts_parse_pid("", &p), -EINVAL);
	ck_assert_int_eq(ts_parse_pid("99999999999", &p), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("task");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, stat_comm_with_spaces_and_parens);
	tcase_add_test(tc, stat_malformed);
	tcase_add_test(tc, cgroup_v2_wins);
	tcase_add_test(tc, cgroup_v1_cpu_then_systemd);
	tcase_add_test(tc, sched_jitter_line);
	tcase_add_test(tc, read_fixture_task);
	tcase_add_test(tc, read_fixture_missing_files);
	tcase_add_test(tc, read_fixture_parts);
	tcase_add_test(tc, list_fixture);
	tcase_add_test(tc, parse_pid);
	suite_add_tcase(s, tc);
	return run_suite(s);
}

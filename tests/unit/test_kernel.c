/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Kernel feature probing, debugfs counters, /proc/stat busy sampling. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "helpers.h"
#include "kernel.h"
#include "util.h"

START_TEST(counters_generic)
{
	struct ts_counter *c;
	size_t n;

	ck_assert_int_eq(ts_counters_parse("packed 5\n\nkey 1\nnew_thing -3\n", &c, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(c[0].name, "packed");
	ck_assert_int_eq(c[0].value, 5);
	ck_assert_str_eq(c[2].name, "new_thing");
	ck_assert_int_eq(c[2].value, -3);
	free(c);
	ck_assert_int_eq(ts_counters_parse("packed\n", &c, &n), -EINVAL);
	ck_assert_int_eq(ts_counters_parse("packed 1 2\n", &c, &n), -EINVAL);
	ck_assert_int_eq(ts_counters_parse("packed x\n", &c, &n), -EINVAL);
}
END_TEST

START_TEST(probe_fixture)
{
	struct ts_kernel_info k;
	const struct ts_counter *c;

	ts_root_set(fixture("proc-basic"));
	ts_kernel_probe(&k);
	ck_assert(k.uclamp);
	ck_assert(k.turbosched);
	ck_assert_int_eq(k.pack_enabled, 0);
	ck_assert_int_eq(k.counters_state, TS_COUNTERS_OK);
	ck_assert_uint_eq(k.ncounters, 8);
	c = ts_counter_find(&k, "lb_refused");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->value, 42);
	c = ts_counter_find(&k, "future_counter");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->value, 9);
	ck_assert_ptr_null(ts_counter_find(&k, "nope"));
	ts_kernel_info_free(&k);
	ts_root_set("");
}
END_TEST

START_TEST(probe_plain_kernel)
{
	struct ts_kernel_info k;

	/* no sysctls, no debugfs at all */
	ts_root_set(fixture("topo-2node"));
	ts_kernel_probe(&k);
	ck_assert(!k.uclamp);
	ck_assert(!k.turbosched);
	ck_assert_int_eq(k.pack_enabled, -1);
	ck_assert_int_eq(k.counters_state, TS_COUNTERS_NO_DEBUGFS);
	ts_kernel_info_free(&k);
	/* debugfs mounted, but no pack_jitter directory: no TurboSched */
	tree_new();
	tree_write("sys/kernel/debug/sched/features", "x\n");
	ts_kernel_probe(&k);
	ck_assert(k.uclamp);
	ck_assert_int_eq(k.counters_state, TS_COUNTERS_ABSENT);
	ts_kernel_info_free(&k);
	tree_free();
}
END_TEST

START_TEST(cpustat_busy)
{
	struct ts_cpu_times a[3], b[3];

	ck_assert_int_eq(ts_cpustat_parse("cpu  1 1 1 1\ncpu0 10 0 10 80 0 0 0 0 0 0\n"
	                                  "cpu2 0 0 0 100 0 0 0 0\nintr 5\n",
	                                  a, 3),
	                 0);
	ck_assert(a[0].valid);
	ck_assert(!a[1].valid);
	ck_assert_uint_eq(a[0].busy, 20);
	ck_assert_uint_eq(a[0].total, 100);
	ck_assert_int_eq(
	    ts_cpustat_parse("cpu0 85 0 5 90 10 0 0 0 0 0\ncpu2 0 0 0 200 0 0 0 0\n", b, 3), 0);
	/* cpu0: busy +70 of +90 ticks (iowait counts as idle) */
	ck_assert_int_eq(ts_cpu_busy_pct(&a[0], &b[0]), 78);
	ck_assert_int_eq(ts_cpu_busy_pct(&a[2], &b[2]), 0);
	ck_assert_int_eq(ts_cpu_busy_pct(&a[1], &b[1]), -1);
	/* no time passed */
	ck_assert_int_eq(ts_cpu_busy_pct(&a[0], &a[0]), -1);
	ck_assert_int_eq(ts_cpustat_parse("cpu0 1 2\n", a, 3), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kernel");
	TCase *tc = tcase_create("kernel");

	tcase_add_test(tc, counters_generic);
	tcase_add_test(tc, probe_fixture);
	tcase_add_test(tc, probe_plain_kernel);
	tcase_add_test(tc, cpustat_busy);
	suite_add_tcase(s, tc);
	return run_suite(s);
}

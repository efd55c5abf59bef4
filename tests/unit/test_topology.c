/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Topology mapping on a fixture sysfs: 2 nodes x 2 cores x 2 SMT threads, cpu7 offline. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "helpers.h"
#include "topology.h"
#include "util.h"

START_TEST(cpulist)
{
	int c[16];

	ck_assert_int_eq(ts_cpulist_parse("0-2,5,7-8\n", c, 16), 6);
	ck_assert_int_eq(c[0], 0);
	ck_assert_int_eq(c[2], 2);
	ck_assert_int_eq(c[3], 5);
	ck_assert_int_eq(c[5], 8);
	ck_assert_int_eq(ts_cpulist_parse("\n", c, 16), 0);
	ck_assert_int_eq(ts_cpulist_parse("3-1", c, 16), -EINVAL);
	ck_assert_int_eq(ts_cpulist_parse("1,,2", c, 16), -EINVAL);
	ck_assert_int_eq(ts_cpulist_parse("1-x", c, 16), -EINVAL);
	ck_assert_int_eq(ts_cpulist_parse("0-20", c, 16), -E2BIG);
	ck_assert_int_eq(ts_cpulist_parse("99999", c, 16), -EINVAL);
}
END_TEST

START_TEST(smt_pairs_two_nodes)
{
	struct ts_topology t;

	ts_root_set(fixture("topo-2node"));
	ck_assert_int_eq(ts_topology_load(&t), 0);
	ck_assert_uint_eq(t.ncpus, 8);
	ck_assert_int_eq(t.nnodes, 2);
	/* cores 0-1, 2-3, 4-5, and 6 alone (its sibling 7 is offline) */
	ck_assert_uint_eq(t.ncores, 4);
	ck_assert_uint_eq(t.cores[0].ncpus, 2);
	ck_assert_int_eq(t.cores[1].cpus[0], 2);
	ck_assert_int_eq(t.cores[1].cpus[1], 3);
	ck_assert_uint_eq(t.cores[3].ncpus, 1);
	ck_assert_int_eq(t.cores[3].cpus[0], 6);
	ck_assert_int_eq(ts_topology_core_of(&t, 1), 0);
	ck_assert_int_eq(ts_topology_core_of(&t, 5), 2);
	ck_assert_int_eq(ts_topology_core_of(&t, 7), -1);
	ck_assert_int_eq(ts_topology_core_of(&t, 8), -1);
	ck_assert_int_eq(ts_topology_core_of(&t, -1), -1);
	/* nodes, packages, core ids, LLC */
	ck_assert_int_eq(t.cores[0].node, 0);
	ck_assert_int_eq(t.cores[2].node, 1);
	ck_assert_int_eq(t.cores[2].package, 1);
	ck_assert_int_eq(t.cores[2].core_id, 0);
	ck_assert_int_eq(t.cores[3].core_id, 1);
	ck_assert_int_eq(t.cpus[3].llc, 0);
	ck_assert_int_eq(t.cpus[6].llc, 4);
	ck_assert(t.cpus[6].online);
	ck_assert(!t.cpus[7].online);
	ck_assert(t.cpus[7].present);
	ck_assert_int_eq(t.cpus[7].node, 1);
	ts_topology_free(&t);
	ts_root_set("");
}
END_TEST

START_TEST(no_sysfs)
{
	struct ts_topology t;

	ts_root_set(fixture("proc-basic"));
	ck_assert_int_eq(ts_topology_load(&t), -ENOENT);
	ck_assert_uint_eq(t.ncores, 0);
	ts_root_set("");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("topology");
	TCase *tc = tcase_create("sysfs");

	tcase_add_test(tc, cpulist);
	tcase_add_test(tc, smt_pairs_two_nodes);
	tcase_add_test(tc, no_sysfs);
	suite_add_tcase(s, tc);
	return run_suite(s);
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The matcher: fields, threads modes, exclusions, order, explanations. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "helpers.h"
#include "rules.h"
#include "task.h"

static struct ts_config *cfg;

static void setup(void)
{
	static const char text[] = "[rule janitor]\n"
	                           "comm = *-janitor, logrotate\n"
	                           "[rule iothreads]\n"
	                           "comm = io-*\n"
	                           "threads = matched\n"
	                           "[rule backup]\n"
	                           "user = 34, 35\n"
	                           "cgroup = /system.slice/*.service\n"
	                           "[rule also-janitor]\n"
	                           "comm = db-janitor\n"
	                           "[exclude keep-fast]\n"
	                           "comm = fast-janitor\n";
	struct ts_diag d;
	ck_assert_int_eq(ts_config_parse_buffer("r.conf", text, sizeof(text) - 1, NULL, &cfg, &d),
	                 0);
}

static void teardown(void)
{
	ts_config_free(cfg);
}

static struct ts_verdict match3(const char *comm, const char *cgroup, uid_t uid)
{
	struct ts_subject s = {comm, cgroup, uid};
	return ts_ruleset_match(&cfg->rules, &s, &s);
}

START_TEST(test_glob_check)
{
	ck_assert_ptr_null(ts_glob_check("abc*"));
	ck_assert_ptr_null(ts_glob_check("[]x]"));
	ck_assert_ptr_null(ts_glob_check("[!a-z]?"));
	ck_assert_ptr_null(ts_glob_check("[[:digit:]]*"));
	ck_assert_ptr_null(ts_glob_check("\\["));
	ck_assert_str_eq(ts_glob_check(""), "empty pattern");
	ck_assert_str_eq(ts_glob_check("a["), "unterminated '[' in pattern");
	ck_assert_str_eq(ts_glob_check("[]"), "unterminated '[' in pattern");
	ck_assert_str_eq(ts_glob_check("a\\"), "trailing '\\' in pattern");
}
END_TEST

START_TEST(test_comm_any_pattern)
{
	struct ts_verdict v = match3("logrotate", "/", 0);
	ck_assert_int_eq(v.kind, TS_VERDICT_TAG);
	ck_assert_str_eq(v.rule->name, "janitor");
	v = match3("x-janitor", "/", 0);
	ck_assert_str_eq(v.rule->name, "janitor");
	ck_assert_int_eq(match3("logrotated", "/", 0).kind, TS_VERDICT_NONE);
	ck_assert_int_eq(match3("bash", "/", 0).kind, TS_VERDICT_NONE);
}
END_TEST

START_TEST(test_all_fields_must_match)
{
	struct ts_verdict v = match3("tar", "/system.slice/backup.service", 34);
	ck_assert_int_eq(v.kind, TS_VERDICT_TAG);
	ck_assert_str_eq(v.rule->name, "backup");
	ck_assert_int_eq(match3("tar", "/system.slice/backup.service", 35).kind, TS_VERDICT_TAG);
	ck_assert_int_eq(match3("tar", "/system.slice/backup.service", 0).kind, TS_VERDICT_NONE);
	ck_assert_int_eq(match3("tar", "/user.slice/x.service", 34).kind, TS_VERDICT_NONE);
	/* FNM_PATHNAME: '*' does not cross '/'. */
	ck_assert_int_eq(match3("tar", "/system.slice/a/b.service", 34).kind, TS_VERDICT_NONE);
	/* Unknown cgroup never matches a cgroup field. */
	ck_assert_int_eq(match3("tar", NULL, 34).kind, TS_VERDICT_NONE);
}
END_TEST

START_TEST(test_exclusion_wins_and_order)
{
	struct ts_verdict v = match3("fast-janitor", "/", 0);
	ck_assert_int_eq(v.kind, TS_VERDICT_EXCLUDED);
	ck_assert_str_eq(v.rule->name, "keep-fast");
	/* db-janitor matches both janitor and also-janitor: the first in file order wins. */
	v = match3("db-janitor", "/", 0);
	ck_assert_str_eq(v.rule->name, "janitor");
}
END_TEST

START_TEST(test_threads_modes)
{
	struct ts_subject proc = {"qemu-system", "/", 0}, thr = {"io-worker", "/", 0};
	/* threads=matched looks at the thread itself. */
	struct ts_verdict v = ts_ruleset_match(&cfg->rules, &thr, &proc);
	ck_assert_int_eq(v.kind, TS_VERDICT_TAG);
	ck_assert_str_eq(v.rule->name, "iothreads");
	/* threads=all looks at the process: a janitor's worker thread with another name is tagged.
	 */
	struct ts_subject jproc = {"x-janitor", "/", 0}, jthr = {"worker", "/", 0};
	v = ts_ruleset_match(&cfg->rules, &jthr, &jproc);
	ck_assert_str_eq(v.rule->name, "janitor");
	/* ... but a thread named like a janitor inside another process is not. */
	v = ts_ruleset_match(&cfg->rules, &jproc, &proc);
	ck_assert_int_eq(v.kind, TS_VERDICT_NONE);
}
END_TEST

START_TEST(test_explain_results)
{
	struct ts_subject s = {"tar", "/system.slice/backup.service", 0};
	struct ts_rule_result res[8];
	ck_assert_uint_eq(cfg->rules.nrules, 5);
	struct ts_verdict v = ts_ruleset_explain(&cfg->rules, &s, &s, res);
	ck_assert_int_eq(v.kind, TS_VERDICT_NONE);
	ck_assert_ptr_null(v.rule);
	const struct ts_rule_result *b = &res[2];
	ck_assert_str_eq(b->rule->name, "backup");
	ck_assert(!b->matched);
	ck_assert(!b->field[TS_FIELD_COMM].given);
	ck_assert(b->field[TS_FIELD_CGROUP].given);
	ck_assert(b->field[TS_FIELD_CGROUP].matched);
	ck_assert_str_eq(b->field[TS_FIELD_CGROUP].pattern, "/system.slice/*.service");
	ck_assert(b->field[TS_FIELD_USER].given);
	ck_assert(!b->field[TS_FIELD_USER].matched);
	ck_assert_ptr_null(b->field[TS_FIELD_USER].pattern);
	/* With an exclusion, explain still reports the rule that would have matched. */
	struct ts_subject f = {"fast-janitor", "/", 0};
	v = ts_ruleset_explain(&cfg->rules, &f, &f, res);
	ck_assert_int_eq(v.kind, TS_VERDICT_EXCLUDED);
	ck_assert(res[0].matched);
	ck_assert(res[4].matched);
	ck_assert_str_eq(res[0].field[TS_FIELD_COMM].pattern, "*-janitor");
}
END_TEST

START_TEST(test_subject_from_task)
{
	struct ts_task t;
	memset(&t, 0, sizeof(t));
	strcpy(t.comm, "logrotate");
	t.euid = 34;
	t.ruid = 0;
	struct ts_subject s;
	ts_subject_from_task(&t, &s);
	ck_assert_str_eq(s.comm, "logrotate");
	ck_assert_ptr_null(s.cgroup);
	ck_assert_uint_eq(s.uid, 34);
	strcpy(t.cgroup, "/a");
	ts_subject_from_task(&t, &s);
	ck_assert_str_eq(s.cgroup, "/a");
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(ts_verdict_name(TS_VERDICT_EXCLUDED), "excluded");
	ck_assert_str_eq(ts_verdict_name(TS_VERDICT_TAG), "tag");
	ck_assert_str_eq(ts_rule_threads_name(TS_THREADS_MATCHED), "matched");
	ck_assert_str_eq(ts_rule_kind_name(TS_RULE_EXCLUDE), "exclude");
	ck_assert_str_eq(ts_rule_field_name(TS_FIELD_CGROUP), "cgroup");
}
END_TEST

START_TEST(test_unknown_attributes_fail_closed)
{
	static const char text[] = "[rule j]\ncomm = logrotate\n"
	                           "[rule by-cgroup]\ncgroup = /batch.slice/*\n"
	                           "[exclude crit]\ncomm = logrotate\ncgroup = /critical.slice/*\n"
	                           "[exclude root]\ncomm = logrotate\nuser = 0\n";
	struct ts_config *c;
	struct ts_diag d;
	ck_assert_int_eq(ts_config_parse_buffer("u.conf", text, sizeof(text) - 1, NULL, &c, &d), 0);
	struct ts_subject known = {"logrotate", "/batch.slice/x", 1000};
	ck_assert_int_eq(ts_ruleset_match(&c->rules, &known, &known).kind, TS_VERDICT_TAG);
	/* Cgroup unreadable (or longer than any real one): the exclusion cannot be ruled out. */
	struct ts_subject nocg = {"logrotate", NULL, 1000};
	struct ts_verdict v = ts_ruleset_match(&c->rules, &nocg, &nocg);
	ck_assert_int_eq(v.kind, TS_VERDICT_EXCLUDED);
	ck_assert_str_eq(v.rule->name, "crit");
	/* ... while a rule's cgroup key never matches an unknown cgroup. */
	struct ts_subject other = {"bash", NULL, 1000};
	ck_assert_int_eq(ts_ruleset_match(&c->rules, &other, &other).kind, TS_VERDICT_NONE);
	/* Owner unreadable: the same. */
	struct ts_subject nouid = {"logrotate", "/batch.slice/x", (uid_t)-1};
	v = ts_ruleset_match(&c->rules, &nouid, &nouid);
	ck_assert_int_eq(v.kind, TS_VERDICT_EXCLUDED);
	ck_assert_str_eq(v.rule->name, "root");
	ts_config_free(c);
}
END_TEST

/* What the daemon reads per event follows the fields the rules (exclusions too) use. */
START_TEST(test_parts_follow_the_fields)
{
	static const char comm_only[] = "[rule j]\ncomm = logrotate\n";
	static const char excl_cgroup[] = "[rule j]\ncomm = logrotate\n"
	                                  "[exclude crit]\ncgroup = /critical.slice/*\n";
	struct ts_config *c;
	struct ts_diag d;

	ck_assert_uint_eq(ts_ruleset_parts(&cfg->rules), TS_TASK_STATUS | TS_TASK_CGROUP);
	ck_assert_int_eq(
	    ts_config_parse_buffer("p.conf", comm_only, sizeof(comm_only) - 1, NULL, &c, &d), 0);
	ck_assert_uint_eq(ts_ruleset_parts(&c->rules), 0);
	ts_config_free(c);
	ck_assert_int_eq(
	    ts_config_parse_buffer("p.conf", excl_cgroup, sizeof(excl_cgroup) - 1, NULL, &c, &d),
	    0);
	ck_assert_uint_eq(ts_ruleset_parts(&c->rules), TS_TASK_CGROUP);
	ts_config_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("rules");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_glob_check);
	tcase_add_test(tc, test_comm_any_pattern);
	tcase_add_test(tc, test_all_fields_must_match);
	tcase_add_test(tc, test_exclusion_wins_and_order);
	tcase_add_test(tc, test_threads_modes);
	tcase_add_test(tc, test_explain_results);
	tcase_add_test(tc, test_subject_from_task);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_unknown_attributes_fail_closed);
	tcase_add_test(tc, test_parts_follow_the_fields);
	suite_add_tcase(s, tc);
	return run_suite(s);
}

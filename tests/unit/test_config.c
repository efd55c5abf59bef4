/* SPDX-License-Identifier: GPL-2.0-or-later */
/* turboschedd.conf parsing: the good cases and every kind of bad input, with exact messages. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "helpers.h"

static int fake_lookup(const char *name, uid_t *uid)
{
	if (strcmp(name, "backup") == 0)
		return *uid = 34, 0;
	if (strcmp(name, "alice") == 0)
		return *uid = 1000, 0;
	return -ENOENT;
}

static struct ts_config *parse_ok(const char *text)
{
	struct ts_config *c = NULL;
	struct ts_diag d;
	int r = ts_config_parse_buffer("t.conf", text, strlen(text), fake_lookup, &c, &d);
	if (r != 0) {
		char *j = ts_diag_join(&d);
		ck_abort_msg("unexpected errors: %s", j);
	}
	ck_assert_ptr_nonnull(c);
	return c;
}

/* Parses text that must fail; returns all messages joined (caller frees). */
static char *parse_bad(const char *text)
{
	struct ts_config *c = NULL;
	struct ts_diag d;
	int r = ts_config_parse_buffer("t.conf", text, strlen(text), fake_lookup, &c, &d);
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_ptr_null(c);
	char *j = ts_diag_join(&d);
	ts_diag_clear(&d);
	return j;
}

#define ck_assert_bad(text, msg)                                                                   \
	do {                                                                                       \
		char *m_ = parse_bad(text);                                                        \
		ck_assert_str_eq(m_, msg);                                                         \
		free(m_);                                                                          \
	} while (0)

START_TEST(test_full_example)
{
	struct ts_config *c = parse_ok("# comment\n"
	                               "[daemon]\n"
	                               "recheck_interval = 2m   # inline comment\n"
	                               "restore_on_stop = no\n"
	                               "log_level = debug\n"
	                               "\n"
	                               "[rule housekeeping]\n"
	                               "comm   = logrotate, *-janitor\n"
	                               "cgroup = /system.slice/housekeeping.slice/*\n"
	                               "user   = backup, 998\n"
	                               "threads = matched\n"
	                               "; another comment\n"
	                               "[exclude sshd]\n"
	                               "  comm = sshd\n");
	ck_assert_uint_eq(c->daemon.recheck_interval_ms, 120000);
	ck_assert(!c->daemon.restore_on_stop);
	ck_assert_int_eq(c->daemon.log_level, LOG_DEBUG);
	ck_assert_uint_eq(c->rules.nrules, 2);
	const struct ts_rule *r = &c->rules.rules[0];
	ck_assert_str_eq(r->name, "housekeeping");
	ck_assert_int_eq(r->kind, TS_RULE_TAG);
	ck_assert_int_eq(r->threads, TS_THREADS_MATCHED);
	ck_assert_uint_eq(r->ncomm, 2);
	ck_assert_str_eq(r->comm[0], "logrotate");
	ck_assert_str_eq(r->comm[1], "*-janitor");
	ck_assert_str_eq(r->cgroup[0], "/system.slice/housekeeping.slice/*");
	ck_assert_uint_eq(r->nuser, 2);
	ck_assert_uint_eq(r->uids[0], 34);
	ck_assert_uint_eq(r->uids[1], 998);
	ck_assert_str_eq(r->user[0], "backup");
	ck_assert_str_eq(r->file, "t.conf");
	ck_assert_int_eq(r->line, 7);
	r = &c->rules.rules[1];
	ck_assert_str_eq(r->name, "sshd");
	ck_assert_int_eq(r->kind, TS_RULE_EXCLUDE);
	ck_assert_int_eq(r->threads, TS_THREADS_ALL);
	ck_assert_int_eq(r->line, 13);
	ck_assert_uint_eq(ts_config_count(c, TS_RULE_TAG), 1);
	ck_assert_uint_eq(ts_config_count(c, TS_RULE_EXCLUDE), 1);
	ts_config_free(c);
}
END_TEST

START_TEST(test_defaults)
{
	struct ts_config *c = parse_ok("");
	ck_assert_uint_eq(c->daemon.recheck_interval_ms, 30000);
	ck_assert(c->daemon.restore_on_stop);
	ck_assert_int_eq(c->daemon.log_level, LOG_INFO);
	ck_assert_uint_eq(c->rules.nrules, 0);
	ts_config_free(c);
}
END_TEST

START_TEST(test_durations)
{
	unsigned int ms;
	ck_assert_int_eq(ts_duration_parse("30", &ms), 0);
	ck_assert_uint_eq(ms, 30000);
	ck_assert_int_eq(ts_duration_parse("500ms", &ms), 0);
	ck_assert_uint_eq(ms, 500);
	ck_assert_int_eq(ts_duration_parse("1h", &ms), 0);
	ck_assert_uint_eq(ms, 3600000);
	ck_assert_int_eq(ts_duration_parse("0", &ms), 0);
	ck_assert_uint_eq(ms, 0);
	ck_assert_int_eq(ts_duration_parse("25h", &ms), -EINVAL);
	ck_assert_int_eq(ts_duration_parse("-1s", &ms), -EINVAL);
	ck_assert_int_eq(ts_duration_parse("5x", &ms), -EINVAL);
	ck_assert_int_eq(ts_duration_parse("", &ms), -EINVAL);
	ck_assert_int_eq(ts_duration_parse("99999999999999999999", &ms), -EINVAL);
}
END_TEST

START_TEST(test_unknown_section)
{
	ck_assert_bad("[rules foo]\ncomm = x\n",
	              "t.conf:1: unknown section [rules foo]; expected [daemon], [rule NAME] or "
	              "[exclude NAME]");
}
END_TEST

START_TEST(test_unknown_key)
{
	ck_assert_bad(
	    "[rule a]\ncomm = x\ncom = y\n",
	    "t.conf:3: [rule a] unknown key 'com'; expected comm, cgroup, user or threads");
	ck_assert_bad("[daemon]\nrecheck = 5s\n",
	              "t.conf:2: [daemon] unknown key 'recheck'; expected recheck_interval, "
	              "restore_on_stop or log_level");
}
END_TEST

START_TEST(test_bad_glob)
{
	ck_assert_bad("[rule a]\ncomm = ok, [abc\n",
	              "t.conf:2: [rule a] comm: bad pattern '[abc': unterminated '[' in pattern");
	ck_assert_bad("[rule a]\ncgroup = /x/\\\n",
	              "t.conf:2: [rule a] cgroup: bad pattern '/x/\\': trailing '\\' in pattern");
	ck_assert_bad("[rule a]\ncomm = [[:alpha]\n",
	              "t.conf:2: [rule a] comm: bad pattern '[[:alpha]': unterminated '[:' class "
	              "in pattern");
	ck_assert_bad("[rule a]\ncomm = a,,b\n", "t.conf:2: [rule a] comm: empty item in list");
	ck_assert_bad("[rule a]\ncomm =\n", "t.conf:2: [rule a] comm: empty value");
	ck_assert_bad(
	    "[rule a]\ncomm = averyveryverylongname\n",
	    "t.conf:2: [rule a] comm: 'averyveryverylongname' can never match: a comm has "
	    "at most 15 characters");
	ck_assert_bad("[rule a]\ncgroup = system.slice\n",
	              "t.conf:2: [rule a] cgroup: pattern 'system.slice' must start with '/' "
	              "(cgroup v2 path, e.g. /system.slice/*)");
}
END_TEST

START_TEST(test_unknown_user)
{
	ck_assert_bad("[rule a]\nuser = alice, nosuchuser\n",
	              "t.conf:2: [rule a] user: unknown user 'nosuchuser'");
	ck_assert_bad("[rule a]\nuser = -5\n", "t.conf:2: [rule a] user: unknown user '-5'");
}
END_TEST

START_TEST(test_duplicate_rule)
{
	ck_assert_bad("[rule a]\ncomm = x\n\n[exclude a]\ncomm = y\n",
	              "t.conf:4: [exclude a] duplicate rule name 'a' (first defined at t.conf:1)");
}
END_TEST

START_TEST(test_duplicate_key)
{
	ck_assert_bad("[rule a]\ncomm = x\nthreads = all\nthreads = matched\n",
	              "t.conf:4: [rule a] threads: given twice in this section (first at line 3)");
	ck_assert_bad(
	    "[daemon]\nlog_level = info\nlog_level = debug\n",
	    "t.conf:3: [daemon] log_level: given twice in this section (first at line 2)");
}
END_TEST

/* A list key given again extends its list (systemd's convention); each line is checked alone. */
START_TEST(test_repeated_list_key_extends)
{
	struct ts_config *c = parse_ok("[rule a]\ncomm = x, y\ncomm = z\nuser = alice\n"
	                               "user = 1234\ncgroup = /a/*\ncgroup = /b/*, /c/*\n");
	const struct ts_rule *r = &c->rules.rules[0];

	ck_assert_uint_eq(r->ncomm, 3);
	ck_assert_str_eq(r->comm[2], "z");
	ck_assert_uint_eq(r->ncgroup, 3);
	ck_assert_str_eq(r->cgroup[0], "/a/*");
	ck_assert_str_eq(r->cgroup[2], "/c/*");
	ck_assert_uint_eq(r->nuser, 2);
	ck_assert_uint_eq(r->uids[1], 1234);
	ts_config_free(c);
	ck_assert_bad("[rule a]\ncomm = x\ncomm = y,,z\n",
	              "t.conf:3: [rule a] comm: empty item in list");
}
END_TEST

START_TEST(test_section_errors)
{
	ck_assert_bad("[rule]\ncomm = x\n", "t.conf:1: [rule] needs a name: write [rule NAME]");
	ck_assert_bad(
	    "[rule a b]\ncomm = x\n",
	    "t.conf:1: [rule a b] invalid name 'a b': use letters, digits, '_', '-', '.', "
	    "'@'");
	ck_assert_bad("[daemon x]\n", "t.conf:1: [daemon x] takes no name: write [daemon]");
	ck_assert_bad("[rule a\ncomm = x\n",
	              "t.conf:1: syntax error: section header without closing ']'");
	ck_assert_bad("[rule a] x\n", "t.conf:1: syntax error: text after ']'");
	ck_assert_bad("[rule empty]\n\n[rule b]\ncomm = x\n",
	              "t.conf:1: [rule empty] has no comm, cgroup or user: it would match every "
	              "task");
	ck_assert_bad(
	    "comm = x\n",
	    "t.conf:1: key 'comm' outside any section; start with [daemon] or [rule NAME]");
}
END_TEST

START_TEST(test_syntax_error)
{
	ck_assert_bad("[rule a]\ncomm = x\njust some words\n",
	              "t.conf:3: [rule a] syntax error: expected 'key = value' or '[section]'");
	/* The last line without a newline is checked too. */
	ck_assert_bad("[rule a]\ncomm = x\nwords", "t.conf:3: [rule a] syntax error: expected 'key "
	                                           "= value' or '[section]'");
}
END_TEST

START_TEST(test_bad_values)
{
	ck_assert_bad("[daemon]\nrecheck_interval = soon\n",
	              "t.conf:2: [daemon] recheck_interval: invalid duration 'soon'; expected e.g. "
	              "30s, 500ms, 2m (at most 24h) or 0 to disable");
	ck_assert_bad(
	    "[daemon]\nrestore_on_stop = maybe\n",
	    "t.conf:2: [daemon] restore_on_stop: invalid value 'maybe'; expected yes or no");
	ck_assert_bad("[daemon]\nlog_level = loud\n",
	              "t.conf:2: [daemon] log_level: invalid value 'loud'; expected err, warning, "
	              "notice, info or debug");
	ck_assert_bad("[rule a]\ncomm = x\nthreads = some\n",
	              "t.conf:3: [rule a] threads: invalid value 'some'; expected all or matched");
}
END_TEST

START_TEST(test_long_line_and_nul)
{
	/* Seven cgroup globs, 253 characters: once "line too long" (inih's 200). */
	static const char seven[] =
	    "[rule a]\ncgroup = /system.slice/housekeeping-one.slice/*, "
	    "/system.slice/housekeeping-two.slice/*, /system.slice/logrotate.service, "
	    "/system.slice/man-db.service, /system.slice/apt-daily.service, "
	    "/system.slice/apt-daily-upgrade.service, /user.slice/*/janitor.scope\n";
	char buf[20000];
	struct ts_config *lc = parse_ok(seven);

	ck_assert_uint_eq(lc->rules.rules[0].ncgroup, 7);
	ts_config_free(lc);
	/* Any sane length: 1000 items of 15 characters. */
	int off = snprintf(buf, sizeof(buf), "[rule a]\ncomm = ");
	for (int i = 0; i < 1000; i++)
		off += snprintf(buf + off, sizeof(buf) - (size_t)off, "%s%014d", i ? "," : "", i);
	snprintf(buf + off, sizeof(buf) - (size_t)off, "\n");
	lc = parse_ok(buf);
	ck_assert_uint_eq(lc->rules.rules[0].ncomm, 1000);
	ts_config_free(lc);
	static const char nul[] = "[rule a]\ncomm = x\0y\n";
	struct ts_config *c = NULL;
	struct ts_diag d;
	ck_assert_int_eq(
	    ts_config_parse_buffer("t.conf", nul, sizeof(nul) - 1, fake_lookup, &c, &d), -EINVAL);
	ck_assert_str_eq(d.msgs[0], "t.conf:2: [rule a] syntax error: NUL byte in line");
	ts_diag_clear(&d);
}
END_TEST

START_TEST(test_short_inputs_and_bom)
{
	/* Found by the fuzzer: a one-byte file used to be compared with a 3-byte BOM. */
	ck_assert_bad("[", "t.conf:1: syntax error: section header without closing ']'");
	struct ts_config *c = parse_ok("\xEF\xBB\xBF[daemon]\nlog_level = err\n");
	ck_assert_int_eq(c->daemon.log_level, LOG_ERR);
	ts_config_free(c);
}
END_TEST

START_TEST(test_all_errors_collected)
{
	ck_assert_bad(
	    "[rule a]\ncom = x\ncomm = [\n[bogus]\n",
	    "t.conf:2: [rule a] unknown key 'com'; expected comm, cgroup, user or threads\n"
	    "t.conf:3: [rule a] comm: bad pattern '[': unterminated '[' in pattern\n"
	    "t.conf:4: unknown section [bogus]; expected [daemon], [rule NAME] or "
	    "[exclude NAME]");
	/* Past the limit, messages are counted, not kept. */
	char text[4096] = "[rule a]\n";
	for (int i = 0; i < 40; i++)
		strcat(text, "x\n");
	struct ts_config *c = NULL;
	struct ts_diag d;
	ck_assert_int_eq(ts_config_parse_buffer("t.conf", text, strlen(text), fake_lookup, &c, &d),
	                 -EINVAL);
	ck_assert_uint_eq(d.nmsgs, TS_CONFIG_MAX_ERRORS);
	ck_assert_uint_eq(d.total, 40);
	char *j = ts_diag_join(&d);
	ck_assert_ptr_nonnull(strstr(j, "\n... and 8 more"));
	free(j);
	ts_diag_clear(&d);
}
END_TEST

/* A temporary directory with files, for the drop-in tests. */
static char tmpdir[64];

static void write_file(const char *rel, const char *text, mode_t mode)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static void mk_tmp(void)
{
	strcpy(tmpdir, "/tmp/ts-config-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	char d[128];
	snprintf(d, sizeof(d), "%s/conf.d", tmpdir);
	ck_assert_int_eq(mkdir(d, 0755), 0);
}

static int load(struct ts_config **c, struct ts_diag *d)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/turboschedd.conf", tmpdir);
	struct ts_config_source src = {.path = path, .lookup = fake_lookup};
	return ts_config_load(&src, c, d);
}

START_TEST(test_dropins_lexical_order)
{
	mk_tmp();
	write_file("turboschedd.conf", "[daemon]\nrecheck_interval = 10s\n[rule main]\ncomm = m\n",
	           0644);
	write_file("conf.d/20-b.conf", "[rule b]\ncomm = b\n[daemon]\nrecheck_interval = 20s\n",
	           0644);
	write_file("conf.d/10-a.conf", "[rule a]\ncomm = a\n", 0644);
	write_file("conf.d/30-ignored.conf.disabled", "garbage\n", 0644);
	write_file("conf.d/.hidden.conf", "garbage\n", 0644);

	struct ts_config *c = NULL;
	struct ts_diag d;
	ck_assert_int_eq(load(&c, &d), 0);
	ck_assert_uint_eq(c->rules.nrules, 3);
	ck_assert_str_eq(c->rules.rules[0].name, "main");
	ck_assert_str_eq(c->rules.rules[1].name, "a");
	ck_assert_str_eq(c->rules.rules[2].name, "b");
	/* Later files override daemon settings. */
	ck_assert_uint_eq(c->daemon.recheck_interval_ms, 20000);
	ck_assert_uint_eq(c->nfiles, 3);
	ck_assert_ptr_nonnull(strstr(c->files[1], "conf.d/10-a.conf"));
	ts_config_free(c);
}
END_TEST

START_TEST(test_dropin_duplicate_and_unreadable)
{
	mk_tmp();
	write_file("turboschedd.conf", "[rule a]\ncomm = m\n", 0644);
	write_file("conf.d/10-dup.conf", "\n[rule a]\ncomm = b\n", 0644);
	struct ts_config *c = NULL;
	struct ts_diag d;
	ck_assert_int_eq(load(&c, &d), -EINVAL);
	char expect[512];
	snprintf(expect, sizeof(expect),
	         "%s/conf.d/10-dup.conf:2: [rule a] duplicate rule name 'a' (first defined at "
	         "%s/turboschedd.conf:1)",
	         tmpdir, tmpdir);
	ck_assert_str_eq(d.msgs[0], expect);
	ts_diag_clear(&d);

	/* Root reads everything; a directory named *.conf is unreadable for everyone. */
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/conf.d/10-dup.conf", tmpdir);
	unlink(dir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(load(&c, &d), -EINVAL);
	snprintf(expect, sizeof(expect), "%s: cannot read: a directory, expected a regular file",
	         dir);
	ck_assert_str_eq(d.msgs[0], expect);
	ts_diag_clear(&d);
}
END_TEST

/* The one message of a load that must fail, with "DIR/" standing for the temporary directory. */
static void assert_load_fails_with(const char *msg)
{
	struct ts_config *c = NULL;
	struct ts_diag d;
	char expect[1024];
	const char *at = strstr(msg, "DIR/");
	ck_assert_ptr_nonnull(at);
	snprintf(expect, sizeof(expect), "%.*s%s/%s", (int)(at - msg), msg, tmpdir, at + 4);
	ck_assert_int_eq(load(&c, &d), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_uint_eq(d.total, 1);
	ck_assert_str_eq(d.msgs[0], expect);
	ts_diag_clear(&d);
}

static void tmp_path(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", tmpdir, rel);
}

/* A fresh temporary directory and its main file, open for writing; its path in p. */
static FILE *new_main_file(char *p, size_t len)
{
	mk_tmp();
	tmp_path(p, len, "turboschedd.conf");
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	return f;
}

START_TEST(test_dropin_fifo_does_not_block)
{
	/* Opening a FIFO for reading waits for a writer: the load must not (check's timeout). */
	char p[256];
	mk_tmp();
	write_file("turboschedd.conf", "[rule a]\ncomm = a\n", 0644);
	tmp_path(p, sizeof(p), "conf.d/10-fifo.conf");
	ck_assert_int_eq(mkfifo(p, 0644), 0);
	assert_load_fails_with(
	    "DIR/conf.d/10-fifo.conf: cannot read: a FIFO, expected a regular file");
}
END_TEST

START_TEST(test_dropin_symlink_loop)
{
	char a[256], b[256];
	mk_tmp();
	write_file("turboschedd.conf", "[rule a]\ncomm = a\n", 0644);
	tmp_path(a, sizeof(a), "conf.d/10-a.conf");
	tmp_path(b, sizeof(b), "conf.d/10-b.conf.off");
	ck_assert_int_eq(symlink(b, a), 0);
	ck_assert_int_eq(symlink(a, b), 0);
	assert_load_fails_with(
	    "DIR/conf.d/10-a.conf: cannot read: Too many levels of symbolic links");
	/* A symlinked directory loop as conf.d itself: listed, not followed forever. */
	char cd[256];
	tmp_path(cd, sizeof(cd), "conf.d");
	ck_assert_int_eq(unlink(a), 0);
	ck_assert_int_eq(unlink(b), 0);
	ck_assert_int_eq(rmdir(cd), 0);
	ck_assert_int_eq(symlink(cd, cd), 0);
	assert_load_fails_with(
	    "DIR/conf.d: cannot read directory: Too many levels of symbolic links");
}
END_TEST

static bool has_msg(const struct ts_diag *d, const char *a, const char *b)
{
	for (size_t i = 0; i < d->nmsgs; i++)
		if (strstr(d->msgs[i], a) && strstr(d->msgs[i], b))
			return true;
	return false;
}

/*
 * Issue 19.4: a drop-in of mode 0666 owned by nobody in a 0777 conf.d/ with "comm = *" passed
 * and would have tagged every task. Files and directories others may write, or owned by another
 * user, are refused, each named with its owner, mode and the fix.
 */
START_TEST(test_insecure_files_refused)
{
	struct ts_config *c;
	struct ts_diag d;
	char p[256];
	mk_tmp();
	write_file("turboschedd.conf", "[rule a]\ncomm = m\n", 0644);
	write_file("conf.d/50-evil.conf", "[rule evil]\ncomm = *\n", 0666);
	snprintf(p, sizeof(p), "%s/conf.d", tmpdir);
	ck_assert_int_eq(chmod(p, 0777), 0);
	ck_assert_int_eq(load(&c, &d), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_msg(
	    has_msg(&d, "/conf.d: refused: this directory is writable by every user", "mode 0777"),
	    "%s", d.nmsgs ? d.msgs[0] : "no message");
	ck_assert(
	    has_msg(&d, "50-evil.conf: refused: this file is writable by every user", "mode 0666"));
	ck_assert(has_msg(&d, "fix: chown root:root", "chmod go-w"));
	ts_diag_clear(&d);
	/* The directory fixed, the file still 0666. */
	ck_assert_int_eq(chmod(p, 0755), 0);
	ck_assert_int_eq(load(&c, &d), -EINVAL);
	ck_assert_uint_eq(d.total, 1);
	ts_diag_clear(&d);
	/* Mode fixed; owned by another user (needs root to give it away). */
	snprintf(p, sizeof(p), "%s/conf.d/50-evil.conf", tmpdir);
	ck_assert_int_eq(chmod(p, 0644), 0);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(p, 65534, 65534), 0);
		ck_assert_int_eq(load(&c, &d), -EINVAL);
		ck_assert(
		    has_msg(&d, "refused: this file is owned by another user", "(uid 65534)"));
		ts_diag_clear(&d);
		ck_assert_int_eq(chown(p, 0, 0), 0);
	}
	/* The main file's directory counts too. */
	ck_assert_int_eq(chmod(tmpdir, 0777), 0);
	ck_assert_int_eq(load(&c, &d), -EINVAL);
	ck_assert(has_msg(&d, tmpdir, "refused: this directory is writable by every user"));
	ts_diag_clear(&d);
	/* Sticky like /tmp, or owned by us and 0755: fine. */
	ck_assert_int_eq(chmod(tmpdir, 01777), 0);
	ck_assert_int_eq(load(&c, &d), 0);
	ck_assert_uint_eq(ts_config_count(c, TS_RULE_TAG), 2);
	ts_config_free(c);
	/* Group-writable by a group that is not ours. */
	ck_assert_int_eq(chmod(tmpdir, 0700), 0);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(p, 0, 65534), 0);
		ck_assert_int_eq(chmod(p, 0664), 0);
		ck_assert_int_eq(load(&c, &d), -EINVAL);
		ck_assert(has_msg(&d, "this file is writable by its group", "group 65534"));
		ts_diag_clear(&d);
	}
}
END_TEST

START_TEST(test_huge_file_refused)
{
	/* 50 MB (sparse: no disk used). Refused before reading, with the size and the limit. */
	char p[256];
	FILE *f = new_main_file(p, sizeof(p));
	ck_assert_int_eq(ftruncate(fileno(f), 50l * 1024 * 1024), 0);
	fclose(f);
	assert_load_fails_with("DIR/turboschedd.conf: file too large (52428800 bytes, at most "
	                       "1048576): is this the right file?");
}
END_TEST

START_TEST(test_binary_file)
{
	/* 1 MiB of noise, NUL bytes included, just at the limit: read, refused, messages bounded.
	 */
	char p[256];
	FILE *f = new_main_file(p, sizeof(p));
	unsigned int x = 12345;
	for (unsigned int i = 0; i < TS_CONFIG_MAX_FILE; i++) {
		x = x * 1103515245u + 12345u;
		fputc((int)(x >> 16) & 0xff, f);
	}
	fclose(f);
	struct ts_config *c = NULL;
	struct ts_diag d;
	ck_assert_int_eq(load(&c, &d), -EINVAL);
	ck_assert_uint_eq(d.nmsgs, TS_CONFIG_MAX_ERRORS);
	ck_assert_uint_gt(d.total, TS_CONFIG_MAX_ERRORS);
	for (size_t i = 0; i < d.nmsgs; i++)
		ck_assert_msg(strncmp(d.msgs[i], p, strlen(p)) == 0 && d.msgs[i][strlen(p)] == ':',
		              "message without FILE:LINE: %s", d.msgs[i]);
	ts_diag_clear(&d);
}
END_TEST

/* Rules r0..r(n-1) named PREFIX-i, each line padded so the file takes many reads. */
static void write_rules(const char *rel, const char *prefix, int n)
{
	char p[256];
	tmp_path(p, sizeof(p), rel);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < n; i++)
		fprintf(f, "[rule %s-%d]\ncomm = %s%d # %0200d\n", prefix, i, prefix, i, 0);
	fclose(f);
}

START_TEST(test_replaced_mid_read)
{
	/*
	 * A child renames two complete files over the configuration, back and forth, as fast as it
	 * can, while we load it again and again: every load must be entirely one file or entirely
	 * the other, never a mix, a truncation or an error.
	 */
	enum { NA = 1500, NB = 1000, LOADS = 150 };
	char cur[256];
	mk_tmp();
	write_rules("turboschedd.conf", "old", NA);
	tmp_path(cur, sizeof(cur), "turboschedd.conf");
	int go[2];
	ck_assert_int_eq(pipe(go), 0);
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		close(go[1]);
		char tmp[300];
		snprintf(tmp, sizeof(tmp), "%s/next.conf", tmpdir);
		for (unsigned long i = 0;; i++) {
			/* Stop as soon as the parent closes its end. */
			struct timeval tv = {0, 0};
			fd_set rs;
			FD_ZERO(&rs);
			FD_SET(go[0], &rs);
			if (select(go[0] + 1, &rs, NULL, NULL, &tv) > 0)
				_exit(0);
			write_rules("next.conf", i % 2 ? "old" : "new", i % 2 ? NA : NB);
			if (rename(tmp, cur) < 0)
				_exit(1);
		}
	}
	close(go[0]);
	int olds = 0, news = 0;
	for (int i = 0; i < LOADS; i++) {
		struct ts_config *c = NULL;
		struct ts_diag d;
		struct ts_config_source src = {
		    .path = cur, .dropin_dir = "", .lookup = fake_lookup};
		int r = ts_config_load(&src, &c, &d);
		ck_assert_msg(r == 0, "load %d failed: %s", i, r ? d.msgs[0] : "");
		bool old = strncmp(c->rules.rules[0].name, "old-", 4) == 0;
		size_t n = old ? NA : NB;
		ck_assert_uint_eq(c->rules.nrules, n);
		for (size_t k = 0; k < n; k++) {
			char want[32];
			snprintf(want, sizeof(want), "%s-%zu", old ? "old" : "new", k);
			ck_assert_str_eq(c->rules.rules[k].name, want);
		}
		olds += old;
		news += !old;
		ts_config_free(c);
	}
	close(go[1]);
	int st;
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the renaming child failed");
	/* Both versions were seen, so the renames really raced with the loads. */
	ck_assert_int_gt(olds, 0);
	ck_assert_int_gt(news, 0);
}
END_TEST

START_TEST(test_missing_main_file)
{
	struct ts_config_source src = {.path = "/nonexistent/turboschedd.conf",
	                               .lookup = fake_lookup};
	struct ts_config *c = NULL;
	struct ts_diag d;
	ck_assert_int_eq(ts_config_load(&src, &c, &d), -EINVAL);
	ck_assert_uint_eq(d.total, 1);
	ck_assert_str_eq(d.msgs[0],
	                 "/nonexistent/turboschedd.conf: cannot read: No such file or directory");
	ts_diag_clear(&d);
}
END_TEST

START_TEST(test_shipped_config_parses)
{
	/* conf/turboschedd.conf must be valid as shipped. */
	char path[512];
	snprintf(path, sizeof(path), "%s/../../../conf/turboschedd.conf", getenv("FIXTURES"));
	struct ts_config_source src = {.path = path, .dropin_dir = "", .lookup = fake_lookup};
	struct ts_config *c = NULL;
	struct ts_diag d;
	int r = ts_config_load(&src, &c, &d);
	ck_assert_msg(r == 0, "%s", r ? d.msgs[0] : "");
	ts_config_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_full_example);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_durations);
	tcase_add_test(tc, test_unknown_section);
	tcase_add_test(tc, test_unknown_key);
	tcase_add_test(tc, test_bad_glob);
	tcase_add_test(tc, test_unknown_user);
	tcase_add_test(tc, test_duplicate_rule);
	tcase_add_test(tc, test_duplicate_key);
	tcase_add_test(tc, test_repeated_list_key_extends);
	tcase_add_test(tc, test_section_errors);
	tcase_add_test(tc, test_syntax_error);
	tcase_add_test(tc, test_bad_values);
	tcase_add_test(tc, test_long_line_and_nul);
	tcase_add_test(tc, test_short_inputs_and_bom);
	tcase_add_test(tc, test_all_errors_collected);
	tcase_add_test(tc, test_dropins_lexical_order);
	tcase_add_test(tc, test_dropin_duplicate_and_unreadable);
	tcase_add_test(tc, test_dropin_fifo_does_not_block);
	tcase_add_test(tc, test_dropin_symlink_loop);
	tcase_add_test(tc, test_insecure_files_refused);
	tcase_add_test(tc, test_huge_file_refused);
	tcase_add_test(tc, test_binary_file);
	tcase_add_test(tc, test_replaced_mid_read);
	tcase_add_test(tc, test_missing_main_file);
	tcase_add_test(tc, test_shipped_config_parses);
	suite_add_tcase(s, tc);
	return run_suite(s);
}

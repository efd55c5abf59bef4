/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * INI as inih reads it ("key = value" or "key: value", '#' and ';' comments, [sections]), parsed
 * here line by line: the line number is kept for every message, empty and repeated sections are
 * seen, and a line may be as long as the file (the packaged inih stops at 200 characters, too few
 * for a list of cgroup globs). A list key given again extends its list, as in systemd's units.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "build_config.h"
#include "util.h"

/* A comm is at most TASK_COMM_LEN - 1 characters; a longer literal pattern can never match. */
#define COMM_MAX 15

enum key_id { K_RECHECK, K_RESTORE, K_LOGLEVEL, K_COMM, K_CGROUP, K_USER, K_THREADS, K_COUNT };

static const char *const key_names[K_COUNT] = {
    "recheck_interval", "restore_on_stop", "log_level", "comm", "cgroup", "user", "threads"};

enum section_kind { SEC_NONE, SEC_BAD, SEC_DAEMON, SEC_RULE };

struct parser {
	struct ts_config *cfg;
	struct ts_diag *diag;
	ts_user_lookup_fn lookup;
	const char *file;
	/* input: the whole file's text (read at once, see read_config_file()) */
	const char *buf, *buf_end;
	char *line;
	size_t line_cap, line_len;
	int lineno;
	/* current section */
	enum section_kind sec;
	char *sec_label; /* "[rule foo]" for messages */
	size_t rule_idx;
	int key_line[K_COUNT];
	size_t sec_errors; /* diag->total when the section started */
};

void ts_daemon_settings_default(struct ts_daemon_settings *d)
{
	d->recheck_interval_ms = 30000;
	d->restore_on_stop = true;
	d->log_level = LOG_INFO;
}

const char *ts_config_default_path(void)
{
	return SYSCONFDIR "/turbosched/turboschedd.conf";
}

static void diag_add(struct ts_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void diag_add(struct ts_diag *d, const char *fmt, ...)
{
	PROTECT_ERRNO;
	va_list ap;
	char *m = NULL;

	d->total++;
	if (d->nmsgs >= TS_CONFIG_MAX_ERRORS)
		return;
	va_start(ap, fmt);
	m = ts_vasprintf(fmt, ap);
	va_end(ap);
	if (m)
		d->msgs[d->nmsgs++] = m;
}

/* "FILE:LINE: [SECTION] " prefix + message. */
static void perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void perr(struct parser *p, const char *fmt, ...)
{
	PROTECT_ERRNO;
	_cleanup_free_ char *m = NULL;
	va_list ap;

	va_start(ap, fmt);
	m = ts_vasprintf(fmt, ap);
	va_end(ap);
	diag_add(p->diag, "%s:%d: %s%s%s", p->file, p->lineno, p->sec_label ? p->sec_label : "",
	         p->sec_label ? " " : "", m ? m : "out of memory");
}

void ts_diag_clear(struct ts_diag *d)
{
	for (size_t i = 0; i < d->nmsgs; i++)
		free(d->msgs[i]);
	memset(d, 0, sizeof(*d));
}

char *ts_diag_join(const struct ts_diag *d)
{
	size_t len = 64;
	for (size_t i = 0; i < d->nmsgs; i++)
		len += strlen(d->msgs[i]) + 1;
	char *s = malloc(len), *w = s;
	if (!s)
		return NULL;
	*w = '\0';
	for (size_t i = 0; i < d->nmsgs; i++)
		w += sprintf(w, "%s%s", i ? "\n" : "", d->msgs[i]);
	if (d->total > d->nmsgs)
		sprintf(w, "\n... and %zu more", d->total - d->nmsgs);
	return s;
}

int ts_log_level_parse(const char *s)
{
	static const struct {
		const char *name;
		int level;
	} levels[] = {{"err", LOG_ERR},       {"error", LOG_ERR}, {"warning", LOG_WARNING},
	              {"notice", LOG_NOTICE}, {"info", LOG_INFO}, {"debug", LOG_DEBUG}};
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (strcmp(s, levels[i].name) == 0)
			return levels[i].level;
	return -1;
}

const char *ts_log_level_name(int level)
{
	switch (level) {
	case LOG_ERR:
		return "err";
	case LOG_WARNING:
		return "warning";
	case LOG_NOTICE:
		return "notice";
	case LOG_INFO:
		return "info";
	case LOG_DEBUG:
		return "debug";
	}
	return "?";
}

int ts_duration_parse(const char *s, unsigned int *ms)
{
	static const struct {
		const char *suffix;
		unsigned long long mult;
	} units[] = {{"", 1000},   {"ms", 1},      {"s", 1000},
	             {"m", 60000}, {"min", 60000}, {"h", 3600000}};
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) != 0)
			continue;
		/* A day is plenty for a re-check; this also keeps the product within an unsigned
		 * int. */
		if (v > 86400000ull / units[i].mult)
			return -EINVAL;
		*ms = (unsigned int)(v * units[i].mult);
		return 0;
	}
	return -EINVAL;
}

static bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"yes", "true", "on", "1"}, *const no[] = {"no", "false",
	                                                                            "off", "0"};
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0)
			return *out = true, true;
		if (strcasecmp(s, no[i]) == 0)
			return *out = false, true;
	}
	return false;
}

static int default_lookup(const char *name, uid_t *uid)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (getpwnam_r(name, &pw, buf, sizeof(buf), &res) != 0 || !res)
		return -ENOENT;
	*uid = res->pw_uid;
	return 0;
}

static bool valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-@", *s))
			return false;
	return true;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static struct ts_rule *cur_rule(struct parser *p)
{
	return &p->cfg->rules.rules[p->rule_idx];
}

/* Called when a section ends (next header or end of file): checks what needs the whole section. */
static void section_end(struct parser *p)
{
	/* A field that failed to parse would make this message a misleading echo of that error. */
	if (p->sec == SEC_RULE && p->diag->total == p->sec_errors) {
		struct ts_rule *r = cur_rule(p);
		if (!r->ncomm && !r->ncgroup && !r->nuser) {
			int saved = p->lineno;
			p->lineno = r->line;
			perr(p, "has no comm, cgroup or user: it would match every task");
			p->lineno = saved;
		}
	}
	free(p->sec_label);
	p->sec_label = NULL;
	p->sec = SEC_NONE;
	memset(p->key_line, 0, sizeof(p->key_line));
}

static const struct ts_rule *find_rule(const struct ts_config *c, const char *name)
{
	for (size_t i = 0; i < c->rules.nrules; i++)
		if (strcmp(c->rules.rules[i].name, name) == 0)
			return &c->rules.rules[i];
	return NULL;
}

/* Parses "[...]" (already without leading blanks and comments). */
static void section_start(struct parser *p, char *l)
{
	section_end(p);
	char *close = strchr(l, ']');
	if (!close) {
		perr(p, "syntax error: section header without closing ']'");
		p->sec = SEC_BAD;
		return;
	}
	if (*trim(close + 1)) {
		perr(p, "syntax error: text after ']'");
		p->sec = SEC_BAD;
		return;
	}
	*close = '\0';
	char *body = trim(l + 1);
	char *sp = body + strcspn(body, " \t");
	char *name = trim(sp);
	*sp = '\0';

	if (asprintf(&p->sec_label, "[%s%s%s]", body, *name ? " " : "", name) < 0)
		p->sec_label = NULL;

	if (strcmp(body, "daemon") == 0) {
		if (*name) {
			perr(p, "takes no name: write [daemon]");
			p->sec = SEC_BAD;
			return;
		}
		p->sec = SEC_DAEMON;
		return;
	}
	bool is_rule = strcmp(body, "rule") == 0, is_excl = strcmp(body, "exclude") == 0;
	if (!is_rule && !is_excl) {
		/* The label would repeat the section; report it bare. */
		free(p->sec_label);
		p->sec_label = NULL;
		perr(p,
		     "unknown section [%s%s%s]; expected [daemon], [rule NAME] or [exclude NAME]",
		     body, *name ? " " : "", name);
		p->sec = SEC_BAD;
		return;
	}
	p->sec = SEC_BAD;
	if (!*name) {
		perr(p, "needs a name: write [%s NAME]", body);
		return;
	}
	if (!valid_name(name)) {
		perr(p, "invalid name '%s': use letters, digits, '_', '-', '.', '@'", name);
		return;
	}
	const struct ts_rule *dup = find_rule(p->cfg, name);
	if (dup) {
		perr(p, "duplicate rule name '%s' (first defined at %s:%d)", name, dup->file,
		     dup->line);
		return;
	}
	struct ts_ruleset *rs = &p->cfg->rules;
	if (!ts_grow(&rs->rules, &rs->cap, rs->nrules)) {
		perr(p, "out of memory");
		return;
	}
	struct ts_rule *r = &rs->rules[rs->nrules];
	memset(r, 0, sizeof(*r));
	r->name = strdup(name);
	r->file = strdup(p->file);
	r->line = p->lineno;
	r->kind = is_excl ? TS_RULE_EXCLUDE : TS_RULE_TAG;
	r->threads = TS_THREADS_ALL;
	if (!r->name || !r->file) {
		ts_rule_free(r);
		perr(p, "out of memory");
		return;
	}
	p->rule_idx = rs->nrules++;
	p->sec = SEC_RULE;
	p->sec_errors = p->diag->total;
}

/* A NULL-terminated array of strings and the strings. */
static void strv_free(char **v)
{
	for (char **s = v; s && *s; s++)
		free(*s);
	free(v);
}
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free)

/*
 * Splits a comma-separated list into trimmed, non-empty items (NULL-terminated). Returns count or
 * -1 (reported).
 */
static int split_list(struct parser *p, const char *key, const char *value, char ***out)
{
	_cleanup_free_ char *copy = strdup(value);
	_cleanup_(strv_freep) char **v = NULL;
	char *save = NULL;
	size_t cap = 0;
	int n = 0;

	if (!copy) {
		perr(p, "out of memory");
		return -1;
	}
	if (!*trim(copy)) {
		perr(p, "%s: empty value", key);
		return -1;
	}
	/* strtok_r would merge ",," silently; walk by hand so an empty item is an error. */
	for (char *s = copy;; s = save) {
		char *comma = strchr(s, ',');
		save = comma ? comma + 1 : NULL;
		if (comma)
			*comma = '\0';
		char *item = trim(s);
		if (!*item) {
			perr(p, "%s: empty item in list", key);
			return -1;
		}
		/* Room for the item and the NULL after it. */
		if (!ts_grow(&v, &cap, (size_t)n + 1) || !(v[n] = strdup(item))) {
			perr(p, "out of memory");
			return -1;
		}
		v[++n] = NULL;
		if (!save)
			break;
	}
	*out = TAKE_PTR(v);
	return n;
}

static bool has_wildcard(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int check_pattern(struct parser *p, enum key_id k, const char *pat)
{
	const char *why = ts_glob_check(pat);
	if (why) {
		perr(p, "%s: bad pattern '%s': %s", key_names[k], pat, why);
		return -1;
	}
	if (k == K_COMM && !has_wildcard(pat) && strlen(pat) > COMM_MAX) {
		perr(p, "comm: '%s' can never match: a comm has at most %d characters", pat,
		     COMM_MAX);
		return -1;
	}
	if (k == K_CGROUP && pat[0] != '/' && pat[0] != '*') {
		perr(p,
		     "cgroup: pattern '%s' must start with '/' (cgroup v2 path, e.g. "
		     "/system.slice/*)",
		     pat);
		return -1;
	}
	return 0;
}

/*
 * Appends the n (at least one) items of *items to *list of length *len: the strings are the
 * list's then, and *items is freed and NULL. false on ENOMEM, *items untouched.
 */
static bool list_extend(char ***list, size_t *len, char ***items, int n)
{
	size_t cap = *len;

	if (!*list) {
		*list = TAKE_PTR(*items);
		*len = (size_t)n;
		return true;
	}
	if (!ts_grow(list, &cap, *len + (size_t)n - 1))
		return false;
	memcpy(*list + *len, *items, (size_t)n * sizeof(**items));
	*len += (size_t)n;
	free(TAKE_PTR(*items));
	return true;
}

/* The same for the uids that go with the user list (len: the user list's length before). */
static bool uids_extend(uid_t **uids, size_t len, uid_t **add, int n)
{
	size_t cap = len;

	if (!*uids) {
		*uids = TAKE_PTR(*add);
		return true;
	}
	if (!ts_grow(uids, &cap, len + (size_t)n - 1))
		return false;
	memcpy(*uids + len, *add, (size_t)n * sizeof(**add));
	free(TAKE_PTR(*add));
	return true;
}

static void set_rule_key(struct parser *p, enum key_id k, const char *value)
{
	struct ts_rule *r = cur_rule(p);
	_cleanup_(strv_freep) char **items = NULL;
	_cleanup_free_ uid_t *uids = NULL;
	int n;

	if (k == K_THREADS) {
		if (strcmp(value, "all") == 0)
			r->threads = TS_THREADS_ALL;
		else if (strcmp(value, "matched") == 0)
			r->threads = TS_THREADS_MATCHED;
		else
			perr(p, "threads: invalid value '%s'; expected all or matched", value);
		return;
	}
	n = split_list(p, key_names[k], value, &items);
	if (n < 0)
		return;

	bool ok = true;
	if (k == K_USER && !(uids = calloc((size_t)n, sizeof(*uids)))) {
		perr(p, "out of memory");
		ok = false;
	}
	for (int i = 0; ok && i < n; i++) {
		if (k != K_USER) {
			ok = check_pattern(p, k, items[i]) == 0 && ok;
			continue;
		}
		long long num;
		char *end;
		errno = 0;
		num = strtoll(items[i], &end, 10);
		if (isdigit((unsigned char)items[i][0]) && !*end && !errno && num >= 0 &&
		    num < (long long)UINT32_MAX) {
			uids[i] = (uid_t)num;
		} else if (p->lookup(items[i], &uids[i]) != 0) {
			perr(p, "user: unknown user '%s'", items[i]);
			ok = false;
		}
	}
	if (!ok)
		return;
	switch (k) {
	case K_COMM:
		ok = list_extend(&r->comm, &r->ncomm, &items, n);
		break;
	case K_CGROUP:
		ok = list_extend(&r->cgroup, &r->ncgroup, &items, n);
		break;
	default:
		ok = uids_extend(&r->uids, r->nuser, &uids, n) &&
		     list_extend(&r->user, &r->nuser, &items, n);
		break;
	}
	if (!ok)
		perr(p, "out of memory");
}

static void set_daemon_key(struct parser *p, enum key_id k, const char *value)
{
	struct ts_daemon_settings *d = &p->cfg->daemon;
	int lvl;

	switch (k) {
	case K_RECHECK:
		if (ts_duration_parse(value, &d->recheck_interval_ms) != 0)
			perr(
			    p,
			    "recheck_interval: invalid duration '%s'; expected e.g. 30s, 500ms, 2m "
			    "(at most 24h) or 0 to disable",
			    value);
		break;
	case K_RESTORE:
		if (!parse_bool(value, &d->restore_on_stop))
			perr(p, "restore_on_stop: invalid value '%s'; expected yes or no", value);
		break;
	default:
		lvl = ts_log_level_parse(value);
		if (lvl < 0)
			perr(
			    p,
			    "log_level: invalid value '%s'; expected err, warning, notice, info or "
			    "debug",
			    value);
		else
			d->log_level = lvl;
		break;
	}
}

static bool is_list_key(enum key_id k)
{
	return k == K_COMM || k == K_CGROUP || k == K_USER;
}

static void key_value(struct parser *p, const char *name, const char *value)
{
	enum key_id k;

	if (p->sec == SEC_BAD)
		return; /* already reported at the header; don't cascade */
	if (p->sec == SEC_NONE) {
		perr(p, "key '%s' outside any section; start with [daemon] or [rule NAME]", name);
		return;
	}
	int first = p->sec == SEC_DAEMON ? K_RECHECK : K_COMM;
	int last = p->sec == SEC_DAEMON ? K_LOGLEVEL : K_THREADS;
	for (k = (enum key_id)first; (int)k <= last; k++)
		if (strcmp(name, key_names[k]) == 0)
			break;
	if ((int)k > last) {
		perr(p, "unknown key '%s'; expected %s", name,
		     p->sec == SEC_DAEMON ? "recheck_interval, restore_on_stop or log_level"
		                          : "comm, cgroup, user or threads");
		return;
	}
	if (p->key_line[k] && !is_list_key(k)) {
		perr(p, "%s: given twice in this section (first at line %d)", name, p->key_line[k]);
		return;
	}
	p->key_line[k] = p->lineno;
	if (p->sec == SEC_DAEMON)
		set_daemon_key(p, k, value);
	else
		set_rule_key(p, k, value);
}

/* Reads one raw line into p->line; false at end of input. */
static bool next_raw_line(struct parser *p)
{
	if (p->buf >= p->buf_end)
		return false;
	const char *nl = memchr(p->buf, '\n', (size_t)(p->buf_end - p->buf));
	size_t len = nl ? (size_t)(nl - p->buf) + 1 : (size_t)(p->buf_end - p->buf);
	if (!ts_grow(&p->line, &p->line_cap, len)) /* len bytes and the NUL */
		return false;
	memcpy(p->line, p->buf, len);
	p->line[len] = '\0';
	p->line_len = len;
	p->buf += len;
	return true;
}

/* A '#' or ';' at the start or after a blank starts a comment. */
static void strip_comment(char *l)
{
	for (char *c = l; *c; c++) {
		if ((*c == '#' || *c == ';') && (c == l || isspace((unsigned char)c[-1]))) {
			*c = '\0';
			return;
		}
	}
}

/* "name = value" (or "name: value", as inih allows): the first '=' or ':' splits it. */
static void parse_line(struct parser *p, char *l)
{
	char *sep = strpbrk(l, "=:");

	if (!sep) {
		perr(p, "syntax error: expected 'key = value' or '[section]'");
		return;
	}
	*sep = '\0';
	key_value(p, trim(l), trim(sep + 1));
}

static int parse_stream(struct parser *p)
{
	while (next_raw_line(p)) {
		char *l = p->line;

		p->lineno++;
		if (p->lineno == 1 && strncmp(l, "\xEF\xBB\xBF", 3) == 0)
			l += 3;
		if (strlen(p->line) != p->line_len) {
			perr(p, "syntax error: NUL byte in line");
			continue;
		}
		strip_comment(l);
		l = trim(l);
		if (*l == '[')
			section_start(p, l);
		else if (*l)
			parse_line(p, l);
	}
	section_end(p);
	free(p->line);
	p->line = NULL;
	return 0;
}

static struct ts_config *config_new(void)
{
	struct ts_config *c = calloc(1, sizeof(*c));
	if (c)
		ts_daemon_settings_default(&c->daemon);
	return c;
}

static int add_file_name(struct ts_config *c, const char *name)
{
	if (!ts_grow(&c->files, &c->files_cap, c->nfiles))
		return -ENOMEM;
	if (!(c->files[c->nfiles] = strdup(name)))
		return -ENOMEM;
	c->nfiles++;
	return 0;
}

/*
 * What the daemon obeys must be changeable by root (or the user it runs as) alone, as sshd's
 * StrictModes and sudo require: a file or directory owned by anyone else, or writable by others
 * (a directory with the sticky bit excepted: others cannot replace what is not theirs there,
 * and what they add is refused for its owner), would let them write rules. NULL when fine.
 */
static const char *insecure(const struct stat *st)
{
	bool dir = S_ISDIR(st->st_mode), sticky = dir && (st->st_mode & S_ISVTX);

	if (st->st_uid != 0 && st->st_uid != geteuid())
		return "owned by another user";
	if ((st->st_mode & S_IWOTH) && !sticky)
		return "writable by every user";
	if ((st->st_mode & S_IWGRP) && st->st_gid != 0 && st->st_gid != getegid() && !sticky)
		return "writable by its group";
	return NULL;
}

static void name_of_uid(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, len, "%s (uid %u)", res->pw_name, (unsigned)uid);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
}

static bool already_said(const struct ts_diag *d, const char *m)
{
	for (size_t i = 0; i < d->nmsgs; i++)
		if (strcmp(d->msgs[i], m) == 0)
			return true;
	return false;
}

/* Adds the refusal of path (what: "file", "directory") when st is insecure(); true if it is. */
static bool refuse_insecure(struct ts_diag *d, const char *path, const char *what,
                            const struct stat *st)
{
	const char *why = insecure(st);
	char owner[300], *m = NULL;

	if (!why)
		return false;
	name_of_uid(st->st_uid, owner, sizeof(owner));
	if (asprintf(&m,
	             "%s: refused: this %s is %s (owner %s, group %u, mode %04o), so others could "
	             "change the rules turboschedd obeys; fix: chown root:root %s && chmod go-w %s",
	             path, what, why, owner, (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777),
	             path, path) < 0)
		m = NULL;
	/* Every drop-in shares its directories: name each one once. */
	if (!m || !already_said(d, m))
		diag_add(d, "%s", m ? m : "out of memory");
	free(m);
	return true;
}

/* Checks dir and every directory above it (by its real path) with refuse_insecure(). */
static void check_dirs(struct ts_diag *d, const char *dir)
{
	char *real = realpath(dir, NULL);
	struct stat st;

	if (!real)
		return; /* reading the file below says what is wrong */
	for (char *end = real + strlen(real);;) {
		char saved = *end;
		*end = '\0';
		if (stat(*real ? real : "/", &st) == 0)
			refuse_insecure(d, *real ? real : "/", "directory", &st);
		*end = saved;
		if (end == real)
			break;
		while (end > real && *--end != '/')
			;
	}
	free(real);
}

/* The directory part of path ("." when it has none); malloc'd. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = NULL;
	if (asprintf(&dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
	             slash ? path : ".") < 0)
		return NULL;
	return dir;
}

/*
 * Reads a whole configuration file through one descriptor. O_NONBLOCK: opening a FIFO must not
 * wait for a writer; anything but a regular file is refused before a byte is read. One open
 * file means a file renamed over the path meanwhile is never mixed in: this is the old text or
 * (on the next load) the new one. Returns the text (caller frees; *len bytes, NUL-terminated)
 * or NULL with the problem added to d.
 */
static char *read_config_file(struct ts_diag *d, const char *path, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	_cleanup_free_ char *buf = NULL;
	struct stat st;

	if (fd < 0) {
		diag_add(d, "%s: cannot read: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		diag_add(d, "%s: cannot read: %s", path, strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		diag_add(d, "%s: cannot read: %s, expected a regular file", path,
		         ts_file_kind(st.st_mode));
		return NULL;
	}
	if (refuse_insecure(d, path, "file", &st))
		return NULL;
	if (st.st_size > TS_CONFIG_MAX_FILE) {
		diag_add(d, "%s: file too large (%lld bytes, at most %u): is this the right file?",
		         path, (long long)st.st_size, TS_CONFIG_MAX_FILE);
		return NULL;
	}
	/*
	 * Room for the size fstat said, one byte more (which tells a file that grew while being
	 * read) and the NUL; more only for a file that did grow.
	 */
	size_t cap = (size_t)st.st_size + 2, n = 0;
	buf = malloc(cap);
	if (!buf) {
		diag_add(d, "%s: out of memory", path);
		return NULL;
	}
	for (;;) {
		if (n > TS_CONFIG_MAX_FILE) {
			diag_add(d, "%s: file too large (grew past %u bytes while read)", path,
			         TS_CONFIG_MAX_FILE);
			return NULL;
		}
		if (!ts_grow(&buf, &cap, n + 1)) {
			diag_add(d, "%s: out of memory", path);
			return NULL;
		}
		/* At most one byte past the limit: enough to tell that it is past. */
		size_t room = cap - 1 < TS_CONFIG_MAX_FILE + 1 ? cap - 1 : TS_CONFIG_MAX_FILE + 1;
		ssize_t r = read(fd, buf + n, room - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			diag_add(d, "%s: read error: %s", path, strerror(errno));
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return TAKE_PTR(buf);
}

static void parse_text(struct ts_config *c, struct ts_diag *d, ts_user_lookup_fn lookup,
                       const char *name, const char *text, size_t len)
{
	struct parser p = {.cfg = c,
	                   .diag = d,
	                   .lookup = lookup,
	                   .file = name,
	                   .buf = text,
	                   .buf_end = text + len};

	if (add_file_name(c, name) != 0)
		diag_add(d, "%s: out of memory", name);
	parse_stream(&p);
}

static void parse_file(struct ts_config *c, struct ts_diag *d, ts_user_lookup_fn lookup,
                       const char *path)
{
	size_t len;
	char *dir = dir_of(path);
	if (dir)
		check_dirs(d, dir);
	free(dir);
	char *text = read_config_file(d, path, &len);

	if (text)
		parse_text(c, d, lookup, path, text, len);
	free(text);
}

static int filter_conf(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return e->d_name[0] != '.' && n > 5 && strcmp(e->d_name + n - 5, ".conf") == 0;
}

static int cmp_names(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void parse_dropins(struct ts_config *c, struct ts_diag *d, ts_user_lookup_fn lookup,
                          const char *dir)
{
	struct dirent **list = NULL;
	int n = scandir(dir, &list, filter_conf, cmp_names);

	if (n < 0) {
		/* No conf.d/ is the normal case. */
		if (errno != ENOENT)
			diag_add(d, "%s: cannot read directory: %s", dir, strerror(errno));
		return;
	}
	/* Even empty: whoever may add a drop-in there decides what the next reload obeys. */
	check_dirs(d, dir);
	for (int i = 0; i < n; i++) {
		char *path = NULL;
		if (asprintf(&path, "%s/%s", dir, list[i]->d_name) >= 0) {
			parse_file(c, d, lookup, path);
			free(path);
		}
		free(list[i]);
	}
	free(list);
}

static int finish(struct ts_config *c, struct ts_diag *d, struct ts_config **out)
{
	if (d->total) {
		ts_config_free(c);
		*out = NULL;
		return -EINVAL;
	}
	*out = c;
	return 0;
}

int ts_config_load(const struct ts_config_source *src, struct ts_config **out, struct ts_diag *diag)
{
	const char *path = src && src->path ? src->path : ts_config_default_path();
	ts_user_lookup_fn lookup = src && src->lookup ? src->lookup : default_lookup;
	struct ts_config *c = config_new();
	char *dir = NULL;

	memset(diag, 0, sizeof(*diag));
	if (!c)
		return -ENOMEM;
	parse_file(c, diag, lookup, path);
	if (src && src->dropin_dir) {
		if (*src->dropin_dir)
			parse_dropins(c, diag, lookup, src->dropin_dir);
	} else {
		const char *slash = strrchr(path, '/');
		int dl = slash ? (int)(slash - path) : 1;
		if (asprintf(&dir, "%.*s/conf.d", dl, slash ? path : ".") >= 0)
			parse_dropins(c, diag, lookup, dir);
		free(dir);
	}
	return finish(c, diag, out);
}

int ts_config_load_joined(const struct ts_config_source *src, struct ts_config **out, char **msgs)
{
	struct ts_diag diag;
	int r = ts_config_load(src, out, &diag);

	*msgs = NULL;
	if (r == -EINVAL) {
		*msgs = ts_diag_join(&diag);
		ts_diag_clear(&diag);
	}
	return r;
}

int ts_config_parse_buffer(const char *name, const char *text, size_t len, ts_user_lookup_fn lookup,
                           struct ts_config **out, struct ts_diag *diag)
{
	struct ts_config *c = config_new();

	memset(diag, 0, sizeof(*diag));
	if (!c)
		return -ENOMEM;
	parse_text(c, diag, lookup ? lookup : default_lookup, name, text, len);
	return finish(c, diag, out);
}

size_t ts_config_count(const struct ts_config *c, enum ts_rule_kind kind)
{
	size_t n = 0;
	for (size_t i = 0; i < c->rules.nrules; i++)
		n += c->rules.rules[i].kind == kind;
	return n;
}

void ts_config_free(struct ts_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->rules.nrules; i++)
		ts_rule_free(&c->rules.rules[i]);
	free(c->rules.rules);
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->files);
	free(c);
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "rules.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"

const char *ts_glob_check(const char *p)
{
	if (!p || !*p)
		return "empty pattern";
	for (const char *c = p; *c; c++) {
		if (*c == '\\') {
			if (!c[1])
				return "trailing '\\' in pattern";
			c++;
			continue;
		}
		if (*c != '[')
			continue;
		/* A bracket expression: optional negation, then ']' is literal when first. */
		const char *e = c + 1;
		if (*e == '!' || *e == '^')
			e++;
		if (*e == ']')
			e++;
		while (*e && *e != ']') {
			/* "[:alpha:]" inside a bracket expression has its own ']'. */
			if (e[0] == '[' && e[1] == ':') {
				const char *end = strstr(e + 2, ":]");
				if (!end)
					return "unterminated '[:' class in pattern";
				e = end + 2;
				continue;
			}
			e++;
		}
		if (!*e)
			return "unterminated '[' in pattern";
		c = e;
	}
	return NULL;
}

void ts_subject_from_task(const struct ts_task *t, struct ts_subject *out)
{
	out->comm = t->comm;
	out->cgroup = t->cgroup[0] ? t->cgroup : NULL;
	out->uid = t->euid;
}

int ts_rules_read_task(pid_t tgid, pid_t tid, unsigned int parts, struct ts_task *thread,
                       struct ts_task *process)
{
	int r = ts_task_read_parts(tgid, tid, parts, thread);
	if (r < 0)
		return r;
	if (thread->tgid == tid ||
	    ts_task_read_parts(thread->tgid, thread->tgid, parts, process) < 0)
		*process = *thread;
	return 0;
}

unsigned int ts_ruleset_parts(const struct ts_ruleset *rs)
{
	unsigned int parts = 0;

	for (size_t i = 0; i < rs->nrules; i++) {
		if (rs->rules[i].nuser)
			parts |= TS_TASK_STATUS;
		if (rs->rules[i].ncgroup)
			parts |= TS_TASK_CGROUP;
	}
	return parts;
}

static const char *match_globs(char *const *globs, size_t n, const char *s, int flags)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (fnmatch(globs[i], s, flags) == 0)
			return globs[i];
	return NULL;
}

bool ts_rule_match(const struct ts_rule *r, const struct ts_subject *thread,
                   const struct ts_subject *process, struct ts_rule_result *res)
{
	const struct ts_subject *s = r->threads == TS_THREADS_ALL ? process : thread;
	struct ts_rule_result local;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	res->rule = r;

	struct ts_field_result *f = &res->field[TS_FIELD_COMM];
	f->given = r->ncomm > 0;
	if (f->given) {
		f->pattern = match_globs(r->comm, r->ncomm, s->comm, 0);
		f->matched = f->pattern != NULL;
	}
	/* FNM_PATHNAME: '*' stays inside one path component, as an admin writing paths expects. */
	f = &res->field[TS_FIELD_CGROUP];
	f->given = r->ncgroup > 0;
	if (f->given) {
		f->pattern = match_globs(r->cgroup, r->ncgroup, s->cgroup, FNM_PATHNAME);
		/* An exclusion cannot be ruled out on a cgroup nobody could read: fail closed. */
		f->matched = f->pattern != NULL || (r->kind == TS_RULE_EXCLUDE && !s->cgroup);
	}
	f = &res->field[TS_FIELD_USER];
	f->given = r->nuser > 0;
	/* The same for an owner that could not be read. */
	f->matched = f->given && r->kind == TS_RULE_EXCLUDE && s->uid == (uid_t)-1;
	for (size_t i = 0; f->given && !f->matched && i < r->nuser; i++) {
		if (r->uids[i] == s->uid) {
			f->matched = true;
			f->pattern = r->user[i];
			break;
		}
	}

	/* A rule without any field would match everything; config rejects it, and so do we. */
	bool any = false;
	res->matched = true;
	for (int i = 0; i < TS_FIELD_COUNT; i++) {
		if (!res->field[i].given)
			continue;
		any = true;
		if (!res->field[i].matched)
			res->matched = false;
	}
	res->matched = res->matched && any;
	return res->matched;
}

struct ts_verdict ts_ruleset_explain(const struct ts_ruleset *rs, const struct ts_subject *thread,
                                     const struct ts_subject *process, struct ts_rule_result *res)
{
	struct ts_verdict v = {TS_VERDICT_NONE, NULL};
	const struct ts_rule *first_rule = NULL;

	for (size_t i = 0; i < rs->nrules; i++) {
		const struct ts_rule *r = &rs->rules[i];
		bool m = ts_rule_match(r, thread, process, res ? &res[i] : NULL);

		if (!m)
			continue;
		if (r->kind == TS_RULE_EXCLUDE && v.kind != TS_VERDICT_EXCLUDED) {
			v.kind = TS_VERDICT_EXCLUDED;
			v.rule = r;
		} else if (r->kind == TS_RULE_TAG && !first_rule) {
			first_rule = r;
		}
		/* Without an explanation to fill, the first exclusion settles it. */
		if (!res && v.kind == TS_VERDICT_EXCLUDED)
			return v;
	}
	if (v.kind != TS_VERDICT_EXCLUDED && first_rule) {
		v.kind = TS_VERDICT_TAG;
		v.rule = first_rule;
	}
	return v;
}

struct ts_verdict ts_ruleset_match(const struct ts_ruleset *rs, const struct ts_subject *thread,
                                   const struct ts_subject *process)
{
	return ts_ruleset_explain(rs, thread, process, NULL);
}

const char *ts_rule_kind_name(enum ts_rule_kind k)
{
	return k == TS_RULE_EXCLUDE ? "exclude" : "rule";
}

const char *ts_rule_threads_name(enum ts_rule_threads t)
{
	return t == TS_THREADS_MATCHED ? "matched" : "all";
}

const char *ts_rule_field_name(enum ts_rule_field f)
{
	static const char *const names[TS_FIELD_COUNT] = {"comm", "cgroup", "user"};
	return f < TS_FIELD_COUNT ? names[f] : "?";
}

const char *ts_verdict_name(enum ts_verdict_kind v)
{
	switch (v) {
	case TS_VERDICT_TAG:
		return "tag";
	case TS_VERDICT_EXCLUDED:
		return "excluded";
	case TS_VERDICT_NONE:
		break;
	}
	return "none";
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void ts_rule_free(struct ts_rule *r)
{
	if (!r)
		return;
	free(r->name);
	free_strv(r->comm, r->ncomm);
	free_strv(r->cgroup, r->ncgroup);
	free_strv(r->user, r->nuser);
	free(r->uids);
	free(r->file);
	memset(r, 0, sizeof(*r));
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Classification rules and the one matcher used by both the daemon and `turboschedctl explain`, so
 * an explanation can never disagree with what the daemon does.
 *
 * A rule has up to three fields (comm globs, cgroup v2 path globs, users). Within a field any
 * pattern may match; across fields every given field must match. Exclusions are checked first and
 * win.
 */
#ifndef TS_RULES_H
#define TS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum ts_rule_kind {
	TS_RULE_TAG,
	TS_RULE_EXCLUDE,
};

/* Which attributes a rule is matched against and which threads it applies to. */
enum ts_rule_threads {
	/* Matched against the process (its main thread); applies to every thread of it. */
	TS_THREADS_ALL,
	/* Matched against each thread on its own; applies only to the threads that match. */
	TS_THREADS_MATCHED,
};

enum ts_rule_field {
	TS_FIELD_COMM,
	TS_FIELD_CGROUP,
	TS_FIELD_USER,
	TS_FIELD_COUNT,
};

struct ts_rule {
	char *name;
	enum ts_rule_kind kind;
	enum ts_rule_threads threads;
	char **comm; /* fnmatch() globs against the 15-character comm */
	size_t ncomm;
	char **cgroup; /* fnmatch() globs against the cgroup v2 path, '/' matched literally */
	size_t ncgroup;
	char **user; /* the user patterns as written (names or numbers), for display */
	uid_t *uids; /* user[] resolved to uids, same order */
	size_t nuser;
	/* Where the section header was, for messages. */
	char *file;
	int line;
};

/* What a rule is matched against: one thread, or the main thread of its process. */
struct ts_subject {
	const char *comm;
	/*
	 * NULL when unknown (unreadable): a rule's cgroup field then fails and an exclusion's
	 * matches, so an unknown attribute can never make a task jitter against an exclusion.
	 */
	const char *cgroup;
	uid_t uid; /* effective uid, like ps's USER column; (uid_t)-1 unknown, as cgroup */
};

/* Result of matching one field of one rule. */
struct ts_field_result {
	bool given;          /* the rule constrains this field */
	bool matched;        /* meaningful only when given */
	const char *pattern; /* the pattern that matched, NULL if none */
};

struct ts_rule_result {
	const struct ts_rule *rule;
	bool matched;
	struct ts_field_result field[TS_FIELD_COUNT];
};

enum ts_verdict_kind {
	TS_VERDICT_NONE,     /* no rule matched */
	TS_VERDICT_TAG,      /* rule matched, no exclusion */
	TS_VERDICT_EXCLUDED, /* an exclusion matched (whether or not a rule did) */
};

struct ts_verdict {
	enum ts_verdict_kind kind;
	const struct ts_rule *rule; /* the deciding rule or exclusion; NULL for NONE */
};

/* The rule set: exclusions and rules, each in configuration order (first match wins). */
struct ts_ruleset {
	struct ts_rule *rules;
	size_t nrules, cap; /* cap: room in rules[] (ts_grow) */
};

struct ts_task;
/* The matcher's view of a task read by ts_task_read(): comm, cgroup ("" = unknown), euid. */
void ts_subject_from_task(const struct ts_task *t, struct ts_subject *out);

/*
 * Reads the thread and its thread-group leader (tgid 0: looked up), with the optional parts
 * `parts` of each (enum ts_task_part). A leader that cannot be read (exiting) is replaced by the
 * thread itself. 0, -ESRCH or -errno.
 */
int ts_rules_read_task(pid_t tgid, pid_t tid, unsigned int parts, struct ts_task *thread,
                       struct ts_task *process);

/*
 * The parts of a task (enum ts_task_part) the rules of `rs` look at: an event costs one file
 * read per task when every rule matches on comm only.
 */
unsigned int ts_ruleset_parts(const struct ts_ruleset *rs);

/*
 * Matches one rule. `thread` is the task itself and `process` its thread-group leader (the same
 * pointer for a main thread); the rule's `threads` setting chooses between them.
 */
bool ts_rule_match(const struct ts_rule *r, const struct ts_subject *thread,
                   const struct ts_subject *process, struct ts_rule_result *res);

/* Decides for one task: exclusions first (any wins), then rules in order (first wins). */
struct ts_verdict ts_ruleset_match(const struct ts_ruleset *rs, const struct ts_subject *thread,
                                   const struct ts_subject *process);

/*
 * Like ts_ruleset_match() but also fills `res` (rs->nrules entries, in rule order) with the result
 * of every rule, for explanations.
 */
struct ts_verdict ts_ruleset_explain(const struct ts_ruleset *rs, const struct ts_subject *thread,
                                     const struct ts_subject *process, struct ts_rule_result *res);

/*
 * Checks a glob before it is accepted: not empty, every '[' closed, no trailing '\'. Returns NULL
 * when fine, else a static message such as "unterminated '[' in pattern".
 */
const char *ts_glob_check(const char *pattern);

const char *ts_rule_kind_name(enum ts_rule_kind k);       /* "rule", "exclude" */
const char *ts_rule_threads_name(enum ts_rule_threads t); /* "all", "matched" */
const char *ts_rule_field_name(enum ts_rule_field f);     /* "comm", "cgroup", "user" */
const char *ts_verdict_name(enum ts_verdict_kind v);      /* "none", "tag", "excluded" */

void ts_rule_free(struct ts_rule *r);

#endif

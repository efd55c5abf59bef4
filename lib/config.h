/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * turboschedd.conf(5): INI files parsed with inih into daemon settings and a rule set.
 *
 * The main file is read first, then every *.conf in the conf.d/ directory next to it, in lexical
 * (strcmp) order. Every problem is reported as "FILE:LINE: [SECTION] KEY: what is wrong", and all
 * problems of a load are collected, so an admin can fix them in one go.
 */
#ifndef TS_CONFIG_H
#define TS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "macro.h"
#include "rules.h"

/* SYSCONFDIR "/turbosched/turboschedd.conf", from the build configuration. */
const char *ts_config_default_path(void);
/* Every problem after this many is only counted, so a binary file cannot flood the journal. */
#define TS_CONFIG_MAX_ERRORS 32
/* A configuration file larger than this (1 MiB) is refused: it is not a hand-written one. */
#define TS_CONFIG_MAX_FILE (1024u * 1024u)

struct ts_daemon_settings {
	unsigned int recheck_interval_ms; /* 0: no periodic re-check */
	bool restore_on_stop;             /* untag what the daemon tagged when it stops */
	int log_level;                    /* syslog priority: messages above it are not logged */
};

struct ts_config {
	struct ts_daemon_settings daemon;
	struct ts_ruleset rules;
	char **files; /* every file read, in order */
	size_t nfiles, files_cap;
};

/* Problems found while loading; msgs[i] is one line without a newline. */
struct ts_diag {
	char *msgs[TS_CONFIG_MAX_ERRORS];
	size_t nmsgs;
	size_t total; /* may exceed nmsgs */
};

/* Resolves a user name; 0 and *uid, or -ENOENT. Tests pass their own instead of getpwnam_r(). */
typedef int (*ts_user_lookup_fn)(const char *name, uid_t *uid);

struct ts_config_source {
	const char *path;         /* main file; NULL = ts_config_default_path() */
	const char *dropin_dir;   /* NULL = "<dir of path>/conf.d"; "" = no drop-ins */
	ts_user_lookup_fn lookup; /* NULL = getpwnam_r() */
};

/* Defaults used for settings no file sets. */
void ts_daemon_settings_default(struct ts_daemon_settings *d);

/*
 * Loads a configuration. Returns 0 and sets *out, or -EINVAL with the problems in *diag (which the
 * caller must ts_diag_clear(); it is filled only on error).
 */
int ts_config_load(const struct ts_config_source *src, struct ts_config **out,
                   struct ts_diag *diag);

/* ts_config_load() with the problems joined into *msgs (malloc'd, caller frees; NULL if none). */
int ts_config_load_joined(const struct ts_config_source *src, struct ts_config **out, char **msgs);

/*
 * Parses one file's text as if read from `name` (used by the fuzzer and tests). Same result
 * contract as ts_config_load(); no drop-ins.
 */
int ts_config_parse_buffer(const char *name, const char *text, size_t len, ts_user_lookup_fn lookup,
                           struct ts_config **out, struct ts_diag *diag);

void ts_config_free(struct ts_config *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct ts_config *, ts_config_free)

/* Number of rules of one kind. */
size_t ts_config_count(const struct ts_config *c, enum ts_rule_kind kind);

/* The problems joined with '\n' (malloc'd; NULL on allocation failure). Adds "and N more". */
char *ts_diag_join(const struct ts_diag *d);
void ts_diag_clear(struct ts_diag *d);

/* "err", "warning", "notice", "info", "debug" <-> syslog priority; -1 when unknown. */
int ts_log_level_parse(const char *s);
const char *ts_log_level_name(int level);

/* "30s", "500ms", "2m", "1h" or a bare number of seconds; 0 and *ms, or -EINVAL. */
int ts_duration_parse(const char *s, unsigned int *ms);

#endif

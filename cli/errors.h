/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Error messages a person can act on: who owns the task, which capability is missing. */
#ifndef TS_CLI_ERRORS_H
#define TS_CLI_ERRORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* "turboschedctl: MESSAGE" and a newline on f: every message of turboschedctl starts so. */
void cli_err(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * An option that cmd does not take (cmd NULL: turboschedctl's own options), said in one wording
 * with where help is. Returns CLI_EXIT_USAGE.
 */
int cli_unknown_option(FILE *f, const char *cmd, const char *arg);
/* "Usage: turboschedctl SYNOPSIS" on f. Returns CLI_EXIT_USAGE. */
int cli_usage(FILE *f, const char *synopsis);

/* True when this process has CAP_SYS_NICE in its effective set (libcap). */
bool cli_have_cap_sys_nice(void);

/* "alice (uid 1000)", or "uid 1000" when the name is unknown. */
void cli_user_name(uid_t uid, char *buf, size_t len);

/*
 * The message for a failed clamp write on a task owned by owner (uid_t -1 when unknown), given
 * whether we hold CAP_SYS_NICE. EPERM explains the capability and the owner; other errors use
 * ts_sched_strerror().
 */
void cli_clamp_error(char *buf, size_t len, int err, uid_t owner, bool have_cap);

#endif

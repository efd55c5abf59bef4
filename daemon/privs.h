/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Capabilities: what the daemon keeps after start-up, and what a control client holds. */
#ifndef TSD_PRIVS_H
#define TSD_PRIVS_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Keeps only CAP_SYS_NICE (sched_setattr on other users' tasks) in the effective and permitted
 * sets and, when allowed, drops every other capability from the bounding set. Capabilities the
 * process does not have are not asked for, so an unprivileged --foreground run works too.
 * 0 or -errno.
 */
int privs_drop(void);

/*
 * Whether a peer may change state: uid 0, or CAP_SYS_NICE in the effective set of process pid
 * (read from /proc/PID/status CapEff below the lib root, so tests use a fake tree).
 */
bool privs_peer_may_change(pid_t pid, uid_t uid);

/* Parses the hex CapEff value out of /proc/PID/status content. 0 or -EINVAL. */
int privs_parse_capeff(const char *status, unsigned long long *out);

#endif

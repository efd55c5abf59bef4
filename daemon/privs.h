/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Capabilities: what the daemon keeps after start-up, and what a control client holds. */
#ifndef TSD_PRIVS_H
#define TSD_PRIVS_H

#include <stdbool.h>
#include <sys/capability.h>
#include <sys/types.h>

/*
 * Keeps only CAP_SYS_NICE (sched_setattr on other users' tasks) in the effective and permitted
 * sets, clears the inheritable and ambient sets, drops every other capability from the bounding
 * set when allowed (CAP_SETPCAP), and sets no_new_privs. Capabilities the process does not have
 * are not asked for, so an unprivileged --foreground run works too. 0 or -errno.
 */
int privs_drop(void);

/*
 * The plan privs_drop() applies, from the current sets: *want (caller cap_free()s) holds at most
 * CAP_SYS_NICE, effective and permitted, and only if cur permits it; *drop_bound tells whether
 * the bounding set can be cut (cur has CAP_SETPCAP effective). 0 or -errno.
 */
int privs_plan(cap_t cur, cap_t *want, bool *drop_bound);

/*
 * The pidfd of a connected control client's process (SO_PEERPIDFD, Linux 6.5; the constant is
 * defined here when the C library's headers predate it). >= 0: the pidfd; PRIVS_NO_PIDFD: the
 * kernel has no SO_PEERPIDFD (ENOPROTOOPT); any other negative: the peer process is gone.
 */
#define PRIVS_NO_PIDFD (-1000)
int privs_peer_pidfd(int sock);

/*
 * Whether a peer may change state: uid 0 or the daemon's own uid (SO_PEERCRED, fixed at connect
 * and translated into the daemon's user namespace), or CAP_SYS_NICE in the effective set of a
 * process in the daemon's own user namespace (/proc/PID/status and /proc/PID/ns/user below the
 * lib root; tests use a fake tree). CapEff counts only there: in a user namespace of its own any
 * user holds every capability. A namespace that cannot be read (the daemon may not inspect
 * another user's process) refuses. With a pidfd the PID is taken from the pidfd and the process
 * is confirmed alive after the reads, so a PID reused meanwhile cannot lend its capabilities;
 * without one (PRIVS_NO_PIDFD, a kernel before 6.5) the PID from SO_PEERCRED is trusted, which a
 * peer that exits and whose PID is reused by a privileged process between its request and the
 * check could abuse. A gone peer (other negative pidfd) may not. On refusal *why (if why is not
 * NULL) says why, for the log.
 */
bool privs_peer_may_change(pid_t pid, int pidfd, uid_t uid, const char **why);

/* Parses the hex CapEff value out of /proc/PID/status content. 0 or -EINVAL. */
int privs_parse_capeff(const char *status, unsigned long long *out);

/* The PID a pidfd refers to (its fdinfo "Pid:" line): > 0, or -ESRCH once the process exited. */
int privs_pidfd_pid(int pidfd);

#endif

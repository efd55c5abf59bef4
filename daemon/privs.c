/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "privs.h"

#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "util.h"

/* asm-generic value (x86_64, arm64, ppc64le, ...); Debian 12's headers predate Linux 6.5. */
#ifndef SO_PEERPIDFD
#if defined(__alpha__) || defined(__mips__) || defined(__hppa__) || defined(__sparc__)
#error "SO_PEERPIDFD: this architecture numbers socket options differently; define it"
#endif
#define SO_PEERPIDFD 77
#endif

DEFINE_TRIVIAL_CLEANUP_FUNC(cap_t, cap_free)

int privs_plan(cap_t cur, cap_t *want, bool *drop_bound)
{
	cap_value_t keep = CAP_SYS_NICE;
	cap_flag_value_t have = CAP_CLEAR, setpcap = CAP_CLEAR;

	*want = cap_init();
	if (!*want)
		return -ENOMEM;
	cap_get_flag(cur, CAP_SYS_NICE, CAP_PERMITTED, &have);
	cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap);
	*drop_bound = setpcap == CAP_SET;
	if (have == CAP_SET && (cap_set_flag(*want, CAP_EFFECTIVE, 1, &keep, CAP_SET) < 0 ||
	                        cap_set_flag(*want, CAP_PERMITTED, 1, &keep, CAP_SET) < 0)) {
		int r = -errno;
		cap_free(TAKE_PTR(*want));
		return r;
	}
	return 0;
}

int privs_drop(void)
{
	_cleanup_(cap_freep) cap_t cur = cap_get_proc(), want = NULL;
	bool drop_bound;
	int r;

	if (!cur)
		return -ENOMEM;
	r = privs_plan(cur, &want, &drop_bound);
	if (r < 0)
		return r;
	/* The bounding set goes first: dropping from it needs CAP_SETPCAP, which goes next. */
	for (cap_value_t c = 0; drop_bound && c <= CAP_LAST_CAP; c++) {
		if (c != CAP_SYS_NICE && CAP_IS_SUPPORTED(c) && cap_drop_bound(c) < 0) {
			r = -errno;
			log_warning("cannot drop capability %d from the bounding set: %s", c,
			            strerror(-r));
			return r;
		}
	}
	/* No inheritable capabilities: the kernel then clears the ambient set as well. */
	if (cap_set_proc(want) < 0)
		return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	/* Nothing the daemon could ever exec gains privileges (systemd sets it too). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	cap_flag_value_t nice = CAP_CLEAR;
	cap_get_flag(want, CAP_SYS_NICE, CAP_EFFECTIVE, &nice);
	if (nice != CAP_SET)
		log_notice("running without CAP_SYS_NICE: only tasks of uid %u can be tagged",
		           (unsigned)getuid());
	return 0;
}

int privs_parse_capeff(const char *status, unsigned long long *out)
{
	const char *p = strstr(status, "\nCapEff:");
	char *end;

	if (!p)
		return -EINVAL;
	p += strlen("\nCapEff:");
	errno = 0;
	*out = strtoull(p, &end, 16);
	if (errno || end == p || (*end && *end != '\n'))
		return -EINVAL;
	return 0;
}

int privs_peer_pidfd(int sock)
{
	int pidfd = -1;
	socklen_t l = sizeof(pidfd);

	if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &l) == 0 && pidfd >= 0)
		return pidfd;
	return errno == ENOPROTOOPT ? PRIVS_NO_PIDFD : -ESRCH;
}

int privs_pidfd_pid(int pidfd)
{
	_cleanup_free_ char *info = NULL;
	char path[64];
	long long pid = -1;

	/* The daemon's own descriptor: the real /proc, never the test root. */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	if (ts_read_file(path, &info) < 0)
		return -ESRCH;
	const char *p = strstr(info, "\nPid:");
	if (p)
		pid = strtoll(p + 5, NULL, 10);
	return pid > 0 ? (int)pid : -ESRCH;
}

/* Whether the pidfd's process still exists (a zombie does: its PID is not free yet). */
static bool pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

/*
 * Whether the process pid (below the lib root: tests use a fake tree) lives in the daemon's own
 * user namespace: 1 yes, 0 no, -errno when it cannot be told. CapEff in /proc/PID/status is
 * relative to the process's own user namespace, so only there does it mean what it says.
 */
static int in_our_userns(pid_t pid)
{
	struct stat ours, theirs;
	char path[64];

	/* The daemon's own namespace: the real /proc, never the test root. */
	if (stat("/proc/self/ns/user", &ours) < 0)
		return -errno;
	if (ts_path(path, sizeof(path), "/proc/%d/ns/user", (int)pid) < 0)
		return -ENAMETOOLONG;
	if (stat(path, &theirs) < 0)
		return -errno;
	return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

bool privs_peer_may_change(pid_t pid, int pidfd, uid_t uid, const char **why)
{
	_cleanup_free_ char *status = NULL;
	unsigned long long eff;
	const char *dummy;

	if (!why)
		why = &dummy;
	*why = NULL;
	/* SO_PEERCRED's uid is translated into our namespace: a namespace's "root" is not 0. */
	if (uid == 0 || uid == geteuid())
		return true;
	*why = "it is gone";
	if (pidfd >= 0)
		pid = privs_pidfd_pid(pidfd);
	else if (pidfd != PRIVS_NO_PIDFD)
		return false; /* the peer exited before it was even accepted */
	if (pid <= 0 || ts_read_pathf(&status, "/proc/%d/status", (int)pid) < 0)
		return false;
	if (privs_parse_capeff(status, &eff) < 0 || !((eff >> CAP_SYS_NICE) & 1)) {
		*why = "it holds neither root nor CAP_SYS_NICE";
		return false;
	}
	/*
	 * Read after the capabilities: a process can leave our user namespace (unshare) but never
	 * come back, so ours now means ours when CapEff was read.
	 */
	int same = in_our_userns(pid);
	if (same < 0) {
		*why = "its user namespace cannot be read, so its CAP_SYS_NICE cannot be verified";
		return false;
	}
	if (!same) {
		*why = "its CAP_SYS_NICE is in another user namespace, not the daemon's";
		return false;
	}
	/* The reads were of our peer only if it still lives now. */
	if (pidfd >= 0 && !pidfd_alive(pidfd)) {
		*why = "it is gone";
		return false;
	}
	return true;
}

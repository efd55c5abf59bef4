/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "privs.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

int privs_drop(void)
{
	cap_t cur = cap_get_proc(), want = cap_init();
	cap_value_t keep = CAP_SYS_NICE;
	cap_flag_value_t have = CAP_CLEAR, setpcap = CAP_CLEAR;
	int r = 0;

	if (!cur || !want) {
		r = -ENOMEM;
		goto out;
	}
	cap_get_flag(cur, CAP_SYS_NICE, CAP_PERMITTED, &have);
	cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap);
	/* The bounding set goes first: dropping from it needs CAP_SETPCAP, which goes next. */
	if (setpcap == CAP_SET) {
		for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++) {
			if (c != CAP_SYS_NICE && CAP_IS_SUPPORTED(c) && cap_drop_bound(c) < 0) {
				r = -errno;
				log_warning("cannot drop capability %d from the bounding set: %s",
				            c, strerror(errno));
				goto out;
			}
		}
	}
	if (have == CAP_SET && (cap_set_flag(want, CAP_EFFECTIVE, 1, &keep, CAP_SET) < 0 ||
	                        cap_set_flag(want, CAP_PERMITTED, 1, &keep, CAP_SET) < 0)) {
		r = -errno;
		goto out;
	}
	if (cap_set_proc(want) < 0) {
		r = -errno;
		goto out;
	}
	if (have != CAP_SET)
		log_notice("running without CAP_SYS_NICE: only tasks of uid %u can be tagged",
		           (unsigned)getuid());
out:
	cap_free(cur);
	cap_free(want);
	return r;
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

bool privs_peer_may_change(pid_t pid, uid_t uid)
{
	char *status = NULL;
	unsigned long long eff;

	if (uid == 0)
		return true;
	if (pid <= 0 || ts_read_pathf(&status, "/proc/%d/status", (int)pid) < 0)
		return false;
	bool ok = privs_parse_capeff(status, &eff) == 0 && (eff >> CAP_SYS_NICE) & 1;
	free(status);
	return ok;
}

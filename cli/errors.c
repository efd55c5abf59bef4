/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "errors.h"

#include <errno.h>
#include <stdarg.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/capability.h>
#include <unistd.h>

#include "commands.h"
#include "macro.h"
#include "sched_attr.h"

bool cli_have_cap_sys_nice(void)
{
	cap_flag_value_t v = CAP_CLEAR;
	cap_t caps = cap_get_proc();

	if (!caps)
		return false;
	if (cap_get_flag(caps, CAP_SYS_NICE, CAP_EFFECTIVE, &v) < 0)
		v = CAP_CLEAR;
	cap_free(caps);
	return v == CAP_SET;
}

void cli_user_name(uid_t uid, char *buf, size_t len)
{
	/* `tasks` asks for thousands of tasks, nearly all of one user: each getpwuid() reads
	 * /etc/passwd (or asks NSS) again. */
	static uid_t last_uid = (uid_t)-1;
	static char last[160];

	if (uid != last_uid || !last[0]) {
		struct passwd *pw = getpwuid(uid);

		if (pw)
			snprintf(last, sizeof(last), "%s (uid %u)", pw->pw_name, (unsigned int)uid);
		else
			snprintf(last, sizeof(last), "uid %u", (unsigned int)uid);
		last_uid = uid;
	}
	snprintf(buf, len, "%s", last);
}

void cli_clamp_error(char *buf, size_t len, int err, uid_t owner, bool have_cap)
{
	char who[128] = "an unknown user";

	if (err < 0)
		err = -err;
	if (err != EPERM) {
		snprintf(buf, len, "%s", ts_sched_strerror(err));
		return;
	}
	if (owner != (uid_t)-1)
		cli_user_name(owner, who, sizeof(who));
	if (have_cap)
		snprintf(buf, len,
		         "permission denied although CAP_SYS_NICE is held (task owned by %s): a "
		         "security module or container policy refuses the change",
		         who);
	else
		snprintf(
		    buf, len,
		    "permission denied: the task is owned by %s; changing it needs CAP_SYS_NICE "
		    "(run as root, or grant CAP_SYS_NICE)",
		    who);
}

void cli_err(FILE *f, const char *fmt, ...)
{
	PROTECT_ERRNO;
	va_list ap;

	fputs("turboschedctl: ", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

int cli_unknown_option(FILE *f, const char *cmd, const char *arg)
{
	cli_err(f, "unknown option '%s'%s%s; see turboschedctl --help", arg, cmd ? " for " : "",
	        cmd ? cmd : "");
	return CLI_EXIT_USAGE;
}

int cli_usage(FILE *f, const char *synopsis)
{
	fprintf(f, "Usage: turboschedctl %s\n", synopsis);
	return CLI_EXIT_USAGE;
}

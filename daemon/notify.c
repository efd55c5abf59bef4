/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "notify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-daemon.h>
#include <time.h>

void notify_ready(void)
{
	sd_notify(0, "READY=1");
}

void notify_reloading(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	/* MONOTONIC_USEC lets systemd (>= 253) tell this reload from an earlier one. */
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
	           (unsigned long long)t.tv_sec * 1000000ull +
	               (unsigned long long)t.tv_nsec / 1000);
}

void notify_status(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sd_notifyf(0, "STATUS=%s", buf);
}

void notify_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}

int notify_under_systemd(void)
{
	return getenv("NOTIFY_SOCKET") != NULL;
}

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

void notify_watchdog(void)
{
	sd_notify(0, "WATCHDOG=1");
}

uint64_t notify_watchdog_period_ms(void)
{
	uint64_t usec = 0;
	if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
		return 0;
	/* Twice per period, as sd_watchdog_enabled(3) recommends. */
	return usec / 2000 ? usec / 2000 : 1;
}

int notify_under_systemd(void)
{
	return getenv("NOTIFY_SOCKET") != NULL;
}

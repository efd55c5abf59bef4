/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sd_notify(3) glue: readiness, status line, reload. All no-ops outside systemd. The watchdog is
 * sd-event's (sd_event_set_watchdog() in main.c).
 */
#ifndef TSD_NOTIFY_H
#define TSD_NOTIFY_H

#include <stdint.h>

void notify_ready(void);
void notify_reloading(void);
void notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void notify_stopping(void);
/* True when started by systemd with a notification socket. */
int notify_under_systemd(void);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging with syslog priorities. Under systemd (JOURNAL_STREAM set) each line gets the "<N>"
 * prefix the journal turns into the priority; otherwise lines are "turboschedd: LEVEL: message"
 * on stderr. Tests install a sink to see what was logged.
 */
#ifndef TSD_LOG_H
#define TSD_LOG_H

#include <syslog.h>

void log_set_level(int level); /* messages with a priority above it are dropped */
int log_get_level(void);
void log_use_journal_prefix(int on);

typedef void (*log_sink_fn)(int prio, const char *msg);
void log_set_sink(log_sink_fn fn); /* NULL: stderr */

void log_msg(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...)     log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)  log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)    log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)   log_msg(LOG_DEBUG, __VA_ARGS__)

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"
#include "macro.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int max_level = LOG_INFO;
static int journal_prefix;
static log_sink_fn sink;

void log_set_level(int level)
{
	max_level = level;
}

int log_get_level(void)
{
	return max_level;
}

void log_use_journal_prefix(int on)
{
	journal_prefix = on;
}

void log_set_sink(log_sink_fn fn)
{
	sink = fn;
}

static const char *level_word(int prio)
{
	static const char *const words[] = {"emerg",   "alert",  "crit", "error",
	                                    "warning", "notice", "info", "debug"};
	return words[prio & 7];
}

void log_msg(int prio, const char *fmt, ...)
{
	PROTECT_ERRNO;
	_cleanup_free_ char *buf = NULL;
	char small[256];
	va_list ap;

	if (prio > max_level)
		return;
	/* Any length: a configuration's error list is one message, and every error must show. */
	va_start(ap, fmt);
	buf = ts_vasprintf(fmt, ap);
	va_end(ap);
	if (!buf) {
		va_start(ap, fmt);
		vsnprintf(small, sizeof(small), fmt, ap);
		va_end(ap);
	}
	char *text = buf ? buf : small;
	if (sink) {
		sink(prio, text);
		return;
	}
	/* One fprintf per line, so lines from a multi-line message keep their priority. */
	for (char *line = text, *nl; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (journal_prefix)
			fprintf(stderr, "<%d>%s\n", prio, line);
		else
			fprintf(stderr, "turboschedd: %s: %s\n", level_word(prio), line);
	}
}

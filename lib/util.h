/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers shared by every lib module: the configurable filesystem root (so unit tests run on
 * fixture trees instead of the real /proc and /sys) and whole-file reads.
 */
#ifndef TS_UTIL_H
#define TS_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Prefix put in front of every absolute /proc, /sys and /run path the library opens. "" (the
 * default) means the real filesystem; tests point it at tests/unit/fixtures/<tree>. The string is
 * copied.
 */
void ts_root_set(const char *prefix);
const char *ts_root_get(void);

/* Formats root + path into buf. Returns 0, or -ENAMETOOLONG if it does not fit. */
int ts_path(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Reads a whole (small, procfs-style) file below the root into a malloc'd NUL-terminated buffer.
 * Returns 0 and sets *out (caller frees), or -errno (ENOENT when the file does not exist).
 */
int ts_read_file(const char *path, char **out);
/* ts_path() + ts_read_file() in one call. */
int ts_read_pathf(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* vasprintf()'s text (caller frees), or NULL when out of memory. */
char *ts_vasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
int ts_vread_pathf(char **out, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Parses a decimal integer filling the whole string (trailing newline allowed). 0 or -EINVAL. */
int ts_parse_ll(const char *s, long long *out);

/* Parses a decimal PID/TID > 0. 0 or -EINVAL. */
int ts_parse_pid(const char *s, pid_t *out);

/* "a regular file", "a directory", "a FIFO", ...: what a mode says a file is, for messages. */
const char *ts_file_kind(mode_t m);

/* Milliseconds of CLOCK_MONOTONIC, for deadlines (sd-event's clock too, in other units). */
long long ts_now_ms(void);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "util.h"

#include <stdint.h>

#include "macro.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static char root_prefix[4096];

void ts_root_set(const char *prefix)
{
	size_t n;

	snprintf(root_prefix, sizeof(root_prefix), "%s", prefix ? prefix : "");
	/* "/" and "fixture/" would give "//proc" or "fixture//proc": harmless, but keep paths tidy.
	 */
	n = strlen(root_prefix);
	while (n > 0 && root_prefix[n - 1] == '/')
		root_prefix[--n] = '\0';
}

const char *ts_root_get(void)
{
	return root_prefix;
}

static int vpath(char *buf, size_t len, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static int vpath(char *buf, size_t len, const char *fmt, va_list ap)
{
	size_t rlen = strlen(root_prefix);
	int n;

	if (rlen >= len)
		return -ENAMETOOLONG;
	memcpy(buf, root_prefix, rlen);
	n = vsnprintf(buf + rlen, len - rlen, fmt, ap);
	if (n < 0 || (size_t)n >= len - rlen)
		return -ENAMETOOLONG;
	return 0;
}

int ts_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vpath(buf, len, fmt, ap);
	va_end(ap);
	return r;
}

int ts_read_file(const char *path, char **out)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, len = 0;
	_cleanup_free_ char *buf = NULL;

	if (fd < 0)
		return -errno;
	/* One page holds most /proc files: no growing at all for them. */
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	/* procfs files report size 0, so read until EOF instead of trusting fstat. */
	for (;;) {
		ssize_t n;

		/* Room for one byte more than read so far, and the NUL. */
		if (!ts_grow(&buf, &cap, len + 1))
			return -ENOMEM;
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = TAKE_PTR(buf);
	return 0;
}

int ts_vread_pathf(char **out, const char *fmt, va_list ap)
{
	char path[4096];
	int r = vpath(path, sizeof(path), fmt, ap);

	return r < 0 ? r : ts_read_file(path, out);
}

int ts_read_pathf(char **out, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = ts_vread_pathf(out, fmt, ap);
	va_end(ap);
	return r;
}

char *ts_vasprintf(const char *fmt, va_list ap)
{
	char *m;

	return vasprintf(&m, fmt, ap) < 0 ? NULL : m;
}

int ts_parse_ll(const char *s, long long *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	while (*end == '\n' || *end == ' ' || *end == '\t')
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int ts_parse_pid(const char *s, pid_t *out)
{
	long long v;

	/* Reject "+12" and " 12": a PID argument is digits only. */
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	if (ts_parse_ll(s, &v) < 0 || v <= 0 || v > 0x3fffffff)
		return -EINVAL;
	*out = (pid_t)v;
	return 0;
}

const char *ts_file_kind(mode_t m)
{
	return S_ISREG(m)    ? "a regular file"
	       : S_ISDIR(m)  ? "a directory"
	       : S_ISLNK(m)  ? "a symbolic link"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	                     : "an unknown kind of file";
}

bool ts_grow_array(void **v, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return true;
	size_t ncap = *cap ? *cap * 2 : 16;
	if (ncap <= n)
		ncap = n + 1;
	if (ncap > SIZE_MAX / sz)
		return false;
	void *nv = realloc(*v, ncap * sz);
	if (!nv)
		return false;
	*v = nv;
	*cap = ncap;
	return true;
}

long long ts_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

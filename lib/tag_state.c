/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tag_state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "task.h"
#include "util.h"

#define STATE_HEADER "# turbosched manual tags v1: tid starttime util_min util_max min_lowered\n"

static bool valid_clamp(unsigned long v)
{
	return v <= 1024;
}

int ts_state_parse(struct ts_tag_state *s, const char *content)
{
	const char *line = content;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		struct ts_state_entry e;
		unsigned long umin, umax;
		unsigned int lowered;
		long tid;
		char extra;
		int n;

		if (*line == '#' || *line == '\n') {
			line = nl ? nl + 1 : NULL;
			continue;
		}
		/*
		 * A line cut short by a crash has no newline: corrupt, not data. "%u%c" (no blank
		 * between) makes the character after the last number the newline, or the line is
		 * bad.
		 */
		n = nl ? sscanf(line, "%ld %llu %lu %lu %u%c", &tid, &e.starttime, &umin, &umax,
		                &lowered, &extra)
		       : 0;
		if (n == 6 && extra == '\n')
			n = 5;
		if (n != 5 || tid <= 0 || tid > INT_MAX || !valid_clamp(umin) ||
		    !valid_clamp(umax) || lowered > 1) {
			s->bad_lines++;
		} else {
			e.tid = (pid_t)tid;
			e.util_min = (uint32_t)umin;
			e.util_max = (uint32_t)umax;
			e.min_lowered = lowered;
			if (ts_state_put(s, &e) < 0)
				return -ENOMEM;
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

static int take_lock(struct ts_tag_state *s)
{
	char path[4096];
	int r, fd;

	r = ts_path(path, sizeof(path), TS_STATE_DIR);
	if (r < 0)
		return r;
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	r = ts_path(path, sizeof(path), TS_STATE_LOCK);
	if (r < 0)
		return r;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	s->lock_fd = fd;
	return 0;
}

int ts_state_load(struct ts_tag_state *s, bool lock)
{
	char *buf;
	int r;

	memset(s, 0, sizeof(*s));
	s->lock_fd = -1;
	if (lock) {
		r = take_lock(s);
		if (r < 0)
			return r;
	}
	r = ts_read_pathf(&buf, TS_STATE_FILE);
	if (r == -ENOENT) {
		s->missing = true;
		return 0;
	}
	if (r < 0) {
		ts_state_close(s);
		return r;
	}
	r = ts_state_parse(s, buf);
	free(buf);
	return r;
}

int ts_state_save(const struct ts_tag_state *s)
{
	char path[4096], tmp[4096];
	FILE *f;
	int r, fd;

	r = ts_path(path, sizeof(path), TS_STATE_FILE);
	if (r < 0)
		return r;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	fputs(STATE_HEADER, f);
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, "%d %llu %" PRIu32 " %" PRIu32 " %d\n", (int)s->v[i].tid,
		        s->v[i].starttime, s->v[i].util_min, s->v[i].util_max,
		        s->v[i].min_lowered ? 1 : 0);
	/* Readers must see the old file or the whole new one: flush to disk, then rename over. */
	if (fflush(f) != 0 || fsync(fd) < 0) {
		r = -errno;
		fclose(f);
		unlink(tmp);
		return r;
	}
	if (fclose(f) != 0) {
		r = -errno;
		unlink(tmp);
		return r;
	}
	if (rename(tmp, path) < 0) {
		r = -errno;
		unlink(tmp);
		return r;
	}
	return 0;
}

void ts_state_close(struct ts_tag_state *s)
{
	if (s->lock_fd >= 0)
		close(s->lock_fd); /* releases the flock */
	free(s->v);
	memset(s, 0, sizeof(*s));
	s->lock_fd = -1;
}

struct ts_state_entry *ts_state_find(struct ts_tag_state *s, pid_t tid,
                                     unsigned long long starttime)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].tid == tid && s->v[i].starttime == starttime)
			return &s->v[i];
	return NULL;
}

int ts_state_put(struct ts_tag_state *s, const struct ts_state_entry *e)
{
	struct ts_state_entry *old = ts_state_find(s, e->tid, e->starttime);

	if (old) {
		*old = *e;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct ts_state_entry *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = *e;
	return 0;
}

bool ts_state_remove(struct ts_tag_state *s, pid_t tid, unsigned long long starttime)
{
	struct ts_state_entry *e = ts_state_find(s, tid, starttime);

	if (!e)
		return false;
	*e = s->v[--s->n];
	return true;
}

size_t ts_state_prune(struct ts_tag_state *s)
{
	size_t dropped = 0;

	for (size_t i = 0; i < s->n;) {
		unsigned long long st;
		int r = ts_task_starttime(0, s->v[i].tid, &st);

		/* Only a definite "gone" or "reused" drops a record; a transient error keeps it. */
		if (r == -ESRCH || (r == 0 && st != s->v[i].starttime)) {
			s->v[i] = s->v[--s->n];
			dropped++;
		} else {
			i++;
		}
	}
	return dropped;
}

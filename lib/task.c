/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "task.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "util.h"

int ts_stat_parse(const char *line, struct ts_stat *out)
{
	const char *open = strchr(line, '(');
	/* comm may contain spaces and ')' itself: only the last ')' ends it. */
	const char *close = strrchr(line, ')');
	const char *p;
	size_t clen;
	int field;

	if (!open || !close || close < open)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->cpu = -1;
	clen = (size_t)(close - open - 1);
	if (clen >= sizeof(out->comm))
		clen = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, clen);
	out->comm[clen] = '\0';

	/* Fields after comm are single space-separated tokens; field 3 is the state. */
	p = close + 1;
	for (field = 3; *p; field++) {
		char *end;
		unsigned long long v;

		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		if (field == 3) {
			out->state = *p;
		} else {
			errno = 0;
			v = strtoull(p, &end, 10);
			if (end == p || errno)
				return -EINVAL;
			if (field == 4)
				out->ppid = (pid_t)v;
			else if (field == 22)
				out->starttime = v;
			else if (field == 39)
				out->cpu = (int)v;
			else if (field == 41)
				out->policy = (unsigned int)v;
		}
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	/* Without the start time there is no identity: treat a short line as malformed. */
	if (field <= 22)
		return -EINVAL;
	return 0;
}

int ts_cgroup_parse(const char *content, char *out, size_t len)
{
	const char *v1_cpu = NULL, *v1_systemd = NULL, *pick = NULL;
	const char *line = content;

	while (line && *line) {
		const char *c1 = strchr(line, ':');
		const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		const char *nl = strchr(line, '\n');

		if (c1 && c2 && (!nl || c2 < nl)) {
			size_t clen = (size_t)(c2 - c1 - 1);
			const char *ctl = c1 + 1;

			if (c1 - line == 1 && line[0] == '0' && clen == 0) {
				pick = c2 + 1; /* the unified (v2) hierarchy wins */
				break;
			}
			/* v1 controller list, e.g. "cpu,cpuacct": look for the cpu controller. */
			for (const char *t = ctl; t < c2;) {
				const char *comma = memchr(t, ',', (size_t)(c2 - t));
				size_t tl = (size_t)((comma ? comma : c2) - t);

				if (tl == 3 && strncmp(t, "cpu", 3) == 0 && !v1_cpu)
					v1_cpu = c2 + 1;
				if (tl == 12 && strncmp(t, "name=systemd", 12) == 0 && !v1_systemd)
					v1_systemd = c2 + 1;
				t += tl + 1;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!pick)
		pick = v1_cpu ? v1_cpu : v1_systemd;
	if (!pick)
		return -ENOENT;
	{
		const char *end = strchr(pick, '\n');
		size_t n = end ? (size_t)(end - pick) : strlen(pick);

		if (n >= len)
			return -ENAMETOOLONG;
		memcpy(out, pick, n);
		out[n] = '\0';
	}
	return 0;
}

int ts_sched_jitter_parse(const char *content)
{
	const char *line = content;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		const char *colon = strchr(line, ':');

		if (colon && (!nl || colon < nl)) {
			const char *k = line, *ke = colon;

			while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
				ke--;
			if (ke - k == 6 && strncmp(k, "jitter", 6) == 0)
				return strtol(colon + 1, NULL, 10) ? 1 : 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	return -1;
}

/* A task that disappeared shows up as ENOENT (or ESRCH from a dying task): both mean "gone". */
static int gone(int r)
{
	return (r == -ENOENT || r == -ESRCH) ? -ESRCH : r;
}

static int read_task_file(char **buf, pid_t tgid, pid_t tid, const char *name)
{
	return gone(ts_read_pathf(buf, "/proc/%d/task/%d/%s", (int)tgid, (int)tid, name));
}

/* The task's stat line, parsed. 0, -ESRCH when it is gone, or -errno. */
static int read_task_stat(pid_t tgid, pid_t tid, struct ts_stat *st)
{
	_cleanup_free_ char *buf = NULL;
	int r = read_task_file(&buf, tgid ? tgid : tid, tid, "stat");

	return r < 0 ? r : ts_stat_parse(buf, st);
}

int ts_task_starttime(pid_t tgid, pid_t tid, unsigned long long *out)
{
	struct ts_stat st;
	int r = read_task_stat(tgid, tid, &st);

	if (r < 0)
		return r;
	*out = st.starttime;
	return 0;
}

static void parse_status(struct ts_task *t, const char *buf)
{
	const char *p = strstr(buf, "\nTgid:");
	unsigned int u[2];

	if (p)
		t->tgid = (pid_t)strtol(p + 6, NULL, 10);
	p = strstr(buf, "\nUid:");
	if (p && sscanf(p + 5, "%u %u", &u[0], &u[1]) == 2) {
		t->ruid = u[0];
		t->euid = u[1];
	}
}

int ts_task_read(pid_t tgid, pid_t tid, struct ts_task *out)
{
	return ts_task_read_parts(tgid, tid, TS_TASK_ALL, out);
}

int ts_task_read_parts(pid_t tgid, pid_t tid, unsigned int parts, struct ts_task *out)
{
	pid_t dir = tgid ? tgid : tid;
	struct ts_stat st;
	char *buf;
	int r;

	memset(out, 0, sizeof(*out));
	out->tid = tid;
	out->tgid = tgid;
	out->ruid = out->euid = (uid_t)-1;
	out->jitter = -1;

	r = read_task_stat(tgid, tid, &st);
	if (r < 0)
		return r;
	out->starttime = st.starttime;
	out->ppid = st.ppid;
	memcpy(out->comm, st.comm, sizeof(out->comm));
	out->state = st.state;
	out->cpu = st.cpu;
	out->policy = st.policy;

	/* The rest is best effort: a task exiting now still has the identity read above. */
	if (!tgid)
		parts |= TS_TASK_STATUS;
	if ((parts & TS_TASK_STATUS) && read_task_file(&buf, dir, tid, "status") == 0) {
		parse_status(out, buf);
		free(buf);
	}
	if (!out->tgid)
		out->tgid = tid;
	if ((parts & TS_TASK_CGROUP) && read_task_file(&buf, dir, tid, "cgroup") == 0) {
		if (ts_cgroup_parse(buf, out->cgroup, sizeof(out->cgroup)) < 0)
			out->cgroup[0] = '\0';
		free(buf);
	}
	if ((parts & TS_TASK_SCHED) && read_task_file(&buf, dir, tid, "sched") == 0) {
		out->jitter = ts_sched_jitter_parse(buf);
		free(buf);
	}
	return 0;
}

void ts_pidlist_free(struct ts_pidlist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int pidlist_add(struct ts_pidlist *l, pid_t p)
{
	if (!ts_grow(&l->v, &l->cap, l->n))
		return -ENOMEM;
	l->v[l->n++] = p;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int list_numeric(const char *path, struct ts_pidlist *out)
{
	_cleanup_closedir_ DIR *d = opendir(path);
	struct dirent *de;
	int r = 0;

	out->n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t p;

		if (ts_parse_pid(de->d_name, &p) < 0)
			continue;
		r = pidlist_add(out, p);
		if (r < 0)
			break;
	}
	if (r == 0)
		qsort(out->v, out->n, sizeof(*out->v), cmp_pid);
	return r;
}

int ts_list_processes(struct ts_pidlist *out)
{
	char path[4096];
	int r = ts_path(path, sizeof(path), "/proc");

	return r < 0 ? r : list_numeric(path, out);
}

int ts_list_threads(pid_t tgid, struct ts_pidlist *out)
{
	char path[4096];
	int r = ts_path(path, sizeof(path), "/proc/%d/task", (int)tgid);

	return r < 0 ? r : gone(list_numeric(path, out));
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ledger.h"

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

#include "macro.h"
#include "task.h"
#include "util.h"

static const char *const owner_names[TS_OWNER_COUNT] = {
    [TS_OWNER_RULE] = "rule",         [TS_OWNER_INHERITED] = "inherited",
    [TS_OWNER_MANUAL] = "manual",     [TS_OWNER_UNTAGGED] = "untagged",
    [TS_OWNER_EXTERNAL] = "external",
};

const char *ts_owner_name(enum ts_owner o)
{
	return (unsigned)o < TS_OWNER_COUNT ? owner_names[o] : "?";
}

int ts_owner_from_name(const char *name)
{
	for (int o = 0; o < TS_OWNER_COUNT; o++)
		if (strcmp(name, owner_names[o]) == 0)
			return o;
	return -1;
}

void ts_ledger_free(struct ts_ledger *l)
{
	for (size_t i = 0; i < l->nnames; i++)
		free(l->names[i]);
	free(l->names);
	free(l->v);
	free(l->slot);
	memset(l, 0, sizeof(*l));
}

static size_t home_slot(const struct ts_ledger *l, pid_t tid)
{
	/* Fibonacci hashing (the top bits of tid * 2^32/phi): a fork burst's consecutive TIDs
	 * spread over the table. */
	unsigned int bits = (unsigned int)__builtin_ctzll(l->nslot);
	return bits ? ((uint32_t)tid * 2654435769u) >> (32 - bits) : 0;
}

/* The slot holding tid, or the free slot where it would go. */
static size_t probe(const struct ts_ledger *l, pid_t tid)
{
	size_t i = home_slot(l, tid);
	while (l->slot[i] && l->v[l->slot[i] - 1].tid != tid)
		i = (i + 1) & (l->nslot - 1);
	return i;
}

/* Rebuilds the index at nslot slots (a power of two above 2 * cap, so probes stay short). */
static bool reindex(struct ts_ledger *l, size_t nslot)
{
	uint32_t *slot = calloc(nslot, sizeof(*slot));
	if (!slot)
		return false;
	free(l->slot);
	l->slot = slot;
	l->nslot = nslot;
	for (size_t i = 0; i < l->n; i++)
		l->slot[probe(l, l->v[i].tid)] = (uint32_t)(i + 1);
	return true;
}

struct ts_ledger_entry *ts_ledger_find(const struct ts_ledger *l, pid_t tid)
{
	if (!l->nslot)
		return NULL;
	uint32_t s = l->slot[probe(l, tid)];
	return s ? &l->v[s - 1] : NULL;
}

struct ts_ledger_entry *ts_ledger_get(const struct ts_ledger *l, pid_t tid,
                                      unsigned long long starttime)
{
	struct ts_ledger_entry *e = ts_ledger_find(l, tid);
	return e && e->starttime == starttime ? e : NULL;
}

/* l's copy of name; NULL when out of memory. */
static const char *intern(struct ts_ledger *l, const char *name)
{
	if (!name)
		name = "";
	for (size_t i = 0; i < l->nnames; i++)
		if (strcmp(l->names[i], name) == 0)
			return l->names[i];
	if (!ts_grow(&l->names, &l->names_cap, l->nnames))
		return NULL;
	if (!(l->names[l->nnames] = strdup(name)))
		return NULL;
	return l->names[l->nnames++];
}

bool ts_ledger_set_rule(struct ts_ledger *l, struct ts_ledger_entry *e, const char *rule)
{
	const char *name = intern(l, rule);
	if (!name)
		return false;
	e->rule = name;
	l->dirty = true;
	return true;
}

struct ts_ledger_entry *ts_ledger_put(struct ts_ledger *l, const struct ts_ledger_entry *e)
{
	const char *name = intern(l, e->rule);
	if (!name)
		return NULL;
	struct ts_ledger_entry *old = ts_ledger_find(l, e->tid);
	l->dirty = true;
	if (old) {
		*old = *e;
		old->rule = name;
		return old;
	}
	if (l->n >= UINT32_MAX / 4 || !ts_grow(&l->v, &l->cap, l->n))
		return NULL;
	if (l->nslot < 2 * l->cap && !reindex(l, 4 * l->cap))
		return NULL;
	l->v[l->n] = *e;
	l->v[l->n].rule = name;
	l->slot[probe(l, e->tid)] = (uint32_t)(l->n + 1);
	return &l->v[l->n++];
}

/* Empties slot i and moves later entries of its probe run back (no tombstones needed). */
static void unslot(struct ts_ledger *l, size_t i)
{
	size_t mask = l->nslot - 1;
	l->slot[i] = 0;
	for (size_t j = (i + 1) & mask; l->slot[j]; j = (j + 1) & mask) {
		size_t home = home_slot(l, l->v[l->slot[j] - 1].tid);
		/* Move it into the hole unless its home lies cyclically in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			l->slot[i] = l->slot[j];
			l->slot[j] = 0;
			i = j;
		}
	}
}

void ts_ledger_remove(struct ts_ledger *l, struct ts_ledger_entry *e)
{
	size_t i = (size_t)(e - l->v);
	if (i >= l->n)
		return;
	unslot(l, probe(l, e->tid));
	if (i != --l->n) {
		l->v[i] = l->v[l->n];
		l->slot[probe(l, l->v[i].tid)] = (uint32_t)(i + 1);
	}
	l->dirty = true;
}

size_t ts_ledger_count_tagged(const struct ts_ledger *l)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].owner != TS_OWNER_UNTAGGED;
	return n;
}

size_t ts_ledger_prune(struct ts_ledger *l)
{
	size_t dropped = 0;

	for (size_t i = l->n; i-- > 0;) {
		unsigned long long st;
		int r = ts_task_starttime(0, l->v[i].tid, &st);

		/* Only a definite "gone" or "reused" drops a record; a transient error keeps it. */
		if (r == -ESRCH || (r == 0 && st != l->v[i].starttime)) {
			ts_ledger_remove(l, &l->v[i]);
			dropped++;
		}
	}
	return dropped;
}

/* A decimal number in [0, max] followed by one blank; advances *p. */
static bool field(const char **p, unsigned long long max, unsigned long long *out)
{
	const char *s = *p;
	unsigned long long v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (d > max || v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (*s != ' ')
		return false;
	*p = s + 1;
	*out = v;
	return true;
}

/* One entry line (without its newline, NUL-terminated). */
static bool parse_line(const char *s, struct ts_ledger_entry *e)
{
	unsigned long long tid, tgid, since, umin, umax, low;
	char owner[16];
	size_t n;

	memset(e, 0, sizeof(*e));
	if (!field(&s, INT_MAX, &tid) || !field(&s, INT_MAX, &tgid) ||
	    !field(&s, ULLONG_MAX, &e->starttime) || !field(&s, INT64_MAX, &since) ||
	    !field(&s, 1024, &umin) || !field(&s, 1024, &umax) || !field(&s, 1, &low))
		return false;
	if (tid == 0 || tgid == 0)
		return false;
	n = strcspn(s, " ");
	if (n == 0 || n >= sizeof(owner))
		return false;
	memcpy(owner, s, n);
	owner[n] = '\0';
	int o = ts_owner_from_name(owner);
	if (o < 0 || o == TS_OWNER_EXTERNAL)
		return false;
	s += n;
	if (*s == ' ')
		s++;
	if (strlen(s) >= TS_LEDGER_RULE_MAX)
		return false;
	e->tid = (pid_t)tid;
	e->tgid = (pid_t)tgid;
	e->since = (time_t)since;
	e->prev = (struct ts_prev){(uint32_t)umin, (uint32_t)umax, low == 1};
	e->owner = (enum ts_owner)o;
	e->rule = s;
	return true;
}

int ts_ledger_parse(struct ts_ledger *l, const char *text, struct ts_ledger_report *rep)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	bool header = false;

	memset(rep, 0, sizeof(*rep));
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (!header) {
			if (len != strlen(TS_LEDGER_HEADER) ||
			    memcmp(p, TS_LEDGER_HEADER, len) != 0 || !nl) {
				ts_ledger_free(l);
				snprintf(rep->why, sizeof(rep->why),
				         "not a turbosched ledger (the first line is not \"%s\")",
				         TS_LEDGER_HEADER);
				return -EINVAL;
			}
			header = true;
		} else if (!nl) {
			rep->bad++; /* a line cut short by a crash: corrupt, not data */
		} else if (len && *p != '#') {
			struct ts_ledger_entry e;

			if (!ts_grow(&line, &cap, len))
				return -ENOMEM;
			memcpy(line, p, len);
			line[len] = '\0';
			if (memchr(p, '\0', len) || !parse_line(line, &e)) {
				rep->bad++;
			} else {
				if (!ts_ledger_put(l, &e))
					return -ENOMEM;
				rep->entries++;
			}
		}
		p += len + (nl ? 1 : 0);
	}
	if (!header) {
		snprintf(rep->why, sizeof(rep->why), "not a turbosched ledger (empty)");
		return -EINVAL;
	}
	return 0;
}

int ts_ledger_load(struct ts_ledger *l, const char *path, struct ts_ledger_report *rep)
{
	_cleanup_free_ char *text = NULL;

	memset(rep, 0, sizeof(*rep));
	int r = ts_read_file(path, &text);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = ts_ledger_parse(l, text, rep);
	if (r == 0)
		l->dirty = false;
	return r;
}

/* fsync of the directory holding path, so the rename itself is durable. */
static void sync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		(void)fsync(fd);
}

static int write_to(const struct ts_ledger *l, int fd)
{
	/* The unit's UMask=0077 would make it 0600: everyone may read who tagged what. */
	if (fchmod(fd, 0644) < 0)
		return -errno;
	_cleanup_fclose_ FILE *f = fdopen(dup(fd), "w");
	if (!f)
		return -errno;
	fputs(TS_LEDGER_HEADER "\n", f);
	for (size_t i = 0; i < l->n; i++) {
		const struct ts_ledger_entry *e = &l->v[i];
		fprintf(f, "%d %d %llu %lld %" PRIu32 " %" PRIu32 " %d %s%s%s\n", (int)e->tid,
		        (int)e->tgid, e->starttime, (long long)e->since, e->prev.util_min,
		        e->prev.util_max, e->prev.min_lowered ? 1 : 0, ts_owner_name(e->owner),
		        e->rule && e->rule[0] ? " " : "", e->rule ? e->rule : "");
	}
	if (fflush(f) != 0 || ferror(f))
		return -EIO;
	return fsync(fd) < 0 ? -errno : 0;
}

int ts_ledger_save(struct ts_ledger *l, const char *path)
{
	char tmp[PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* O_EXCL | O_NOFOLLOW: a symlink planted at the temporary name must not redirect it. */
	(void)unlink(tmp);
	_cleanup_close_ int fd =
	    open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int r = write_to(l, fd);
	if (r == 0 && close(TAKE_FD(fd)) < 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlink(tmp);
		return r;
	}
	sync_dir_of(path);
	l->dirty = false;
	return 0;
}

int ts_ledger_lock(const char *lock_path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(lock_path, '/');

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - lock_path) : 1,
	         slash ? lock_path : ".");
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	_cleanup_close_ int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0)
		return -errno;
	return TAKE_FD(fd);
}

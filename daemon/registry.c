/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "registry.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/printbuf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

void registry_free(struct registry *r)
{
	for (size_t i = 0; i < r->nnames; i++)
		free(r->names[i]);
	free(r->names);
	free(r->v);
	free(r->slot);
	memset(r, 0, sizeof(*r));
}

static size_t home_slot(const struct registry *r, pid_t tid)
{
	/* Fibonacci hashing (the top bits of tid * 2^32/phi): a fork burst's consecutive TIDs
	 * spread over the table. */
	unsigned int bits = (unsigned int)__builtin_ctzll(r->nslot);
	return bits ? ((uint32_t)tid * 2654435769u) >> (32 - bits) : 0;
}

/* The slot holding tid, or the free slot where it would go. */
static size_t probe(const struct registry *r, pid_t tid)
{
	size_t i = home_slot(r, tid);
	while (r->slot[i] && r->v[r->slot[i] - 1].tid != tid)
		i = (i + 1) & (r->nslot - 1);
	return i;
}

/* Rebuilds the index at nslot slots (a power of two above 2 * cap, so probes stay short). */
static bool reindex(struct registry *r, size_t nslot)
{
	uint32_t *slot = calloc(nslot, sizeof(*slot));
	if (!slot)
		return false;
	free(r->slot);
	r->slot = slot;
	r->nslot = nslot;
	for (size_t i = 0; i < r->n; i++)
		r->slot[probe(r, r->v[i].tid)] = (uint32_t)(i + 1);
	return true;
}

struct reg_entry *registry_find(struct registry *r, pid_t tid)
{
	if (!r->nslot)
		return NULL;
	uint32_t s = r->slot[probe(r, tid)];
	return s ? &r->v[s - 1] : NULL;
}

/* r's copy of name; NULL when out of memory. */
static const char *intern(struct registry *r, const char *name)
{
	if (!name)
		name = "";
	for (size_t i = 0; i < r->nnames; i++)
		if (strcmp(r->names[i], name) == 0)
			return r->names[i];
	char **v = realloc(r->names, (r->nnames + 1) * sizeof(*v));
	if (!v)
		return NULL;
	r->names = v;
	if (!(v[r->nnames] = strdup(name)))
		return NULL;
	return v[r->nnames++];
}

bool registry_set_rule(struct registry *r, struct reg_entry *e, const char *rule)
{
	const char *name = intern(r, rule);
	if (!name)
		return false;
	e->rule = name;
	r->dirty = true;
	return true;
}

struct reg_entry *registry_put(struct registry *r, const struct reg_entry *e)
{
	const char *name = intern(r, e->rule);
	if (!name)
		return NULL;
	struct reg_entry *old = registry_find(r, e->tid);
	r->dirty = true;
	if (old) {
		*old = *e;
		old->rule = name;
		return old;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		if (cap > UINT32_MAX / 4)
			return NULL;
		struct reg_entry *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		r->v = v;
		r->cap = cap;
	}
	if (r->nslot < 2 * r->cap && !reindex(r, 4 * r->cap))
		return NULL;
	r->v[r->n] = *e;
	r->v[r->n].rule = name;
	r->slot[probe(r, e->tid)] = (uint32_t)(r->n + 1);
	return &r->v[r->n++];
}

/* Empties slot i and moves later entries of its probe run back (no tombstones needed). */
static void unslot(struct registry *r, size_t i)
{
	size_t mask = r->nslot - 1;
	r->slot[i] = 0;
	for (size_t j = (i + 1) & mask; r->slot[j]; j = (j + 1) & mask) {
		size_t home = home_slot(r, r->v[r->slot[j] - 1].tid);
		/* Move it into the hole unless its home lies cyclically in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			r->slot[i] = r->slot[j];
			r->slot[j] = 0;
			i = j;
		}
	}
}

void registry_remove(struct registry *r, struct reg_entry *e)
{
	size_t i = (size_t)(e - r->v);
	if (i >= r->n)
		return;
	unslot(r, probe(r, e->tid));
	if (i != --r->n) {
		r->v[i] = r->v[r->n];
		r->slot[probe(r, r->v[i].tid)] = (uint32_t)(i + 1);
	}
	r->dirty = true;
}

size_t registry_count_tagged(const struct registry *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->v[i].how == REG_RULE || r->v[i].how == REG_INHERITED ||
		     r->v[i].how == REG_MANUAL_TAG;
	return n;
}

bool registry_prev_lookup(void *ctx, pid_t tid, unsigned long long starttime, struct ts_prev *out)
{
	struct reg_entry *e = registry_find(ctx, tid);
	if (!e || e->starttime != starttime || e->how == REG_MANUAL_UNTAG)
		return false;
	*out = e->prev;
	return true;
}

const char *registry_how_name(enum reg_how h)
{
	switch (h) {
	case REG_RULE:
		return "rule";
	case REG_INHERITED:
		return "inherited";
	case REG_MANUAL_TAG:
		return "manual";
	case REG_MANUAL_UNTAG:
		return "manual-untag";
	}
	return "?";
}

int registry_how_from_name(const char *name)
{
	for (int h = REG_RULE; h <= REG_MANUAL_UNTAG; h++)
		if (strcmp(name, registry_how_name((enum reg_how)h)) == 0)
			return h;
	return -1;
}

#define ADD(o, k, v) json_object_object_add((o), (k), (v))

/* A JSON string; rule names come from config section names and may hold any byte but NUL. */
static void append_string(struct printbuf *pb, const char *s)
{
	printbuf_strappend(pb, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			sprintbuf(pb, "\\%c", c);
		else if (c < 0x20)
			sprintbuf(pb, "\\u%04x", c);
		else
			printbuf_memappend(pb, s, 1);
	}
	printbuf_strappend(pb, "\"");
}

/*
 * One entry as JSON text, written directly: the registry file and the "tasks" reply carry
 * thousands of entries, and building json-c objects for each made a save of 10 000 entries take
 * a fifth of a second in the benchmark guest.
 */
static void append_entry(struct printbuf *pb, const struct reg_entry *e)
{
	sprintbuf(pb, "{\"tid\":%d,\"tgid\":%d,\"starttime\":%llu,\"rule\":", (int)e->tid,
	          (int)e->tgid, e->starttime);
	append_string(pb, e->rule);
	sprintbuf(pb,
	          ",\"how\":\"%s\",\"since\":%lld,\"util_min\":%u,\"util_max\":%u,"
	          "\"min_lowered\":%s}",
	          registry_how_name(e->how), (long long)e->since, (unsigned)e->prev.util_min,
	          (unsigned)e->prev.util_max, e->prev.min_lowered ? "true" : "false");
}

json_object *registry_entry_to_json(const struct reg_entry *e)
{
	struct printbuf *pb = printbuf_new();
	json_object *o = NULL;

	if (pb) {
		append_entry(pb, e);
		o = json_tokener_parse(pb->buf);
		printbuf_free(pb);
	}
	return o;
}

struct lazy_array {
	const struct registry *r;
	bool with_untag;
};

/* Writes the entries straight into the output: thousands of them never exist as json-c objects. */
static int lazy_array_to_string(json_object *jso, struct printbuf *pb, int level, int flags)
{
	const struct lazy_array *la = json_object_get_userdata(jso);
	bool first = true;

	(void)level;
	(void)flags;
	printbuf_strappend(pb, "[");
	for (size_t i = 0; i < la->r->n; i++) {
		const struct reg_entry *e = &la->r->v[i];
		if (e->how == REG_MANUAL_UNTAG && !la->with_untag)
			continue;
		if (!first)
			printbuf_strappend(pb, ",");
		append_entry(pb, e);
		first = false;
	}
	printbuf_strappend(pb, "]");
	return 0;
}

static void lazy_array_free(json_object *jso, void *userdata)
{
	(void)jso;
	free(userdata);
}

json_object *registry_to_json_array(const struct registry *r, bool with_untag)
{
	json_object *a = json_object_new_array();
	struct lazy_array *la = malloc(sizeof(*la));

	if (!a || !la) {
		free(la);
		json_object_put(a);
		return NULL;
	}
	la->r = r;
	la->with_untag = with_untag;
	json_object_set_serializer(a, lazy_array_to_string, la, lazy_array_free);
	return a;
}

/* An integer field within [min, max]. */
static bool get_range(json_object *o, const char *key, int64_t min, int64_t max, int64_t *out)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return *out >= min && *out <= max;
}

int registry_entry_from_json(json_object *o, struct reg_entry *out)
{
	json_object *v;
	int64_t tid, tgid, since, umin, umax;
	int how;

	memset(out, 0, sizeof(*out));
	if (!json_object_is_type(o, json_type_object) || !get_range(o, "tid", 1, INT32_MAX, &tid) ||
	    !get_range(o, "tgid", 1, INT32_MAX, &tgid) ||
	    !get_range(o, "since", 0, INT64_MAX, &since) ||
	    !get_range(o, "util_min", 0, UINT32_MAX, &umin) ||
	    !get_range(o, "util_max", 0, UINT32_MAX, &umax))
		return -EINVAL;
	/* starttime is unsigned 64-bit: json-c keeps it exactly as a uint64. */
	if (!json_object_object_get_ex(o, "starttime", &v) ||
	    !json_object_is_type(v, json_type_int))
		return -EINVAL;
	out->starttime = json_object_get_uint64(v);
	if (!json_object_object_get_ex(o, "how", &v) || !json_object_is_type(v, json_type_string) ||
	    (how = registry_how_from_name(json_object_get_string(v))) < 0)
		return -EINVAL;
	if (!json_object_object_get_ex(o, "rule", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    (size_t)json_object_get_string_len(v) >= REG_RULE_MAX)
		return -EINVAL;
	out->rule = json_object_get_string(v);
	if (!json_object_object_get_ex(o, "min_lowered", &v) ||
	    !json_object_is_type(v, json_type_boolean))
		return -EINVAL;
	out->prev.min_lowered = json_object_get_boolean(v);
	out->tid = (pid_t)tid;
	out->tgid = (pid_t)tgid;
	out->since = (time_t)since;
	out->prev.util_min = (uint32_t)umin;
	out->prev.util_max = (uint32_t)umax;
	out->how = (enum reg_how)how;
	return 0;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* fsync of the directory holding path, so the rename itself is durable. */
static void sync_dir_of(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

int registry_save(struct registry *r, const char *path)
{
	json_object *root = json_object_new_object(), *a = registry_to_json_array(r, true);
	char tmp[4096];
	int r2 = 0, fd;

	ADD(root, "format", json_object_new_string(REGISTRY_FORMAT));
	ADD(root, "version", json_object_new_int(REGISTRY_VERSION));
	ADD(root, "pid", json_object_new_int(getpid()));
	ADD(root, "saved", json_object_new_int64(time(NULL)));
	if (!a) {
		json_object_put(root);
		return -ENOMEM;
	}
	ADD(root, "entries", a);
	size_t len;
	const char *text = json_object_to_json_string_length(
	    root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		r2 = -ENAMETOOLONG;
		goto out;
	}
	/* O_NOFOLLOW: a symlink planted at the temporary name must not redirect the write. */
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		r2 = -errno;
		goto out;
	}
	if (!text)
		r2 = -ENOMEM;
	if (!r2 && fchmod(fd, 0644) < 0) /* the unit's UMask=0077 would make it 0600 */
		r2 = -errno;
	if (!r2)
		r2 = write_all(fd, text, len);
	if (!r2)
		r2 = write_all(fd, "\n", 1);
	if (!r2 && fsync(fd) < 0)
		r2 = -errno;
	if (close(fd) < 0 && !r2)
		r2 = -errno;
	if (!r2 && rename(tmp, path) < 0)
		r2 = -errno;
	if (r2)
		(void)unlink(tmp);
	else
		sync_dir_of(path);
out:
	json_object_put(root);
	if (!r2)
		r->dirty = false;
	return r2;
}

static int unusable(struct registry_load_report *rep, const char *why)
{
	snprintf(rep->why, sizeof(rep->why), "%s", why);
	return -EINVAL;
}

int registry_load(struct registry *r, const char *path, struct registry_load_report *rep)
{
	char *text = NULL;
	json_object *root, *v, *a;
	int ret;

	memset(rep, 0, sizeof(*rep));
	ret = ts_read_file(path, &text);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	root = json_tokener_parse(text);
	free(text);
	if (!root || !json_object_is_type(root, json_type_object))
		ret = unusable(rep, "not a JSON object (truncated or garbled)");
	else if (!json_object_object_get_ex(root, "format", &v) ||
	         !json_object_is_type(v, json_type_string) ||
	         strcmp(json_object_get_string(v), REGISTRY_FORMAT) != 0)
		ret = unusable(rep, "not a turboschedd registry (\"format\" missing or wrong)");
	else if (!json_object_object_get_ex(root, "version", &v) ||
	         !json_object_is_type(v, json_type_int) ||
	         json_object_get_int64(v) != REGISTRY_VERSION)
		ret = unusable(rep, "unsupported version (this daemon reads version 1)");
	else if (!json_object_object_get_ex(root, "entries", &a) ||
	         !json_object_is_type(a, json_type_array))
		ret = unusable(rep, "\"entries\" missing or not a list");
	else {
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			struct reg_entry e;
			if (registry_entry_from_json(json_object_array_get_idx(a, i), &e) < 0) {
				rep->bad++;
				continue;
			}
			if (!registry_put(r, &e)) {
				ret = -ENOMEM;
				break;
			}
			rep->entries++;
		}
	}
	json_object_put(root);
	return ret;
}

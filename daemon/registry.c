/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A plain array: a few hundred tagged threads at most in practice, and the linear search is
 * cheaper than keeping a hash table correct.
 */
#include "registry.h"

#include <stdlib.h>
#include <string.h>

void registry_free(struct registry *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

struct reg_entry *registry_find(struct registry *r, pid_t tid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].tid == tid)
			return &r->v[i];
	return NULL;
}

struct reg_entry *registry_put(struct registry *r, const struct reg_entry *e)
{
	struct reg_entry *old = registry_find(r, e->tid);
	if (old) {
		*old = *e;
		return old;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct reg_entry *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n] = *e;
	return &r->v[r->n++];
}

void registry_remove(struct registry *r, struct reg_entry *e)
{
	size_t i = (size_t)(e - r->v);
	if (i >= r->n)
		return;
	r->v[i] = r->v[--r->n];
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

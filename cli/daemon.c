/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "daemon.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int daemon_call(const struct cli_opts *o, const struct ts_request *req, json_object **resp,
                char *why, size_t whylen)
{
	const char *msg = NULL;
	int r;

	r = ts_proto_call(o->socket_path, req, TS_PROTO_TIMEOUT_MS, resp);
	if (r < 0) {
		snprintf(why, whylen, "%s", ts_proto_strerror(r));
		return r;
	}
	r = ts_response_check(*resp, &msg);
	if (r == 0)
		return 0;
	snprintf(why, whylen, "%s", r == 1 && msg ? msg : ts_proto_strerror(r < 0 ? r : -EPROTO));
	json_object_put(*resp);
	*resp = NULL;
	return r == 1 ? 1 : r;
}

int daemon_call_or_load(const struct cli_opts *o, const struct ts_request *req, const char *config,
                        const char *doing, json_object **resp, struct ts_config **cfg)
{
	char why[512];
	char *msgs = NULL;

	*resp = NULL;
	*cfg = NULL;
	int r = config ? -ENOENT : daemon_call(o, req, resp, why, sizeof(why));
	if (r == 0)
		return CLI_EXIT_OK;
	if (r == 1) {
		fprintf(o->err, "turboschedctl: %s\n", why);
		return CLI_EXIT_FAILURE;
	}
	/* No daemon (or --config): answer with what the daemon would load. */
	if (!config)
		fprintf(o->err, "turboschedctl: %s; %s the configuration on disk\n", why, doing);
	struct ts_config_source src = {.path = config};
	if (ts_config_load_joined(&src, cfg, &msgs) < 0) {
		fprintf(o->err, "turboschedctl: invalid configuration:\n%s\n",
		        msgs ? msgs : "out of memory");
		free(msgs);
		*cfg = NULL;
		return CLI_EXIT_FAILURE;
	}
	return CLI_EXIT_OK;
}

static bool get_int(json_object *o, const char *key, long long *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return true;
}

static int key_cmp(const void *a, const void *b)
{
	const struct daemon_registry_key *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

void daemon_registry_from_json(struct daemon_registry *reg, json_object *resp)
{
	json_object *tasks;

	memset(reg, 0, sizeof(*reg));
	reg->resp = resp;
	reg->reachable = true;
	if (!json_object_object_get_ex(resp, "tasks", &tasks) ||
	    !json_object_is_type(tasks, json_type_array))
		return;
	reg->tasks = tasks;
	size_t n = json_object_array_length(tasks);
	reg->by_tid = n ? calloc(n, sizeof(*reg->by_tid)) : NULL;
	if (!reg->by_tid)
		return; /* out of memory: lookups fall back to the linear search */
	for (size_t i = 0; i < n; i++) {
		long long t;
		if (get_int(json_object_array_get_idx(tasks, i), "tid", &t) && t > 0 &&
		    t <= INT32_MAX)
			reg->by_tid[reg->nkeys++] = (struct daemon_registry_key){(pid_t)t, i};
	}
	qsort(reg->by_tid, reg->nkeys, sizeof(*reg->by_tid), key_cmp);
}

void daemon_registry_load(const struct cli_opts *o, struct daemon_registry *reg)
{
	struct ts_request req = {.cmd = TS_CMD_TASKS};
	json_object *resp = NULL;
	char why[sizeof(reg->why)];

	if (daemon_call(o, &req, &resp, why, sizeof(why)) != 0) {
		memset(reg, 0, sizeof(*reg));
		snprintf(reg->why, sizeof(reg->why), "%s", why);
		return;
	}
	daemon_registry_from_json(reg, resp);
}

void daemon_registry_free(struct daemon_registry *reg)
{
	if (reg->resp)
		json_object_put(reg->resp);
	free(reg->by_tid);
	memset(reg, 0, sizeof(*reg));
}

/* The range [*lo, *hi) of tasks' indexes to look at for tid. */
static void candidates(const struct daemon_registry *reg, pid_t tid, size_t *lo, size_t *hi)
{
	if (!reg->by_tid) {
		*lo = 0;
		*hi = reg->tasks ? json_object_array_length(reg->tasks) : 0;
		return;
	}
	size_t a = 0, b = reg->nkeys;
	while (a < b) { /* the first key >= tid */
		size_t m = a + (b - a) / 2;
		if (reg->by_tid[m].tid < tid)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	for (b = a; b < reg->nkeys && reg->by_tid[b].tid == tid; b++)
		;
	*hi = b;
}

const char *daemon_registry_rule(const struct daemon_registry *reg, pid_t tid,
                                 unsigned long long starttime, struct ts_prev *prev)
{
	size_t lo, hi;

	candidates(reg, tid, &lo, &hi);
	for (size_t k = lo; k < hi; k++) {
		size_t i = reg->by_tid ? reg->by_tid[k].idx : k;
		json_object *e = json_object_array_get_idx(reg->tasks, i), *rule, *low;
		long long t, st, umin, umax;

		if (!get_int(e, "tid", &t) || t != tid)
			continue;
		/* Without a start time the record cannot be told from a reused TID's: trust it. */
		if (get_int(e, "starttime", &st) && (unsigned long long)st != starttime)
			continue;
		if (!json_object_object_get_ex(e, "rule", &rule) ||
		    !json_object_is_type(rule, json_type_string))
			continue;
		if (prev) {
			prev->util_min = get_int(e, "util_min", &umin) ? (uint32_t)umin : 0;
			prev->util_max =
			    get_int(e, "util_max", &umax) ? (uint32_t)umax : TS_UCLAMP_RESET;
			prev->min_lowered = json_object_object_get_ex(e, "min_lowered", &low) &&
			                    json_object_get_boolean(low);
		}
		return json_object_get_string(rule);
	}
	return NULL;
}

bool daemon_registry_lookup(void *ctx, pid_t tid, unsigned long long starttime, struct ts_prev *out)
{
	return daemon_registry_rule(ctx, tid, starttime, out) != NULL;
}

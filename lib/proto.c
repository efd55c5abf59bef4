/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "proto.h"

#include <errno.h>
#include <json-c/printbuf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "macro.h"
#include "util.h"

static const char *const cmd_names[TS_CMD_COUNT] = {
    [TS_CMD_STATUS] = "status", [TS_CMD_TASKS] = "tasks",   [TS_CMD_EXPLAIN] = "explain",
    [TS_CMD_RULES] = "rules",   [TS_CMD_RELOAD] = "reload",
};

const char *ts_proto_default_socket(void)
{
	return RUNSTATEDIR "/turboschedd/control";
}

const char *ts_cmd_name(enum ts_cmd c)
{
	return (unsigned)c < TS_CMD_COUNT ? cmd_names[c] : "?";
}

bool ts_cmd_is_change(enum ts_cmd c)
{
	return c == TS_CMD_RELOAD;
}

static bool cmd_takes_pid(enum ts_cmd c)
{
	return c == TS_CMD_EXPLAIN;
}

void ts_frame_put_len(uint8_t hdr[TS_PROTO_HDR_LEN], uint32_t len)
{
	hdr[0] = (uint8_t)(len >> 24);
	hdr[1] = (uint8_t)(len >> 16);
	hdr[2] = (uint8_t)(len >> 8);
	hdr[3] = (uint8_t)len;
}

uint32_t ts_frame_get_len(const uint8_t hdr[TS_PROTO_HDR_LEN])
{
	return (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
}

int ts_frame_complete(const uint8_t *buf, size_t len, size_t max, size_t *payload_len)
{
	if (len < TS_PROTO_HDR_LEN)
		return 0;
	size_t n = ts_frame_get_len(buf);
	if (n > max)
		return -EMSGSIZE;
	*payload_len = n;
	return len >= TS_PROTO_HDR_LEN + n ? 1 : 0;
}

uint8_t *ts_frame_encode(json_object *obj, size_t *len)
{
	size_t n;
	const char *s = json_object_to_json_string_length(
	    obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	if (!s || n > UINT32_MAX)
		return NULL;
	uint8_t *buf = malloc(TS_PROTO_HDR_LEN + n);
	if (!buf)
		return NULL;
	ts_frame_put_len(buf, (uint32_t)n);
	memcpy(buf + TS_PROTO_HDR_LEN, s, n);
	*len = TS_PROTO_HDR_LEN + n;
	return buf;
}

uint8_t *ts_frame_encode_error(const char *msg, size_t *len)
{
	json_object *o = ts_response_error("%s", msg);
	uint8_t *buf = ts_frame_encode(o, len);
	json_object_put(o);
	return buf;
}

json_object *ts_request_to_json(const struct ts_request *r)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "v", json_object_new_int(TS_PROTO_VERSION));
	json_object_object_add(o, "cmd", json_object_new_string(ts_cmd_name(r->cmd)));
	if (cmd_takes_pid(r->cmd))
		json_object_object_add(o, "pid", json_object_new_int(r->pid));
	return o;
}

/* Parses at most len bytes of JSON text into one object; NULL if it is not exactly one object. */
static json_object *parse_object(const char *payload, size_t len)
{
	if (len > INT32_MAX)
		return NULL;
	json_tokener *tok = json_tokener_new();
	if (!tok)
		return NULL;
	json_object *o = json_tokener_parse_ex(tok, payload, (int)len);
	bool whole = o && json_tokener_get_error(tok) == json_tokener_success &&
	             json_tokener_get_parse_end(tok) == len;
	json_tokener_free(tok);
	if (!whole || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *ts_response_decode(const char *payload, size_t len)
{
	json_object *o = parse_object(payload, len);
	if (o && ts_response_check(o, NULL) < 0) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

int ts_request_parse(const char *payload, size_t len, struct ts_request *out, char *err,
                     size_t errlen)
{
	_cleanup_(json_object_putp) json_object *o = parse_object(payload, len);
	json_object *v;

	memset(out, 0, sizeof(*out));
	if (!o) {
		snprintf(err, errlen, "request is not a JSON object");
		return -EINVAL;
	}
	if (!json_object_object_get_ex(o, "v", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != TS_PROTO_VERSION) {
		snprintf(err, errlen, "unsupported protocol version (this daemon speaks %d)",
		         TS_PROTO_VERSION);
		return -EINVAL;
	}
	if (!json_object_object_get_ex(o, "cmd", &v) || !json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "'cmd' missing or not a string");
		return -EINVAL;
	}
	const char *name = json_object_get_string(v);
	int c;
	for (c = 0; c < TS_CMD_COUNT; c++)
		if (strcmp(name, cmd_names[c]) == 0)
			break;
	if (c == TS_CMD_COUNT) {
		/* Echoed into a JSON string the client decodes: printable ASCII only. */
		char shown[65];
		size_t i;
		for (i = 0; name[i] && i < sizeof(shown) - 1; i++)
			shown[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
		shown[i] = '\0';
		snprintf(err, errlen, "unknown command '%s'", shown);
		return -EINVAL;
	}
	out->cmd = (enum ts_cmd)c;
	if (cmd_takes_pid(out->cmd)) {
		int64_t pid;
		if (!json_object_object_get_ex(o, "pid", &v) ||
		    !json_object_is_type(v, json_type_int) ||
		    (pid = json_object_get_int64(v)) <= 0 || pid > INT32_MAX) {
			snprintf(err, errlen, "'pid' must be a positive integer");
			return -EINVAL;
		}
		out->pid = (pid_t)pid;
	}
	return 0;
}

json_object *ts_response_ok(void)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

json_object *ts_response_error(const char *fmt, ...)
{
	json_object *o = json_object_new_object();
	_cleanup_free_ char *m = NULL;
	va_list ap;

	va_start(ap, fmt);
	m = ts_vasprintf(fmt, ap);
	va_end(ap);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(m ? m : "out of memory"));
	return o;
}

int ts_response_check(json_object *resp, const char **err)
{
	json_object *ok, *e;

	if (!resp || !json_object_is_type(resp, json_type_object) ||
	    !json_object_object_get_ex(resp, "ok", &ok) ||
	    !json_object_is_type(ok, json_type_boolean))
		return -EPROTO;
	if (json_object_get_boolean(ok))
		return 0;
	if (!json_object_object_get_ex(resp, "error", &e) ||
	    !json_object_is_type(e, json_type_string))
		return -EPROTO;
	if (err)
		*err = json_object_get_string(e);
	return 1;
}

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
 * One entry as JSON text, written directly: the "tasks" reply carries thousands of entries, and
 * building json-c objects for each made a reply of 10 000 entries take a fifth of a second in
 * the benchmark guest.
 */
static void append_entry(struct printbuf *pb, const struct ts_ledger_entry *e)
{
	sprintbuf(pb, "{\"tid\":%d,\"tgid\":%d,\"starttime\":%llu,\"rule\":", (int)e->tid,
	          (int)e->tgid, e->starttime);
	append_string(pb, e->rule ? e->rule : "");
	sprintbuf(pb,
	          ",\"how\":\"%s\",\"since\":%lld,\"util_min\":%u,\"util_max\":%u,"
	          "\"min_lowered\":%s}",
	          ts_owner_name(e->owner), (long long)e->since, (unsigned)e->prev.util_min,
	          (unsigned)e->prev.util_max, e->prev.min_lowered ? "true" : "false");
}

json_object *ts_ledger_entry_to_json(const struct ts_ledger_entry *e)
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

/* Writes the entries straight into the output: thousands of them never exist as json-c objects. */
static int lazy_array_to_string(json_object *jso, struct printbuf *pb, int level, int flags)
{
	const struct ts_ledger *l = json_object_get_userdata(jso);

	(void)level;
	(void)flags;
	printbuf_strappend(pb, "[");
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			printbuf_strappend(pb, ",");
		append_entry(pb, &l->v[i]);
	}
	printbuf_strappend(pb, "]");
	return 0;
}

json_object *ts_reply_tasks(const struct ts_ledger *l)
{
	json_object *o = ts_response_ok(), *a = json_object_new_array();

	if (!o || !a) {
		json_object_put(o);
		json_object_put(a);
		return NULL;
	}
	json_object_set_serializer(a, lazy_array_to_string, (void *)l, NULL);
	json_object_object_add(o, "tasks", a);
	return o;
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

int ts_ledger_entry_from_json(json_object *o, struct ts_ledger_entry *out)
{
	json_object *v;
	int64_t tid, tgid, since, umin, umax;
	int owner;

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
	    (owner = ts_owner_from_name(json_object_get_string(v))) < 0)
		return -EINVAL;
	if (!json_object_object_get_ex(o, "rule", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    (size_t)json_object_get_string_len(v) >= TS_LEDGER_RULE_MAX)
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
	out->owner = (enum ts_owner)owner;
	return 0;
}

int ts_reply_tasks_parse(json_object *resp, struct ts_ledger *l)
{
	json_object *a;

	if (!json_object_object_get_ex(resp, "tasks", &a) ||
	    !json_object_is_type(a, json_type_array))
		return -EPROTO;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct ts_ledger_entry e;
		if (ts_ledger_entry_from_json(json_object_array_get_idx(a, i), &e) < 0)
			continue;
		if (!ts_ledger_put(l, &e))
			return -ENOMEM;
	}
	return 0;
}

#define ADD(o, k, v) json_object_object_add((o), (k), (v))

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* Readers that let a field be absent or null: a reply may be shorter than this build's. */
static uint64_t get_u64(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	return json_object_is_type(v, json_type_int) ? json_object_get_uint64(v) : 0;
}

static int64_t get_i64(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	return json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : 0;
}

static bool get_bool(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void copy_str(char *dst, size_t len, const char *s)
{
	snprintf(dst, len, "%s", s ? s : "");
}

static json_object *strv_json(const char *const *v, size_t n)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

/* The strings of an array field, copied; the count in *n. -EPROTO when it is no string array. */
static int strv_parse(json_object *o, const char *key, char ***out, size_t *n)
{
	json_object *a = get(o, key);
	size_t len = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	*out = NULL;
	*n = 0;
	if (!json_object_is_type(a, json_type_array))
		return -EPROTO;
	if (!len)
		return 0;
	*out = calloc(len, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		json_object *s = json_object_array_get_idx(a, i);
		if (!json_object_is_type(s, json_type_string))
			return -EPROTO;
		(*out)[i] = strdup(json_object_get_string(s));
		if (!(*out)[i])
			return -ENOMEM;
		(*n)++;
	}
	return 0;
}

/* Lists the status's parts in wire order: one place says which keys a status has. */
static json_object *status_last_reload(const struct ts_status *s)
{
	json_object *rl = json_object_new_object();
	ADD(rl, "count", json_object_new_int64((int64_t)s->last_reload.count));
	ADD(rl, "failures", json_object_new_int64((int64_t)s->last_reload.failures));
	ADD(rl, "ok", json_object_new_boolean(s->last_reload.error == NULL));
	ADD(rl, "error", str_or_null(s->last_reload.error));
	return rl;
}

static json_object *status_stats(const struct ts_status *s)
{
	json_object *o = json_object_new_object(), *causes = json_object_new_object();
#define PUT(name) ADD(o, #name, json_object_new_int64((int64_t)s->stats.name));
	TS_STATUS_STATS(PUT)
#undef PUT
	ADD(o, "late_ms", json_object_new_int(s->stats.late_ms));
	for (size_t i = 0; i < s->stats.ncauses; i++)
		ADD(causes, s->stats.causes[i].name,
		    json_object_new_int64((int64_t)s->stats.causes[i].count));
	ADD(o, "failures_by_cause", causes);
	return o;
}

static json_object *status_proc_connector(const struct ts_status *s)
{
	json_object *o = json_object_new_object();
	ADD(o, "subscribed", json_object_new_boolean(s->proc_connector.subscribed));
	ADD(o, "error", str_or_null(s->proc_connector.error));
	return o;
}

static json_object *status_control(const struct ts_status *s)
{
	json_object *o = json_object_new_object();
#define PUT(name) ADD(o, #name, json_object_new_int64((int64_t)s->control.name));
	TS_STATUS_CONTROL(PUT)
#undef PUT
	return o;
}

json_object *ts_reply_status(const struct ts_status *s)
{
	json_object *o = ts_response_ok(), *c = json_object_new_object();

	ADD(o, "pid", json_object_new_int(s->pid));
	ADD(o, "version", str_or_null(s->version));
	ADD(o, "started", json_object_new_int64(s->started));
	ADD(c, "files", strv_json(s->config.files, s->config.nfiles));
	ADD(c, "loaded", json_object_new_int64(s->config.loaded));
	ADD(c, "rules", json_object_new_int64((int64_t)s->config.rules));
	ADD(c, "excludes", json_object_new_int64((int64_t)s->config.excludes));
	ADD(c, "recheck_interval_ms", json_object_new_int64(s->config.recheck_interval_ms));
	ADD(c, "restore_on_stop", json_object_new_boolean(s->config.restore_on_stop));
	ADD(o, "config", c);
	ADD(o, "last_reload", status_last_reload(s));
	ADD(o, "tagged", json_object_new_int64((int64_t)s->tagged));
	ADD(o, "stats", status_stats(s));
	ADD(o, "proc_connector", status_proc_connector(s));
	ADD(o, "degraded", str_or_null(s->degraded));
	ADD(o, "control", status_control(s));
	return o;
}

void ts_status_add_summary(json_object *o, const struct ts_status *s)
{
	ADD(o, "pid", s ? json_object_new_int(s->pid) : NULL);
	ADD(o, "version", s ? str_or_null(s->version) : NULL);
	ADD(o, "tagged", s ? json_object_new_int64((int64_t)s->tagged) : NULL);
	ADD(o, "last_reload", s ? status_last_reload(s) : NULL);
	ADD(o, "stats", s ? status_stats(s) : NULL);
	ADD(o, "control", s && s->has_control ? status_control(s) : NULL);
	ADD(o, "proc_connector", s && s->has_proc_connector ? status_proc_connector(s) : NULL);
	ADD(o, "degraded", s ? str_or_null(s->degraded) : NULL);
}

static int status_files_parse(json_object *c, struct ts_status *out)
{
	json_object *a = get(c, "files");
	size_t n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
	const char **v;

	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *f = json_object_get_string(json_object_array_get_idx(a, i));
		v[out->config.nfiles++] = f ? f : "";
	}
	out->config.files = v;
	return 0;
}

int ts_reply_status_parse(json_object *resp, struct ts_status *out)
{
	json_object *c = get(resp, "config"), *rl = get(resp, "last_reload"),
	            *st = get(resp, "stats"), *pc = get(resp, "proc_connector"),
	            *ctl = get(resp, "control");

	memset(out, 0, sizeof(*out));
	if (!json_object_is_type(resp, json_type_object))
		return -EPROTO;
	out->pid = (pid_t)get_i64(resp, "pid");
	out->version = get_str(resp, "version");
	out->started = get_i64(resp, "started");
	out->has_config = json_object_is_type(c, json_type_object);
	out->config.loaded = get_i64(c, "loaded");
	out->config.rules = get_u64(c, "rules");
	out->config.excludes = get_u64(c, "excludes");
	out->config.recheck_interval_ms = get_i64(c, "recheck_interval_ms");
	out->config.restore_on_stop = get_bool(c, "restore_on_stop");
	out->last_reload.count = get_u64(rl, "count");
	out->last_reload.failures = get_u64(rl, "failures");
	out->last_reload.error = get_str(rl, "error");
	out->tagged = get_u64(resp, "tagged");
#define GET(name) out->stats.name = get_u64(st, #name);
	TS_STATUS_STATS(GET)
#undef GET
	out->stats.late_ms = (int)get_i64(st, "late_ms");
	json_object *causes = get(st, "failures_by_cause");
	if (json_object_is_type(causes, json_type_object)) {
		json_object_object_foreach(causes, name, count)
		{
			if (out->stats.ncauses == TS_STATUS_CAUSES)
				break;
			out->stats.causes[out->stats.ncauses].name = name;
			out->stats.causes[out->stats.ncauses++].count =
			    json_object_get_uint64(count);
		}
	}
	out->has_proc_connector = json_object_is_type(pc, json_type_object);
	out->proc_connector.subscribed = get_bool(pc, "subscribed");
	out->proc_connector.error = get_str(pc, "error");
	out->degraded = get_str(resp, "degraded");
	out->has_control = json_object_is_type(ctl, json_type_object);
#define GET(name) out->control.name = get_u64(ctl, #name);
	TS_STATUS_CONTROL(GET)
#undef GET
	return status_files_parse(c, out);
}

void ts_status_free(struct ts_status *s)
{
	free((void *)s->config.files);
	memset(s, 0, sizeof(*s));
}

json_object *ts_rules_to_json(const struct ts_ruleset *rs)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < rs->nrules; i++) {
		const struct ts_rule *r = &rs->rules[i];
		json_object *o = json_object_new_object();
		ADD(o, "name", json_object_new_string(r->name));
		ADD(o, "kind", json_object_new_string(ts_rule_kind_name(r->kind)));
		ADD(o, "threads", json_object_new_string(ts_rule_threads_name(r->threads)));
		ADD(o, "comm", strv_json((const char *const *)r->comm, r->ncomm));
		ADD(o, "cgroup", strv_json((const char *const *)r->cgroup, r->ncgroup));
		ADD(o, "user", strv_json((const char *const *)r->user, r->nuser));
		ADD(o, "file", json_object_new_string(r->file));
		ADD(o, "line", json_object_new_int(r->line));
		json_object_array_add(a, o);
	}
	return a;
}

json_object *ts_reply_rules(const struct ts_ruleset *rs, char *const *files, size_t nfiles,
                            bool from_config)
{
	json_object *o = ts_response_ok();

	ADD(o, "rules", ts_rules_to_json(rs));
	if (files)
		ADD(o, "files", strv_json((const char *const *)files, nfiles));
	if (from_config)
		ADD(o, "source", json_object_new_string("config"));
	return o;
}

static int rule_parse(json_object *o, struct ts_rule *r)
{
	const char *name = get_str(o, "name"), *file = get_str(o, "file");
	const char *kind = get_str(o, "kind"), *threads = get_str(o, "threads");
	int err;

	if (!name || !file || !kind || !threads)
		return -EPROTO;
	r->kind =
	    strcmp(kind, ts_rule_kind_name(TS_RULE_EXCLUDE)) == 0 ? TS_RULE_EXCLUDE : TS_RULE_TAG;
	r->threads = strcmp(threads, ts_rule_threads_name(TS_THREADS_MATCHED)) == 0
	                 ? TS_THREADS_MATCHED
	                 : TS_THREADS_ALL;
	r->line = (int)get_i64(o, "line");
	r->name = strdup(name);
	r->file = strdup(file);
	if (!r->name || !r->file)
		return -ENOMEM;
	if ((err = strv_parse(o, "comm", &r->comm, &r->ncomm)) < 0 ||
	    (err = strv_parse(o, "cgroup", &r->cgroup, &r->ncgroup)) < 0 ||
	    (err = strv_parse(o, "user", &r->user, &r->nuser)) < 0)
		return err;
	return 0;
}

int ts_reply_rules_parse(json_object *resp, struct ts_rules_reply *out)
{
	json_object *a = get(resp, "rules");
	const char *source = get_str(resp, "source");
	size_t n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
	int r;

	memset(out, 0, sizeof(*out));
	if (!json_object_is_type(a, json_type_array))
		return -EPROTO;
	out->from_config = source && strcmp(source, "config") == 0;
	if (get(resp, "files") && (r = strv_parse(resp, "files", &out->files, &out->nfiles)) < 0)
		return r;
	out->rules.rules = calloc(n ? n : 1, sizeof(*out->rules.rules));
	if (!out->rules.rules)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		r = rule_parse(json_object_array_get_idx(a, i), &out->rules.rules[i]);
		out->rules.nrules++;
		if (r < 0)
			return r;
	}
	return 0;
}

void ts_rules_reply_free(struct ts_rules_reply *r)
{
	for (size_t i = 0; i < r->rules.nrules; i++)
		ts_rule_free(&r->rules.rules[i]);
	free(r->rules.rules);
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	memset(r, 0, sizeof(*r));
}

int ts_explain_build(const struct ts_ruleset *rs, const struct ts_task *thread,
                     const struct ts_task *process, struct ts_explain *out)
{
	_cleanup_free_ struct ts_rule_result *res =
	    calloc(rs->nrules ? rs->nrules : 1, sizeof(*res));
	struct ts_subject ts, ps;

	memset(out, 0, sizeof(*out));
	out->rules = calloc(rs->nrules ? rs->nrules : 1, sizeof(*out->rules));
	if (!res || !out->rules) {
		ts_explain_free(out);
		return -ENOMEM;
	}
	ts_subject_from_task(thread, &ts);
	ts_subject_from_task(process, &ps);
	struct ts_verdict v = ts_ruleset_explain(rs, &ts, &ps, res);

	out->pid = thread->tid;
	out->tgid = thread->tgid;
	copy_str(out->comm, sizeof(out->comm), thread->comm);
	copy_str(out->process_comm, sizeof(out->process_comm), process->comm);
	copy_str(out->cgroup, sizeof(out->cgroup), thread->cgroup);
	out->uid = thread->euid;
	out->jitter = thread->jitter;
	out->verdict = v.kind;
	out->rule = v.rule ? v.rule->name : NULL;
	for (size_t i = 0; i < rs->nrules; i++) {
		struct ts_explain_rule *er = &out->rules[out->nrules++];
		er->name = res[i].rule->name;
		er->kind = res[i].rule->kind;
		er->threads = res[i].rule->threads;
		er->matched = res[i].matched;
		memcpy(er->field, res[i].field, sizeof(er->field));
	}
	return 0;
}

int ts_explain_pid(const struct ts_ruleset *rs, pid_t pid, struct ts_explain *out)
{
	struct ts_task t, p;
	int r = ts_rules_read_task(0, pid, TS_TASK_ALL, &t, &p);

	memset(out, 0, sizeof(*out));
	return r < 0 ? r : ts_explain_build(rs, &t, &p, out);
}

void ts_explain_free(struct ts_explain *e)
{
	free(e->rules);
	e->rules = NULL;
	e->nrules = 0;
}

static const char *subject_name(enum ts_rule_threads t)
{
	return t == TS_THREADS_ALL ? "process" : "thread";
}

static json_object *explain_json(const struct ts_explain *e)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	ADD(o, "pid", json_object_new_int(e->pid));
	ADD(o, "tgid", json_object_new_int(e->tgid));
	ADD(o, "comm", json_object_new_string(e->comm));
	ADD(o, "process_comm", json_object_new_string(e->process_comm));
	ADD(o, "cgroup", json_object_new_string(e->cgroup));
	ADD(o, "uid", json_object_new_int64(e->uid));
	ADD(o, "jitter", json_object_new_int(e->jitter));
	ADD(o, "verdict", json_object_new_string(ts_verdict_name(e->verdict)));
	ADD(o, "rule", str_or_null(e->rule));
	for (size_t i = 0; i < e->nrules; i++) {
		const struct ts_explain_rule *er = &e->rules[i];
		json_object *r = json_object_new_object(), *f = json_object_new_object();
		ADD(r, "name", json_object_new_string(er->name));
		ADD(r, "kind", json_object_new_string(ts_rule_kind_name(er->kind)));
		ADD(r, "subject", json_object_new_string(subject_name(er->threads)));
		ADD(r, "matched", json_object_new_boolean(er->matched));
		for (int k = 0; k < TS_FIELD_COUNT; k++) {
			const struct ts_field_result *fr = &er->field[k];
			if (!fr->given)
				continue;
			json_object *fo = json_object_new_object();
			ADD(fo, "matched", json_object_new_boolean(fr->matched));
			ADD(fo, "pattern", str_or_null(fr->pattern));
			ADD(f, ts_rule_field_name((enum ts_rule_field)k), fo);
		}
		ADD(r, "fields", f);
		json_object_array_add(a, r);
	}
	ADD(o, "rules", a);
	return o;
}

json_object *ts_explain_to_json(const struct ts_ruleset *rs, const struct ts_task *thread,
                                const struct ts_task *process)
{
	struct ts_explain e;
	json_object *o;

	if (ts_explain_build(rs, thread, process, &e) < 0)
		return NULL;
	o = explain_json(&e);
	ts_explain_free(&e);
	return o;
}

json_object *ts_reply_explain(const struct ts_explain *e)
{
	json_object *o = explain_json(e);

	ADD(o, "ok", json_object_new_boolean(1));
	ADD(o, "source", json_object_new_string(e->from_config ? "config" : "daemon"));
	ADD(o, "registry", e->owned ? ts_ledger_entry_to_json(&e->owner) : NULL);
	return o;
}

static void explain_rule_parse(json_object *o, struct ts_explain_rule *er)
{
	const char *kind = get_str(o, "kind"), *subject = get_str(o, "subject");
	json_object *fields = get(o, "fields");

	er->name = get_str(o, "name");
	er->name = er->name ? er->name : "";
	er->kind = kind && strcmp(kind, ts_rule_kind_name(TS_RULE_EXCLUDE)) == 0 ? TS_RULE_EXCLUDE
	                                                                         : TS_RULE_TAG;
	er->threads = subject && strcmp(subject, subject_name(TS_THREADS_MATCHED)) == 0
	                  ? TS_THREADS_MATCHED
	                  : TS_THREADS_ALL;
	er->matched = get_bool(o, "matched");
	for (int k = 0; k < TS_FIELD_COUNT; k++) {
		json_object *fo = get(fields, ts_rule_field_name((enum ts_rule_field)k));
		if (!json_object_is_type(fo, json_type_object))
			continue;
		er->field[k].given = true;
		er->field[k].matched = get_bool(fo, "matched");
		er->field[k].pattern = get_str(fo, "pattern");
	}
}

static enum ts_verdict_kind verdict_from_name(const char *s)
{
	static const enum ts_verdict_kind all[] = {TS_VERDICT_TAG, TS_VERDICT_EXCLUDED};
	for (size_t i = 0; s && i < ELEMENTSOF(all); i++)
		if (strcmp(s, ts_verdict_name(all[i])) == 0)
			return all[i];
	return TS_VERDICT_NONE;
}

int ts_reply_explain_parse(json_object *resp, struct ts_explain *out)
{
	json_object *a = get(resp, "rules"), *reg = get(resp, "registry");
	const char *source = get_str(resp, "source");
	size_t n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	memset(out, 0, sizeof(*out));
	if (!json_object_is_type(resp, json_type_object))
		return -EPROTO;
	out->pid = (pid_t)get_i64(resp, "pid");
	out->tgid = (pid_t)get_i64(resp, "tgid");
	copy_str(out->comm, sizeof(out->comm), get_str(resp, "comm"));
	copy_str(out->process_comm, sizeof(out->process_comm), get_str(resp, "process_comm"));
	copy_str(out->cgroup, sizeof(out->cgroup), get_str(resp, "cgroup"));
	out->uid = (uid_t)get_i64(resp, "uid");
	out->jitter = (int)get_i64(resp, "jitter");
	out->verdict = verdict_from_name(get_str(resp, "verdict"));
	out->rule = get_str(resp, "rule");
	out->from_config = source && strcmp(source, "config") == 0;
	out->owned = reg && ts_ledger_entry_from_json(reg, &out->owner) == 0;
	out->rules = calloc(n ? n : 1, sizeof(*out->rules));
	if (!out->rules)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		explain_rule_parse(json_object_array_get_idx(a, i), &out->rules[out->nrules++]);
	return 0;
}

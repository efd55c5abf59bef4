/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "proto.h"

#include <errno.h>
#include <json-c/printbuf.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "build_config.h"
#include "task.h"

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
	json_object *o = parse_object(payload, len), *v;
	int ret = -EINVAL;

	memset(out, 0, sizeof(*out));
	if (!o) {
		snprintf(err, errlen, "request is not a JSON object");
		return -EINVAL;
	}
	if (!json_object_object_get_ex(o, "v", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != TS_PROTO_VERSION) {
		snprintf(err, errlen, "unsupported protocol version (this daemon speaks %d)",
		         TS_PROTO_VERSION);
		goto out;
	}
	if (!json_object_object_get_ex(o, "cmd", &v) || !json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "'cmd' missing or not a string");
		goto out;
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
		goto out;
	}
	out->cmd = (enum ts_cmd)c;
	if (cmd_takes_pid(out->cmd)) {
		int64_t pid;
		if (!json_object_object_get_ex(o, "pid", &v) ||
		    !json_object_is_type(v, json_type_int) ||
		    (pid = json_object_get_int64(v)) <= 0 || pid > INT32_MAX) {
			snprintf(err, errlen, "'pid' must be a positive integer");
			goto out;
		}
		out->pid = (pid_t)pid;
	}
	ret = 0;
out:
	json_object_put(o);
	return ret;
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
	char *m = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(m ? m : "out of memory"));
	free(m);
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

static json_object *strv_json(char *const *v, size_t n)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

json_object *ts_rules_to_json(const struct ts_ruleset *rs)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < rs->nrules; i++) {
		const struct ts_rule *r = &rs->rules[i];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(r->name));
		json_object_object_add(o, "kind",
		                       json_object_new_string(ts_rule_kind_name(r->kind)));
		json_object_object_add(o, "threads",
		                       json_object_new_string(ts_rule_threads_name(r->threads)));
		json_object_object_add(o, "comm", strv_json(r->comm, r->ncomm));
		json_object_object_add(o, "cgroup", strv_json(r->cgroup, r->ncgroup));
		json_object_object_add(o, "user", strv_json(r->user, r->nuser));
		json_object_object_add(o, "file", json_object_new_string(r->file));
		json_object_object_add(o, "line", json_object_new_int(r->line));
		json_object_array_add(a, o);
	}
	return a;
}

json_object *ts_explain_to_json(const struct ts_ruleset *rs, const struct ts_task *thread,
                                const struct ts_task *process)
{
	struct ts_subject ts, ps;
	struct ts_rule_result *res = calloc(rs->nrules ? rs->nrules : 1, sizeof(*res));
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	if (!res) {
		json_object_put(o);
		json_object_put(a);
		return NULL;
	}
	ts_subject_from_task(thread, &ts);
	ts_subject_from_task(process, &ps);
	struct ts_verdict v = ts_ruleset_explain(rs, &ts, &ps, res);

	json_object_object_add(o, "pid", json_object_new_int(thread->tid));
	json_object_object_add(o, "tgid", json_object_new_int(thread->tgid));
	json_object_object_add(o, "comm", json_object_new_string(thread->comm));
	json_object_object_add(o, "process_comm", json_object_new_string(process->comm));
	json_object_object_add(o, "cgroup", json_object_new_string(thread->cgroup));
	json_object_object_add(o, "uid", json_object_new_int64(thread->euid));
	json_object_object_add(o, "jitter", json_object_new_int(thread->jitter));
	json_object_object_add(o, "verdict", json_object_new_string(ts_verdict_name(v.kind)));
	json_object_object_add(o, "rule", v.rule ? json_object_new_string(v.rule->name) : NULL);
	for (size_t i = 0; i < rs->nrules; i++) {
		json_object *r = json_object_new_object(), *f = json_object_new_object();
		json_object_object_add(r, "name", json_object_new_string(res[i].rule->name));
		json_object_object_add(
		    r, "kind", json_object_new_string(ts_rule_kind_name(res[i].rule->kind)));
		json_object_object_add(r, "subject",
		                       json_object_new_string(res[i].rule->threads == TS_THREADS_ALL
		                                                  ? "process"
		                                                  : "thread"));
		json_object_object_add(r, "matched", json_object_new_boolean(res[i].matched));
		for (int k = 0; k < TS_FIELD_COUNT; k++) {
			const struct ts_field_result *fr = &res[i].field[k];
			if (!fr->given)
				continue;
			json_object *fo = json_object_new_object();
			json_object_object_add(fo, "matched", json_object_new_boolean(fr->matched));
			json_object_object_add(fo, "pattern",
			                       fr->pattern ? json_object_new_string(fr->pattern)
			                                   : NULL);
			json_object_object_add(f, ts_rule_field_name((enum ts_rule_field)k), fo);
		}
		json_object_object_add(r, "fields", f);
		json_object_array_add(a, r);
	}
	json_object_object_add(o, "rules", a);
	free(res);
	return o;
}

json_object *ts_explain_pid(const struct ts_ruleset *rs, pid_t pid, int *err)
{
	struct ts_task t, p;
	int r = ts_rules_read_task(0, pid, TS_TASK_ALL, &t, &p);
	json_object *o = r < 0 ? NULL : ts_explain_to_json(rs, &t, &p);

	*err = r < 0 ? r : o ? 0 : -ENOMEM;
	return o;
}

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits for fd to become ready for events before the deadline. 0 or -ETIMEDOUT/-errno. */
static int wait_fd(int fd, short events, long long deadline)
{
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = {.fd = fd, .events = events};
		int r = poll(&p, 1, (int)left);
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int send_all(int fd, const uint8_t *buf, size_t len, long long deadline)
{
	while (len) {
		int r = wait_fd(fd, POLLOUT, deadline);
		if (r)
			return r;
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int recv_all(int fd, uint8_t *buf, size_t len, long long deadline)
{
	while (len) {
		int r = wait_fd(fd, POLLIN, deadline);
		if (r)
			return r;
		ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EPROTO; /* closed mid-message */
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int ts_proto_call(const char *path, const struct ts_request *req, int timeout_ms,
                  json_object **resp)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	long long deadline = now_ms() + timeout_ms;
	uint8_t hdr[TS_PROTO_HDR_LEN], *out = NULL, *in = NULL;
	size_t outlen = 0;
	int fd, r;

	*resp = NULL;
	if (!path)
		path = ts_proto_default_socket();
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		goto out;
	}
	json_object *jr = ts_request_to_json(req);
	out = ts_frame_encode(jr, &outlen);
	json_object_put(jr);
	if (!out) {
		r = -ENOMEM;
		goto out;
	}
	r = send_all(fd, out, outlen, deadline);
	if (r)
		goto out;
	r = recv_all(fd, hdr, sizeof(hdr), deadline);
	if (r)
		goto out;
	uint32_t n = ts_frame_get_len(hdr);
	if (n > TS_PROTO_MAX_RESPONSE) {
		r = -EMSGSIZE;
		goto out;
	}
	in = malloc(n ? n : 1);
	if (!in) {
		r = -ENOMEM;
		goto out;
	}
	r = recv_all(fd, in, n, deadline);
	if (r)
		goto out;
	*resp = ts_response_decode((const char *)in, n);
	r = *resp ? 0 : -EPROTO;
out:
	free(out);
	free(in);
	close(fd);
	return r;
}

const char *ts_proto_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case ENOENT:
	case ECONNREFUSED:
		return "turboschedd is not running (start it with: systemctl start turboschedd)";
	case EACCES:
		return "permission denied on the control socket";
	case ETIMEDOUT:
		return "turboschedd did not answer in time";
	case EMSGSIZE:
		return "turboschedd sent an oversized response";
	case EPROTO:
		return "turboschedd sent a malformed response";
	}
	return strerror(err < 0 ? -err : err);
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Control protocol: framing, request round-trip, malformed input, JSON views, the client. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "helpers.h"
#include "proto.h"
#include "socket_client.h"
#include "task.h"

START_TEST(test_frame)
{
	uint8_t hdr[4];
	ts_frame_put_len(hdr, 0x01020304);
	ck_assert_uint_eq(hdr[0], 1);
	ck_assert_uint_eq(hdr[3], 4);
	ck_assert_uint_eq(ts_frame_get_len(hdr), 0x01020304);

	json_object *o = ts_response_ok();
	size_t len, plen;
	uint8_t *buf = ts_frame_encode(o, &len);
	json_object_put(o);
	ck_assert_uint_eq(len, 4 + strlen("{\"ok\":true}"));
	ck_assert_int_eq(ts_frame_complete(buf, 3, 100, &plen), 0);
	ck_assert_int_eq(ts_frame_complete(buf, len - 1, 100, &plen), 0);
	ck_assert_int_eq(ts_frame_complete(buf, len, 100, &plen), 1);
	ck_assert_uint_eq(plen, len - 4);
	ck_assert_int_eq(ts_frame_complete(buf, len, 5, &plen), -EMSGSIZE);
	free(buf);
}
END_TEST

static void roundtrip(const struct ts_request *in)
{
	json_object *o = ts_request_to_json(in);
	const char *s = json_object_to_json_string(o);
	struct ts_request out;
	char err[128];
	ck_assert_int_eq(ts_request_parse(s, strlen(s), &out, err, sizeof(err)), 0);
	ck_assert_int_eq(out.cmd, in->cmd);
	ck_assert_int_eq(out.pid, in->pid);
	json_object_put(o);
}

START_TEST(test_request_roundtrip)
{
	for (int c = 0; c < TS_CMD_COUNT; c++) {
		bool pid = c == TS_CMD_EXPLAIN;
		struct ts_request r = {(enum ts_cmd)c, pid ? 4242 : 0};
		roundtrip(&r);
	}
	ck_assert(ts_cmd_is_change(TS_CMD_RELOAD));
	ck_assert(!ts_cmd_is_change(TS_CMD_EXPLAIN));
	ck_assert(!ts_cmd_is_change(TS_CMD_STATUS));
	ck_assert_str_eq(ts_cmd_name(TS_CMD_EXPLAIN), "explain");
}
END_TEST

static void bad(const char *payload, const char *msg)
{
	struct ts_request r;
	char err[128] = "";
	ck_assert_int_eq(ts_request_parse(payload, strlen(payload), &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, msg);
}

START_TEST(test_request_malformed)
{
	bad("", "request is not a JSON object");
	bad("{", "request is not a JSON object");
	bad("[1,2]", "request is not a JSON object");
	bad("{\"v\":1,\"cmd\":\"status\"} trailing", "request is not a JSON object");
	bad("{\"cmd\":\"status\"}", "unsupported protocol version (this daemon speaks 1)");
	bad("{\"v\":2,\"cmd\":\"status\"}", "unsupported protocol version (this daemon speaks 1)");
	bad("{\"v\":\"1\",\"cmd\":\"status\"}",
	    "unsupported protocol version (this daemon speaks 1)");
	bad("{\"v\":1}", "'cmd' missing or not a string");
	bad("{\"v\":1,\"cmd\":7}", "'cmd' missing or not a string");
	bad("{\"v\":1,\"cmd\":\"reboot\"}", "unknown command 'reboot'");
	/* Issue 19.7: invalid UTF-8 is not echoed back into the JSON error. */
	bad("{\"v\":1,\"cmd\":\"st\xff\xfe\xc3x\"}", "unknown command 'st???x'");
	bad("{\"v\":1,\"cmd\":\"explain\"}", "'pid' must be a positive integer");
	bad("{\"v\":1,\"cmd\":\"explain\",\"pid\":0}", "'pid' must be a positive integer");
	bad("{\"v\":1,\"cmd\":\"explain\",\"pid\":-3}", "'pid' must be a positive integer");
	bad("{\"v\":1,\"cmd\":\"explain\",\"pid\":\"12\"}", "'pid' must be a positive integer");
	bad("{\"v\":1,\"cmd\":\"explain\",\"pid\":99999999999}",
	    "'pid' must be a positive integer");
	/* Tagging by hand is turboschedctl's own (lib/ledger.h): no longer a request. */
	bad("{\"v\":1,\"cmd\":\"tag\",\"pid\":5,\"thread\":true}", "unknown command 'tag'");
	/* A payload with an embedded NUL is not silently cut short. */
	struct ts_request r;
	char err[64];
	ck_assert_int_eq(
	    ts_request_parse("{\"v\":1,\"cmd\":\"tasks\"}\0x", 24, &r, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_response_check)
{
	const char *err = NULL;
	json_object *o = ts_response_ok();
	ck_assert_int_eq(ts_response_check(o, &err), 0);
	json_object_put(o);
	o = ts_response_error("no such process %d", 7);
	ck_assert_int_eq(ts_response_check(o, &err), 1);
	ck_assert_str_eq(err, "no such process 7");
	json_object_put(o);
	o = json_tokener_parse("{\"ok\":1}");
	ck_assert_int_eq(ts_response_check(o, &err), -EPROTO);
	json_object_put(o);
	o = json_tokener_parse("{\"ok\":false}");
	ck_assert_int_eq(ts_response_check(o, &err), -EPROTO);
	json_object_put(o);
	ck_assert_int_eq(ts_response_check(NULL, &err), -EPROTO);
}
END_TEST

static struct ts_config *load_cfg(void)
{
	static const char text[] = "[rule janitor]\ncomm = *-janitor\n"
	                           "[exclude root-io]\ncomm = io-*\nuser = 0\nthreads = matched\n";
	struct ts_config *c;
	struct ts_diag d;
	ck_assert_int_eq(ts_config_parse_buffer("p.conf", text, sizeof(text) - 1, NULL, &c, &d), 0);
	return c;
}

START_TEST(test_rules_json)
{
	struct ts_config *c = load_cfg();
	json_object *a = ts_rules_to_json(&c->rules);
	ck_assert_str_eq(
	    json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN),
	    "[{\"name\":\"janitor\",\"kind\":\"rule\",\"threads\":\"all\",\"comm\":[\"*-"
	    "janitor\"],\"cgroup\":[],\"user\":[],\"file\":\"p.conf\",\"line\":1},{"
	    "\"name\":\"root-io\",\"kind\":\"exclude\",\"threads\":\"matched\",\"comm\":["
	    "\"io-*\"],\"cgroup\":[],\"user\":[\"0\"],\"file\":\"p.conf\",\"line\":3}]");
	json_object_put(a);
	ts_config_free(c);
}
END_TEST

START_TEST(test_explain_json)
{
	struct ts_config *c = load_cfg();
	struct ts_task p, t;
	memset(&p, 0, sizeof(p));
	p.tid = p.tgid = 100;
	strcpy(p.comm, "db-janitor");
	strcpy(p.cgroup, "/system.slice/db.service");
	p.jitter = 1;
	t = p;
	t.tid = 101;
	strcpy(t.comm, "io-1");
	json_object *o = ts_explain_to_json(&c->rules, &t, &p);
	ck_assert_str_eq(
	    json_object_to_json_string_ext(o,
	                                   JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	    "{\"pid\":101,\"tgid\":100,\"comm\":\"io-1\",\"process_comm\":\"db-janitor\","
	    "\"cgroup\":\"/system.slice/db.service\",\"uid\":0,\"jitter\":1,\"verdict\":"
	    "\"excluded\",\"rule\":\"root-io\",\"rules\":[{\"name\":\"janitor\",\"kind\":"
	    "\"rule\",\"subject\":\"process\",\"matched\":true,\"fields\":{\"comm\":{"
	    "\"matched\":true,\"pattern\":\"*-janitor\"}}},{\"name\":\"root-io\",\"kind\":"
	    "\"exclude\",\"subject\":\"thread\",\"matched\":true,\"fields\":{\"comm\":{"
	    "\"matched\":true,\"pattern\":\"io-*\"},\"user\":{\"matched\":true,"
	    "\"pattern\":\"0\"}}}]}");
	json_object_put(o);
	ts_config_free(c);
}
END_TEST

/* A one-shot server in a child process that answers with `reply` (raw bytes). */
static char sockpath[108];

static pid_t serve(const void *reply, size_t len, bool read_request)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sockpath, sizeof(sockpath), "/tmp/ts-proto-%d.sock", getpid());
	unlink(sockpath);
	strcpy(sa.sun_path, sockpath);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(l, 0);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(l, 1), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int c = accept(l, NULL, NULL);
		char buf[256];
		if (read_request) {
			ssize_t n = read(c, buf, sizeof(buf));
			/* Echo the request back inside the response, so the test sees what was
			 * sent. */
			if (!reply && n > 4) {
				char body[300];
				int bl = snprintf(body, sizeof(body), "{\"ok\":true,\"req\":%.*s}",
				                  (int)n - 4, buf + 4);
				uint8_t h[4];
				ts_frame_put_len(h, (uint32_t)bl);
				(void)!write(c, h, 4);
				(void)!write(c, body, (size_t)bl);
			}
		}
		if (reply)
			(void)!write(c, reply, len);
		sleep(2);
		_exit(0);
	}
	close(l);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(sockpath);
}

START_TEST(test_client_call)
{
	pid_t pid = serve(NULL, 0, true);
	struct ts_request r = {TS_CMD_EXPLAIN, 77};
	json_object *resp = NULL;
	ck_assert_int_eq(ts_proto_call(sockpath, &r, 2000, &resp), 0);
	json_object *req;
	ck_assert(json_object_object_get_ex(resp, "req", &req));
	ck_assert_str_eq(json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN),
	                 "{\"v\":1,\"cmd\":\"explain\",\"pid\":77}");
	json_object_put(resp);
	reap(pid);
}
END_TEST

START_TEST(test_client_errors)
{
	struct ts_request r = {TS_CMD_STATUS, 0};
	json_object *resp = NULL;
	ck_assert_int_eq(ts_proto_call("/nonexistent/control", &r, 500, &resp), -ENOENT);
	ck_assert_ptr_null(resp);
	ck_assert_str_eq(ts_proto_strerror(-ENOENT),
	                 "turboschedd is not running (start it with: systemctl start turboschedd)");

	/* Oversized announced length. */
	static const uint8_t huge[] = {0x7f, 0xff, 0xff, 0xff};
	pid_t pid = serve(huge, sizeof(huge), true);
	ck_assert_int_eq(ts_proto_call(sockpath, &r, 2000, &resp), -EMSGSIZE);
	reap(pid);

	/* Garbage payload. */
	static const uint8_t garbage[] = {0, 0, 0, 3, 'a', 'b', 'c'};
	pid = serve(garbage, sizeof(garbage), true);
	ck_assert_int_eq(ts_proto_call(sockpath, &r, 2000, &resp), -EPROTO);
	reap(pid);

	/* JSON, but not a protocol response. */
	static const uint8_t notproto[] = {0, 0, 0, 2, '{', '}'};
	pid = serve(notproto, sizeof(notproto), true);
	ck_assert_int_eq(ts_proto_call(sockpath, &r, 2000, &resp), -EPROTO);
	reap(pid);

	/* A server that never answers: the client gives up at its deadline. */
	static const uint8_t partial[] = {0, 0};
	pid = serve(partial, sizeof(partial), true);
	ck_assert_int_eq(ts_proto_call(sockpath, &r, 300, &resp), -ETIMEDOUT);
	reap(pid);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("proto");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_frame);
	tcase_add_test(tc, test_request_roundtrip);
	tcase_add_test(tc, test_request_malformed);
	tcase_add_test(tc, test_response_check);
	tcase_add_test(tc, test_rules_json);
	tcase_add_test(tc, test_explain_json);
	tcase_add_test(tc, test_client_call);
	tcase_add_test(tc, test_client_errors);
	suite_add_tcase(s, tc);
	return run_suite(s);
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket server: permission checks (SO_PEERCRED + CapEff), refused requests logged,
 * bounded sizes, malformed requests, silent clients timed out without blocking others, and the
 * daemon's command handler end to end.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "daemon.h"
#include "helpers.h"
#include "log.h"
#include "privs.h"

static struct loop loop;
static struct control ctl;
static char path[108];
static int handled;
static char last_log[1024];
static int warnings;

static void sink(int prio, const char *msg)
{
	if (prio == LOG_WARNING)
		warnings++;
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

static json_object *echo_handler(void *ctx, const struct ts_request *req, const struct ucred *peer)
{
	(void)ctx;
	(void)peer;
	handled++;
	json_object *o = ts_response_ok();
	json_object_object_add(o, "cmd", json_object_new_string(ts_cmd_name(req->cmd)));
	return o;
}

static bool deny(pid_t pid, uid_t uid)
{
	(void)pid;
	(void)uid;
	return false;
}

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/ts-ctl-%d/control", getpid());
	handled = warnings = 0;
	log_set_sink(sink);
	log_set_level(LOG_DEBUG);
	ck_assert_int_eq(loop_init(&loop), 0);
	ck_assert_int_eq(control_open(&ctl, &loop, path, echo_handler, NULL), 0);
}

static void teardown(void)
{
	control_close(&ctl);
	loop_close(&loop);
	log_set_sink(NULL);
}

static int connect_client(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void send_raw(int fd, const char *payload, uint32_t announced)
{
	uint8_t h[4];
	ts_frame_put_len(h, announced);
	ck_assert_int_eq(write(fd, h, 4), 4);
	if (payload)
		ck_assert_int_eq(write(fd, payload, strlen(payload)), (ssize_t)strlen(payload));
}

/* Runs the loop until fd has a whole response (or EOF); returns the JSON text or NULL on EOF. */
static char *response(int fd)
{
	static char buf[65536];
	size_t have = 0, plen = 0;
	for (int i = 0; i < 200; i++) {
		loop_run_once(&loop, 10);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 0) <= 0)
			continue;
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			return NULL;
		have += (size_t)n;
		if (ts_frame_complete((uint8_t *)buf, have, sizeof(buf), &plen) == 1) {
			buf[4 + plen] = '\0';
			return buf + 4;
		}
	}
	ck_abort_msg("no response");
	return NULL;
}

START_TEST(test_query_served)
{
	int fd = connect_client();
	const char *req = "{\"v\":1,\"cmd\":\"status\"}";
	send_raw(fd, req, (uint32_t)strlen(req));
	ck_assert_str_eq(response(fd), "{\"ok\":true,\"cmd\":\"status\"}");
	ck_assert_int_eq(handled, 1);
	close(fd);
}
END_TEST

START_TEST(test_change_refused_and_logged)
{
	ctl.may_change = deny;
	int fd = connect_client();
	const char *req = "{\"v\":1,\"cmd\":\"reload\"}";
	send_raw(fd, req, (uint32_t)strlen(req));
	ck_assert_str_eq(response(fd),
	                 "{\"ok\":false,\"error\":\"permission denied: 'reload' needs "
	                 "root or CAP_SYS_NICE\"}");
	ck_assert_int_eq(handled, 0);
	ck_assert_uint_eq(ctl.st.refused, 1);
	ck_assert_int_eq(warnings, 1);
	ck_assert_ptr_nonnull(strstr(last_log, "refused 'reload' from pid"));
	close(fd);
	/* Queries stay open to everyone. */
	fd = connect_client();
	req = "{\"v\":1,\"cmd\":\"explain\",\"pid\":1}";
	send_raw(fd, req, (uint32_t)strlen(req));
	ck_assert_str_eq(response(fd), "{\"ok\":true,\"cmd\":\"explain\"}");
	close(fd);
}
END_TEST

START_TEST(test_malformed_and_oversized)
{
	int fd = connect_client();
	send_raw(fd, "nope", 4);
	ck_assert_str_eq(response(fd), "{\"ok\":false,\"error\":\"request is not a JSON object\"}");
	close(fd);
	fd = connect_client();
	send_raw(fd, NULL, 1u << 20);
	ck_assert_str_eq(response(fd),
	                 "{\"ok\":false,\"error\":\"request larger than 16384 bytes\"}");
	close(fd);
	ck_assert_int_eq(handled, 0);
}
END_TEST

START_TEST(test_silent_client_times_out_without_blocking)
{
	ctl.timeout_ms = 50;
	int silent = connect_client();
	loop_run_once(&loop, 10); /* accepted */
	int t = control_next_timeout(&ctl, loop_now_ms());
	ck_assert_int_ge(t, 0);
	ck_assert_int_le(t, 50);
	/* Meanwhile another client is served. */
	int fd = connect_client();
	const char *req = "{\"v\":1,\"cmd\":\"tasks\"}";
	send_raw(fd, req, (uint32_t)strlen(req));
	ck_assert_ptr_nonnull(response(fd));
	close(fd);
	usleep(60000);
	control_expire(&ctl, loop_now_ms());
	ck_assert_uint_eq(ctl.st.timeouts, 1);
	char c;
	ck_assert_int_eq(read(silent, &c, 1), 0); /* dropped */
	ck_assert_int_eq(control_next_timeout(&ctl, loop_now_ms()), -1);
	close(silent);
}
END_TEST

START_TEST(test_client_limit)
{
	int fds[CONTROL_MAX_CLIENTS + 1];
	/* Accept as we go: a full listen backlog would block connect(). */
	for (int i = 0; i <= CONTROL_MAX_CLIENTS; i++) {
		fds[i] = connect_client();
		loop_run_once(&loop, 10);
	}
	for (int i = 0; i < 5; i++)
		loop_run_once(&loop, 10);
	ck_assert_uint_eq(ctl.st.rejected, 1);
	char c;
	ck_assert_int_eq(read(fds[CONTROL_MAX_CLIENTS], &c, 1), 0);
	for (int i = 0; i <= CONTROL_MAX_CLIENTS; i++)
		close(fds[i]);
}
END_TEST

START_TEST(test_second_daemon_refused)
{
	struct control other;
	ck_assert_int_eq(control_open(&other, &loop, path, echo_handler, NULL), -EADDRINUSE);
}
END_TEST

START_TEST(test_peer_capabilities)
{
	unsigned long long eff;
	ck_assert_int_eq(
	    privs_parse_capeff("Name:\tx\nCapEff:\t0000000000800000\nCapBnd:\t0\n", &eff), 0);
	ck_assert_uint_eq(eff, 1ull << 23);
	ck_assert_int_eq(privs_parse_capeff("Name:\tx\n", &eff), -EINVAL);
	ck_assert_int_eq(privs_parse_capeff("x\nCapEff:\tzz\n", &eff), -EINVAL);

	tree_new();
	tree_write("proc/300/status", "Name:\tnice\nUid:\t1000\nCapEff:\t0000000000800000\n");
	tree_write("proc/301/status", "Name:\tplain\nUid:\t1000\nCapEff:\t0000000000000000\n");
	tree_write("proc/302/status", "Name:\tadmin\nUid:\t1000\nCapEff:\t000001ffffffffff\n");
	ck_assert(privs_peer_may_change(300, 1000));
	ck_assert(!privs_peer_may_change(301, 1000));
	ck_assert(privs_peer_may_change(302, 1000));
	ck_assert(!privs_peer_may_change(999, 1000)); /* gone: no */
	ck_assert(privs_peer_may_change(999, 0));     /* root: yes */
	tree_free();
}
END_TEST

/* The daemon's handler through the real server: status and rules reflect the daemon's state. */
START_TEST(test_daemon_commands)
{
	static const char text[] = "[rule janitor]\ncomm = logrotate\n";
	struct daemon d;
	struct ts_diag diag;
	memset(&d, 0, sizeof(d));
	d.recheck_fd = -1;
	ck_assert_int_eq(
	    ts_config_parse_buffer("d.conf", text, sizeof(text) - 1, NULL, &d.cfg, &diag), 0);
	tree_new();
	fake_install();
	tree_add_task(100, 100, "logrotate", 10, 0, 0);
	fake_add(100, 0, 0, 1024);
	engine_init(&d.eng, d.cfg);
	engine_scan(&d.eng);
	ctl.handler = daemon_handle;
	ctl.ctx = &d;

	int fd = connect_client();
	const char *req = "{\"v\":1,\"cmd\":\"tasks\"}";
	send_raw(fd, req, (uint32_t)strlen(req));
	json_object *o = json_tokener_parse(response(fd));
	close(fd);
	json_object *tasks, *t0, *v;
	ck_assert(json_object_object_get_ex(o, "tasks", &tasks));
	ck_assert_uint_eq(json_object_array_length(tasks), 1);
	t0 = json_object_array_get_idx(tasks, 0);
	ck_assert(json_object_object_get_ex(t0, "rule", &v));
	ck_assert_str_eq(json_object_get_string(v), "janitor");
	ck_assert(json_object_object_get_ex(t0, "util_max", &v));
	ck_assert_int_eq(json_object_get_int(v), 1024);
	json_object_put(o);

	fd = connect_client();
	req = "{\"v\":1,\"cmd\":\"explain\",\"pid\":100}";
	send_raw(fd, req, (uint32_t)strlen(req));
	o = json_tokener_parse(response(fd));
	close(fd);
	ck_assert(json_object_object_get_ex(o, "verdict", &v));
	ck_assert_str_eq(json_object_get_string(v), "tag");
	ck_assert(json_object_object_get_ex(o, "registry", &v));
	ck_assert_ptr_nonnull(v);
	json_object_put(o);

	fd = connect_client();
	req = "{\"v\":1,\"cmd\":\"explain\",\"pid\":555}";
	send_raw(fd, req, (uint32_t)strlen(req));
	ck_assert_str_eq(response(fd),
	                 "{\"ok\":false,\"error\":\"no such process or thread: 555\"}");
	close(fd);

	fd = connect_client();
	req = "{\"v\":1,\"cmd\":\"status\"}";
	send_raw(fd, req, (uint32_t)strlen(req));
	o = json_tokener_parse(response(fd));
	close(fd);
	ck_assert(json_object_object_get_ex(o, "tagged", &v));
	ck_assert_int_eq(json_object_get_int(v), 1);
	json_object_put(o);

	engine_free(&d.eng);
	ts_config_free(d.cfg);
	tree_free();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon_control");
	TCase *tc = tcase_create("control");
	tcase_set_timeout(tc, 20);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_query_served);
	tcase_add_test(tc, test_change_refused_and_logged);
	tcase_add_test(tc, test_malformed_and_oversized);
	tcase_add_test(tc, test_silent_client_times_out_without_blocking);
	tcase_add_test(tc, test_client_limit);
	tcase_add_test(tc, test_second_daemon_refused);
	tcase_add_test(tc, test_peer_capabilities);
	tcase_add_test(tc, test_daemon_commands);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

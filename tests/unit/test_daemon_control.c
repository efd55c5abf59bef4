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
#include <grp.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <linux/capability.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "control.h"
#include "daemon.h"
#include "helpers.h"
#include "log.h"
#include "privs.h"
#include "socket_client.h"
#include "util.h"

static sd_event *loop;

/* One round of the event loop, waiting at most ms (was loop_run_once() of daemon/loop.c). */
static void run_once(int ms)
{
	ck_assert_int_ge(sd_event_run(loop, ms < 0 ? UINT64_MAX : (uint64_t)ms * 1000), 0);
}

/* The socket as kill -9 leaves it: out of the loop and closed, the file still there. */
static void kill9(struct control *c)
{
	c->listen = sd_event_source_disable_unref(c->listen);
	c->timer = sd_event_source_disable_unref(c->timer);
	close(c->listen_fd);
}
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

static bool deny(pid_t pid, int pidfd, uid_t uid, const char **why)
{
	(void)pid;
	(void)pidfd;
	(void)uid;
	*why = "it holds neither root nor CAP_SYS_NICE";
	return false;
}

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/ts-ctl-%d/control", getpid());
	handled = warnings = 0;
	log_set_sink(sink);
	log_set_level(LOG_DEBUG);
	ck_assert_int_eq(sd_event_new(&loop), 0);
	ck_assert_int_eq(control_open(&ctl, loop, path, echo_handler, NULL), 0);
}

static void teardown(void)
{
	control_close(&ctl);
	loop = sd_event_unref(loop);
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

/*
 * How long this thread has waited runnable but not running, in ms (the scheduler's run_delay,
 * /proc/thread-self/schedstat): time other load took, not time the code spent. 0 without it.
 */
static long long run_delay_ms(void)
{
	unsigned long long on_cpu, delay;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	int n = f ? fscanf(f, "%llu %llu", &on_cpu, &delay) : 0;

	if (f)
		fclose(f);
	return n == 2 ? (long long)(delay / 1000000) : 0;
}

/* How long the tests wait for what must happen, however loaded the machine: only a bound. */
#define WAIT_MS 10000

/* Runs the loop until fd has a whole response (or EOF); returns the JSON text or NULL on EOF. */
static char *response(int fd)
{
	static char buf[65536];
	size_t have = 0, plen = 0;
	for (long long end = ts_now_ms() + WAIT_MS; ts_now_ms() < end;) {
		run_once(10);
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
	                 "root or CAP_SYS_NICE (run it with sudo); status, tasks, explain and "
	                 "rules need none\"}");
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
	run_once(10); /* accepted */
	int t = control_next_timeout(&ctl, ts_now_ms());
	ck_assert_int_ge(t, 0);
	ck_assert_int_le(t, 50);
	/* Meanwhile another client is served. */
	int fd = connect_client();
	const char *req = "{\"v\":1,\"cmd\":\"tasks\"}";
	send_raw(fd, req, (uint32_t)strlen(req));
	ck_assert_ptr_nonnull(response(fd));
	close(fd);
	/* The loop's own timeout wakes it at the deadline; no sleeping here. */
	long long end = ts_now_ms() + WAIT_MS;
	while (ctl.st.timeouts == 0 && ts_now_ms() < end) {
		run_once(control_next_timeout(&ctl, ts_now_ms()));
		control_expire(&ctl, ts_now_ms());
	}
	ck_assert_uint_eq(ctl.st.timeouts, 1);
	char c;
	ck_assert_int_eq(read(silent, &c, 1), 0); /* dropped */
	ck_assert_int_eq(control_next_timeout(&ctl, ts_now_ms()), -1);
	close(silent);
}
END_TEST

/* Reads a whole frame from fd within ms (no loop run: the server side is another process or
 * already done); the payload text, or NULL on EOF/timeout. */
static char *read_frame(int fd, int ms, char *buf, size_t cap)
{
	size_t have = 0, plen = 0;
	long long end = ts_now_ms() + ms;
	while (ts_now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, (int)(end - ts_now_ms())) <= 0)
			continue;
		ssize_t n = read(fd, buf + have, cap - 1 - have);
		if (n <= 0)
			return NULL;
		have += (size_t)n;
		if (ts_frame_complete((uint8_t *)buf, have, cap - 5, &plen) == 1) {
			buf[4 + plen] = '\0';
			return buf + 4;
		}
	}
	return NULL;
}

static size_t clients_used(void)
{
	size_t n = 0;
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++)
		n += ctl.clients[i].used;
	return n;
}

START_TEST(test_client_limit)
{
	int fds[CONTROL_MAX_CLIENTS + 1];
	char buf[512];
	/* Accept as we go: a full listen backlog would block connect(). */
	for (int i = 0; i <= CONTROL_MAX_CLIENTS; i++) {
		fds[i] = connect_client();
		long long end = ts_now_ms() + WAIT_MS;
		while (clients_used() + ctl.st.evicted < (size_t)i + 1 && ts_now_ms() < end)
			run_once(10);
	}
	/* Full: the longest-connected silent client made room for the newest, and was told. */
	ck_assert_uint_eq(ctl.st.evicted, 1);
	ck_assert_uint_eq(ctl.st.rejected, 0);
	ck_assert_str_eq(read_frame(fds[0], WAIT_MS, buf, sizeof(buf)),
	                 "{\"ok\":false,\"error\":\"dropped: too many clients connected and this "
	                 "one sent no request; connect again and send the request at once\"}");
	/* The newest is served. */
	const char *req = "{\"v\":1,\"cmd\":\"status\"}";
	send_raw(fds[CONTROL_MAX_CLIENTS], req, (uint32_t)strlen(req));
	ck_assert_str_eq(response(fds[CONTROL_MAX_CLIENTS]), "{\"ok\":true,\"cmd\":\"status\"}");
	for (int i = 0; i <= CONTROL_MAX_CLIENTS; i++)
		close(fds[i]);
}
END_TEST

/* As a flooder: keeps 16 idle connections open, reopening each one the daemon drops. */
static void flood_forever(void)
{
	enum { HELD = 16 };
	struct pollfd p[HELD];
	memset(p, 0, sizeof(p));
	for (;;) {
		for (int i = 0; i < HELD; i++) {
			if (p[i].fd > 0 && !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (p[i].fd > 0)
				close(p[i].fd);
			struct sockaddr_un sa = {.sun_family = AF_UNIX};
			strcpy(sa.sun_path, path);
			p[i] = (struct pollfd){.fd = socket(AF_UNIX, SOCK_STREAM, 0),
			                       .events = POLLIN};
			(void)!connect(p[i].fd, (struct sockaddr *)&sa, sizeof(sa));
		}
		(void)!poll(p, HELD, 1000);
	}
}

static pid_t fork_as(uid_t uid)
{
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0 && uid != geteuid() &&
	    (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
	     setresuid(uid, uid, uid) < 0))
		_exit(100);
	return c;
}

/* As a well-behaved client: n "rules" calls, each within 2 s; exits with the number that failed. */
static void calls_and_exit(int n)
{
	int bad = 0;
	for (int i = 0; i < n; i++) {
		struct ts_request q = {.cmd = TS_CMD_RULES};
		json_object *resp = NULL;
		if (ts_proto_call(path, &q, 2000, &resp) != 0 || ts_response_check(resp, NULL) != 0)
			bad++;
		json_object_put(resp);
	}
	_exit(bad);
}

/* Runs the loop until child exits; its exit status. */
static int serve_until_exit(pid_t child, int ms)
{
	int st = 0;
	long long end = ts_now_ms() + ms;
	while (waitpid(child, &st, WNOHANG) == 0) {
		if (ts_now_ms() > end) {
			kill(child, SIGKILL);
			waitpid(child, &st, 0);
			return -1;
		}
		int to = control_next_timeout(&ctl, ts_now_ms());
		run_once(to < 0 || to > 10 ? 10 : to);
		control_expire(&ctl, ts_now_ms());
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * Issue 19.2: three processes of one unprivileged user keep opening idle connections. Root's
 * 5 calls and another user's 5 calls must all be answered (before: 0 of 5 for root, evicted
 * before their request was read), and the counts show in the stats.
 */
START_TEST(test_flood_by_one_user_locks_out_nobody)
{
	enum { FLOODERS = 3, CALLS = 5 };
	pid_t fl[FLOODERS];
	/* Root only (other users cannot be had): main() runs it in the "root" run alone. */
	ctl.handler = echo_handler;
	for (int i = 0; i < FLOODERS; i++) {
		fl[i] = fork_as(65534);
		if (fl[i] == 0)
			flood_forever();
	}
	/* Let the flood fill the table. */
	long long start = ts_now_ms(), t = start + 300;
	while (ts_now_ms() < t)
		run_once(10);
	pid_t admin = fork_as(0);
	if (admin == 0)
		calls_and_exit(CALLS);
	int root_failed = serve_until_exit(admin, 15000);
	pid_t other = fork_as(65533);
	if (other == 0)
		calls_and_exit(CALLS);
	int other_failed = serve_until_exit(other, 15000);
	for (int i = 0; i < FLOODERS; i++) {
		kill(fl[i], SIGKILL);
		waitpid(fl[i], NULL, 0);
	}
	fprintf(stderr,
	        "flood: root %d of %d failed, another user %d of %d failed; served %llu, "
	        "evicted %llu, busy %llu, over the per-user limit %llu\n",
	        root_failed, CALLS, other_failed, CALLS, ctl.st.served, ctl.st.evicted,
	        ctl.st.rejected, ctl.st.uid_limited);
	ck_assert_msg(root_failed == 0, "root: %d of %d calls failed in the flood", root_failed,
	              CALLS);
	ck_assert_msg(other_failed == 0, "another user: %d of %d calls failed in the flood",
	              other_failed, CALLS);
	/* The flood is held, not churned: each held connection costs one accept a second. */
	long long secs = (ts_now_ms() - start) / 1000 + 1;
	unsigned long long turned = ctl.st.evicted + ctl.st.rejected + ctl.st.uid_limited;
	ck_assert_msg(turned < (unsigned long long)(100 * secs),
	              "%llu connections turned away in %lld s: the flood is churning", turned,
	              secs);
}
END_TEST

/* The ways a hostile or broken client can talk, one per bad client. */
static void misbehave(int fd, int kind)
{
	static const char garbage[] = "\xff\xfe{\"v\":1,\"cmd\":\"status\"";
	uint8_t h[4];
	switch (kind % 6) {
	case 0: /* connects and never speaks */
		break;
	case 1: /* half a header */
		(void)!write(fd, "\0\0", 2);
		break;
	case 2: /* announces 4 GiB */
		ts_frame_put_len(h, UINT32_MAX);
		(void)!write(fd, h, 4);
		break;
	case 3: /* a frame of garbage */
		ts_frame_put_len(h, sizeof(garbage) - 1);
		(void)!write(fd, h, 4);
		(void)!write(fd, garbage, sizeof(garbage) - 1);
		break;
	case 4: /* a header announcing more than it sends (slow loris) */
		ts_frame_put_len(h, 1000);
		(void)!write(fd, h, 4);
		(void)!write(fd, "{\"v\":", 5);
		break;
	case 5: /* sends a request and never reads the answer, then hangs up */
		send_raw(fd, "{\"v\":1,\"cmd\":\"rules\"}", 21);
		shutdown(fd, SHUT_RD);
		break;
	}
}

START_TEST(test_many_bad_clients_do_not_block)
{
	/*
	 * 200 misbehaving clients connect at once; meanwhile a well-behaved client in another
	 * process must get its answer within 2 s, the event loop never stalls, and every bad
	 * client ends with an answer or a hang-up once its 300 ms are up.
	 */
	enum { NBAD = 200, DEADLINE_MS = 2000 };
	int bad[NBAD];
	ctl.timeout_ms = 300;
	for (int i = 0; i < NBAD; i++) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		strcpy(sa.sun_path, path);
		bad[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		ck_assert_int_ge(bad[i], 0);
		int r = connect(bad[i], (struct sockaddr *)&sa, sizeof(sa));
		ck_assert_msg(r == 0, "bad client %d: connect: %s", i, strerror(errno));
		/* Every kind of misbehaviour, and the last 64 hold their slots (silent, slow). */
		misbehave(bad[i], i < NBAD - 64 ? i : i % 2 ? 0 : 4);
		run_once(0);
	}
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		struct ts_request q = {.cmd = TS_CMD_STATUS};
		json_object *resp;
		int r = ts_proto_call(path, &q, DEADLINE_MS, &resp);
		_exit(r == 0 && ts_response_check(resp, NULL) == 0 ? 0 : 10 - r);
	}
	int st = 0;
	long long start = ts_now_ms(), worst = 0;
	pid_t w = 0;
	while (w == 0 && ts_now_ms() - start < DEADLINE_MS + 1000) {
		long long t0 = ts_now_ms(), d0 = run_delay_ms();
		int to = control_next_timeout(&ctl, t0);
		run_once(to < 0 || to > 20 ? 20 : to);
		control_expire(&ctl, ts_now_ms());
		/* The round's own time: what other load kept it off the CPU does not count. */
		long long own = ts_now_ms() - t0 - (run_delay_ms() - d0);
		if (own > worst)
			worst = own;
		w = waitpid(child, &st, WNOHANG);
	}
	if (w == 0) {
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
		ck_abort_msg("the good client got no answer in %d ms", DEADLINE_MS + 1000);
	}
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	              "the good client failed (exit %d): its query was not answered",
	              WEXITSTATUS(st));
	/* Now every bad client is answered or dropped by its deadline. */
	size_t finished = 0;
	long long end = ts_now_ms() + WAIT_MS;
	while (finished < NBAD && ts_now_ms() < end) {
		int to = control_next_timeout(&ctl, ts_now_ms());
		run_once(to < 0 || to > 20 ? 20 : to);
		control_expire(&ctl, ts_now_ms());
		finished = 0;
		for (int i = 0; i < NBAD; i++) {
			char b[4096];
			ssize_t n;
			while ((n = read(bad[i], b, sizeof(b))) > 0)
				;
			finished += n == 0 || (n < 0 && errno != EAGAIN);
		}
	}
	ck_assert_uint_eq(finished, NBAD);
	ck_assert_int_eq(control_next_timeout(&ctl, ts_now_ms()), -1);
	ck_assert_uint_ge(ctl.st.served, 1);
	ck_assert_msg(worst < 200, "one loop round took %lld ms", worst);
	for (int i = 0; i < NBAD; i++)
		close(bad[i]);
}
END_TEST

START_TEST(test_socket_owner_and_modes)
{
	/* Created under the unit's UMask=0077: the directory is still 0755, the socket 0666. */
	char dir[108], sock[120];
	struct control c2;
	struct stat st;
	snprintf(dir, sizeof(dir), "/tmp/ts-modes-%d", getpid());
	snprintf(sock, sizeof(sock), "%s/sub/control", dir);
	mode_t old = umask(0077);
	ck_assert_int_eq(control_open(&c2, loop, sock, echo_handler, NULL), 0);
	umask(old);
	ck_assert_int_eq(stat(sock, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0666);
	ck_assert_uint_eq(st.st_uid, geteuid());
	*strrchr(sock, '/') = '\0';
	ck_assert_int_eq(stat(sock, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0755);
	ck_assert_uint_eq(st.st_uid, geteuid());
	control_close(&c2);
	rmdir(sock);
	rmdir(dir);
}
END_TEST

/* --socket names any path: only a stale socket of ours may be removed there, nothing else. */
START_TEST(test_socket_path_not_clobbered)
{
	char dir[108], file[120], other[120];
	struct control c2;
	struct stat st;
	snprintf(dir, sizeof(dir), "/tmp/ts-clobber-%d", getpid());
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(file, sizeof(file), "%s/precious", dir);
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs("keep me\n", f);
	fclose(f);
	memset(&c2, 0, sizeof(c2));
	ck_assert_int_eq(control_open(&c2, loop, file, echo_handler, NULL), -EEXIST);
	ck_assert_int_eq(stat(file, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_size, 8);
	ck_assert_msg(strstr(c2.err, "exists and is not a socket (a regular file, mode 0644") &&
	                  strstr(c2.err, "choose another --socket path"),
	              "message: %s", c2.err);
	/* A symbolic link to it: not followed, not removed. */
	snprintf(other, sizeof(other), "%s/link", dir);
	ck_assert_int_eq(symlink(file, other), 0);
	ck_assert_int_eq(control_open(&c2, loop, other, echo_handler, NULL), -EEXIST);
	ck_assert_int_eq(lstat(other, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	unlink(other);
	/* A directory. */
	ck_assert_int_eq(mkdir(other, 0755), 0);
	ck_assert_int_eq(control_open(&c2, loop, other, echo_handler, NULL), -EEXIST);
	ck_assert_int_eq(rmdir(other), 0);
	/* A stale socket of ours (its daemon killed) is replaced. */
	ck_assert_int_eq(control_open(&c2, loop, other, echo_handler, NULL), 0);
	kill9(&c2); /* the file stays, nobody answers */
	ck_assert_int_eq(lstat(other, &st), 0);
	ck_assert_int_eq(control_open(&c2, loop, other, echo_handler, NULL), 0);
	control_close(&c2);
	/* A stale socket of another user is not ours to remove. */
	if (geteuid() == 0) {
		ck_assert_int_eq(control_open(&c2, loop, other, echo_handler, NULL), 0);
		kill9(&c2);
		ck_assert_int_eq(lchown(other, 65534, 65534), 0);
		ck_assert_int_eq(control_open(&c2, loop, other, echo_handler, NULL), -EEXIST);
		ck_assert_ptr_nonnull(strstr(c2.err, "is a stale socket of uid 65534, not ours"));
		unlink(other);
	}
	unlink(file);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_second_daemon_refused)
{
	struct control other;
	ck_assert_int_eq(control_open(&other, loop, path, echo_handler, NULL), -EADDRINUSE);
}
END_TEST

/* The fake tree's /proc/PID/ns/user: the daemon's own namespace, or another one. */
static void peer_userns(pid_t pid, bool ours)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "proc/%d/ns/user", (int)pid);
	/* Any other file stands for another namespace: only the identity of the target counts. */
	tree_symlink(rel, ours ? "/proc/self/ns/user" : "/proc/self/status");
}

START_TEST(test_peer_capabilities)
{
	unsigned long long eff;
	ck_assert_int_eq(
	    privs_parse_capeff("Name:\tx\nCapEff:\t0000000000800000\nCapBnd:\t0\n", &eff), 0);
	ck_assert_uint_eq(eff, 1ull << 23);
	ck_assert_int_eq(privs_parse_capeff("Name:\tx\n", &eff), -EINVAL);
	ck_assert_int_eq(privs_parse_capeff("x\nCapEff:\tzz\n", &eff), -EINVAL);

	tree_new();
	tree_write("proc/300/status", "Name:\tnice\nUid:\t4242\nCapEff:\t0000000000800000\n");
	tree_write("proc/301/status", "Name:\tplain\nUid:\t4242\nCapEff:\t0000000000000000\n");
	tree_write("proc/302/status", "Name:\tadmin\nUid:\t4242\nCapEff:\t000001ffffffffff\n");
	for (int pid = 300; pid <= 302; pid++)
		peer_userns(pid, true);
	ck_assert(privs_peer_may_change(300, PRIVS_NO_PIDFD, 4242, NULL));
	ck_assert(!privs_peer_may_change(301, PRIVS_NO_PIDFD, 4242, NULL));
	ck_assert(privs_peer_may_change(302, PRIVS_NO_PIDFD, 4242, NULL));
	ck_assert(!privs_peer_may_change(999, PRIVS_NO_PIDFD, 4242, NULL)); /* gone: no */
	ck_assert(privs_peer_may_change(999, -ESRCH, 0, NULL));             /* root: yes */
	/* The daemon's own user (ExecReload= under systemd) needs no capability. */
	ck_assert(privs_peer_may_change(999, -ESRCH, geteuid(), NULL));
	tree_free();
}
END_TEST

/*
 * CapEff is relative to the peer's own user namespace, where any user holds every capability:
 * only CAP_SYS_NICE in the daemon's namespace counts, and a namespace that cannot be read (the
 * daemon may not inspect another user's process) refuses.
 */
START_TEST(test_peer_capabilities_other_userns)
{
	const char *why;
	tree_new();
	tree_write("proc/303/status", "Name:\tunshare\nUid:\t4242\nCapEff:\t000001ffffffffff\n");
	tree_write("proc/304/status", "Name:\thidden\nUid:\t4242\nCapEff:\t000001ffffffffff\n");
	peer_userns(303, false);
	ck_assert(!privs_peer_may_change(303, PRIVS_NO_PIDFD, 4242, &why));
	ck_assert_str_eq(why, "its CAP_SYS_NICE is in another user namespace, not the daemon's");
	ck_assert(!privs_peer_may_change(304, PRIVS_NO_PIDFD, 4242, &why));
	ck_assert_str_eq(
	    why, "its user namespace cannot be read, so its CAP_SYS_NICE cannot be verified");
	tree_free();
}
END_TEST

/*
 * The attack of issue 19: an unprivileged user in a user namespace of its own holds every
 * capability there (CapEff all ones) and asks for changes. Through the real server and the real
 * permission check; the child becomes nobody when the test runs as root.
 */
START_TEST(test_userns_peer_refused)
{
	/* (A "tag" request was tried here too; tagging by hand is no longer a request.) */
	static const char *const reqs[] = {"{\"v\":1,\"cmd\":\"reload\"}"};
	int p[2];
	/*
	 * Root only: without root the child cannot be another user, and the daemon's own uid may.
	 * main() runs it in the "userns" run alone, after checking that nobody can unshare.
	 */
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		ck_assert_int_eq(pipe(p), 0);
		pid_t c = fork();
		ck_assert_int_ge(c, 0);
		if (c == 0) {
			close(p[0]);
			if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			    setresuid(65534, 65534, 65534) < 0)
				_exit(2);
			/* 77: user namespaces are disabled here, nothing to attack with. */
			if (unshare(CLONE_NEWUSER) < 0)
				_exit(77);
			int fd = connect_client();
			send_raw(fd, reqs[i], (uint32_t)strlen(reqs[i]));
			char buf[1024], *r = read_frame(fd, 3000, buf, sizeof(buf));
			dprintf(p[1], "%s", r ? r : "(no answer)");
			_exit(0);
		}
		close(p[1]);
		int st;
		pid_t w = 0;
		long long end = ts_now_ms() + 5000;
		while ((w = waitpid(c, &st, WNOHANG)) == 0 && ts_now_ms() < end)
			run_once(10);
		ck_assert_int_eq(w, c);
		ck_assert(WIFEXITED(st));
		ck_assert_msg(WEXITSTATUS(st) != 77, "nobody could not unshare a user namespace");
		ck_assert_int_eq(WEXITSTATUS(st), 0);
		char got[1024] = "";
		ssize_t n = read(p[0], got, sizeof(got) - 1);
		close(p[0]);
		got[n > 0 ? n : 0] = '\0';
		ck_assert_msg(strstr(got, "permission denied") != NULL,
		              "request %s from nobody in its own user namespace: %s", reqs[i], got);
		ck_assert_int_eq(handled, 0);
		ck_assert_ptr_nonnull(strstr(last_log, "(uid 65534)"));
	}
	ck_assert_uint_eq(ctl.st.refused, 1);
}
END_TEST

static void status_capeff(pid_t pid, const char *capeff)
{
	char rel[64], text[128];
	snprintf(rel, sizeof(rel), "proc/%d/status", (int)pid);
	snprintf(text, sizeof(text), "Name:\tpeer\nUid:\t4242\nCapEff:\t%s\n", capeff);
	tree_write(rel, text);
	peer_userns(pid, true);
}

/* A child that connects to lpath and stays until its pipe closes (exit_now: leaves at once). */
static pid_t peer_child(const char *lpath, int *hold, bool exit_now)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		close(p[1]);
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		strcpy(sa.sun_path, lpath);
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			_exit(1);
		char x;
		if (!exit_now)
			(void)!read(p[0], &x, 1);
		_exit(0);
	}
	close(p[0]);
	*hold = p[1];
	return c;
}

START_TEST(test_peer_pidfd_defeats_pid_reuse)
{
	char lpath[108];
	snprintf(lpath, sizeof(lpath), "/tmp/ts-pidfd-%d", getpid());
	unlink(lpath);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, lpath);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(l, 4), 0);
	tree_new();

	int hold, st;
	pid_t a = peer_child(lpath, &hold, false);
	int conn = accept(l, NULL, NULL);
	ck_assert_int_ge(conn, 0);
	int pidfd = privs_peer_pidfd(conn);
	if (pidfd == PRIVS_NO_PIDFD) {
		/* A kernel before 6.5: the documented fallback, nothing more to prove here. */
		close(hold);
		waitpid(a, &st, 0);
		tree_free();
		return;
	}
	ck_assert_int_ge(pidfd, 0);
	ck_assert_int_eq(privs_pidfd_pid(pidfd), a);
	/* The PID comes from the pidfd, not from what the caller passes. */
	status_capeff(a, "0000000000800000");
	ck_assert(privs_peer_may_change(1, pidfd, 4242, NULL));
	status_capeff(a, "0000000000000000");
	ck_assert(!privs_peer_may_change(a, pidfd, 4242, NULL));
	/* The peer exits and is reaped; its PID now "belongs" to a privileged process. */
	status_capeff(a, "000001ffffffffff");
	close(hold);
	ck_assert_int_eq(waitpid(a, &st, 0), a);
	ck_assert_int_eq(privs_pidfd_pid(pidfd), -ESRCH);
	ck_assert(!privs_peer_may_change(a, pidfd, 4242, NULL));
	/* What a bare PID would have allowed: the race SO_PEERPIDFD closes. */
	ck_assert(privs_peer_may_change(a, PRIVS_NO_PIDFD, 4242, NULL));
	close(pidfd);
	close(conn);

	/* A peer gone before it was accepted never may change anything. */
	pid_t b = peer_child(lpath, &hold, true);
	ck_assert_int_eq(waitpid(b, &st, 0), b);
	conn = accept(l, NULL, NULL);
	ck_assert_int_ge(conn, 0);
	status_capeff(b, "000001ffffffffff");
	pidfd = privs_peer_pidfd(conn);
	ck_assert(!privs_peer_may_change(b, pidfd, 4242, NULL));
	if (pidfd >= 0)
		close(pidfd);
	close(conn);
	close(hold);
	close(l);
	unlink(lpath);
	tree_free();
}
END_TEST

static cap_t plan_for(const char *caps, bool *drop_bound)
{
	cap_t cur = cap_from_text(caps), want = NULL;
	ck_assert_ptr_nonnull(cur);
	ck_assert_int_eq(privs_plan(cur, &want, drop_bound), 0);
	cap_free(cur);
	return want;
}

static void assert_plan(const char *caps, const char *want_text, bool want_bound)
{
	bool bound;
	cap_t want = plan_for(caps, &bound), expect = cap_from_text(want_text);
	char *got = cap_to_text(want, NULL);
	ck_assert_msg(cap_compare(want, expect) == 0, "from '%s': planned '%s', expected '%s'",
	              caps, got, want_text);
	ck_assert_int_eq(bound, want_bound);
	cap_free(got);
	cap_free(want);
	cap_free(expect);
}

START_TEST(test_capability_plan)
{
	/* systemd's start: CAP_SYS_NICE ambient, so effective, permitted and inheritable. */
	assert_plan("cap_sys_nice=eip", "cap_sys_nice=ep", false);
	/* Started as root by hand: everything; keep one, and cut the bounding set. */
	assert_plan("all=ep", "cap_sys_nice=ep", true);
	assert_plan("cap_sys_nice,cap_net_admin,cap_setpcap=ep cap_sys_admin=i", "cap_sys_nice=ep",
	            true);
	/* Permitted but not effective is still ours to keep. */
	assert_plan("cap_sys_nice=p", "cap_sys_nice=ep", false);
	/* Without CAP_SYS_NICE nothing is asked for. */
	assert_plan("=", "=", false);
	assert_plan("cap_net_admin=eip", "=", false);
}
END_TEST

static unsigned long long status_hex(const char *status, const char *key)
{
	const char *p = strstr(status, key);
	ck_assert_msg(p != NULL, "no %s in /proc/self/status", key);
	return strtoull(p + strlen(key), NULL, 16);
}

START_TEST(test_capability_drop_applied)
{
	/* This test's own process (forked by check): whatever it held, after the drop only
	 * CAP_SYS_NICE may be left, nothing inheritable or ambient, and no_new_privs is set. */
	char *st;
	ck_assert_int_eq(privs_drop(), 0);
	ck_assert_int_eq(ts_read_file("/proc/self/status", &st), 0);
	unsigned long long nice = 1ull << CAP_SYS_NICE;
	ck_assert_uint_eq(status_hex(st, "\nCapEff:\t") & ~nice, 0);
	ck_assert_uint_eq(status_hex(st, "\nCapPrm:\t") & ~nice, 0);
	ck_assert_uint_eq(status_hex(st, "\nCapInh:\t"), 0);
	ck_assert_uint_eq(status_hex(st, "\nCapAmb:\t"), 0);
	ck_assert_uint_eq(status_hex(st, "\nNoNewPrivs:\t"), 1);
	if (geteuid() == 0) /* root had CAP_SETPCAP: the bounding set is cut too */
		ck_assert_uint_eq(status_hex(st, "\nCapBnd:\t"), nice);
	free(st);
}
END_TEST

/* The daemon's handler through the real server: status and rules reflect the daemon's state. */
START_TEST(test_daemon_commands)
{
	static const char text[] = "[rule janitor]\ncomm = logrotate\n";
	struct daemon d;
	struct ts_diag diag;
	memset(&d, 0, sizeof(d));
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

/* Whether nobody may create a user namespace here (Debian: kernel.unprivileged_userns_clone). */
static bool userns_for_nobody(void)
{
	int st;
	pid_t c = fork();

	if (c == 0)
		_exit(setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		              setresuid(65534, 65534, 65534) < 0 || unshare(CLONE_NEWUSER) < 0
		          ? 1
		          : 0);
	return c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/*
 * Without arguments: every test that runs as any user. "root" and "userns": the checks that need
 * root (and user namespaces for nobody), each its own meson test, which exits 77 -- meson's SKIP
 * -- where it cannot run, so that a check not made never counts as passed.
 */
int main(int argc, char **argv)
{
	const char *run = argc > 1 ? argv[1] : "";
	Suite *s = suite_create("daemon_control");
	TCase *tc = tcase_create("control");
	tcase_set_timeout(tc, 20);
	tcase_add_checked_fixture(tc, setup, teardown);
	if (strcmp(run, "root") == 0 || strcmp(run, "userns") == 0) {
		if (geteuid() != 0) {
			fprintf(stderr, "%s: SKIP, needs root\n", argv[0]);
			return 77;
		}
		if (strcmp(run, "userns") == 0 && !userns_for_nobody()) {
			fprintf(stderr, "%s: SKIP, nobody may not create user namespaces\n",
			        argv[0]);
			return 77;
		}
		tcase_add_test(tc, strcmp(run, "root") == 0
		                       ? test_flood_by_one_user_locks_out_nobody
		                       : test_userns_peer_refused);
		suite_add_tcase(s, tc);
		return run_suite(s);
	}
	tcase_add_test(tc, test_query_served);
	tcase_add_test(tc, test_change_refused_and_logged);
	tcase_add_test(tc, test_malformed_and_oversized);
	tcase_add_test(tc, test_silent_client_times_out_without_blocking);
	tcase_add_test(tc, test_client_limit);
	tcase_add_test(tc, test_many_bad_clients_do_not_block);
	tcase_add_test(tc, test_socket_owner_and_modes);
	tcase_add_test(tc, test_second_daemon_refused);
	tcase_add_test(tc, test_socket_path_not_clobbered);
	tcase_add_test(tc, test_peer_capabilities);
	tcase_add_test(tc, test_peer_capabilities_other_userns);
	tcase_add_test(tc, test_peer_pidfd_defeats_pid_reuse);
	tcase_add_test(tc, test_capability_plan);
	tcase_add_test(tc, test_capability_drop_applied);
	tcase_add_test(tc, test_daemon_commands);
	suite_add_tcase(s, tc);
	return run_suite(s);
}

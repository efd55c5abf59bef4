/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "privs.h"
#include "util.h"

#define IN_CAP  (TS_PROTO_HDR_LEN + TS_PROTO_MAX_REQUEST)
#define STR_(x) #x
#define STR(x)  STR_(x)

static void client_close(struct control_client *cl)
{
	if (!cl->used)
		return;
	cl->src = sd_event_source_disable_unref(cl->src);
	close(cl->fd);
	if (cl->pidfd >= 0)
		close(cl->pidfd);
	free(cl->in);
	free(cl->out);
	struct control *c = cl->ctl;
	memset(cl, 0, sizeof(*cl));
	cl->ctl = c;
}

/* Queues the response and switches the client to writing. */
static void client_respond(struct control_client *cl, json_object *resp)
{
	cl->out = ts_frame_encode(resp, &cl->outlen);
	json_object_put(resp);
	cl->outoff = 0;
	if (!cl->out || sd_event_source_set_io_events(cl->src, EPOLLOUT) < 0)
		client_close(cl);
}

static json_object *handle(struct control_client *cl, const uint8_t *payload, size_t len)
{
	struct control *c = cl->ctl;
	struct ts_request req;
	char err[160];

	if (ts_request_parse((const char *)payload, len, &req, err, sizeof(err)) < 0) {
		log_debug("bad request from pid %d: %s", (int)cl->peer.pid, err);
		return ts_response_error("%s", err);
	}
	const char *why = NULL;
	if (ts_cmd_is_change(req.cmd) &&
	    !c->may_change(cl->peer.pid, cl->pidfd, cl->peer.uid, &why)) {
		c->st.refused++;
		log_warning("refused '%s' from pid %d (uid %u): %s", ts_cmd_name(req.cmd),
		            (int)cl->peer.pid, (unsigned)cl->peer.uid,
		            why ? why : "it holds neither root nor CAP_SYS_NICE");
		return ts_response_error(
		    "permission denied: '%s' needs root or CAP_SYS_NICE (run "
		    "it with sudo); status, tasks, explain and rules need none",
		    ts_cmd_name(req.cmd));
	}
	c->st.served++;
	return c->handler(c->ctx, &req, &cl->peer);
}

/*
 * After a failed recv() or send(): true to try again at once (EINTR); else false, the client
 * closed unless the socket only has nothing to give or take now (EAGAIN, the loop comes back).
 */
static bool retry_io(struct control_client *cl)
{
	if (errno == EINTR)
		return true;
	if (errno != EAGAIN)
		client_close(cl);
	return false;
}

static void client_read(struct control_client *cl)
{
	for (;;) {
		ssize_t n = recv(cl->fd, cl->in + cl->inlen, IN_CAP - cl->inlen, 0);
		if (n < 0) {
			if (retry_io(cl))
				continue;
			return;
		}
		if (n == 0) {
			client_close(cl); /* gone before a whole request */
			return;
		}
		cl->inlen += (size_t)n;
		size_t plen;
		int r = ts_frame_complete(cl->in, cl->inlen, TS_PROTO_MAX_REQUEST, &plen);
		if (r < 0) {
			log_debug("oversized request from pid %d", (int)cl->peer.pid);
			client_respond(cl, ts_response_error("request larger than %u bytes",
			                                     TS_PROTO_MAX_REQUEST));
			return;
		}
		if (r == 1) {
			client_respond(cl, handle(cl, cl->in + TS_PROTO_HDR_LEN, plen));
			return;
		}
	}
}

static void client_write(struct control_client *cl)
{
	while (cl->outoff < cl->outlen) {
		ssize_t n =
		    send(cl->fd, cl->out + cl->outoff, cl->outlen - cl->outoff, MSG_NOSIGNAL);
		if (n < 0) {
			if (retry_io(cl))
				continue;
			return;
		}
		cl->outoff += (size_t)n;
	}
	client_close(cl); /* one request per connection */
}

/* Arms the timer for the nearest deadline, or switches it off when nothing waits. */
static void control_rearm(struct control *c)
{
	long long now = ts_now_ms();
	int left = control_next_timeout(c, now);

	if (!c->timer)
		return;
	if (left < 0) {
		(void)sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
		return;
	}
	if (sd_event_source_set_time(c->timer, (uint64_t)(now + left) * 1000) < 0 ||
	    sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT) < 0)
		log_warning("cannot arm the control socket's deadline timer: clients that never "
		            "finish are dropped only when the next one comes");
}

static int client_cb(sd_event_source *s, int fd, uint32_t events, void *userdata)
{
	struct control_client *cl = userdata;

	if (cl->out)
		client_write(cl);
	else if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		client_read(cl);
	control_rearm(cl->ctl);
	return 0;
}

static int timer_cb(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct control *c = userdata;

	control_expire(c, ts_now_ms());
	control_rearm(c);
	return 0;
}

/* Tells a client why it is dropped, best effort: one small frame into an empty socket buffer. */
static void send_refusal(int fd, const char *why)
{
	size_t len;
	uint8_t *buf = ts_frame_encode_error(why, &len);
	if (buf)
		(void)!send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	free(buf);
}

/* Reads what every waiting client (of uid, or of everyone for -1) has sent by now. */
static void read_pending(struct control *c, uid_t uid)
{
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct control_client *cl = &c->clients[i];
		if (cl->used && !cl->out && (uid == (uid_t)-1 || cl->peer.uid == uid))
			client_read(cl);
	}
}

/* Root and the daemon's own uid (its tools: ExecReload=) are never limited per uid. */
static bool trusted(const struct control *c, uid_t uid)
{
	return uid == 0 || uid == c->euid;
}

struct census {
	size_t used, nonroot /* not trusted() */, of_uid;
	struct control_client *free;
};

static struct census count_clients(struct control *c, uid_t uid)
{
	struct census n = {0};
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct control_client *cl = &c->clients[i];
		if (!cl->used) {
			n.free = n.free ? n.free : cl;
			continue;
		}
		n.used++;
		n.nonroot += !trusted(c, cl->peer.uid);
		n.of_uid += cl->peer.uid == uid;
	}
	return n;
}

/*
 * The client to drop for a newcomer: the longest-waiting one without a whole request of the
 * untrusted uid holding most slots; for a trusted newcomer, else the longest-waiting trusted one.
 */
static struct control_client *idle_victim(struct control *c, bool for_trusted)
{
	struct control_client *best = NULL;
	size_t best_n = 0;
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct control_client *cl = &c->clients[i];
		if (!cl->used || cl->out || trusted(c, cl->peer.uid))
			continue;
		size_t n = count_clients(c, cl->peer.uid).of_uid;
		if (!best || n > best_n || (n == best_n && cl->deadline < best->deadline)) {
			best = cl;
			best_n = n;
		}
	}
	for (size_t i = 0; !best && for_trusted && i < CONTROL_MAX_CLIENTS; i++) {
		struct control_client *cl = &c->clients[i];
		if (cl->used && !cl->out && (!best || cl->deadline < best->deadline))
			best = cl;
	}
	return best;
}

/*
 * A slot for a new client of uid, or NULL (*why says why) when it must be turned away. Before any
 * client is dropped, what the waiting ones sent is read, so a client whose request is queued is
 * answered, never evicted. A uid holds at most CONTROL_MAX_PER_UID slots and non-root uids
 * together at most CONTROL_MAX_CLIENTS - CONTROL_ROOT_SLOTS, so one user's flood neither locks
 * out other users nor root. When the pool is full, the longest-waiting silent client of the uid
 * holding most slots is dropped (told why); a uid at its own limit is refused instead, which
 * costs the daemon one accept and close per attempt and leaves the flooder's other clients be.
 */
static struct control_client *take_slot(struct control *c, uid_t uid, const char **why)
{
	struct census n = count_clients(c, uid);
	bool root = trusted(c, uid);

	if (!root && n.of_uid >= CONTROL_MAX_PER_UID) {
		read_pending(c, uid);
		if (count_clients(c, uid).of_uid >= CONTROL_MAX_PER_UID) {
			c->st.uid_limited++;
			*why = "turboschedd: too many connections of this user (at most " STR(
			    CONTROL_MAX_PER_UID) " at once); close some and try again";
			return NULL;
		}
		n = count_clients(c, uid);
	}
	if (n.free && (root || n.nonroot < CONTROL_MAX_CLIENTS - CONTROL_ROOT_SLOTS))
		return n.free;
	read_pending(c, (uid_t)-1);
	n = count_clients(c, uid);
	if (n.free && (root || n.nonroot < CONTROL_MAX_CLIENTS - CONTROL_ROOT_SLOTS))
		return n.free;
	struct control_client *victim = idle_victim(c, root);
	if (!victim) {
		c->st.rejected++;
		*why = "turboschedd is busy: too many clients connected; try again";
		return NULL;
	}
	c->st.evicted++;
	log_debug("dropping idle control client pid %d (uid %u) for a client of uid %u",
	          (int)victim->peer.pid, (unsigned)victim->peer.uid, (unsigned)uid);
	send_refusal(victim->fd, "dropped: too many clients connected and this one sent "
	                         "no request; connect again and send the request at once");
	client_close(victim);
	return count_clients(c, uid).free;
}

static void hold_pop(struct control *c)
{
	send_refusal(c->hold_fd[c->hold_head], c->hold_why[c->hold_head]);
	close(c->hold_fd[c->hold_head]);
	c->hold_head = (c->hold_head + 1) % CONTROL_HOLD_MAX;
	c->nhold--;
}

/*
 * A refused client is told why only after CONTROL_HOLD_MS, and not read meanwhile (it is not
 * in the loop at all). Refused at once, a flooder reconnects at once, and the daemon spent its
 * time accepting and closing (4.9 s of CPU in a 10 s flood by 3 processes); held, each of its
 * connections costs one accept a second. The box is bounded (our descriptors): when full, its
 * oldest goes now.
 */
static void hold_refused(struct control *c, int fd, const char *why)
{
	if (c->nhold == CONTROL_HOLD_MAX)
		hold_pop(c);
	size_t i = (c->hold_head + c->nhold) % CONTROL_HOLD_MAX;
	c->hold_fd[i] = fd;
	c->hold_why[i] = why;
	c->hold_until[i] = ts_now_ms() + CONTROL_HOLD_MS;
	c->nhold++;
}

static int accept_cb(sd_event_source *s, int lfd, uint32_t events, void *userdata)
{
	struct control *c = userdata;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			break;
		socklen_t l = sizeof(struct ucred);
		struct ucred peer;
		const char *why = "turboschedd cannot identify this client";
		struct control_client *cl = NULL;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &l) == 0)
			cl = take_slot(c, peer.uid, &why);
		if (!cl) {
			hold_refused(c, fd, why);
			continue;
		}
		cl->used = true;
		cl->ctl = c;
		cl->peer = peer;
		cl->pidfd = privs_peer_pidfd(fd);
		cl->in = malloc(IN_CAP);
		cl->fd = fd;
		cl->deadline = ts_now_ms() + c->timeout_ms;
		if (!cl->in ||
		    sd_event_add_io(c->event, &cl->src, fd, EPOLLIN, client_cb, cl) < 0) {
			client_close(cl);
			continue;
		}
		/* A client that sent its request with the connect is answered now. */
		client_read(cl);
	}
	control_rearm(c);
	return 0;
}

int control_next_timeout(const struct control *c, long long now)
{
	/* Held clients leave in the order they came: the first is due first. */
	long long best = c->nhold ? c->hold_until[c->hold_head] - now : -1;
	if (best < -1)
		best = 0;
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		if (!c->clients[i].used)
			continue;
		long long left = c->clients[i].deadline - now;
		if (left < 0)
			left = 0;
		if (best < 0 || left < best)
			best = left;
	}
	return (int)best;
}

void control_expire(struct control *c, long long now)
{
	while (c->nhold && c->hold_until[c->hold_head] <= now)
		hold_pop(c);
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct control_client *cl = &c->clients[i];
		if (cl->used && cl->deadline <= now) {
			c->st.timeouts++;
			log_debug("dropping control client pid %d: no complete exchange in %d ms",
			          (int)cl->peer.pid, c->timeout_ms);
			client_close(cl);
		}
	}
}

/* mkdir -p of the socket's directory, for runs outside systemd's RuntimeDirectory=. */
static void make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		/* Clients of every user must reach the socket, whatever the umask. */
		if (mkdir(dir, 0755) == 0)
			(void)chmod(dir, 0755);
		*p = '/';
	}
}

/*
 * Removes what a previous run left at path, which may only be a socket of ours: --socket names
 * any path, and a mistyped one must not delete a file. Anything else is -EEXIST with c->err
 * saying what is there.
 */
static int remove_stale(struct control *c, const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		snprintf(
		    c->err, sizeof(c->err),
		    "%s exists and is not a socket (%s, mode %04o, owner uid %u); not removing "
		    "it: choose another --socket path or remove it yourself",
		    path, ts_file_kind(st.st_mode), (unsigned)(st.st_mode & 07777),
		    (unsigned)st.st_uid);
	else if (st.st_uid != geteuid())
		snprintf(
		    c->err, sizeof(c->err),
		    "%s is a stale socket of uid %u, not ours (uid %u); not removing it: remove "
		    "it as that user or root, or choose another --socket path",
		    path, (unsigned)st.st_uid, (unsigned)geteuid());
	else
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	return -EEXIST;
}

int control_open(struct control *c, sd_event *e, const char *path, control_handler h, void *ctx)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int r;

	memset(c, 0, sizeof(*c));
	c->event = e;
	c->handler = h;
	c->ctx = ctx;
	c->timeout_ms = CONTROL_TIMEOUT_MS;
	c->may_change = privs_peer_may_change;
	c->euid = geteuid();
	c->listen_fd = -1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	snprintf(c->path, sizeof(c->path), "%s", path);
	make_parent(path);

	{
		_cleanup_close_ int probe =
		    socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (probe < 0)
			return -errno;
		/* A socket that accepts connections belongs to a running daemon: never steal it. */
		if (connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN)
			return -EADDRINUSE;
	}
	r = remove_stale(c, path);
	if (r < 0)
		return r;
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || /* anyone may ask; changes are checked per request */
	    listen(fd, SOMAXCONN) < 0)
		return -errno;
	r = sd_event_add_io(e, &c->listen, fd, EPOLLIN, accept_cb, c);
	if (r >= 0)
		r = sd_event_add_time(e, &c->timer, CLOCK_MONOTONIC, UINT64_MAX, 1000, timer_cb, c);
	if (r < 0) {
		c->listen = sd_event_source_disable_unref(c->listen);
		return r;
	}
	c->listen_fd = TAKE_FD(fd);
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++)
		c->clients[i].ctl = c;
	return 0;
}

void control_close(struct control *c)
{
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++)
		client_close(&c->clients[i]);
	while (c->nhold)
		hold_pop(c);
	c->timer = sd_event_source_disable_unref(c->timer);
	if (c->listen_fd >= 0) {
		c->listen = sd_event_source_disable_unref(c->listen);
		close(c->listen_fd);
		unlink(c->path);
		c->listen_fd = -1;
	}
}

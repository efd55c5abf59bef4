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
#include <unistd.h>

#include "log.h"
#include "privs.h"
#include "util.h"

#define IN_CAP (TS_PROTO_HDR_LEN + TS_PROTO_MAX_REQUEST)

static void client_close(struct control_client *cl)
{
	if (!cl->used)
		return;
	loop_del(cl->ctl->loop, &cl->src);
	close(cl->src.fd);
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
	if (!cl->out || loop_mod(cl->ctl->loop, &cl->src, EPOLLOUT) < 0)
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

static void client_read(struct control_client *cl)
{
	for (;;) {
		ssize_t n = recv(cl->src.fd, cl->in + cl->inlen, IN_CAP - cl->inlen, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				client_close(cl);
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
		    send(cl->src.fd, cl->out + cl->outoff, cl->outlen - cl->outoff, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				client_close(cl);
			return;
		}
		cl->outoff += (size_t)n;
	}
	client_close(cl); /* one request per connection */
}

static void client_cb(struct loop_source *src, uint32_t events)
{
	struct control_client *cl = src->data;

	if (cl->out)
		client_write(cl);
	else if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		client_read(cl);
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

/*
 * A free slot, or the one of the client that has been connected longest without sending a whole
 * request (dropped with a reason), or NULL when every client is being answered. A flood of idle
 * connections so cannot lock out a client that speaks at once.
 */
static struct control_client *free_slot(struct control *c)
{
	struct control_client *oldest = NULL;
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct control_client *cl = &c->clients[i];
		if (!cl->used)
			return cl;
		if (!cl->out && (!oldest || cl->deadline < oldest->deadline))
			oldest = cl;
	}
	if (oldest) {
		c->st.evicted++;
		log_debug("dropping idle control client pid %d: %d clients connected",
		          (int)oldest->peer.pid, CONTROL_MAX_CLIENTS);
		send_refusal(oldest->src.fd,
		             "dropped: too many clients connected and this one sent "
		             "no request; connect again and send the request at once");
		client_close(oldest);
	}
	return oldest;
}

static void accept_cb(struct loop_source *src, uint32_t events)
{
	struct control *c = src->data;

	(void)events;
	for (;;) {
		int fd = accept4(src->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct control_client *cl = free_slot(c);
		socklen_t l = sizeof(struct ucred);
		struct ucred peer;
		if (!cl || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &l) < 0) {
			/* Every slot busy answering: a flood must not exhaust our descriptors. */
			c->st.rejected++;
			send_refusal(fd,
			             "turboschedd is busy: too many clients connected; try again");
			close(fd);
			continue;
		}
		cl->used = true;
		cl->ctl = c;
		cl->peer = peer;
		cl->pidfd = privs_peer_pidfd(fd);
		cl->in = malloc(IN_CAP);
		cl->src = (struct loop_source){.fd = fd, .cb = client_cb, .data = cl};
		cl->deadline = loop_now_ms() + c->timeout_ms;
		if (!cl->in || loop_add(c->loop, &cl->src, EPOLLIN) < 0) {
			free(cl->in);
			close(fd);
			if (cl->pidfd >= 0)
				close(cl->pidfd);
			memset(cl, 0, sizeof(*cl));
			cl->ctl = c;
		}
	}
}

int control_next_timeout(const struct control *c, long long now)
{
	long long best = -1;
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

int control_open(struct control *c, struct loop *l, const char *path, control_handler h, void *ctx)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, r;

	memset(c, 0, sizeof(*c));
	c->loop = l;
	c->handler = h;
	c->ctx = ctx;
	c->timeout_ms = CONTROL_TIMEOUT_MS;
	c->may_change = privs_peer_may_change;
	c->listen.fd = -1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	snprintf(c->path, sizeof(c->path), "%s", path);
	make_parent(path);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A socket file that accepts connections belongs to a running daemon: never steal it. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN) {
		close(fd);
		return -EADDRINUSE;
	}
	close(fd);
	r = remove_stale(c, path);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || /* anyone may ask; changes are checked per request */
	    listen(fd, SOMAXCONN) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	c->listen = (struct loop_source){.fd = fd, .cb = accept_cb, .data = c};
	r = loop_add(l, &c->listen, EPOLLIN);
	if (r < 0) {
		close(fd);
		c->listen.fd = -1;
		return r;
	}
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++)
		c->clients[i].ctl = c;
	return 0;
}

void control_close(struct control *c)
{
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++)
		client_close(&c->clients[i]);
	if (c->listen.fd >= 0) {
		loop_del(c->loop, &c->listen);
		close(c->listen.fd);
		unlink(c->path);
		c->listen.fd = -1;
	}
}

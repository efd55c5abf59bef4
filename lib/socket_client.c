/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "socket_client.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "util.h"

/* Waits for fd to become ready for events before the deadline. 0 or -ETIMEDOUT/-errno. */
static int wait_fd(int fd, short events, long long deadline)
{
	for (;;) {
		long long left = deadline - ts_now_ms();
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
	long long deadline = ts_now_ms() + timeout_ms;
	uint8_t hdr[TS_PROTO_HDR_LEN];
	_cleanup_free_ uint8_t *out = NULL, *in = NULL;
	_cleanup_(json_object_putp) json_object *jr = NULL;
	_cleanup_close_ int fd = -1;
	size_t outlen = 0;
	int r;

	*resp = NULL;
	if (!path)
		path = ts_proto_default_socket();
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	jr = ts_request_to_json(req);
	out = jr ? ts_frame_encode(jr, &outlen) : NULL;
	if (!out)
		return -ENOMEM;
	r = send_all(fd, out, outlen, deadline);
	if (r)
		return r;
	r = recv_all(fd, hdr, sizeof(hdr), deadline);
	if (r)
		return r;
	uint32_t n = ts_frame_get_len(hdr);
	if (n > TS_PROTO_MAX_RESPONSE)
		return -EMSGSIZE;
	in = malloc(n ? n : 1);
	if (!in)
		return -ENOMEM;
	r = recv_all(fd, in, n, deadline);
	if (r)
		return r;
	*resp = ts_response_decode((const char *)in, n);
	return *resp ? 0 : -EPROTO;
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

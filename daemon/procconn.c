/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "procconn.h"

#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"

/*
 * Bursts of forks (a build) easily overflow the default. SO_RCVBUF is capped at rmem_max (208 KiB
 * on Debian: about 300 events); SO_RCVBUFFORCE, which needs the CAP_NET_ADMIN the daemon has
 * while it opens the socket, is not.
 */
#define RCVBUF (PROCCONN_RCVBUF_KIB * 1024)

static int send_op(int fd, enum proc_cn_mcast_op op)
{
	/* cn_msg ends in a flexible array, so the message is laid out by hand in a buffer. */
	union {
		struct nlmsghdr align;
		char b[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(op))];
	} msg;
	struct nlmsghdr *nl = &msg.align;
	struct cn_msg *cn;

	memset(&msg, 0, sizeof(msg));
	nl->nlmsg_len = NLMSG_LENGTH(sizeof(struct cn_msg) + sizeof(op));
	nl->nlmsg_type = NLMSG_DONE;
	nl->nlmsg_pid = 0; /* let the kernel fill in our port */
	cn = NLMSG_DATA(nl);
	cn->id.idx = CN_IDX_PROC;
	cn->id.val = CN_VAL_PROC;
	/*
	 * The plain operation (not struct proc_input with an event filter): every kernel with the
	 * connector accepts it, and a kernel that does not know the filter ignores it silently.
	 */
	cn->len = sizeof(op);
	memcpy(cn->data, &op, sizeof(op));
	return send(fd, nl, nl->nlmsg_len, 0) < 0 ? -errno : 0;
}

int procconn_open(void)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	int sz = RCVBUF, r;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	if (r == 0)
		r = send_op(fd, PROC_CN_MCAST_LISTEN);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int procconn_rcvbuf_kib(int fd)
{
	int sz = 0;
	socklen_t len = sizeof(sz);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, &len) < 0)
		return -1;
	return sz / 2 / 1024; /* the kernel doubles what was asked, for its bookkeeping */
}

void procconn_close(int fd)
{
	if (fd < 0)
		return;
	(void)send_op(fd, PROC_CN_MCAST_IGNORE);
	close(fd);
}

static int deliver(const void *data, size_t len, pc_event_fn fn, void *ctx)
{
	struct pc_event ev;
	/*
	 * The event sits 36 bytes into the datagram (nlmsghdr + cn_msg), but struct proc_event
	 * holds a u64 and wants 8-byte alignment: read it from an aligned copy (found by the
	 * fuzzer; reading in place is undefined behaviour).
	 */
	struct proc_event copy, *pe = &copy;

	memset(&copy, 0, sizeof(copy));
	memcpy(&copy, data, len < sizeof(copy) ? len : sizeof(copy));
	memset(&ev, 0, sizeof(ev));
	/* Each variant is checked against the bytes actually received. */
#define NEED(member)                                                                               \
	do {                                                                                       \
		if (len < offsetof(struct proc_event, event_data) + sizeof(pe->event_data.member)) \
			return -EBADMSG;                                                           \
	} while (0)
	/* exec, comm, uid and exit: the task's pid and tgid, under each variant's own name. */
#define TASK_EVENT(member, w)                                                                      \
	do {                                                                                       \
		NEED(member);                                                                      \
		ev.what = (w);                                                                     \
		ev.tid = pe->event_data.member.process_pid;                                        \
		ev.tgid = pe->event_data.member.process_tgid;                                      \
	} while (0)
	switch (pe->what) {
	case PROC_EVENT_FORK:
		NEED(fork);
		ev.what = PC_FORK;
		ev.ptid = pe->event_data.fork.parent_pid;
		ev.ptgid = pe->event_data.fork.parent_tgid;
		ev.tid = pe->event_data.fork.child_pid;
		ev.tgid = pe->event_data.fork.child_tgid;
		break;
	case PROC_EVENT_EXEC:
		TASK_EVENT(exec, PC_EXEC);
		break;
	case PROC_EVENT_COMM:
		TASK_EVENT(comm, PC_COMM);
		break;
	case PROC_EVENT_UID:
		TASK_EVENT(id, PC_UID);
		break;
	case PROC_EVENT_EXIT:
		TASK_EVENT(exit, PC_EXIT);
		break;
	default:
		return 0; /* NONE (the ack of LISTEN), gid, sid, ptrace, coredump: not ours */
	}
#undef TASK_EVENT
#undef NEED
	if (ev.tid <= 0 || ev.tgid <= 0)
		return -EBADMSG;
	ev.ts_ns = pe->timestamp_ns;
	fn(ctx, &ev);
	return 1;
}

/*
 * The next netlink message of a datagram, or NULL at its end. What NLMSG_OK/NLMSG_NEXT do, in
 * unsigned arithmetic checked against what is left (the macros mix int and u32, and stepping
 * over a last message's padding must not wrap the length).
 */
static const struct nlmsghdr *next_msg(const char **p, size_t *left)
{
	if (*left < NLMSG_HDRLEN)
		return NULL;
	const struct nlmsghdr *nh = (const struct nlmsghdr *)(const void *)*p;
	if (nh->nlmsg_len < NLMSG_HDRLEN || nh->nlmsg_len > *left)
		return NULL;
	size_t step = NLMSG_ALIGN(nh->nlmsg_len);
	if (step > *left)
		step = *left;
	*p += step;
	*left -= step;
	return nh;
}

int procconn_parse(const void *buf, size_t len, pc_event_fn fn, void *ctx)
{
	const char *p = buf;
	const struct nlmsghdr *nh;
	int n = 0;

	while ((nh = next_msg(&p, &len))) {
		if (nh->nlmsg_type == NLMSG_NOOP)
			continue;
		if (nh->nlmsg_type == NLMSG_ERROR || nh->nlmsg_type == NLMSG_OVERRUN)
			return -EBADMSG;
		size_t plen = nh->nlmsg_len - NLMSG_HDRLEN;
		if (plen < sizeof(struct cn_msg))
			return -EBADMSG;
		const struct cn_msg *cn = NLMSG_DATA(nh);
		if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC)
			continue;
		if (cn->len > plen - sizeof(*cn) ||
		    cn->len < offsetof(struct proc_event, event_data))
			return -EBADMSG;
		int r = deliver(cn->data, cn->len, fn, ctx);
		if (r < 0)
			return r;
		n += r;
	}
	return n;
}

static ssize_t real_recv(int fd, void *buf, size_t len, struct sockaddr_nl *from)
{
	socklen_t fl = sizeof(*from);
	ssize_t n = recvfrom(fd, buf, len, 0, (struct sockaddr *)from, &fl);
	if (n >= 0 && fl < sizeof(*from))
		from->nl_pid = UINT32_MAX; /* not a netlink sender: treat as foreign */
	return n;
}

static pc_recv_fn recv_fn = real_recv;

void procconn_set_recv(pc_recv_fn fn)
{
	recv_fn = fn ? fn : real_recv;
}

int procconn_read(int fd, pc_event_fn fn, void *ctx)
{
	/* Aligned for the netlink headers inside. */
	static union {
		struct nlmsghdr h;
		char b[64 * 1024];
	} buf;
	bool lost = false;

	for (;;) {
		struct sockaddr_nl from = {0};
		ssize_t n = recv_fn(fd, buf.b, sizeof(buf.b), &from);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				lost = true;
				continue;
			}
			if (errno == EAGAIN)
				return lost ? 1 : 0;
			return -errno;
		}
		/* Only the kernel (port 0) sends proc events; anything else is spoofed. */
		if (from.nl_pid != 0) {
			log_debug("ignoring netlink message from port %u", from.nl_pid);
			continue;
		}
		if (procconn_parse(buf.b, (size_t)n, fn, ctx) < 0)
			log_debug("ignoring a malformed proc connector message");
	}
}

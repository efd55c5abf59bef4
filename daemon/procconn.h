/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The proc connector (NETLINK_CONNECTOR, CN_IDX_PROC): fork, exec, comm, uid and exit events.
 *
 * On 6.12 binding to CN_IDX_PROC and sending PROC_CN_MCAST_LISTEN need no capability
 * (drivers/connector/connector.c cn_bind() allows CN_IDX_PROC for everyone, and cn_proc.c only
 * requires the initial user and PID namespaces). CAP_NET_ADMIN, when held at open, only raises
 * the receive buffer past net.core.rmem_max (SO_RCVBUFFORCE); the daemon drops it right after.
 */
#ifndef TSD_PROCCONN_H
#define TSD_PROCCONN_H

#include <stddef.h>
#include <linux/netlink.h>
#include <sys/types.h>

enum pc_what { PC_FORK, PC_EXEC, PC_COMM, PC_UID, PC_EXIT };

struct pc_event {
	enum pc_what what;
	pid_t tgid, tid;
	pid_t ptgid, ptid;        /* PC_FORK: the parent */
	unsigned long long ts_ns; /* CLOCK_MONOTONIC when the kernel sent it */
};

typedef void (*pc_event_fn)(void *ctx, const struct pc_event *ev);

/* Opens, binds and subscribes. Returns the non-blocking fd or -errno. */
int procconn_open(void);
/* The receive buffer procconn_open() asks for, and what the socket got (-1 on error). */
#define PROCCONN_RCVBUF_KIB 4096
int procconn_rcvbuf_kib(int fd);
/* Unsubscribes and closes. */
void procconn_close(int fd);

/*
 * Reads everything queued and calls fn per event. Returns 0, 1 when events were lost (ENOBUFS:
 * the caller must rescan), or -errno.
 */
int procconn_read(int fd, pc_event_fn fn, void *ctx);

/*
 * Parses one datagram (netlink messages holding cn_msg + proc_event). Messages that are not proc
 * events of interest are skipped. Returns the number of events delivered, or -EBADMSG when the
 * datagram is malformed (what parsed before that was delivered).
 */
int procconn_parse(const void *buf, size_t len, pc_event_fn fn, void *ctx);

/* The receive call procconn_read() uses; tests replace it (NULL: recvfrom). */
typedef ssize_t (*pc_recv_fn)(int fd, void *buf, size_t len, struct sockaddr_nl *from);
void procconn_set_recv(pc_recv_fn fn);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket server: non-blocking, one request and one response per connection, bounded
 * sizes, a deadline per client (one that never speaks or never reads is dropped), at most
 * CONTROL_MAX_CLIENTS at once, CONTROL_MAX_PER_UID per uid and CONTROL_ROOT_SLOTS kept for root
 * (take_slot() in control.c: idle connections of one user lock out neither others nor root), and
 * the permission check for changes (SO_PEERCRED + SO_PEERPIDFD, then privs_peer_may_change()).
 */
#ifndef TSD_CONTROL_H
#define TSD_CONTROL_H

#include <json-c/json.h>
#include <stdint.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "proto.h"

#define CONTROL_MAX_CLIENTS 32
/* Slots one uid may hold at once, and slots only root's clients may take. */
#define CONTROL_MAX_PER_UID 8
#define CONTROL_ROOT_SLOTS  4
/* Refused clients are held this long before they are told, at most this many at once. */
#define CONTROL_HOLD_MS    1000
#define CONTROL_HOLD_MAX   128
#define CONTROL_TIMEOUT_MS 5000

/* Answers one permitted request with a response object (never NULL). */
typedef json_object *(*control_handler)(void *ctx, const struct ts_request *req,
                                        const struct ucred *peer);

struct control;

struct control_client {
	sd_event_source *src;
	int fd;
	struct control *ctl;
	struct ucred peer;
	int pidfd; /* the peer process as a pidfd (SO_PEERPIDFD), -1 when the kernel has none */
	uint8_t *in;
	size_t inlen;
	uint8_t *out;
	size_t outlen, outoff;
	long long deadline;
	bool used;
};

struct control_stats {
	/*
	 * rejected: turned away, every slot answering; evicted: idle, dropped for a new client;
	 * uid_limited: turned away, its uid held CONTROL_MAX_PER_UID slots.
	 */
	unsigned long long served, refused, timeouts, rejected, evicted, uid_limited;
};

struct control {
	sd_event *event;
	sd_event_source *listen;
	int listen_fd;
	/* Fires at the nearest client deadline or end of a hold (control_next_timeout()). */
	sd_event_source *timer;
	char path[108];
	char err[320]; /* why control_open() failed, when errno alone does not say it */
	control_handler handler;
	void *ctx;
	int timeout_ms;
	uid_t euid; /* the daemon's own uid: its tools count as root for the slot limits */
	/* Permission for changes; privs_peer_may_change() unless a test replaces it. */
	bool (*may_change)(pid_t pid, int pidfd, uid_t uid, const char **why);
	struct control_client clients[CONTROL_MAX_CLIENTS];
	/* Refused clients waiting for their answer: a ring, oldest at hold_head. */
	int hold_fd[CONTROL_HOLD_MAX];
	const char *hold_why[CONTROL_HOLD_MAX];
	long long hold_until[CONTROL_HOLD_MAX];
	size_t hold_head, nhold;
	struct control_stats st;
};

/*
 * Creates the socket (and its directory), refusing when another daemon answers on it
 * (-EADDRINUSE) or when path holds anything but a stale socket of the daemon's uid (-EEXIST,
 * c->err says what).
 */
int control_open(struct control *c, sd_event *e, const char *path, control_handler h, void *ctx);
void control_close(struct control *c);
/* Milliseconds until the nearest client deadline, or -1 when no client is connected. */
int control_next_timeout(const struct control *c, long long now);
/* Drops clients whose deadline has passed (the timer does this; tests call it directly). */
void control_expire(struct control *c, long long now);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one epoll event loop: every fd the daemon waits on is a source with a callback. */
#ifndef TSD_LOOP_H
#define TSD_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop_source;
typedef void (*loop_cb)(struct loop_source *src, uint32_t events);

struct loop_source {
	int fd;
	loop_cb cb;
	void *data;
};

struct loop {
	int epfd;
	bool stop;
};

int loop_init(struct loop *l);
void loop_close(struct loop *l);
/* Adds or changes (loop_mod) the events a source waits for. 0 or -errno. */
int loop_add(struct loop *l, struct loop_source *src, uint32_t events);
int loop_mod(struct loop *l, struct loop_source *src, uint32_t events);
void loop_del(struct loop *l, struct loop_source *src);
/* Waits at most timeout_ms (-1: forever) and dispatches what is ready. Returns events handled. */
int loop_run_once(struct loop *l, int timeout_ms);

/* Milliseconds of CLOCK_MONOTONIC, for deadlines. */
long long loop_now_ms(void);

#endif

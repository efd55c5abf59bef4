/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "loop.h"

#include <errno.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

int loop_init(struct loop *l)
{
	l->stop = false;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	return l->epfd < 0 ? -errno : 0;
}

void loop_close(struct loop *l)
{
	if (l->epfd >= 0)
		close(l->epfd);
	l->epfd = -1;
}

static int ctl(struct loop *l, int op, struct loop_source *src, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = src};
	return epoll_ctl(l->epfd, op, src->fd, &ev) < 0 ? -errno : 0;
}

int loop_add(struct loop *l, struct loop_source *src, uint32_t events)
{
	return ctl(l, EPOLL_CTL_ADD, src, events);
}

int loop_mod(struct loop *l, struct loop_source *src, uint32_t events)
{
	return ctl(l, EPOLL_CTL_MOD, src, events);
}

void loop_del(struct loop *l, struct loop_source *src)
{
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, src->fd, NULL);
}

int loop_run_once(struct loop *l, int timeout_ms)
{
	/* Few events per round keeps one busy source (the proc connector) from starving others. */
	struct epoll_event ev[16];
	int n = epoll_wait(l->epfd, ev, 16, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		struct loop_source *s = ev[i].data.ptr;
		s->cb(s, ev[i].events);
	}
	return n;
}

long long loop_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

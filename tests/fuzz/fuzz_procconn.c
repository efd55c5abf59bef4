/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the proc connector datagram parser (daemon/procconn.c): any bytes give a
 * number of events or -EBADMSG, never a read outside the datagram. Every event delivered names a
 * task (tid and tgid > 0) and one of the kinds the daemon handles.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "procconn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_event(void *ctx, const struct pc_event *ev)
{
	(*(int *)ctx)++;
	if (ev->tid <= 0 || ev->tgid <= 0 || (unsigned)ev->what > PC_EXIT)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The daemon receives into an aligned buffer; so does this. */
	static union {
		uint64_t align;
		uint8_t b[65536];
	} buf;
	int seen = 0;

	if (size > sizeof(buf.b))
		return 0;
	memcpy(buf.b, data, size);
	int n = procconn_parse(buf.b, size, check_event, &seen);
	if (n != -EBADMSG && n != seen)
		abort();
	return 0;
}

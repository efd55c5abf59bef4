/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The client end of the control socket (lib/proto.h): connect, send one framed request, read one
 * framed response, all under one deadline. turboschedctl's only way to ask the daemon.
 */
#ifndef TS_SOCKET_CLIENT_H
#define TS_SOCKET_CLIENT_H

#include "proto.h"

/*
 * Sends one request and waits for the response (at most timeout_ms in total). 0 and *resp (caller
 * puts), or -errno: -ENOENT or -ECONNREFUSED when the daemon is not running, -EACCES, -ETIMEDOUT,
 * -EMSGSIZE, -EPROTO (garbled response).
 */
int ts_proto_call(const char *path, const struct ts_request *req, int timeout_ms,
                  json_object **resp);

/* A sentence for ts_proto_call() errors, e.g. "turboschedd is not running (no socket at PATH)". */
const char *ts_proto_strerror(int err);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the control protocol, both directions:
 *  - the daemon's side: the bytes are a client's stream, cut into frames exactly as the server
 *    does (ts_frame_complete() with the request limit), each payload parsed by
 *    ts_request_parse(); a request that parses must survive a round trip unchanged;
 *  - turboschedctl's side: the bytes are a response payload (ts_response_decode()), walked the
 *    way the CLI reads the daemon's ledger, status, rules and explanations (lib/proto).
 * Any bytes must give a request, a response or a clear refusal: never a crash, leak, hang or
 * out-of-bounds access. Build with -Dfuzz=true and CC=clang; run tests/fuzz/run.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_request(const char *payload, size_t len)
{
	struct ts_request req, again;
	char err[160];

	memset(err, 'x', sizeof(err));
	if (ts_request_parse(payload, len, &req, err, sizeof(err)) < 0) {
		/* A refusal always says why, in a terminated string. */
		if (!memchr(err, '\0', sizeof(err)) || !err[0])
			abort();
		return;
	}
	if ((unsigned)req.cmd >= TS_CMD_COUNT)
		abort();
	bool takes_pid = req.cmd == TS_CMD_EXPLAIN;
	if (takes_pid ? req.pid <= 0 : req.pid != 0)
		abort();
	/* What the daemon understood is what a well-behaved client would have sent. */
	json_object *o = ts_request_to_json(&req);
	size_t n;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
	if (ts_request_parse(s, n, &again, err, sizeof(err)) < 0 || again.cmd != req.cmd ||
	    again.pid != req.pid)
		abort();
	json_object_put(o);
}

static void check_stream(const uint8_t *data, size_t size)
{
	size_t off = 0, plen;

	for (;;) {
		int r = ts_frame_complete(data + off, size - off, TS_PROTO_MAX_REQUEST, &plen);
		if (r <= 0)
			return; /* needs more bytes, or oversized: the server answers and closes */
		if (plen > TS_PROTO_MAX_REQUEST || TS_PROTO_HDR_LEN + plen > size - off)
			abort();
		check_request((const char *)data + off + TS_PROTO_HDR_LEN, plen);
		off += TS_PROTO_HDR_LEN + plen;
	}
}

static void check_response(const uint8_t *data, size_t size)
{
	json_object *resp = ts_response_decode((const char *)data, size);
	const char *err = NULL;

	if (!resp)
		return;
	int r = ts_response_check(resp, &err);
	if (r < 0 || (r == 1 && !err))
		abort();
	struct ts_ledger l = {0};
	(void)ts_reply_tasks_parse(resp, &l); /* the "tasks" reply as turboschedctl types it */
	for (pid_t tid = 1; tid < 4; tid++)
		(void)ts_ledger_find(&l, tid);
	ts_ledger_free(&l);
	/* The typed replies of status, rules and explain, as turboschedctl reads them. */
	struct ts_status st;
	if (ts_reply_status_parse(resp, &st) == 0)
		json_object_put(ts_reply_status(&st));
	ts_status_free(&st);
	struct ts_rules_reply rr;
	if (ts_reply_rules_parse(resp, &rr) == 0)
		json_object_put(ts_reply_rules(&rr.rules, rr.files, rr.nfiles, rr.from_config));
	ts_rules_reply_free(&rr);
	struct ts_explain ex;
	if (ts_reply_explain_parse(resp, &ex) == 0)
		json_object_put(ts_reply_explain(&ex));
	ts_explain_free(&ex);
	json_object_put(resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_stream(data, size);
	check_response(data, size);
	return 0;
}

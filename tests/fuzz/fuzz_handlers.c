/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the daemon's request handlers: the bytes are a client's stream, framed and
 * parsed as the control server does, and every request is answered by daemon_handle()
 * (commands.c) over a fake /proc with a few tasks and a fake sched_setattr layer (nothing real is
 * ever tagged). Each answer must be a JSON object with "ok" that encodes into one frame. Build
 * with -Dfuzz=true and CC=clang; run tests/fuzz/run.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "sched_attr.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct daemon D;

/* The kernel, as far as the handlers see it: tasks 100 and 101 exist, clamps are kept here. */
static uint32_t util_max[2] = {1024, 1024};

static int fake_get(pid_t tid, struct sched_attr *a, unsigned int size, unsigned int flags)
{
	(void)flags;
	if (tid != 100 && tid != 101)
		return errno = ESRCH, -1;
	memset(a, 0, size);
	a->size = SCHED_ATTR_SIZE_VER1;
	a->sched_util_max = util_max[tid - 100];
	return 0;
}

static int fake_set(pid_t tid, struct sched_attr *a, unsigned int flags)
{
	(void)flags;
	if (tid != 100 && tid != 101)
		return errno = ESRCH, -1;
	if (a->sched_flags & SCHED_FLAG_UTIL_CLAMP_MAX)
		util_max[tid - 100] = a->sched_util_max > 1024 ? 1024 : a->sched_util_max;
	return 0;
}

static const struct ts_sched_ops fake_ops = {.setattr = fake_set, .getattr = fake_get};

static void put(const char *root, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static void task(const char *root, int tid, const char *comm)
{
	char rel[128], text[512];
	snprintf(rel, sizeof(rel), "proc/100/task/%d/stat", tid);
	snprintf(text, sizeof(text),
	         "%d (%s) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 %d 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
	         "0 0 0 0 0 0 0\n",
	         tid, comm, 10 + tid);
	put(root, rel, text);
	snprintf(rel, sizeof(rel), "proc/%d/task/%d/stat", tid, tid);
	put(root, rel, text);
	snprintf(rel, sizeof(rel), "proc/100/task/%d/status", tid);
	snprintf(text, sizeof(text), "Name:\t%s\nTgid:\t100\nPid:\t%d\nUid:\t0\t0\t0\t0\n", comm,
	         tid);
	put(root, rel, text);
	snprintf(rel, sizeof(rel), "proc/100/task/%d/cgroup", tid);
	put(root, rel, "0::/fuzz.slice\n");
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char conf[] = "[rule janitor]\ncomm = logrotate\n";
	static char root[] = "/tmp/ts-fuzz-handlers-XXXXXX";
	struct ts_diag diag;

	(void)argc, (void)argv;
	if (!mkdtemp(root))
		abort();
	put(root, "proc/sys/kernel/sched_util_clamp_max", "1024\n");
	task(root, 100, "logrotate");
	task(root, 101, "worker");
	ts_root_set(root);
	ts_sched_ops_set(&fake_ops);
	log_set_level(LOG_EMERG); /* no journal noise per input */
	if (ts_config_parse_buffer("fuzz.conf", conf, sizeof(conf) - 1, NULL, &D.cfg, &diag) != 0)
		abort();
	D.config_path = "/nonexistent/turboschedd.conf"; /* reload fails, cleanly */
	D.dropin_dir = "";
	engine_init(&D.eng, D.cfg);
	engine_scan(&D.eng);
	return 0;
}

static void answer(const char *payload, size_t len)
{
	struct ts_request req;
	struct ucred peer = {.pid = 1, .uid = 0, .gid = 0};
	char err[160];
	json_object *resp;

	if (ts_request_parse(payload, len, &req, err, sizeof(err)) < 0)
		resp = ts_response_error("%s", err);
	else
		resp = daemon_handle(&D, &req, &peer);
	json_object *ok = NULL;
	if (!resp || !json_object_object_get_ex(resp, "ok", &ok))
		abort();
	size_t n;
	uint8_t *frame = ts_frame_encode(resp, &n);
	if (!frame || n < TS_PROTO_HDR_LEN)
		abort();
	free(frame);
	json_object_put(resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0, plen;

	while (ts_frame_complete(data + off, size - off, TS_PROTO_MAX_REQUEST, &plen) == 1) {
		answer((const char *)data + off + TS_PROTO_HDR_LEN, plen);
		off += TS_PROTO_HDR_LEN + plen;
	}
	return 0;
}

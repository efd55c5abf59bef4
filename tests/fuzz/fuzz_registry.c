/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the files the tools read back: the daemon's registry (registry_load(), what
 * a restart adopts) and turboschedctl's manual-tags file (ts_state_parse()). Any bytes must give
 * entries, a count of bad ones, or a refusal with its reason: never a crash, leak or hang. Build
 * with -Dfuzz=true and CC=clang; run tests/fuzz/run.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "registry.h"
#include "tag_state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_registry(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];
	struct registry r = {0};
	struct registry_load_report rep;

	/* registry_load() reads a path: one memory file, rewritten per input. */
	if (fd < 0 && (fd = memfd_create("registry", 0)) < 0)
		abort();
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int ret = registry_load(&r, path, &rep);
	if (ret == -EINVAL && !rep.why[0])
		abort(); /* an unusable file always says why */
	if (ret == 0 && r.n > rep.entries)
		abort();
	for (size_t i = 0; i < r.n; i++)
		if (r.v[i].tid <= 0)
			abort();
	registry_free(&r);
}

static void check_state(const uint8_t *data, size_t size)
{
	struct ts_tag_state s;
	char *text = malloc(size + 1);

	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&s, 0, sizeof(s));
	if (ts_state_parse(&s, text) == 0)
		for (size_t i = 0; i < s.n; i++)
			if (s.v[i].tid <= 0 || s.v[i].util_min > 1024 || s.v[i].util_max > 1024)
				abort();
	free(s.v);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_registry(data, size);
	check_state(data, size);
	return 0;
}

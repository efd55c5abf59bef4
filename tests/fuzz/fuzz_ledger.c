/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the file both tools read back: the ledger (lib/ledger), as the daemon
 * adopts its own after a restart and reads turboschedctl's, and as turboschedctl reads its own.
 * Any bytes must give entries, a count of bad lines, or a refusal with its reason: never a crash,
 * leak or hang; every entry read saves and reads back the same. Build with -Dfuzz=true and
 * CC=clang; run tests/fuzz/run.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ledger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];
	struct ts_ledger l = {0};
	struct ts_ledger_report rep;

	/* ts_ledger_load() reads a path: one memory file, rewritten per input. */
	if (fd < 0 && (fd = memfd_create("ledger", 0)) < 0)
		abort();
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int ret = ts_ledger_load(&l, path, &rep);
	if (ret == -EINVAL && (!rep.why[0] || l.n))
		abort(); /* an unusable file always says why, and gives nothing */
	if (ret == 0 && l.n > rep.entries)
		abort();
	for (size_t i = 0; i < l.n; i++) {
		const struct ts_ledger_entry *e = &l.v[i];
		if (e->tid <= 0 || e->tgid <= 0 || e->prev.util_min > 1024 ||
		    e->prev.util_max > 1024 || e->owner == TS_OWNER_EXTERNAL ||
		    ts_ledger_find(&l, e->tid) != e)
			abort();
	}
	ts_ledger_free(&l);
	return 0;
}

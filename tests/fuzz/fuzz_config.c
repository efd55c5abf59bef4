/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the turboschedd.conf parser: any bytes must give either a configuration or
 * a list of messages, never a crash, leak or out-of-bounds access (build with -Dfuzz=true and
 * CC=clang; run tests/fuzz/run).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* Deterministic and offline: no NSS lookups while fuzzing. */
static int lookup(const char *name, uid_t *uid)
{
	if (strcmp(name, "root") == 0)
		return *uid = 0, 0;
	return -ENOENT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_config *c = NULL;
	struct ts_diag d;

	if (ts_config_parse_buffer("fuzz.conf", (const char *)data, size, lookup, &c, &d) == 0) {
		/* A configuration that parsed must be internally consistent. */
		for (size_t i = 0; i < c->rules.nrules; i++)
			if (!c->rules.rules[i].ncomm && !c->rules.rules[i].ncgroup &&
			    !c->rules.rules[i].nuser)
				abort();
		ts_config_free(c);
	} else {
		char *j = ts_diag_join(&d);
		free(j);
		ts_diag_clear(&d);
	}
	return 0;
}

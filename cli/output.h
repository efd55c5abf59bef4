/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Human tables and JSON printing, so every command formats the same way. */
#ifndef TS_CLI_OUTPUT_H
#define TS_CLI_OUTPUT_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>

/* A text table: columns as wide as their widest cell, two spaces apart, header line first. */
struct table {
	size_t ncols;
	const char *const *headers;
	char **cells; /* nrows * ncols, malloc'd strings */
	size_t nrows, cap;
};

void table_init(struct table *t, size_t ncols, const char *const *headers);
/* Adds one row of exactly ncols strings (copied). 0 or -ENOMEM. */
int table_add(struct table *t, ...);
void table_print(const struct table *t, FILE *f);
void table_free(struct table *t);

/* Prints obj pretty (two-space indentation) and a newline, then puts it. */
void json_print_put(FILE *f, json_object *obj);

/* "0-3,8" for ascending CPU numbers, written into buf. */
void format_cpulist(char *buf, size_t len, const int *cpus, size_t n);

#endif

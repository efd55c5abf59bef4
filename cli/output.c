/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "output.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

void table_init(struct table *t, size_t ncols, const char *const *headers)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->headers = headers;
}

int table_add(struct table *t, ...)
{
	va_list ap;

	/* One element is one row of ncols cells; cap counts rows. */
	if (!ts_grow_array((void **)&t->cells, &t->cap, t->nrows, t->ncols * sizeof(*t->cells)))
		return -ENOMEM;
	va_start(ap, t);
	for (size_t i = 0; i < t->ncols; i++) {
		const char *s = va_arg(ap, const char *);

		t->cells[t->nrows * t->ncols + i] = strdup(s ? s : "-");
	}
	va_end(ap);
	t->nrows++;
	return 0;
}

static void print_row(FILE *f, const size_t *w, size_t ncols, const char *const *cells)
{
	for (size_t i = 0; i < ncols; i++) {
		const char *s = cells[i] ? cells[i] : "";

		/* The last column is not padded: no trailing blanks for grep and diff. */
		if (i + 1 == ncols)
			fprintf(f, "%s\n", s);
		else
			fprintf(f, "%-*s  ", (int)w[i], s);
	}
}

void table_print(const struct table *t, FILE *f)
{
	size_t *w = calloc(t->ncols, sizeof(*w));

	if (!w)
		return;
	for (size_t i = 0; i < t->ncols; i++)
		w[i] = strlen(t->headers[i]);
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t i = 0; i < t->ncols; i++) {
			const char *s = t->cells[r * t->ncols + i];
			size_t l = s ? strlen(s) : 0;

			if (l > w[i])
				w[i] = l;
		}
	print_row(f, w, t->ncols, t->headers);
	for (size_t r = 0; r < t->nrows; r++)
		print_row(f, w, t->ncols, (const char *const *)&t->cells[r * t->ncols]);
	free(w);
}

void table_free(struct table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

void json_print_put(FILE *f, json_object *obj)
{
	fprintf(f, "%s\n",
	        json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
	                                                JSON_C_TO_STRING_SPACED |
	                                                JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
}

void format_cpulist(char *buf, size_t len, const int *cpus, size_t n)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++) {
		size_t j = i;
		int w;

		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (j > i + 0)
			w = snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", cpus[i],
			             cpus[j]);
		else
			w = snprintf(buf + off, len - off, "%s%d", off ? "," : "", cpus[i]);
		if (w < 0)
			break;
		off += (size_t)w;
		i = j;
	}
}

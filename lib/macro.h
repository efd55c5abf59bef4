/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cleanup attributes in systemd's style (src/basic/alloc-util.h, fd-util.h): a variable declared
 * _cleanup_free_ is freed, one declared _cleanup_close_ is closed (_cleanup_fclose_,
 * _cleanup_closedir_ likewise), when it goes out of scope;
 * TAKE_PTR and TAKE_FD hand the value on and leave NULL / -1 behind. And one growable array for
 * every growable array: ts_grow(&v, &cap, n) makes room for one more element.
 */
#ifndef TS_MACRO_H
#define TS_MACRO_H

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

#define _cleanup_(f)    __attribute__((cleanup(f)))
#define _cleanup_free_  _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* A function freep-like for a type: DEFINE_TRIVIAL_CLEANUP_FUNC(FILE *, fclose) makes fclosep. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                                    \
	static inline void func##p(type *p)                                                        \
	{                                                                                          \
		if (*p)                                                                            \
			func(*p);                                                                  \
	}

DEFINE_TRIVIAL_CLEANUP_FUNC(FILE *, fclose)
DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir)
#define _cleanup_fclose_   _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)

/* __extension__: statement expressions are GNU C, and the build is -Wpedantic. */
#define TAKE_PTR(p)                                                                                \
	__extension__({                                                                            \
		__typeof__(p) _p = (p);                                                            \
		(p) = NULL;                                                                        \
		_p;                                                                                \
	})
static inline int take_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}
#define TAKE_FD(fd) take_fd(&(fd))

/*
 * PROTECT_ERRNO; at the top of a function: errno is what it was on entry when the function returns,
 * so a caller may log first and read errno after (systemd's PROTECT_ERRNO). Every logger has it.
 */
static inline void reset_errnop(const int *saved)
{
	errno = *saved;
}
#define PROTECT_ERRNO                                                                              \
	_cleanup_(reset_errnop) __attribute__((unused)) const int _saved_errno_ = errno

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/*
 * Makes room for element n of the array *v of capacity *cap (in elements of size sz), doubling
 * from at least 16. false when out of memory or when the size would overflow (*v is unchanged).
 */
bool ts_grow_array(void **v, size_t *cap, size_t n, size_t sz);
#define ts_grow(v, cap, n) ts_grow_array((void **)(v), (cap), (n), sizeof(**(v)))

#endif

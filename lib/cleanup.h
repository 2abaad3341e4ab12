/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_CLEANUP_H
#define AGENTSBX_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * Scope-bound release, so that every early return frees and closes.
 * Use take_ptr()/take_fd() to hand ownership out of a scope.
 */
static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void cleanup_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

/* NULL-terminated array of strings. */
static inline void cleanup_strvp(char ***v)
{
	if (*v) {
		for (char **p = *v; *p; p++)
			free(*p);
		free(*v);
	}
}

#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_close_ __attribute__((cleanup(cleanup_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(cleanup_fclosep)))
#define _cleanup_strv_ __attribute__((cleanup(cleanup_strvp)))

#define take_ptr(p)                       \
	({                                \
		__typeof__(p) _tmp = (p); \
		(p) = NULL;               \
		_tmp;                     \
	})

#define take_fd(fd)              \
	({                       \
		int _tmp = (fd); \
		(fd) = -1;       \
		_tmp;            \
	})

#endif

/* Small language helpers shared by every module: cleanup attributes,
 * TAKE_PTR() and array sizes. Header only; owns nothing. */
#pragma once

#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define _cleanup_(f)   __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

/* Take ownership of a pointer: return it and leave NULL behind. */
#define TAKE_PTR(p)                        \
	({                                 \
		__typeof__(p) _ptr_ = (p); \
		(p) = NULL;                \
		_ptr_;                     \
	})

/* The same for a file descriptor: return it and leave -1 behind. */
#define TAKE_FD(fd)                \
	({                         \
		int _fd_ = (fd);   \
		(fd) = -1;         \
		_fd_;              \
	})

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void closedirp(DIR **d)
{
	if (*d)
		(void)closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

#define streq(a, b) (strcmp((a), (b)) == 0)

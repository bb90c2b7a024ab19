/* A thread's stop signal: a pipe that becomes readable once stopper_fire()
 * was called, so that a thread can poll() it beside its own descriptors or
 * sleep on it. Header only; owns the pipe. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

struct stopper {
	int fd[2];
};

/* 0 or -errno; a stopper that failed to start can still be closed. */
static inline int stopper_init(struct stopper *s)
{
	if (pipe2(s->fd, O_CLOEXEC) == 0)
		return 0;
	s->fd[0] = s->fd[1] = -1;
	return -errno;
}

/* What to poll() for POLLIN. */
static inline int stopper_fd(const struct stopper *s)
{
	return s->fd[0];
}

/* Sleep up to `ms` (-1: no limit); true once stopper_fire() was called. */
static inline bool stopper_wait(const struct stopper *s, int ms)
{
	struct pollfd pfd = { .fd = s->fd[0], .events = POLLIN };

	return poll(&pfd, 1, ms) != 0;
}

/* Wait until `fd` is readable (1) or stopper_fire() was called (0);
 * -errno. */
static inline int stopper_wait_fd(const struct stopper *s, int fd)
{
	struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
				 { .fd = s->fd[0], .events = POLLIN } };

	while (poll(pfd, 2, -1) < 0)
		if (errno != EINTR)
			return -errno;
	return pfd[1].revents ? 0 : 1;
}

static inline void stopper_fire(struct stopper *s)
{
	if (s->fd[1] >= 0)
		(void)!write(s->fd[1], "x", 1);
}

/* Tell the thread that waits on `s` to stop and wait until it ended. */
static inline void stopper_join(struct stopper *s, pthread_t thread)
{
	stopper_fire(s);
	(void)pthread_join(thread, NULL);
}

static inline void stopper_close(struct stopper *s)
{
	if (s->fd[0] >= 0) {
		(void)close(s->fd[0]);
		(void)close(s->fd[1]);
	}
	s->fd[0] = s->fd[1] = -1;
}

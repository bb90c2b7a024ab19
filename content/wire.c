/* Exact reads and writes on a render worker's socket; see wire.h. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>

#include "time-util.h"
#include "wire.h"

/* Wait until `fd` is ready for `events` or the deadline (now_ms(); or
 * WIRE_NO_DEADLINE: the worker waiting for its next request) passes. */
static int poll_deadline(int fd, short events, long long deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events };
		long long left = deadline - now_ms();
		int r;

		if (deadline == WIRE_NO_DEADLINE)
			left = -1;
		else if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		return 0;
	}
}

int wire_write(int fd, const void *buf, size_t len, long long deadline)
{
	const uint8_t *b = buf;

	while (len > 0) {
		ssize_t n;
		int r = poll_deadline(fd, POLLOUT, deadline);

		if (r < 0)
			return r;
		n = send(fd, b, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		b += n;
		len -= n;
	}
	return 0;
}

int wire_read(int fd, void *buf, size_t len, long long deadline)
{
	uint8_t *b = buf;

	while (len > 0) {
		ssize_t n;
		int r = poll_deadline(fd, POLLIN, deadline);

		if (r < 0)
			return r;
		n = recv(fd, b, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		b += n;
		len -= n;
	}
	return 0;
}

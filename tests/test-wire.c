/* The render workers' protocol reads and writes (wire.h) on a socketpair:
 * exact lengths however the bytes arrive, the end of the stream, a
 * deadline that passes on a peer that does not read or does not write,
 * and no SIGPIPE from a peer that went. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test.h"
#include "time-util.h"
#include "wire.h"

static int pair(int sv[2])
{
	return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
}

struct slow_writer {
	int fd;
	const char *data;
	size_t len;
};

/* Writes its bytes in three pieces, 30 ms apart. */
static void *slow_write(void *arg)
{
	struct slow_writer *w = arg;
	size_t cut[] = { 0, w->len / 3, 2 * w->len / 3, w->len };

	for (int i = 0; i < 3; i++) {
		size_t n = cut[i + 1] - cut[i];

		(void)usleep(30 * 1000);
		if (write(w->fd, w->data + cut[i], n) != (ssize_t)n)
			break;
	}
	return NULL;
}

TEST(exact_lengths)
{
	static const char msg[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	struct slow_writer w = { .data = msg, .len = sizeof(msg) };
	char buf[sizeof(msg) + 8];
	pthread_t th;
	int sv[2];

	ASSERT_EQ_INT(pair(sv), 0);
	ASSERT_EQ_INT(wire_write(sv[0], "hello", 5, now_ms() + 1000), 0);
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ_INT(wire_read(sv[1], buf, 3, now_ms() + 1000), 0);
	ASSERT_EQ_STR(buf, "hel");
	ASSERT_EQ_INT(wire_read(sv[1], buf, 2, WIRE_NO_DEADLINE), 0);
	ASSERT_TRUE(memcmp(buf, "lo", 2) == 0);
	/* a message that arrives in pieces is read whole, in order */
	w.fd = sv[0];
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ_INT(pthread_create(&th, NULL, slow_write, &w), 0);
	ASSERT_EQ_INT(wire_read(sv[1], buf, sizeof(msg), now_ms() + 5000), 0);
	pthread_join(th, NULL);
	ASSERT_EQ_STR(buf, msg);
	(void)close(sv[0]);
	(void)close(sv[1]);
}

TEST(end_of_stream)
{
	char buf[8];
	int sv[2];

	ASSERT_EQ_INT(pair(sv), 0);
	ASSERT_EQ_INT(wire_write(sv[0], "abc", 3, now_ms() + 1000), 0);
	(void)close(sv[0]);
	/* what was sent before the end is read, then a short read is -EPIPE */
	ASSERT_EQ_INT(wire_read(sv[1], buf, 2, now_ms() + 1000), 0);
	ASSERT_EQ_INT(wire_read(sv[1], buf, 2, now_ms() + 1000), -EPIPE);
	ASSERT_EQ_INT(wire_read(sv[1], buf, 1, WIRE_NO_DEADLINE), -EPIPE);
	/* writing to a peer that went: -EPIPE, and no SIGPIPE kills us */
	ASSERT_EQ_INT(wire_write(sv[1], "x", 1, now_ms() + 1000), -EPIPE);
	(void)close(sv[1]);
}

TEST(deadlines)
{
	static char big[64 * 1024];
	char buf[4];
	long long start;
	int sv[2], r = 0;

	ASSERT_EQ_INT(pair(sv), 0);
	/* nothing to read */
	start = now_ms();
	ASSERT_EQ_INT(wire_read(sv[1], buf, 1, start + 100), -ETIMEDOUT);
	ASSERT_TRUE(now_ms() - start >= 90);
	ASSERT_TRUE(now_ms() - start < 2000);
	/* a deadline already past */
	ASSERT_EQ_INT(wire_write(sv[0], "a", 1, now_ms() - 1), -ETIMEDOUT);
	ASSERT_EQ_INT(wire_read(sv[1], buf, 1, now_ms() + 100), -ETIMEDOUT);
	/* a peer that does not read: the socket fills, the write does not
	 * block past its deadline */
	start = now_ms();
	for (int i = 0; i < 1000 && r == 0; i++)
		r = wire_write(sv[0], big, sizeof(big), now_ms() + 100);
	ASSERT_EQ_INT(r, -ETIMEDOUT);
	ASSERT_TRUE(now_ms() - start < 5000);
	(void)close(sv[0]);
	(void)close(sv[1]);
}

TEST(bad_fd)
{
	char buf[1];
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	ASSERT_TRUE(fd >= 0);
	/* not a socket: the error, not a hang */
	ASSERT_EQ_INT(wire_read(fd, buf, 1, now_ms() + 1000), -ENOTSOCK);
	(void)close(fd);
}

TEST_MAIN(TEST_CASE(exact_lengths), TEST_CASE(end_of_stream),
	  TEST_CASE(deadlines), TEST_CASE(bad_fd))

/* One process at a time; see pidlock.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "pidlock.h"
#include "time-util.h"

#define PIDLOCK_POLL_MS 20
#define PIDLOCK_MAX	4096

/* "PID\nNOTE\n", as pidlock_take wrote it. */
static pid_t read_holder(int fd, char **ret_note)
{
	char buf[PIDLOCK_MAX];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	char *end, *nl;
	long pid;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, &end, 10);
	if (ret_note && *end == '\n' && (nl = strchr(end + 1, '\n')))
		*ret_note = strndup(end + 1, (size_t)(nl - end - 1));
	return pid > 0 ? (pid_t)pid : 0;
}

int pidlock_take(const char *path, const char *note, pid_t *ret_holder,
		 char **ret_note)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *text = NULL;
	int len;

	*ret_holder = 0;
	if (ret_note)
		*ret_note = NULL;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return -errno;
		*ret_holder = read_holder(fd, ret_note);
		return -EBUSY;
	}
	if (strchr(note ? note : "", '\n'))
		return -EINVAL;
	len = asprintf(&text, "%ld\n%s\n", (long)getpid(), note ? note : "");
	if (len < 0)
		return -ENOMEM;
	if (len >= PIDLOCK_MAX)
		return -EINVAL;
	if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)len, 0) != len)
		return -errno;
	return TAKE_FD(fd);
}

int pidlock_take_wait(const char *path, const char *note, unsigned timeout_ms,
		      pid_t *ret_holder)
{
	long long end = now_ms() + timeout_ms;
	int r;

	while ((r = pidlock_take(path, note, ret_holder, NULL)) == -EBUSY &&
	       now_ms() < end)
		(void)nanosleep(&(struct timespec){ .tv_nsec = PIDLOCK_POLL_MS *
							       1000000L },
				NULL);
	return r;
}

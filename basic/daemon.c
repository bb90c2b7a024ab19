/* The fork into the background; see daemon.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon.h"

int daemon_begin(int *ret_fd)
{
	int p[2];
	unsigned char status;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		(void)close(p[0]);
		(void)close(p[1]);
		return r;
	}
	if (pid == 0) {
		(void)close(p[0]);
		(void)setsid();
		*ret_fd = p[1];
		return 0;
	}
	(void)close(p[1]);
	do
		n = read(p[0], &status, 1);
	while (n < 0 && errno == EINTR);
	/* EOF: the child died before it served (it said why on stderr) */
	_exit(n == 1 ? status : 1);
}

void daemon_ready(int *fd, int status)
{
	unsigned char s = (unsigned char)status;
	int null;

	if (*fd < 0)
		return;
	if (status == 0) {
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			(void)dup2(null, STDIN_FILENO);
			(void)dup2(null, STDOUT_FILENO);
			(void)dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				(void)close(null);
		}
		(void)chdir("/");
	}
	while (write(*fd, &s, 1) < 0 && errno == EINTR)
		;
	(void)close(*fd);
	*fd = -1;
}

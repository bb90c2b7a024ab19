/* The fork into the background; see daemon.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"

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
		int err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		(void)close(p[0]);
		(void)setsid();
		/* Off the terminal at once, so that no helper started from
		 * here on holds it (a caller reading the command's output
		 * would wait for them); until daemon_ready(), problems are
		 * still told on the terminal. */
		if (err >= 0)
			log_set_stderr(err);
		if (null >= 0) {
			(void)dup2(null, STDIN_FILENO);
			(void)dup2(null, STDOUT_FILENO);
			(void)dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				(void)close(null);
		}
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

	if (*fd < 0)
		return;
	if (status == 0) {
		(void)chdir("/");
		log_close_stderr();
	}
	while (write(*fd, &s, 1) < 0 && errno == EINTR)
		;
	(void)close(*fd);
	*fd = -1;
}

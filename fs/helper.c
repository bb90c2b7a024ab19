/* The daemon's helper processes; see helper.h. The C library only. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "helper.h"
#include "macro.h"
#include "subprocess.h"

int helper_spawn(const char *command, const char *mountpoint, bool idle,
		 pid_t *ret_pid, int *ret_in, int *ret_out)
{
	char exe[PATH_MAX];
	char *argv[] = { HELPER_PROGRAM, (char *)command, (char *)mountpoint,
			 NULL };
	int r;

	/* iconfs without its helper programs runs the same as a command */
	if (spawn_program_path(HELPER_PROGRAM, exe, sizeof(exe)) < 0) {
		r = spawn_self_exe(exe, sizeof(exe));
		if (r < 0)
			return r;
		argv[0] = "iconfs";
	}
	return spawn_piped(exe, argv, idle, ret_pid, ret_in, ret_out);
}

bool helper_path_ok(const char *path)
{
	const char *p = path;

	if (!*path || path[0] == '/')
		return false;
	for (;;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

/* Read the file through the mount, so that the kernel keeps it. */
static int read_through(int dir, const char *path)
{
	char buf[65536];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	if (!helper_path_ok(path))
		return -EINVAL;
	fd = openat(dir, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	return n < 0 ? -errno : 0;
}

int helper_read_ahead_main(const char *mountpoint)
{
	_cleanup_close_ int dir = -1;
	char line[PATH_MAX];

	/* at SCHED_IDLE from the spawn (warm.c) */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	dir = open(mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (printf("%d\n", -read_through(dir, line)) < 0 ||
		    fflush(stdout) != 0)
			return 1;
	}
	return 0;
}

int helper_watchdog_ping_main(const char *mountpoint, const char *xattr)
{
	char value[256], byte;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (read(STDIN_FILENO, &byte, 1) == 1) {
		/* Any answer, even an error, shows that the loop answers. */
		(void)getxattr(mountpoint, xattr, value, sizeof(value));
		if (write(STDOUT_FILENO, &byte, 1) != 1)
			return 1;
	}
	return 0;
}

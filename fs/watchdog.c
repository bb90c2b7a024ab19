/* The systemd watchdog; see watchdog.h. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "log.h"
#include "watchdog.h"

struct watchdog {
	char *mountpoint;
	unsigned long long period_us; /* half of WatchdogSec */
	int stop_pipe[2];
	pthread_t thread;
};

int watchdog_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n;
	int fd, r = 0;

	if (!path || !*path)
		return 0;
	n = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract namespace */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		   (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0)
		r = -errno;
	(void)close(fd);
	return r;
}

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;
	char value[256];

	for (;;) {
		struct pollfd pfd = { .fd = w->stop_pipe[0], .events = POLLIN };

		/* Any answer, even an error, shows that the loop answers. */
		(void)getxattr(w->mountpoint, "user.iconfs.theme", value,
			       sizeof(value));
		(void)watchdog_notify("WATCHDOG=1");
		if (poll(&pfd, 1, (int)(w->period_us / 1000)) != 0)
			break;
	}
	return NULL;
}

int watchdog_start(const char *mountpoint, struct watchdog **ret)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	struct watchdog *w;
	int r;

	*ret = NULL;
	r = watchdog_notify("READY=1");
	if (r < 0)
		log_warning_errno(r, "cannot notify the service manager: %m");
	if (!usec || (pid && strtoll(pid, NULL, 10) != getpid()))
		return 0;
	w = g_new0(struct watchdog, 1);
	w->mountpoint = g_strdup(mountpoint);
	w->period_us = strtoull(usec, NULL, 10) / 2;
	if (w->period_us < 1000)
		w->period_us = 1000;
	if (pipe2(w->stop_pipe, O_CLOEXEC) < 0) {
		r = log_error_errno(-errno, "cannot start the watchdog: %m");
		g_free(w->mountpoint);
		g_free(w);
		return r;
	}
	r = -pthread_create(&w->thread, NULL, watchdog_main, w);
	if (r < 0) {
		(void)close(w->stop_pipe[0]);
		(void)close(w->stop_pipe[1]);
		g_free(w->mountpoint);
		g_free(w);
		return log_error_errno(r, "cannot start the watchdog: %m");
	}
	*ret = w;
	return 0;
}

void watchdog_stop(struct watchdog *w)
{
	if (!w)
		return;
	(void)!write(w->stop_pipe[1], "x", 1);
	(void)pthread_join(w->thread, NULL);
	(void)close(w->stop_pipe[0]);
	(void)close(w->stop_pipe[1]);
	g_free(w->mountpoint);
	g_free(w);
}

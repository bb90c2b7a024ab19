/* The systemd watchdog; see watchdog.h. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <signal.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "helper.h"
#include "log.h"
#include "stopper.h"
#include "subprocess.h"
#include "watchdog.h"

struct watchdog {
	char *mountpoint;
	unsigned long long period_us; /* half of WatchdogSec */
	struct stopper stop;
	pthread_t thread;
	pid_t pinger;	  /* helper_watchdog_ping_main */
	int ping, answer; /* its stdin and stdout */
};

/* Send one state string to $NOTIFY_SOCKET; 0 when there is none. */
static int watchdog_notify(const char *state)
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

/* A pinger stuck on a hung mount cannot be reaped before the mount's
 * connection goes (with this process): it is killed and left to init. */
static void pinger_stop(struct watchdog *w)
{
	(void)close(w->ping);
	(void)close(w->answer);
	(void)kill(w->pinger, SIGKILL);
	(void)waitpid(w->pinger, NULL, WNOHANG);
}

/* Wait for the pinger's answer or for watchdog_stop(): true on an answer. */
static bool answered(struct watchdog *w)
{
	char byte;

	return stopper_wait_fd(&w->stop, w->answer) > 0 &&
	       read(w->answer, &byte, 1) == 1;
}

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;

	for (;;) {
		if (write(w->ping, "p", 1) != 1 || !answered(w))
			break;
		(void)watchdog_notify("WATCHDOG=1");
		if (stopper_wait(&w->stop, (int)(w->period_us / 1000)))
			break;
	}
	return NULL;
}

/* The pinger: a process of its own, so that no thread of the daemon ever
 * waits on its own mount (a killed daemon whose thread does could never
 * exit: the kernel waits for the answer uninterruptibly). */
static int pinger_start(struct watchdog *w)
{
	return helper_spawn(HELPER_WATCHDOG_PING, w->mountpoint, false,
			    &w->pinger, &w->ping, &w->answer);
}

static void watchdog_free(struct watchdog *w)
{
	stopper_close(&w->stop);
	g_free(w->mountpoint);
	g_free(w);
}

void watchdog_ready(void)
{
	int r = watchdog_notify("READY=1");

	if (r < 0)
		log_warning_errno(r, "cannot notify the service manager: %m");
}

int watchdog_start(const char *mountpoint, struct watchdog **ret)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	struct watchdog *w;
	int r;

	*ret = NULL;
	if (!usec || (pid && strtoll(pid, NULL, 10) != getpid()))
		return 0;
	w = g_new0(struct watchdog, 1);
	w->mountpoint = g_strdup(mountpoint);
	w->period_us = strtoull(usec, NULL, 10) / 2;
	if (w->period_us < 1000)
		w->period_us = 1000;
	r = stopper_init(&w->stop);
	if (r >= 0)
		r = pinger_start(w);
	if (r >= 0) {
		r = -pthread_create(&w->thread, NULL, watchdog_main, w);
		if (r < 0)
			pinger_stop(w);
	}
	if (r < 0) {
		watchdog_free(w);
		return log_error_errno(r, "cannot start the watchdog: %m");
	}
	*ret = w;
	return 0;
}

void watchdog_stop(struct watchdog *w)
{
	if (!w)
		return;
	stopper_join(&w->stop, w->thread);
	pinger_stop(w);
	watchdog_free(w);
}

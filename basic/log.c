/* Logging to stderr; see log.h. Messages are written with one write() so
 * lines from several threads or worker processes never interleave. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>

#include "log.h"

#define LOG_ENV	      "ICONFS_LOG"
#define LOG_FILE_MAX  (1 << 20)

static enum log_level max_level = LOG_LEVEL_INFO;
/* where messages go besides stderr: nowhere, syslog, or this file */
static bool to_syslog;
static int log_fd = -1;
/* stderr gets every message, only warnings and errors, or nothing */
static enum { STDERR_ALL, STDERR_PROBLEMS, STDERR_NONE } to_stderr;
static int stderr_fd = STDERR_FILENO;

void log_set_level(enum log_level level)
{
	max_level = level;
}

/* Copy `msg` into `out` (room for `size` bytes) with control characters
 * escaped: a file name holding a newline cannot forge a log line. Returns
 * the length written. */
static size_t log_escape(const char *msg, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)msg;
	     *p && n + 4 < size; p++) {
		if (*p >= 0x20 && *p != 0x7f) {
			out[n++] = (char)*p;
			continue;
		}
		out[n++] = '\\';
		if (*p == '\n') {
			out[n++] = 'n';
		} else if (*p == '\t') {
			out[n++] = 't';
		} else {
			out[n++] = 'x';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 0xf];
		}
	}
	return n;
}

static void open_file(const char *file)
{
	struct stat st;

	if (stat(file, &st) == 0 && st.st_size > LOG_FILE_MAX) {
		char old[4096];

		(void)snprintf(old, sizeof(old), "%s.old", file);
		(void)rename(file, old);
	}
	log_fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

void log_open_background(const char *file)
{
	struct stat st;

	if (stat("/dev/log", &st) == 0 && S_ISSOCK(st.st_mode)) {
		openlog("iconfs", LOG_PID, LOG_USER);
		to_syslog = true;
		(void)setenv(LOG_ENV, "syslog", 1);
	} else if (file) {
		open_file(file);
		if (log_fd >= 0) {
			char *v = NULL;

			if (asprintf(&v, "file:%s", file) >= 0)
				(void)setenv(LOG_ENV, v, 1);
			free(v);
		}
	}
	to_stderr = STDERR_PROBLEMS;
}

void log_set_stderr(int fd)
{
	stderr_fd = fd;
}

void log_close_stderr(void)
{
	to_stderr = STDERR_NONE;
	if (stderr_fd > STDERR_FILENO)
		(void)close(stderr_fd);
	stderr_fd = -1;
}

void log_open_inherited(void)
{
	const char *v = getenv(LOG_ENV);

	if (!v)
		return;
	if (streq(v, "syslog")) {
		openlog("iconfs", LOG_PID, LOG_USER);
		to_syslog = true;
	} else if (strncmp(v, "file:", 5) == 0) {
		log_fd = open(v + 5, O_WRONLY | O_APPEND | O_CLOEXEC);
	}
	to_stderr = STDERR_NONE;
}

/* A line of the log file: time, program and process, the message. */
static void write_file(const char *msg, size_t len)
{
	char buf[4200];
	struct tm tm;
	time_t now = time(NULL);
	size_t n;
	int m;

	(void)localtime_r(&now, &tm);
	n = strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	m = snprintf(buf + n, sizeof(buf) - n, " iconfs[%d]: %.*s", (int)getpid(),
		     (int)len, msg);
	if (m > 0)
		(void)!write(log_fd, buf, n + (size_t)m < sizeof(buf)
						  ? n + (size_t)m
						  : sizeof(buf));
}

int log_internal(enum log_level level, int error, const char *fmt, ...)
{
	static const int priority[] = {
		[LOG_LEVEL_ERROR] = LOG_ERR,
		[LOG_LEVEL_WARNING] = LOG_WARNING,
		[LOG_LEVEL_INFO] = LOG_INFO,
		[LOG_LEVEL_DEBUG] = LOG_DEBUG,
	};
	char msg[2048], buf[4096];
	va_list ap;
	size_t n;

	if (error > 0)
		error = -error;
	if (level > max_level)
		return error;

	errno = -error;
	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(buf, "iconfs: ", 8);
	n = 8 + log_escape(msg, buf + 8, sizeof(buf) - 9);
	buf[n++] = '\n';
	if (to_syslog)
		syslog(priority[level], "%.*s", (int)(n - 9), buf + 8);
	else if (log_fd >= 0)
		write_file(buf + 8, n - 8);
	if (to_stderr == STDERR_ALL ||
	    (to_stderr == STDERR_PROBLEMS && level <= LOG_LEVEL_WARNING))
		(void)!write(stderr_fd, buf, n);
	return error;
}

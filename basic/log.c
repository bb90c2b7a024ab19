/* Logging to stderr; see log.h. Messages are written with one write() so
 * lines from several threads or worker processes never interleave. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static enum log_level max_level = LOG_LEVEL_INFO;

void log_set_level(enum log_level level)
{
	max_level = level;
}

enum log_level log_get_level(void)
{
	return max_level;
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

int log_internal(enum log_level level, int error, const char *fmt, ...)
{
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
	(void)!write(STDERR_FILENO, buf, n);
	return error;
}

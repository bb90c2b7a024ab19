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

int log_internal(enum log_level level, int error, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int n;

	if (error > 0)
		error = -error;
	if (level > max_level)
		return error;

	n = snprintf(buf, sizeof(buf), "iconfs: ");
	errno = -error;
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(STDERR_FILENO, buf, n);
	return error;
}

/* Logging: one line per message on stderr, prefixed with the program name.
 * log_*_errno() return the negative errno they were given, so that callers
 * can write `return log_error_errno(r, "cannot open '%s': %m", path);`
 * (%m prints strerror of that errno). */
#pragma once

#include "macro.h"

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARNING,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

void log_set_level(enum log_level level);
enum log_level log_get_level(void);

int log_internal(enum log_level level, int error, const char *fmt, ...)
	_printf_(3, 4);

#define log_error(...)		log_internal(LOG_LEVEL_ERROR, 0, __VA_ARGS__)
#define log_warning(...)	log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_info(...)		log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...)		log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
#define log_error_errno(e, ...) log_internal(LOG_LEVEL_ERROR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) \
	log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_debug_errno(e, ...) log_internal(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)

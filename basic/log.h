/* Logging: one line per message on stderr, prefixed with the program name;
 * in the background, to the journal (or syslog) or a file instead.
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

/* A daemon going to the background: from now on every message goes to the
 * journal where the machine has one (through syslog's /dev/log, which
 * journald serves), else to syslog, else appended to `file` (made 0600;
 * one older file is kept once it passes 1 MiB). Warnings and errors also
 * go to stderr until log_close_stderr(), so that a start that fails says
 * why. Helper processes started afterwards log to the same place
 * (log_open_inherited). */
void log_open_background(const char *file);
/* The terminal that problems go to, instead of fd 2 (which the log then
 * owns), and the end of it. */
void log_set_stderr(int fd);
void log_close_stderr(void);

/* In a helper process: log where the daemon that started it logs, if it
 * went to the background (never to stderr then). */
void log_open_inherited(void);

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

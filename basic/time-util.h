/* Time helpers shared by the modules: nanosecond stamps of struct timespec
 * (how the index and the blob table store mtimes) and a monotonic clock in
 * milliseconds (deadlines, coalescing). Header only; owns nothing. */
#pragma once

#include <time.h>

static inline long long timespec_ns(struct timespec ts)
{
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A minimal unit-test harness: TEST(name) defines a test, the ASSERT_*
 * macros report file:line with both values and fail the test. main() comes
 * from TEST_MAIN(list of tests). Output is TAP. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdbool.h>

#include "macro.h"

static int test_failed;

#define TEST(name) static void test_##name(void)

/* Report a failed assertion with file:line and end the test. */
#define TEST_FAIL(fmt, ...)                                                    \
	do {                                                                   \
		printf("# %s:%d: " fmt "\n", __FILE__, __LINE__, __VA_ARGS__); \
		test_failed = 1;                                               \
		return;                                                        \
	} while (0)

#define ASSERT_TRUE(c)                                \
	do {                                          \
		if (!(c))                             \
			TEST_FAIL("%s is false", #c); \
	} while (0)

#define ASSERT_EQ_INT(a, b)                                                 \
	do {                                                                \
		long long _a = (a), _b = (b);                               \
		if (_a != _b)                                               \
			TEST_FAIL("%s == %lld, expected %lld", #a, _a, _b); \
	} while (0)

#define ASSERT_EQ_STR(a, b)                                                \
	do {                                                               \
		const char *_a = (a), *_b = (b);                           \
		if (!_a || !_b || strcmp(_a, _b) != 0)                     \
			TEST_FAIL("%s == \"%s\", expected \"%s\"", #a,     \
				  _a ? _a : "(null)", _b ? _b : "(null)"); \
	} while (0)

struct test_case {
	const char *name;
	void (*fn)(void);
};

#define TEST_CASE(name)            \
	{                          \
#name, test_##name \
	}

static inline int test_run(const struct test_case *cases, size_t n)
{
	int failed = 0;

	printf("1..%zu\n", n);
	fflush(stdout); /* not to be written again by a test's fork */
	for (size_t i = 0; i < n; i++) {
		test_failed = 0;
		cases[i].fn();
		printf("%s %zu - %s\n", test_failed ? "not ok" : "ok", i + 1,
		       cases[i].name);
		fflush(stdout);
		failed |= test_failed;
	}
	return failed;
}

#define TEST_CASES(name, ...) \
	static const struct test_case name[] = { __VA_ARGS__ }

#define TEST_MAIN(...)                                                    \
	int main(void)                                                    \
	{                                                                 \
		TEST_CASES(cases, __VA_ARGS__);                           \
		return test_run(cases, sizeof(cases) / sizeof(cases[0])); \
	}

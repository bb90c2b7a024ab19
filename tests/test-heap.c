/* The heap handed back (heap.h): after many small blocks are freed where
 * glibc does not return them by itself (a block kept at the top of the
 * heap pins everything below it), heap_trim gives their pages back, and
 * with little free it does nothing. */
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "test.h"

#define BLOCKS 20000
#define BLOCK  1000

/* This process's resident anonymous memory, in KiB; -1. */
static long rss_anon_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "RssAnon:", 8) == 0)
			kib = strtol(line + 8, NULL, 10);
	fclose(f);
	return kib;
}

/* Whether malloc is another's than glibc's: valgrind's or a sanitizer's. */
static bool foreign_malloc(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return true;
#else
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
#endif
}

/* Where the compiler cannot drop a malloc() and free() pair. */
static void *volatile top;

TEST(trim)
{
	static void *blocks[BLOCKS];
	long before, after;

	/* nothing much free yet: no trim */
	ASSERT_TRUE(!heap_trim(64u * 1024 * 1024));
	for (int i = 0; i < BLOCKS; i++)
		memset(blocks[i] = malloc(BLOCK), 1, BLOCK);
	top = malloc(BLOCK); /* pins the heap's top */
	for (int i = 0; i < BLOCKS; i++)
		free(blocks[i]);
	before = rss_anon_kib();
	if (foreign_malloc()) {
		/* not glibc's malloc: nothing of it to trim */
		printf("# valgrind's or ASan's malloc: only that heap_trim runs\n");
		(void)heap_trim(1024 * 1024);
		free(top);
		return;
	}
	ASSERT_TRUE(heap_trim(1024 * 1024));
	after = rss_anon_kib();
	printf("# RssAnon %ld -> %ld KiB\n", before, after);
	/* most of the 20 MB freed goes back to the kernel */
	ASSERT_TRUE(before - after > BLOCKS / 1024 * BLOCK / 2);
	free(top);
}

TEST_MAIN(TEST_CASE(trim))

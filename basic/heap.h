/* The process's heap: giving the kernel back what malloc keeps free. A
 * daemon that lives for a session frees about as much as it allocates, but
 * glibc returns only the top of each arena by itself; the pages of free
 * chunks further down stay resident (a mount after 300,000 stats and reads:
 * RssAnon 38 MiB, of which 21 MiB free in the heap). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* When the heap holds more than `slack` bytes free, hand every free page
 * of every arena back to the kernel (malloc_trim); true if it did. Takes
 * each arena's lock for a moment: call it from a housekeeping thread. */
bool heap_trim(size_t slack);

/* The process's heap; see heap.h. */
#include <malloc.h>

#include "heap.h"

bool heap_trim(size_t slack)
{
	struct mallinfo2 mi = mallinfo2();

	/* fordblks: free bytes in the arenas' chunks, mmapped ones aside */
	if (mi.fordblks <= slack)
		return false;
	(void)malloc_trim(0);
	return true;
}

/* The render worker program's loop; see worker.h. */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "macro.h"
#include "raster.h"
#include "sandbox.h"
#include "wire.h"
#include "worker.h"

/* Limits of one worker process. */
#define WORKER_AS_LIMIT	 (768ULL * 1024 * 1024)
#define WORKER_CPU_LIMIT 600 /* seconds over its life; then it is replaced */
/* What a render frees stays in the worker's heap up to this much, and
 * allocations up to it come from the heap: by default glibc gives the
 * heap's top back after each render (brk) and maps a large surface anew,
 * and each unmapping flushes the TLBs of every CPU the worker ran on, an
 * IPI apiece (a fifth of a worker's CPU with two of them at work). An idle
 * worker exits (render_pool_trim), and its heap with it. */
#define WORKER_HEAP_KEEP (16 * 1024 * 1024)

int render_worker_main(void)
{
	struct rlimit as = { WORKER_AS_LIMIT, WORKER_AS_LIMIT };
	struct rlimit cpu = { WORKER_CPU_LIMIT, WORKER_CPU_LIMIT };

#ifndef __SANITIZE_ADDRESS__
	/* AddressSanitizer reserves terabytes of address space up front; its
	 * builds rely on the deadline alone. */
	(void)setrlimit(RLIMIT_AS, &as);
#else
	(void)as;
#endif
	(void)setrlimit(RLIMIT_CPU, &cpu);
	/* run from a held descriptor, the kernel named it after its number
	 * ("7" in ps and top) */
	(void)prctl(PR_SET_NAME, "iconfs-render");
	(void)setpriority(PRIO_PROCESS, 0, 5);
	(void)mallopt(M_TRIM_THRESHOLD, WORKER_HEAP_KEEP);
	(void)mallopt(M_MMAP_THRESHOLD, WORKER_HEAP_KEEP);
	/* load what decoding needs (loader modules) before the filter */
	raster_prepare();
	if (sandbox_enter() < 0)
		return 1;

	for (;;) {
		uint32_t hdr[3];
		_cleanup_free_ void *src = NULL;
		_cleanup_free_ void *png = NULL;
		size_t png_len = 0;
		int32_t status;
		uint32_t out_len;

		if (wire_read(WIRE_FD, hdr, sizeof(hdr), WIRE_NO_DEADLINE) < 0)
			return 0;
		if (hdr[2] > RASTER_SOURCE_MAX)
			return 1;
		src = malloc(hdr[2] ? hdr[2] : 1);
		if (!src ||
		    wire_read(WIRE_FD, src, hdr[2], WIRE_NO_DEADLINE) < 0)
			return 1;
		status = raster_render(src, hdr[2], hdr[1], hdr[0], &png,
				       &png_len);
		out_len = status < 0 ? 0 : (uint32_t)png_len;
		if (wire_write(WIRE_FD, &status, sizeof(status),
			       WIRE_NO_DEADLINE) < 0 ||
		    wire_write(WIRE_FD, &out_len, sizeof(out_len),
			       WIRE_NO_DEADLINE) < 0 ||
		    wire_write(WIRE_FD, png, out_len, WIRE_NO_DEADLINE) < 0)
			return 1;
	}
}

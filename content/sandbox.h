/* Confinement of a render worker process: a clean signal mask, no new
 * privileges, and a seccomp allow-list of the system calls that decoding
 * an icon needs (memory, threads, reading its socket, read-only opens of
 * fonts and loader modules). Anything else fails with EPERM. Called once by
 * the worker before it reads its first request. */
#pragma once

/* Returns 0, or -errno when the filter could not be installed (the worker
 * then refuses to run). */
int sandbox_enter(void);

/* Going to the background the way a daemon with threads must: the fork
 * happens before any thread or helper process exists (a fork copies only
 * the calling thread, and a lock another thread held stays locked in the
 * child forever), and the command returns only once the child reports
 * that it serves, with its exit status. Owns the one pipe between them. */
#pragma once

/* Fork. The parent waits for daemon_ready() and exits with the status it
 * sends, or with 1 if the child died first; it never returns. The child
 * gets a new session, stdin, stdout and stderr on /dev/null (the log keeps
 * the terminal for problems until daemon_ready: log_set_stderr) and
 * *ret_fd, the pipe's writing end (close-on-exec); -errno if the fork
 * failed (nothing forked then). */
int daemon_begin(int *ret_fd);

/* In the child: tell the waiting parent `status` (0: serving), then, on
 * success, let go of the terminal and the working directory (/). Closes
 * and resets *fd; no-op for -1. */
void daemon_ready(int *fd, int status);

/* One daemon per index. `iconfs mount` takes the index's lock (the file
 * INDEX.lock, pidlock.h) before it touches the index, and the daemon holds
 * it until it exits. A daemon that holds it while its mount is gone from
 * this mount namespace (it lives on only as a copy in another one: a
 * sandbox, an `unshare -m`) is asked to stop (SIGTERM: it ends its session
 * and exits as after an unmount) and the new mount takes over; one whose
 * mount is still here is left alone, and the new mount refused. */
#pragma once

/* Take the index at `db_path` for a mount on `mnt`: the lock's descriptor
 * to keep open for the daemon's life in *ret_fd (-1 where the index's
 * directory cannot be written: no daemon can write the index either), or
 * -errno (logged): -EBUSY when another daemon serves the index here. */
int owner_take(const char *db_path, const char *mnt, int *ret_fd);

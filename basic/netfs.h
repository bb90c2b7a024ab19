/* Filesystems on the network, where an index must not live (SQLite's WAL
 * needs shared memory on one host, and locks across hosts are unreliable)
 * and where a change made on another host sends no inotify event here.
 * Owns nothing. */
#pragma once

#include <stdbool.h>

/* The name of the network filesystem with statfs magic `magic` ("nfs",
 * "cifs", ...), NULL for any other. */
const char *netfs_magic_name(long magic);

/* Whether `fstype`, as the mount table names it ("nfs4", "fuse.sshfs"),
 * is a network filesystem: the way to tell a FUSE one. */
bool netfs_fstype_is_network(const char *fstype);

/* The type of the network filesystem `path` lies on (a path that does not
 * exist yet: its nearest existing parent), newly allocated (free());
 * NULL for a local filesystem, or when it cannot be told. */
char *netfs_type_of(const char *path);

/* Network filesystems; see netfs.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "macro.h"
#include "mountinfo.h"
#include "netfs.h"

#define FUSE_MAGIC 0x65735546L

static const struct {
	long magic;
	const char *name;
} network_magics[] = {
	{ 0x6969L, "nfs" },
	{ 0x517BL, "smb" },
	{ (long)0xFF534D42L, "cifs" },
	{ (long)0xFE534D42L, "smb2" },
	{ 0x5346414FL, "afs" },
	{ 0x6B414653L, "afs" }, /* kAFS */
	{ 0x00C36400L, "ceph" },
	{ 0x73757245L, "coda" },
	{ 0x564CL, "ncp" },
	{ 0x01021997L, "9p" },
	{ 0x0BD00BD0L, "lustre" },
	{ 0x01161970L, "gfs2" },
	{ 0x7461636FL, "ocfs2" },
};

/* FUSE filesystems that reach another host (the part after "fuse.") */
static const char *const network_fuse[] = {
	"sshfs",     "rclone",	 "s3fs",     "glusterfs",  "ceph-fuse",
	"ceph",	     "curlftpfs", "davfs",    "gcsfuse",    "juicefs",
	"smbnetfs",  "gvfsd-fuse", "goofys",  "blobfuse",   "moosefs",
	"lizardfs", "beegfs",	 "seaweedfs", "onedriver", "google-drive-ocamlfuse",
};

static const char *const network_fstypes[] = {
	"nfs", "nfs4", "smb", "smb3", "smbfs", "cifs", "afs", "ceph", "coda",
	"ncpfs", "9p", "lustre", "gfs2", "ocfs2", "glusterfs",
};

const char *netfs_magic_name(long magic)
{
	for (size_t i = 0; i < ELEMENTSOF(network_magics); i++)
		if ((unsigned long)network_magics[i].magic ==
		    ((unsigned long)magic & 0xffffffffUL))
			return network_magics[i].name;
	return NULL;
}

bool netfs_fstype_is_network(const char *fstype)
{
	const char *sub = NULL;

	if (strncmp(fstype, "fuse.", 5) == 0)
		sub = fstype + 5;
	else if (strncmp(fstype, "fuseblk.", 8) == 0)
		sub = fstype + 8;
	if (sub) {
		for (size_t i = 0; i < ELEMENTSOF(network_fuse); i++)
			if (streq(sub, network_fuse[i]))
				return true;
		return false;
	}
	for (size_t i = 0; i < ELEMENTSOF(network_fstypes); i++)
		if (streq(fstype, network_fstypes[i]))
			return true;
	return false;
}

char *netfs_type_of(const char *path)
{
	char *p = strdup(path);
	struct statfs sf;
	const char *name;
	int r;

	if (!p)
		return NULL;
	/* the nearest part of the path that exists */
	while (statfs(p, &sf) < 0) {
		char *slash = strrchr(p, '/');

		if (errno != ENOENT || !slash || slash == p) {
			free(p);
			return NULL;
		}
		*slash = '\0';
	}
	name = netfs_magic_name((long)sf.f_type);
	if (name) {
		free(p);
		return strdup(name);
	}
	if ((unsigned long)sf.f_type == (unsigned long)FUSE_MAGIC) {
		struct mount_entry e;
		char *real = realpath(p, NULL);
		char *out = NULL;

		r = real ? mountinfo_find(real, true, &e) : -errno;
		free(real);
		if (r > 0) {
			if (netfs_fstype_is_network(e.fstype))
				out = strdup(e.fstype);
			mount_entry_clear(&e);
		}
		free(p);
		return out;
	}
	free(p);
	return NULL;
}

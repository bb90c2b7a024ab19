/* Network filesystems (netfs.h): the statfs magic numbers, the mount
 * table's names of FUSE ones, and this machine's local filesystems. */
#include <stdlib.h>

#include "netfs.h"
#include "test.h"

TEST(magic_numbers)
{
	ASSERT_EQ_STR(netfs_magic_name(0x6969), "nfs");
	ASSERT_EQ_STR(netfs_magic_name(0x517B), "smb");
	ASSERT_EQ_STR(netfs_magic_name((long)0xFF534D42L), "cifs");
	ASSERT_EQ_STR(netfs_magic_name((long)0xFE534D42L), "smb2");
	ASSERT_EQ_STR(netfs_magic_name(0x5346414F), "afs");
	ASSERT_EQ_STR(netfs_magic_name(0x00C36400), "ceph");
	/* statfs's f_type is signed on some ABIs: the same 32 bits */
	ASSERT_EQ_STR(netfs_magic_name((long)(int)0xFF534D42), "cifs");
	/* local ones: ext4, tmpfs, btrfs, xfs, FUSE itself */
	ASSERT_TRUE(netfs_magic_name(0xEF53) == NULL);
	ASSERT_TRUE(netfs_magic_name(0x01021994) == NULL);
	ASSERT_TRUE(netfs_magic_name(0x9123683E) == NULL);
	ASSERT_TRUE(netfs_magic_name(0x58465342) == NULL);
	ASSERT_TRUE(netfs_magic_name(0x65735546) == NULL);
}

TEST(mount_table_names)
{
	ASSERT_TRUE(netfs_fstype_is_network("fuse.sshfs"));
	ASSERT_TRUE(netfs_fstype_is_network("fuse.rclone"));
	ASSERT_TRUE(netfs_fstype_is_network("fuse.glusterfs"));
	ASSERT_TRUE(netfs_fstype_is_network("nfs4"));
	ASSERT_TRUE(netfs_fstype_is_network("cifs"));
	ASSERT_TRUE(!netfs_fstype_is_network("fuse.iconfs"));
	ASSERT_TRUE(!netfs_fstype_is_network("fuse.portal"));
	ASSERT_TRUE(!netfs_fstype_is_network("fuse"));
	ASSERT_TRUE(!netfs_fstype_is_network("fuse.sshfs2"));
	ASSERT_TRUE(!netfs_fstype_is_network("ext4"));
	ASSERT_TRUE(!netfs_fstype_is_network("tmpfs"));
}

TEST(local_paths)
{
	char *t;

	ASSERT_TRUE((t = netfs_type_of("/proc/self")) == NULL);
	free(t);
	/* a path that does not exist: judged by its nearest parent */
	ASSERT_TRUE((t = netfs_type_of("/tmp/no/such/dir/index.sqlite")) ==
		    NULL);
	free(t);
}

TEST_MAIN(TEST_CASE(magic_numbers), TEST_CASE(mount_table_names),
	  TEST_CASE(local_paths))

/* The mount table (mountinfo.h): lines as the kernel writes them, escapes,
 * the options of a FUSE superblock, and the mounts of this process. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "mountinfo.h"
#include "test.h"

/* Lines as the kernel writes them: optional fields or none, escapes. */
TEST(lines)
{
	static const struct {
		const char *line, *mountpoint, *fstype, *source;
	} cases[] = {
		{ "43 27 0:40 / /run/user/1000/iconfs ro,nosuid,nodev,relatime "
		  "shared:5 - fuse.iconfs iconfs ro,user_id=1000,group_id=1000,"
		  "default_permissions\n",
		  "/run/user/1000/iconfs", "fuse.iconfs", "iconfs" },
		/* a space, a tab and a backslash; no optional field */
		{ "60 1 0:52 / /home/a\\040b\\011c\\134d rw - fuse.sshfs u@h:/x "
		  "rw,user_id=0",
		  "/home/a b\tc\\d", "fuse.sshfs", "u@h:/x" },
	};
	struct mount_entry e;

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		ASSERT_EQ_INT(mountinfo_parse_line(cases[i].line, &e), 0);
		ASSERT_EQ_STR(e.mountpoint, cases[i].mountpoint);
		ASSERT_EQ_STR(e.fstype, cases[i].fstype);
		ASSERT_EQ_STR(e.source, cases[i].source);
		if (i == 0) {
			ASSERT_TRUE(mount_options_have(e.options, "user_id",
						       "1000"));
			ASSERT_TRUE(!mount_options_have(e.options, "user_id",
							"100"));
			ASSERT_TRUE(!mount_options_have(e.options, "group_id",
							"10000"));
			ASSERT_TRUE(mount_options_have(e.options, "group_id",
						       "1000"));
		}
		mount_entry_clear(&e);
	}
}

TEST(malformed_lines)
{
	struct mount_entry e;

	ASSERT_EQ_INT(mountinfo_parse_line("", &e), -EINVAL);
	ASSERT_EQ_INT(mountinfo_parse_line("1 2 0:1 / /x rw", &e), -EINVAL);
	/* no separator */
	ASSERT_EQ_INT(mountinfo_parse_line("1 2 0:1 / /x rw ext4 /dev/a rw",
					   &e),
		      -EINVAL);
	/* separator, but no super options */
	ASSERT_EQ_INT(mountinfo_parse_line("1 2 0:1 / /x rw - ext4 /dev/a",
					   &e),
		      -EINVAL);
}

/* Whether the kernel says `path` is the root of a mount (statx's
 * STATX_ATTR_MOUNT_ROOT): the oracle for what the table must list. In a
 * chroot (sbuild, pbuilder) or a container "/" need not be one. */
static int mount_root(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &stx) < 0 ||
	    !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return -1;
	return !!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

TEST(this_process)
{
	struct mount_entry e;
	char *p;
	int root = mount_root("/");

	/* "/" is found exactly when it is a mount root of this process */
	ASSERT_TRUE(root >= 0);
	ASSERT_EQ_INT(mountinfo_find("/", false, &e), root);
	if (root) {
		ASSERT_EQ_STR(e.mountpoint, "/");
		mount_entry_clear(&e);
	}
	/* a path below a mount lies on it or deeper: /proc is one wherever
	 * the table can be read at all */
	ASSERT_EQ_INT(mountinfo_find("/proc/self", true, &e), 1);
	ASSERT_EQ_STR(e.mountpoint, "/proc");
	ASSERT_EQ_STR(e.fstype, "proc");
	mount_entry_clear(&e);
	ASSERT_EQ_INT(mountinfo_find("/proc/no-such-mount", false, &e), 0);

	/* the parent resolved, the last component kept as it is */
	p = mountinfo_path("/proc/../proc/self/../missing");
	ASSERT_EQ_STR(p, "/proc/missing");
	free(p);
	p = mountinfo_path("/x");
	ASSERT_EQ_STR(p, "/x");
	free(p);
	ASSERT_TRUE(mountinfo_path("relative") == NULL && errno == EINVAL);
}

TEST_MAIN(TEST_CASE(lines), TEST_CASE(malformed_lines),
	  TEST_CASE(this_process))

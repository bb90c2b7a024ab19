/* iconfs-guard MOUNTPOINT: the guard of a mount (see fs/mountpoint.h),
 * started by the daemon; not a command for people. A program of its own,
 * linked with the C library only, so that what waits all session long
 * for the daemon to go costs its few pages, not a second copy of the
 * daemon's libraries' relocations and heap. */
#include "log.h"
#include "mountpoint.h"

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	/* the daemon in the background passes where it logs */
	log_open_inherited();
	return mountpoint_guard_main(argv[1]);
}

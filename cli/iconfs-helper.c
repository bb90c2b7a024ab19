/* iconfs-helper read-ahead|watchdog-ping MOUNTPOINT: a helper process of
 * a mount (see fs/helper.h), started by the daemon; not a command for
 * people. A program of its own, linked with the C library only. */
#include <string.h>

#include "helper.h"
#include "view.h"

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	if (strcmp(argv[1], HELPER_READ_AHEAD) == 0)
		return helper_read_ahead_main(argv[2]);
	if (strcmp(argv[1], HELPER_WATCHDOG_PING) == 0)
		return helper_watchdog_ping_main(argv[2], VIEW_XATTR_THEME);
	return 2;
}

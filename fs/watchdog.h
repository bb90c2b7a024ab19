/* Telling systemd how the mount is doing (sd_notify's protocol, without
 * libsystemd): READY=1 once mounted, and, when the unit has WatchdogSec=,
 * WATCHDOG=1 only while the FUSE loop answers. A thread asks the mount
 * itself for an extended attribute of its root, a request that goes through
 * the kernel to the loop's threads: when they hang, the ping hangs with
 * them, systemd stops hearing from us and restarts the unit (auto_unmount
 * then takes the dead mount away). Without NOTIFY_SOCKET this does
 * nothing. */
#pragma once

struct watchdog;

/* Sends READY=1 and starts pinging when the unit asks for a watchdog. */
int watchdog_start(const char *mountpoint, struct watchdog **ret);
void watchdog_stop(struct watchdog *w);

/* Send one state string to $NOTIFY_SOCKET; 0 when there is none. */
int watchdog_notify(const char *state);

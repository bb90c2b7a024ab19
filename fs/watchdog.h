/* Telling systemd how the mount is doing (sd_notify's protocol, without
 * libsystemd): READY=1 once mounted, and, when the unit has WatchdogSec=,
 * WATCHDOG=1 only while the FUSE loop answers. A process of its own (the
 * pinger of helper.h) asks the mount for an extended attribute of its root
 * whenever a thread of ours pokes it, a request that goes through the
 * kernel to the loop's threads: when they hang, the ping hangs with them,
 * systemd stops hearing from us and kills and restarts the unit
 * (how its dead mount then goes: mountpoint.h). Never a thread of the
 * daemon: one waiting on its own mount would keep the killed daemon from
 * exiting. Without NOTIFY_SOCKET this does nothing. */
#pragma once

struct watchdog;

/* Sends READY=1. */
void watchdog_ready(void);

/* Starts pinging when the unit asks for a watchdog. */
int watchdog_start(const char *mountpoint, struct watchdog **ret);
void watchdog_stop(struct watchdog *w);


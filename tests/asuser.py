"""Tests and benchmarks run as a user, not as root.

A user mounts iconfs without privileges: fusermount3, an unprivileged
daemon and its helpers, SCHED_IDLE and RLIMIT_NICE as the kernel applies
them to a user. So a test or benchmark started as root calls drop() first:
the process forks, the child goes on as the unprivileged user USER (made
on first use, with its own HOME and XDG_RUNTIME_DIR), and the parent stays
root only to run, on the child's request, the few commands that need root
(`as_root`: dropping the page cache, mounting a small tmpfs or an overlay),
then exits with the child's status. Started as a user, drop() does nothing
and as_root() fails.
"""
import os
import pwd
import signal
import socket
import stat
import subprocess
import sys

USER = "iconfs-test"
_channel = None  # the child's end of the line to its root parent


def _user():
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        pass
    # a system user with a home of its own; two tests making it at once
    # both end with the same user
    subprocess.run(["useradd", "--system", "--create-home", "--home-dir",
                    f"/var/lib/{USER}", "--shell", "/bin/sh", USER],
                   capture_output=True)
    return pwd.getpwnam(USER)


def _prepare(pw):
    """What the user needs from root: /dev/fuse open to users as Debian's
    udev rule makes it (0666; machines without udev leave 0600), the
    fusectl filesystem, and a runtime directory as logind makes it."""
    st = os.stat("/dev/fuse")
    if stat.S_IMODE(st.st_mode) != 0o666:
        print("asuser: /dev/fuse made 0666, the mode Debian gives it", flush=True)
        os.chmod("/dev/fuse", 0o666)
    if not os.path.ismount("/sys/fs/fuse/connections"):
        subprocess.run(["mount", "-t", "fusectl", "none", "/sys/fs/fuse/connections"],
                       capture_output=True)
    run = f"/run/user/{pw.pw_uid}"
    os.makedirs(run, mode=0o700, exist_ok=True)
    os.chown(run, pw.pw_uid, pw.pw_gid)
    os.chmod(run, 0o700)
    return run


def _serve(sock, child):
    """The root parent: run what the child asks until it closes the line."""
    f = sock.makefile("rwb", buffering=0)
    for line in f:
        argv = line.decode().rstrip("\n").split("\0")
        p = subprocess.run(argv, capture_output=True)
        f.write(f"{p.returncode}\n".encode())
    _, status = os.waitpid(child, 0)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def drop(writable=()):
    """Go on as USER when running as root (see the module's comment).
    `writable`: directories (made if missing) that the user must be able to
    write, such as a build's shared test directory."""
    global _channel
    if os.geteuid() != 0:
        return
    pw = _user()
    run = _prepare(pw)
    for d in writable:
        os.makedirs(d, exist_ok=True)
        os.chown(d, pw.pw_uid, pw.pw_gid)
    parent_end, child_end = socket.socketpair()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        child_end.close()
        # a time-out of the test runner ends the child too
        signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGTERM))
        _serve(parent_end, pid)
    parent_end.close()
    _channel = child_end.makefile("rwb", buffering=0)
    os.setgroups([])
    os.setresgid(pw.pw_gid, pw.pw_gid, pw.pw_gid)
    os.setresuid(pw.pw_uid, pw.pw_uid, pw.pw_uid)
    for k in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
              "DBUS_SESSION_BUS_ADDRESS", "SUDO_USER", "SUDO_UID", "SUDO_GID"):
        os.environ.pop(k, None)
    os.environ.update(HOME=pw.pw_dir, USER=USER, LOGNAME=USER, XDG_RUNTIME_DIR=run)


def as_root(*argv):
    """Run `argv` as root through the parent; True when it exited 0. False
    when this process never was root."""
    if _channel is None:
        return os.geteuid() == 0 and subprocess.run(argv, capture_output=True).returncode == 0
    _channel.write(("\0".join(argv) + "\n").encode())
    return _channel.readline().strip() == b"0"


def drop_caches():
    """Write back and drop the page cache, dentries and inodes (root)."""
    return as_root("sh", "-c", "sync && echo 3 > /proc/sys/vm/drop_caches")

#!/usr/bin/env python3
"""`iconfs mount` without -f, as a user types it: the command returns once
the mount serves, quietly, and the daemon it leaves behind has every thread
and worker (it forks before the first one exists, GIO's included): the tree
answers at once, SVGs render, the renders are stored, a change of the
desktop's theme setting is followed, what it logs is in the log file (no
journal here), `iconfs umount` ends it. A start that fails says why and
exits non-zero; a second mount on the same directory is refused instead of
hiding the first. A killed daemon's mount goes at once (its guard), and one
left dead (daemon and guard killed together) is cleared by the next mount;
`iconfs umount` leaves what is not an iconfs mount alone. A copy of the
mount in another mount namespace never leaves two daemons on one index:
a mount takes over from its daemon, `iconfs umount` ends it."""
import errno
import os
import signal
import sqlite3
import subprocess
import tempfile
import time

from common import (ICONFS, check, check_eq, cmdline_of, daemons, errno_of, finish, in_mountinfo,
                    need_fuse, shared_objects, squares_theme, wait_gone, write_atomic)

N = 12
need_fuse()


def through_mount(code, timeout=30):
    """Run `code` in a child with a deadline: a hung mount fails the check
    instead of the test."""
    try:
        p = subprocess.run(["python3", "-c", code], capture_output=True, text=True,
                           timeout=timeout)
        return p.stdout.strip() if p.returncode == 0 else f"failed: {p.stderr.strip()}"
    except subprocess.TimeoutExpired:
        return "hung"


def guards(mnt):
    return [pid for pid in os.listdir("/proc")
            if cmdline_of(pid)[:2] == [b"iconfs-guard", mnt.encode()]]


with tempfile.TemporaryDirectory() as tmp:
    base = os.path.join(tmp, "icons")
    squares_theme(base, "sq", N)
    squares_theme(base, "other", 2)
    db = os.path.join(tmp, "index.sqlite")
    mnt = os.path.join(tmp, "mnt")
    os.mkdir(mnt)
    # the desktop's setting: GTK 3's settings.ini of this test's own home
    conf = os.path.join(tmp, "config")
    write_atomic(os.path.join(conf, "gtk-3.0", "settings.ini"),
                 "[Settings]\ngtk-icon-theme-name=sq\n")
    state = os.path.join(tmp, "state")
    env = dict(os.environ, XDG_CONFIG_HOME=conf, XDG_STATE_HOME=state, GSETTINGS_BACKEND="memory")
    env.pop("ICONFS_LOG", None)
    logfile = os.path.join(state, "iconfs", "iconfs.log")
    args = ["mount", "--db", db, "--no-shared-db", "--icon-dirs", base]
    try:
        t0 = time.monotonic()
        p = subprocess.run([ICONFS, *args, mnt], capture_output=True, text=True, timeout=60,
                           env=env)
        check_eq(p.returncode, 0, f"iconfs mount returns 0 ({p.stderr.strip()})")
        check_eq(p.stderr, "", "a mount that succeeds says nothing on stderr")
        check(os.path.ismount(mnt), "the mount serves when the command returns")
        pids = daemons(mnt)
        check_eq(len(pids), 1, "one daemon left behind")
        print(f"mount returned in {time.monotonic() - t0:.2f} s, daemon {pids}")

        check_eq(through_mount(f"import os; print(sorted(os.listdir({mnt!r}))[:2])"),
                 "['128', '128@2']", "the tree answers at once")
        sizes = through_mount(
            "import os, struct\n"
            f"for i in range({N}):\n"
            f"    d = open(os.path.join({mnt!r}, '48', f'sq-{{i:02d}}.png'), 'rb').read()\n"
            "    print(struct.unpack('>II', d[16:24]))\n")
        check_eq(sizes.splitlines(), ["(48, 48)"] * N, "SVGs render in the daemon's workers")

        # the desktop's setting is followed, as with -f (GIO's monitor
        # thread exists in the daemon: it started after the fork)
        theme = lambda: os.getxattr(mnt, "user.iconfs.theme").decode()
        check_eq(theme(), "sq", "the theme of the desktop's setting")
        write_atomic(os.path.join(conf, "gtk-3.0", "settings.ini"),
                     "[Settings]\ngtk-icon-theme-name=other\n")
        t0 = time.monotonic()
        while theme() != "other" and time.monotonic() - t0 < 5:
            time.sleep(0.01)
        took = time.monotonic() - t0
        check(theme() == "other" and took <= 1, f"a change of the setting is followed ({took:.2f} s)")
        log = open(logfile).read() if os.path.exists(logfile) else ""
        check(f"serving theme 'sq' on '{mnt}'" in log and "icon theme is now 'other'" in log,
              f"the daemon logs to {logfile}: {log!r}")

        again = subprocess.run([ICONFS, *args, mnt], capture_output=True, text=True, timeout=60)
        check(again.returncode != 0 and "already an iconfs mount" in again.stderr,
              f"a second mount on it is refused: {again.returncode} {again.stderr.strip()}")
        check_eq(len(daemons(mnt)), 1, "still one daemon")

        u = subprocess.run([ICONFS, "umount", mnt], capture_output=True, text=True, timeout=60)
        check_eq(u.returncode, 0, f"iconfs umount ({u.stderr.strip()})")
        deadline = time.monotonic() + 10
        while daemons(mnt) and time.monotonic() < deadline:
            time.sleep(0.05)
        check_eq(daemons(mnt), [], "the daemon exits at unmount")
        # its checked connection closed last: the index is stamped as it
        # left it, and the next mount skips the integrity check (db.h)
        st = os.stat(db)
        check_eq((os.getxattr(db, "user.iconfs.checked").decode(), os.path.exists(db + "-wal")),
                 (f"{st.st_ino} {st.st_size} {st.st_mtime_ns // 10**9}."
                  f"{st.st_mtime_ns % 10**9:09d}", False),
                 "a clean end stamps the index as checked, with no WAL left")
        with sqlite3.connect(db) as c:
            stored = c.execute("SELECT count(*) FROM blob WHERE status = 0").fetchone()[0]
        check_eq(stored, N, "its renders were stored (the writer thread ran in the daemon)")
    finally:
        for pid in daemons(mnt):
            os.kill(pid, signal.SIGKILL)
        subprocess.run(["fusermount3", "-uz", mnt], capture_output=True)

    # a killed daemon: its guard removes the mount at once
    try:
        subprocess.run([ICONFS, *args, mnt], capture_output=True, timeout=60, env=env, check=True)
        os.listdir(os.path.join(mnt, "48"))
        # the guard waits all session long: its own program, no library
        # of the daemon's loaded (a copy of the daemon held 1 MiB of PSS)
        check_eq([shared_objects(pid) for pid in guards(mnt)],
                 [["ld-linux-x86-64.so.2", "libc.so.6"]],
                 "one guard, iconfs-guard, with the C library only")
        os.kill(daemons(mnt)[0], signal.SIGKILL)
        took = wait_gone(mnt)
        print(f"killed daemon: mount gone after {took:.3f} s")
        check(took < 1, f"a killed daemon's mount is gone within 1 s ({took:.3f} s)")
        check_eq(errno_of(lambda: os.listdir(mnt)), 0, "the directory is plain again")

        # daemon and guard killed at once (as a cgroup kill does): the
        # mount stays dead until the next mount clears it
        subprocess.run([ICONFS, *args, mnt], capture_output=True, timeout=60, env=env, check=True)
        for pid in daemons(mnt) + guards(mnt):
            os.kill(int(pid), signal.SIGKILL)
        time.sleep(0.3)
        check_eq(errno_of(lambda: os.listdir(mnt)), errno.ENOTCONN, "the mount is left dead")
        p = subprocess.run([ICONFS, *args, mnt], capture_output=True, text=True, timeout=60,
                           env=env)
        check_eq(p.returncode, 0, f"the next mount on a dead one works ({p.stderr.strip()})")
        check_eq(sorted(os.listdir(os.path.join(mnt, "48")))[:1], ["sq-00.png"],
                 "and serves")
        check("removed the mount a stopped iconfs left" in open(logfile).read(),
              "clearing it is logged")
        check_eq(subprocess.run([ICONFS, "umount", mnt], capture_output=True).returncode, 0,
                 "iconfs umount")
    finally:
        for pid in daemons(mnt):
            os.kill(pid, signal.SIGKILL)
        subprocess.run(["fusermount3", "-uz", mnt], capture_output=True)

    # A copy of the mount in another mount namespace (a sandbox's; here
    # `unshare -rm`) keeps its daemon alive after the mount here is gone.
    # A mount then takes over from that daemon (never two on one index),
    # and `iconfs umount` cuts such a copy off, so that its daemon exits.
    copies = []

    def copy_of_mount():
        """A process in a mount namespace of its own that holds a copy."""
        p = subprocess.Popen(["unshare", "-rm", "sh", "-c",
                              f"ls {mnt}/48 >/dev/null && echo held && exec sleep 300"],
                             stdout=subprocess.PIPE, text=True, cwd=tmp)
        copies.append(p)
        return p.stdout.readline().strip()

    def wait_daemons(want, limit=15):
        deadline = time.monotonic() + limit
        while len(daemons(mnt)) != want and time.monotonic() < deadline:
            time.sleep(0.05)
        return daemons(mnt)

    try:
        subprocess.run([ICONFS, *args, mnt], capture_output=True, timeout=60, env=env, check=True)
        first = wait_daemons(1)
        check_eq(copy_of_mount(), "held", "a copy of the mount in another namespace")
        # a plain unmount here (the read ahead may hold it busy a moment)
        for _ in range(50):
            if subprocess.run(["fusermount3", "-u", mnt], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        check(not in_mountinfo(mnt), "unmounted here")
        time.sleep(0.5)
        check_eq(wait_daemons(1), first, "its daemon lives on for the copy")
        p = subprocess.run([ICONFS, *args, mnt], capture_output=True, text=True, timeout=60,
                           env=env)
        check_eq(p.returncode, 0, f"a mount on the same index ({p.stderr.strip()})")
        now = wait_daemons(1)
        check(len(now) == 1 and now != first,
              f"takes over: one daemon serves the index ({first} before, {now} now)")
        check("only to a copy of its mount" in open(logfile).read(), "the take-over is logged")
        check_eq(sorted(os.listdir(os.path.join(mnt, "48")))[:1], ["sq-00.png"], "and serves")

        check_eq(copy_of_mount(), "held", "another copy")
        u = subprocess.run([ICONFS, "umount", mnt], capture_output=True, text=True, timeout=60)
        check_eq(u.returncode, 0, f"iconfs umount ({u.stderr.strip()})")
        check("lived on in another mount namespace" in u.stderr,
              f"umount says it cut a copy off: {u.stderr.strip()!r}")
        check_eq(wait_daemons(0), [], "the daemon exits although a copy held the mount")
    finally:
        for c in copies:
            c.kill()
            c.wait()
        for pid in daemons(mnt):
            os.kill(pid, signal.SIGKILL)
        subprocess.run(["fusermount3", "-uz", mnt], capture_output=True)

    # umount: what is not mounted, or not an iconfs mount, is left alone
    p = subprocess.run([ICONFS, "umount", mnt], capture_output=True, text=True)
    check_eq((p.returncode, p.stderr.strip()), (1, f"iconfs: '{mnt}' is not mounted"),
             "umount of a plain directory")
    p = subprocess.run([ICONFS, "umount", "/proc"], capture_output=True, text=True)
    check_eq((p.returncode, p.stderr.strip()),
             (1, "iconfs: '/proc' is not an iconfs mount of this user: left alone"),
             "umount of another filesystem")
    check(os.path.ismount("/proc"), "which stays mounted")

    # a start that fails: said on stderr, non-zero, nothing mounted
    bad = os.path.join(tmp, "file")
    open(bad, "w").close()
    p = subprocess.run([ICONFS, "mount", "--db", os.path.join(bad, "index.sqlite"), "--no-shared-db",
                        "--icon-dirs", base, "--theme", "sq", mnt],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode != 0 and p.stderr.strip() != "",
          f"a failed start exits non-zero and says why: {p.returncode} {p.stderr.strip()!r}")
    check(not os.path.ismount(mnt), "nothing mounted")
finish()

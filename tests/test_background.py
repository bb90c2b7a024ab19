#!/usr/bin/env python3
"""`iconfs mount` without -f, as a user types it: the command returns once
the mount serves, and the daemon it leaves behind has every thread and
worker (it forks before the first one exists): the tree answers at once,
SVGs render, the renders are stored, `iconfs umount` ends it. A start that
fails says why and exits non-zero; a second mount on the same directory is
refused instead of hiding the first."""
import os
import signal
import sqlite3
import subprocess
import tempfile
import time

from common import ICONFS, check, check_eq, finish, need_fuse, png_size, run, squares_theme

N = 12
need_fuse()


def daemons(mnt):
    """The pids of iconfs processes serving `mnt` (not fusermount3)."""
    out = []
    for pid in os.listdir("/proc"):
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"iconfs") and b"mount" in argv and mnt.encode() in argv:
            out.append(int(pid))
    return out


def through_mount(code, timeout=30):
    """Run `code` in a child with a deadline: a hung mount fails the check
    instead of the test."""
    try:
        p = subprocess.run(["python3", "-c", code], capture_output=True, text=True,
                           timeout=timeout)
        return p.stdout.strip() if p.returncode == 0 else f"failed: {p.stderr.strip()}"
    except subprocess.TimeoutExpired:
        return "hung"


with tempfile.TemporaryDirectory() as tmp:
    base = os.path.join(tmp, "icons")
    squares_theme(base, "sq", N)
    db = os.path.join(tmp, "index.sqlite")
    mnt = os.path.join(tmp, "mnt")
    os.mkdir(mnt)
    args = ["mount", "--db", db, "--no-shared-db", "--icon-dirs", base, "--theme", "sq"]
    try:
        t0 = time.monotonic()
        p = subprocess.run([ICONFS, *args, mnt], capture_output=True, text=True, timeout=60)
        check_eq(p.returncode, 0, f"iconfs mount returns 0 ({p.stderr.strip()})")
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
        with sqlite3.connect(db) as c:
            stored = c.execute("SELECT count(*) FROM blob WHERE status = 0").fetchone()[0]
        check_eq(stored, N, "its renders were stored (the writer thread ran in the daemon)")
    finally:
        for pid in daemons(mnt):
            os.kill(pid, signal.SIGKILL)
        subprocess.run(["fusermount3", "-uz", mnt], capture_output=True)

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

#!/usr/bin/env python3
"""Browsing renders nothing by itself, through a real mount: a theme of
20,000 SVGs walked by `find` over the whole mount and listed by `ls` (no
-l): 0 renders and the table of renders unchanged; `ls -l` of one of its
views renders each icon exactly once, a second `ls -l` none. With a small
budget, renders that only answered a stat are evicted before those a
program read. A working set learned by a mount is read ahead in full at the
next mount even after a `find` of the whole mount in between."""
import os
import sqlite3
import subprocess
import tempfile
import time

from common import (check, check_eq, counters, finish, forget_working_set, mounted, run,
                    scalable_theme, svg_square)

N = 20000


def blob_state(db):
    with sqlite3.connect(db) as c:
        return c.execute("SELECT count(*), total(bytes) FROM blob").fetchone()


def walk(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as tmp:
    base = os.path.join(tmp, "icons")
    d = scalable_theme(base, "many")
    for i in range(N):
        with open(os.path.join(d, f"i{i:05d}.svg"), "w") as f:
            f.write(svg_square("red", 1 + i % 16))
    db = os.path.join(tmp, "index.sqlite")
    run("index", "--db", db, "--icon-dirs", base, check_rc=0)
    before = blob_state(db)

    with mounted(db, base, theme="many", settled=True) as mnt:
        t0 = time.monotonic()
        rc, out, err = walk(["find", mnt, "-name", "i01234.png"])
        took = time.monotonic() - t0
        found = sorted(out.split())
        print(f"find over the mount: {took:.1f} s, {len(found)} found")
        check_eq(rc, 0, f"find walks the whole mount ({err[-300:]})")
        check(os.path.join(mnt, "16", "i01234.png") in found and
              os.path.join(mnt, "icons", "many", "48x48@2", "i01234.png") in found,
              f"and finds the icon in the flat and theme views ({len(found)} paths)")
        rc, out, err = walk(["ls", os.path.join(mnt, "icons", "many", "32x32")])
        check_eq((rc, len(out.split())), (0, N), "ls lists a view")
        rc, out, err = walk(["ls", "-R", os.path.join(mnt, "icons", "many")])
        check_eq(rc, 0, "ls -R of a theme")
        time.sleep(1)
        c = counters(mnt)
        check_eq(c["renders"], 0, "find, ls and ls -R render nothing")

    check_eq(blob_state(db), before, "the table of renders is unchanged")

    with mounted(db, base, theme="many", settled=True) as mnt:
        view = os.path.join(mnt, "icons", "many", "24x24")
        rc, out, err = walk(["ls", "-l", view])
        c = counters(mnt)
        check_eq((rc, len(out.splitlines())), (0, N + 1), "ls -l lists the view")
        check_eq(c["renders"], N, "ls -l renders each icon once")
        rc, out, err = walk(["ls", "-l", view])
        check_eq(counters(mnt)["renders"], N, "a second ls -l renders nothing")
        # those renders went through the index's log; while still mounted,
        # the log is trimmed once the writes are over (db_wal_trim)
        wal = db + "-wal"
        for _ in range(150):
            if os.path.getsize(wal) <= 1 << 20:
                break
            time.sleep(0.1)
        check(os.path.getsize(wal) <= 1 << 20,
              f"the log stays bounded while mounted ({os.path.getsize(wal)} bytes, "
              f"{blob_state(db)[1]:.0f} bytes of renders stored)")

    # renders that only answered a stat go before those a program read
    small = os.path.join(tmp, "small.sqlite")
    run("index", "--db", small, "--icon-dirs", base, check_rc=0)
    read_names = [f"i{i:05d}" for i in range(0, 400, 8)]
    with mounted(small, base, theme="many", extra=("--budget", "2")) as mnt:
        for n in read_names:
            with open(os.path.join(mnt, "64", n + ".png"), "rb") as f:
                f.read()
        # a browse of the same size: thousands of renders for stats only,
        # many times the budget
        rc, out, err = walk(["ls", "-l", os.path.join(mnt, "64")])
        check_eq(rc, 0, "ls -l of a flat view")
    with sqlite3.connect(small) as c:
        kept = {os.path.basename(r[0])[:-4] for r in
                c.execute("SELECT source FROM blob WHERE px = 64 AND status = 0")}
        total = c.execute("SELECT total(bytes) FROM blob").fetchone()[0]
    print(f"budget 2 MiB: {len(kept)} renders kept, {total / 2**20:.2f} MiB")
    check(total <= 2 * 2**20, f"the budget holds ({total} bytes)")
    check(len(kept) < N, f"browsing renders were evicted ({len(kept)} kept)")
    check_eq(sorted(set(read_names) - kept), [], "every render a program read is kept")

    # the working set survives a find of the whole mount
    ws = os.path.join(tmp, "ws.sqlite")
    run("index", "--db", ws, "--icon-dirs", base, check_rc=0)
    forget_working_set(ws)
    learned = [f"i{i:05d}" for i in range(100, 160)]
    with mounted(ws, base, theme="many") as mnt:
        for n in learned:
            with open(os.path.join(mnt, "icons", "many", "48x48", n + ".png"), "rb") as f:
                f.read()
    with mounted(ws, base, theme="many", settled=True) as mnt:
        walk(["find", mnt, "-name", "nothing"])
    with mounted(ws, base, theme="many", settled=True) as mnt:
        t0 = time.monotonic()
        while not counters(mnt)["read_ahead_done"] and time.monotonic() - t0 < 30:
            time.sleep(0.05)
        c = counters(mnt)
        check_eq((c["read_ahead"], c["renders"]), (len(learned), 0),
                 "the whole working set is read ahead after a find, nothing rendered")
finish()

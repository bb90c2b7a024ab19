#!/usr/bin/env python3
"""Crash safety: kill -9 during `iconfs index` and during heavy rendering,
then check that the next run serves correct bytes (equal to a fresh
render) and that PRAGMA integrity_check is ok; a truncated index is moved
aside and rebuilt; a full filesystem under the index stops caching, not
serving. ICONFS_LONG_TESTS=1 (meson -Dlong_tests=true) runs 50 kills of
each kind instead of 6."""
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time

import asuser

from common import (ICONFS, check, check_eq, counters, fill_disk, finish, lookup_batch, mounted,
                    need_fuse, need_theme, png_size, run, symlink_farm)

KILLS = 50 if os.environ.get("ICONFS_LONG_TESTS") == "1" else 6
need_theme("breeze", "Adwaita", "hicolor")
rng = random.Random(99)


def integrity(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


tmp = tempfile.mkdtemp(prefix="iconfs-crash-")
try:
    # symlinks into /usr/share/icons, which is a base directory too (what
    # lies outside every base directory is never indexed nor served)
    base = os.path.join(tmp, "icons") + ":/usr/share/icons"
    symlink_farm(base.split(":")[0], ["breeze", "Adwaita", "hicolor"])
    names = sorted({f.rsplit(".", 1)[0] for f in os.listdir("/usr/share/icons/breeze/actions/22")})
    sample = rng.sample(names, 60)
    ref_db = os.path.join(tmp, "ref.sqlite")
    ref = lookup_batch(ref_db, base, "breeze", [(n, 22) for n in sample])
    check(sum(1 for r in ref if r) > 50, "reference lookups resolve")

    # kill -9 during indexing
    t0 = time.monotonic()
    run("index", "--db", os.path.join(tmp, "timing.sqlite"), "--icon-dirs", base, check_rc=0)
    full = time.monotonic() - t0
    db = os.path.join(tmp, "index.sqlite")
    for i in range(KILLS):
        if i % 3 == 0:
            for f in (db, db + "-wal", db + "-shm"):
                if os.path.exists(f):
                    os.unlink(f)
        p = subprocess.Popen([ICONFS, "index", "--db", db, "--icon-dirs", base],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, full))
        p.send_signal(signal.SIGKILL)
        p.wait()
        got = lookup_batch(db, base, "breeze", [(n, 22) for n in sample])
        check_eq(got, ref, f"lookups after kill {i} during indexing")
        check_eq(integrity(db), "ok", f"integrity after kill {i} during indexing")
    print(f"{KILLS} kills during indexing (full index {full:.2f} s)")

    # kill -9 during heavy rendering
    need_fuse()
    icons = [n for n in names if not n.endswith("-symbolic")]
    probe = rng.sample(icons, 40)
    sizes = [40, 72, 100]
    control_db = os.path.join(tmp, "control.sqlite")
    want = {}
    with mounted(control_db, base, theme="breeze") as mnt:
        for n in probe:
            for s in sizes:
                p = os.path.join(mnt, str(s), n + ".png")
                if os.path.exists(p):
                    want[(n, s)] = open(p, "rb").read()
    check(len(want) > 60, "control renders")
    crash_db = os.path.join(tmp, "crash.sqlite")
    for i in range(KILLS):
        with mounted(crash_db, base, theme="breeze") as mnt:
            from common import mounted as m
            pid = m.pid
            stop = threading.Event()

            def load(offset):
                k = offset
                while not stop.is_set():
                    n = icons[k % len(icons)]
                    try:
                        open(os.path.join(mnt, str(20 + k % 200), n + ".png"), "rb").read()
                    except OSError:
                        pass
                    k += 7
            threads = [threading.Thread(target=load, args=(rng.randrange(10000),)) for _ in range(2)]
            for t in threads:
                t.start()
            time.sleep(rng.uniform(0.1, 1.0))
            os.kill(pid, signal.SIGKILL)
            stop.set()
            for t in threads:
                t.join()
        check_eq(integrity(crash_db), "ok", f"integrity after kill {i} while rendering")
        with mounted(crash_db, base, theme="breeze") as mnt:
            bad = [k for k, v in want.items()
                   if open(os.path.join(mnt, str(k[1]), k[0] + ".png"), "rb").read() != v]
            check_eq(bad, [], f"bytes equal a fresh render after kill {i}")
    print(f"{KILLS} kills while rendering")

    # a truncated index is detected, moved aside and rebuilt
    size = os.path.getsize(crash_db)
    with open(crash_db, "r+b") as f:
        f.truncate(size // 3)
    p = run("index", "--db", crash_db, "--icon-dirs", base)
    check_eq(p.returncode, 0, "index over a truncated file")
    check("moved aside" in p.stderr, "truncated index is logged as moved aside")
    check_eq(integrity(crash_db), "ok", "rebuilt index is intact")

    # a full filesystem under the index stops caching, not serving
    small = os.path.join(tmp, "small")
    os.mkdir(small)
    if asuser.as_root("mount", "-t", "tmpfs", "-o",
                      f"size=32m,mode=0700,uid={os.getuid()},gid={os.getgid()}", "tmpfs", small):
        try:
            full_db = os.path.join(small, "index.sqlite")
            run("index", "--db", full_db, "--icon-dirs", base, check_rc=0)
            with mounted(full_db, base, theme="breeze") as mnt:
                os.stat(os.path.join(mnt, "16", probe[0] + ".png"))
                # the disk fills up while the daemon runs
                fill_disk(os.path.join(small, "filler"))
                served = 0
                for n in probe[:20]:
                    data = open(os.path.join(mnt, "200", n + ".png"), "rb").read()
                    served += png_size(data) == (200, 200)
                check_eq(served, 20, "full disk: every icon still served at the exact size")
                # the blob writer meets the full disk after the reads
                t0 = time.monotonic()
                while counters(mnt)["cache_errors"] == 0 and time.monotonic() - t0 < 30:
                    time.sleep(0.05)
                check(counters(mnt)["cache_errors"] > 0, "full disk: caching stopped")
        finally:
            asuser.as_root("umount", "-l", small)
    else:
        print("full-disk check skipped: needs root to mount a small tmpfs")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()

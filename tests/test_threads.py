#!/usr/bin/env python3
"""Bursts of requests past the FUSE loop's idle threads, as a login's
programs make them: the loop starts threads for each burst and ends the
extra ones after it, and each new thread takes the request context an
ended one left (its connection to the index, lookup and reader) instead of
making one. Five bursts of 16 threads make at most one context per
thread the loop may run at once (8) plus the read ahead's; every answer
of every burst is found; and an icon added to a theme between
bursts is seen by every thread of the next, whichever context it took
(each one's lookup cache follows the index generation)."""
import os
import shutil
import tempfile
import threading
import time

from common import (REAL_BASES, check, check_eq, counters, finish, mounted, need_fuse,
                    need_theme, scalable_theme, svg_square, write_atomic)

FS_THREADS_MAX = 8  # fs/fs-private.h
BURSTS, THREADS = 5, 16
need_fuse()
need_theme("Papirus")


def burst(paths_of):
    """Each of THREADS threads stats its own paths at once; {path: size,
    or None for a miss}, every thread's."""
    got, lock = {}, threading.Lock()
    start = threading.Barrier(THREADS)

    def work(k):
        start.wait()
        seen = {}
        for p in paths_of(k):
            try:
                seen[p] = os.stat(p).st_size
            except FileNotFoundError:
                seen[p] = None
        with lock:
            got.update(seen)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


tmp = tempfile.mkdtemp(prefix="iconfs-threads-")
try:
    icons = os.path.join(tmp, "icons")
    scalable = scalable_theme(icons, "fixture")
    write_atomic(os.path.join(scalable, "first.svg"), svg_square())
    db = os.path.join(tmp, "index.sqlite")
    per_burst = THREADS * 10
    names = sorted(f[:-4] for f in os.listdir("/usr/share/icons/Papirus/48x48/apps")
                   if f.endswith(".svg"))[:BURSTS * per_burst]
    with mounted(db, f"{icons}:{REAL_BASES}", theme="Papirus", settled=True) as mnt:
        for b in range(BURSTS):
            # names of its own: the kernel holds none of their entries
            mine = names[b * per_burst:(b + 1) * per_burst]
            got = burst(lambda k: [f"{mnt}/icons/Papirus/{s}x{s}/{n}.png"
                                   for n in mine[k::THREADS] for s in (16, 24, 48)])
            check_eq(sorted(p for p, v in got.items() if not v), [],
                     f"burst {b + 1}: every Papirus app icon found at 16, 24 and 48 px")
            print(f"after burst {b + 1}: {counters(mnt)['contexts']} contexts", flush=True)
            time.sleep(0.5)  # the loop ends its extra threads
        made = counters(mnt)["contexts"]
        print(f"{BURSTS} bursts of {THREADS} threads: {made} request contexts made")
        check(0 < made <= FS_THREADS_MAX + 1,
              f"request contexts made: {made}, at most {FS_THREADS_MAX + 1}")

        # a new icon between bursts: every thread of the next one sees it
        new = os.path.join(mnt, "icons/fixture/16x16/added.png")
        write_atomic(os.path.join(scalable, "added.svg"), svg_square("blue"))
        deadline = time.monotonic() + 10
        while not os.path.exists(new) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        seen = burst(lambda k: [new, os.path.join(mnt, f"icons/fixture/{16 + k}x{16 + k}/added.png")])
        check_eq(sorted(p for p, v in seen.items() if not v), [],
                 "the added icon, at 16-31 px, in every thread of the next burst")
        check(counters(mnt)["contexts"] <= FS_THREADS_MAX + 1,
              "no more contexts after the change")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()

#!/usr/bin/env python3
"""Rendering through the mount: exact dimensions for square, wide and tall
SVGs and for PNGs of other sizes (own bytes at the exact size); renders
survive unmount and remount byte for byte with no second render (the
daemon's counters prove it); a changed source gives new bytes; hostile SVGs
give EIO within the deadline while every other icon keeps being served;
a source the renderer rejected is not retried until it changes, while one
that only hit the machinery's limits (memory, deadline) is tried again; a
lookup alone (access(2)) renders nothing, a read or stat then does."""
import errno
import os
import shutil
import sqlite3
import struct
import tempfile
import time
import zlib

from common import SANITIZED, errno_of, check, check_eq, counters, finish, mounted, png_size, run
from hostile_svgs import write_corpus

DEADLINE = 5.0  # RENDER_DEADLINE_MS
# Hostile sources that fail by the worker's memory limit or the deadline:
# no verdict on the source, so they are tried again after a back-off.
TRANSIENT = {"many-uses", "heavy-filters"}
# use-bomb meets librsvg's instancing limit (a verdict) or, where the worker
# has no memory limit (sanitizer builds), the deadline first.
EITHER = {"use-bomb"}


def png(w, h, rgba=(0, 0, 255, 255)):
    raw = b"".join(b"\0" + bytes(rgba) * w for _ in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def svg(w, h, color="red"):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">'
            f'<rect width="{w}" height="{h}" fill="{color}"/></svg>').encode()


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


tmp = tempfile.mkdtemp(prefix="iconfs-render-")
try:
    base = os.path.join(tmp, "icons")
    theme = os.path.join(base, "r")
    write(os.path.join(theme, "index.theme"),
          b"[Icon Theme]\nName=R\nDirectories=16,64,scalable,bad\n\n[16]\nSize=16\nType=Fixed\n"
          b"\n[64]\nSize=64\nType=Fixed\n\n[scalable]\nSize=48\nType=Scalable\nMinSize=1\n"
          b"MaxSize=1024\n\n[bad]\nSize=48\nType=Scalable\nMinSize=1\nMaxSize=1024\n")
    write(os.path.join(theme, "scalable/square.svg"), svg(16, 16))
    write(os.path.join(theme, "scalable/wide.svg"), svg(300, 100))
    write(os.path.join(theme, "scalable/tall.svg"), svg(10, 70))
    write(os.path.join(theme, "16/small.png"), png(16, 16))
    write(os.path.join(theme, "64/big.png"), png(64, 64))
    hostile = write_corpus(os.path.join(theme, "bad"))
    db = os.path.join(tmp, "index.sqlite")
    bases = base

    with mounted(db, bases, theme="r") as mnt:
        for name in ("square", "wide", "tall", "small", "big"):
            for size in (16, 24, 48, 64, 100):
                data = open(os.path.join(mnt, "icons/r", f"{size}x{size}", name + ".png"), "rb").read()
                check_eq(png_size(data), (size, size), f"{name} at {size}")
            data = open(os.path.join(mnt, "32@2", name + ".png"), "rb").read()
            check_eq(png_size(data), (64, 64), f"{name} at 32@2")
        # a PNG of exactly the asked size is served as its own bytes
        check_eq(open(os.path.join(mnt, "64", "big.png"), "rb").read(),
                 open(os.path.join(theme, "64/big.png"), "rb").read(), "native bytes at 64")
        check_eq(open(os.path.join(mnt, "16", "small.png"), "rb").read(),
                 open(os.path.join(theme, "16/small.png"), "rb").read(), "native bytes at 16")
        first = open(os.path.join(mnt, "icons/r/48x48/square.png"), "rb").read()
        c = counters(mnt)
        check(c["renders"] > 0, "first pass rendered")

        # hostile sources: EIO within the deadline, one line each, daemon alive
        for name in hostile:
            path = os.path.join(mnt, "icons/r/48x48", name + ".png")
            t0 = time.monotonic()
            e = errno_of(lambda: open(path, "rb").read())
            dt = time.monotonic() - t0
            check_eq(e, errno.EIO, f"hostile {name} gives EIO")
            check(dt < DEADLINE + 3, f"hostile {name} answered in {dt:.1f}s")
            check_eq(png_size(open(os.path.join(mnt, "icons/r/24x24/square.png"), "rb").read()),
                     (24, 24), f"still serving after {name}")
            print(f"hostile {name}: errno {e} in {dt:.2f}s")
        verdicts = [n for n in hostile if n not in TRANSIENT | EITHER]
        failures = counters(mnt)["render_failures"]
        for name in verdicts:
            # the kernel cached nothing for an EIO: each is a new request
            errno_of(lambda: os.stat(os.path.join(mnt, "icons/r/48x48", name + ".png")))
        check_eq(counters(mnt)["render_failures"], failures, "rejected sources are not retried")
        time.sleep(1.2)  # past the first back-off
        e = errno_of(lambda: os.stat(os.path.join(mnt, "icons/r/48x48/many-uses.png")))
        check_eq((e, counters(mnt)["render_failures"]), (errno.EIO, failures + 1),
                 "a source that hit a limit is tried again")
        check(os.path.ismount(mnt), "daemon survived the hostile corpus")
        check(counters(mnt)["worker_restarts"] >= 2,
              "workers that overran the deadline or died were replaced")
        from common import mounted as m
        with open(f"/proc/{m.pid}/status") as f:
            rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        print(f"daemon RSS after the hostile corpus: {rss / 1024:.1f} MiB")
        bound = 128 if SANITIZED else 64  # MiB; ASan's own memory counts too
        check(rss < bound * 1024, f"daemon RSS stays under {bound} MiB (renders happen in workers)")

    with mounted(db, bases, theme="r") as mnt:
        again = open(os.path.join(mnt, "icons/r/48x48/square.png"), "rb").read()
        check_eq(again, first, "render survives remount byte for byte")
        c = counters(mnt)
        check_eq(c["renders"], 0, "no render after remount")
        check(c["blob_hits"] >= 1, "served from the blob table")
        e = errno_of(lambda: open(os.path.join(mnt, "icons/r/48x48/truncated.png"), "rb").read())
        check_eq((e, counters(mnt)["renders"]), (errno.EIO, 0), "rejection remembered across mounts")
        e = errno_of(lambda: open(os.path.join(mnt, "icons/r/48x48/many-uses.png"), "rb").read())
        check_eq((e, counters(mnt)["renders"]), (errno.EIO, 1), "a limit is not remembered across mounts")
        status = run("status", "--db", db, mnt)
        print(status.stdout)
        check_eq(status.returncode, 0, "iconfs status")
        with sqlite3.connect(db) as c:
            stored = {os.path.basename(r[0])[:-4] for r in
                      c.execute("SELECT source FROM blob WHERE status != 0")}
        check(set(verdicts) <= stored <= set(verdicts) | EITHER,
              f"only verdicts on the sources are stored: {sorted(stored)}")
        for needle in ("themes           1", "theme            r (served; from --theme)", "(mounted)", "rendered", f"failed renders   {len(stored)}",
                       "hit rate", "last refresh"):
            check(needle in status.stdout, f"status shows {needle!r}")

    # A lookup renders nothing: access(2), which Qt asks of a name in every
    # directory of a theme that holds it, leaves the file unrendered; the
    # first read or stat renders it, at its exact size.
    with mounted(db, bases, theme="r") as mnt:
        paths = [os.path.join(mnt, "icons/r", f"{s}x{s}", "wide.png") for s in (20, 30, 40)]
        renders = counters(mnt)["renders"]
        check_eq([os.access(p, os.R_OK) for p in paths], [True] * 3, "access(2) finds the icons")
        check_eq(counters(mnt)["renders"], renders, "access(2) renders nothing")
        fd = os.open(paths[0], os.O_RDONLY)  # no stat before the reads
        data = b""
        while chunk := os.read(fd, 65536):
            data += chunk
        os.close(fd)
        check_eq((png_size(data), data[-8:-4]), ((20, 20), b"IEND"), "read with no stat: the whole PNG")
        check_eq(counters(mnt)["renders"], renders + 1, "the read rendered the file it read")
        check_eq(os.stat(paths[0]).st_size, len(data), "its size, exact")
        size = os.stat(paths[1]).st_size
        check_eq(size, len(open(paths[1], "rb").read()), "a stat after access(2): the exact size")
        check_eq(counters(mnt)["renders"], renders + 2, "the stat rendered the one it asked")

    # a changed source renders anew
    time.sleep(0.01)
    write(os.path.join(theme, "scalable/square.svg"), svg(16, 16, "lime"))
    with mounted(db, bases, theme="r") as mnt:
        changed = open(os.path.join(mnt, "icons/r/48x48/square.png"), "rb").read()
        check(changed != first, "changed source gives new bytes")
        check_eq(png_size(changed), (48, 48), "changed source size")
        check_eq(counters(mnt)["renders"], 1, "exactly one render for the change")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()

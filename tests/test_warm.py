#!/usr/bin/env python3
"""The working set: a mount learns which files programs read (not what
they only stat), stores them in the index when it ends, and at the next
mount of the same default theme reads them ahead through itself, so that a
program reading them then sends no request to the daemon (its counters) and
gets the same bytes; a mount of another theme reads none of them ahead.
A file that is gone since is dropped from the set, a damaged row is
refused, and the set never holds more than its bound."""
import os
import signal
import sqlite3
import subprocess
import tempfile
import time

from common import (REAL_BASES, check, check_eq, counters, finish, mounted, need_theme,
                    png16, png_size, run, squares_theme)

need_theme("Papirus", "hicolor")
N_SQUARES = 12


def read(path):
    """open/read/close as a toolkit does them."""
    fd = os.open(path, os.O_RDONLY)
    try:
        out = b""
        while chunk := os.read(fd, 65536):
            out += chunk
        return out
    finally:
        os.close(fd)


def learned(db):
    with sqlite3.connect(db) as c:
        return [p for (p,) in c.execute("SELECT path FROM warm ORDER BY used, path")]


def wait_read_ahead(mnt):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        c = counters(mnt)
        if c["read_ahead_done"]:
            return c
        time.sleep(0.05)
    raise AssertionError("the read ahead did not end")


with tempfile.TemporaryDirectory() as tmp:
    base = os.path.join(tmp, "icons")
    d = squares_theme(base, "fix", N_SQUARES)
    bases = f"{base}:{REAL_BASES}"
    db = os.path.join(tmp, "index.sqlite")
    run("index", "--db", db, "--icon-dirs", bases, check_rc=0)
    papirus = sorted(n[:-4] for n in os.listdir("/usr/share/icons/Papirus/48x48/apps")
                     if n.endswith(".svg"))[:10]
    files = ([f"icons/fix/48x48/sq-{i:02d}.png" for i in range(N_SQUARES)] +
             [f"icons/Papirus/48x48/{n}.png" for n in papirus] + ["32/sq-00.png"])

    # the first session: programs read these files, and only stat another
    with mounted(db, bases, theme="fix") as mnt:
        wait_read_ahead(mnt)
        first = {p: read(os.path.join(mnt, p)) for p in files}
        os.stat(os.path.join(mnt, "icons/fix/48x48/sq-11.png"))
        os.stat(os.path.join(mnt, "icons/fix/64x64/sq-00.png"))
    check_eq(png_size(first["icons/fix/48x48/sq-03.png"]), (48, 48), "a rendered icon")
    check_eq(png_size(first["32/sq-00.png"]), (32, 32), "a flat view's icon")
    check_eq(sorted(learned(db)), sorted(files), "the set holds exactly the files read")
    with sqlite3.connect(db) as c:
        check_eq(c.execute("SELECT DISTINCT theme FROM warm").fetchall(), [("fix",)],
                 "each file stored with the session's default theme")

    # the next session: read ahead before anyone asks
    with mounted(db, bases, theme="fix") as mnt:
        c0 = wait_read_ahead(mnt)
        check_eq(c0["read_ahead"], len(files), "every file of the set was read ahead")
        check_eq(c0["renders"], 0, "reading ahead renders nothing already rendered")
        check_eq(c0["resolved_ahead"], len(files),
                 "each read ahead's LOOKUP took what its idle thread resolved")
        again = {p: read(os.path.join(mnt, p)) for p in files}
        c1 = counters(mnt)
        for k in ("lookups", "reads", "opens", "getattrs"):
            check_eq(c1[k] - c0[k], 0, f"a program's reads of the set: {k} sent to the daemon")
        check(again == first, "the same bytes as in the first session")
    check_eq(sorted(learned(db)), sorted(files),
             "reading ahead teaches nothing: the set is what programs read")

    # a login with another default theme reads ahead nothing that sessions
    # of this one read (its programs read other files), and forgets none
    with mounted(db, bases, theme="Papirus") as mnt:
        c0 = wait_read_ahead(mnt)
        check_eq(c0["read_ahead"], 0, "nothing learned under another theme is read ahead")
    check_eq(sorted(learned(db)), sorted(files), "a login of another theme keeps the set")

    # renders that are gone are not made by the read ahead: it only brings
    # what is stored into the kernel, the programs' reads render
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM blob")
    with mounted(db, bases, theme="fix") as mnt:
        c0 = wait_read_ahead(mnt)
        check_eq((c0["read_ahead"], c0["renders"]), (0, 0),
                 "nothing stored: nothing read ahead, nothing rendered")
        again = {p: read(os.path.join(mnt, p)) for p in files}
        # one render per source and size (Papirus links names together)
        renders = {(os.path.realpath(os.getxattr(os.path.join(mnt, p), "user.iconfs.source")),
                    png_size(first[p])) for p in files}
        check_eq(counters(mnt)["renders"], len(renders), "the programs' reads render")
        check(again == first, "the same bytes rendered again")
    check_eq(sorted(learned(db)), sorted(files), "files not read ahead stay in the set")

    # a file gone since, and a damaged row: neither is read, both dropped
    os.unlink(os.path.join(d, "sq-05.svg"))
    with sqlite3.connect(db) as c:
        c.execute("INSERT INTO warm (path, used) VALUES ('../../etc/passwd', 1), "
                  "('icons//x.png', 2)")
    run("index", "--db", db, "--icon-dirs", bases, check_rc=0)
    with mounted(db, bases, theme="fix") as mnt:
        c0 = wait_read_ahead(mnt)
        check_eq(c0["read_ahead"], len(files) - 1, "the gone icon is not read ahead")
    want = sorted(p for p in files if "sq-05" not in p)
    check_eq(sorted(learned(db)), want, "the gone file and the damaged rows are dropped")

    # bounded: the most recent WARM_FILES (4096) files are read ahead and
    # kept (icons of the exact size: nothing to render)
    many = os.path.join(base, "many", "16")
    os.makedirs(many)
    with open(os.path.join(base, "many", "index.theme"), "w") as f:
        f.write("[Icon Theme]\nName=Many\nDirectories=16\n\n[16]\nSize=16\nType=Fixed\n")
    for i in range(5000):
        with open(os.path.join(many, f"i{i:04d}.png"), "wb") as f:
            f.write(png16())
    run("index", "--db", db, "--icon-dirs", bases, check_rc=0)
    with sqlite3.connect(db) as c:
        c.executemany("INSERT INTO warm (path, used) VALUES (?, ?)",
                      [(f"icons/many/16x16/i{i:04d}.png", i) for i in range(5000)])
    with mounted(db, bases, theme="fix") as mnt:
        c0 = wait_read_ahead(mnt)
        check_eq(c0["read_ahead"], 4096, "at most 4096 files are read ahead")
        read(os.path.join(mnt, "icons/fix/22x22/sq-01.png"))
    kept = learned(db)
    check_eq(len(kept), 4096, "the set is bounded")
    check("icons/fix/22x22/sq-01.png" in kept, "the newest file is kept")
    check("icons/many/16x16/i0000.png" not in kept, "the oldest went")

    # kill -9 in the middle of a read ahead: the daemon can be reaped at
    # once, however the kill falls (no thread of the daemon ever waits on
    # its own mount: the kernel would wait for that answer from the dying
    # process itself, and the process could never end)
    stuck = 0
    for attempt in range(8):
        with mounted(db, bases, theme="fix") as mnt:
            deadline = time.monotonic() + 30
            while (counters(mnt)["read_ahead"] < 50 + 61 * attempt and
                   time.monotonic() < deadline):
                pass
            os.kill(mounted.pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while os.waitpid(mounted.pid, os.WNOHANG)[0] != mounted.pid:
                if time.monotonic() > deadline:
                    stuck += 1
                    # let the rest of the suite go on: abort the connection
                    # (fusectl is mounted by asuser; its files belong to
                    # the connection's owner)
                    for c in os.listdir("/sys/fs/fuse/connections"):
                        try:
                            with open(f"/sys/fs/fuse/connections/{c}/abort", "w") as f:
                                f.write("1")
                        except PermissionError:
                            pass  # another user's
                    break
                time.sleep(0.01)
    check_eq(stuck, 0, "daemons killed during the read ahead that could not exit")
    with mounted(db, bases, theme="fix") as mnt:
        check_eq(png_size(read(os.path.join(mnt, "icons/fix/48x48/sq-02.png"))), (48, 48),
                 "the next mount serves")

finish()

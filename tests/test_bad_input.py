#!/usr/bin/env python3
"""Bad input while indexing: garbage and empty index.theme, a directory
symlink loop, an unreadable directory, a 1 MB line, invalid UTF-8. `iconfs
index` finishes, names each problem in one line, and indexes the rest."""
import os
import shutil
import subprocess
import tempfile

from common import ICONFS, check, check_eq, finish, run

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>'


def theme(base, name, text, icons=()):
    os.makedirs(os.path.join(base, name), exist_ok=True)
    with open(os.path.join(base, name, "index.theme"), "wb") as f:
        f.write(text)
    for rel in icons:
        p = os.path.join(base, name, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(SVG)


DIRS = b"[Icon Theme]\nName=%s\nDirectories=d\n\n[d]\nSize=16\n"

with tempfile.TemporaryDirectory() as tmp:
    os.chmod(tmp, 0o755)
    base = os.path.join(tmp, "icons")
    theme(base, "good", DIRS % b"Good", ["d/good-icon.svg"])
    theme(base, "garbage", os.urandom(4096) + b"\n\x00[[[=\n")
    theme(base, "emptyt", b"")
    theme(base, "hugeline", b"[Icon Theme]\nComment=" + b"x" * (1 << 20) +
          b"\nDirectories=d\n\n[d]\nSize=16\n", ["d/huge-icon.svg"])
    theme(base, "badutf8", b"[Icon Theme]\nName=\xff\xfe\xc3\x28\nDirectories=d\n"
          b"\n[d]\nSize=16\n", ["d/utf-icon.svg"])
    # a listed subdirectory that is a symlink loop, and one that loops back
    theme(base, "loop", b"[Icon Theme]\nDirectories=self,up,d\n\n[self]\nSize=16\n"
          b"\n[up]\nSize=16\n\n[d]\nSize=16\n", ["d/loop-icon.svg"])
    os.symlink("self", os.path.join(base, "loop", "self"))
    os.symlink(".", os.path.join(base, "loop", "up"))
    # an unreadable directory (indexed as an unprivileged user below)
    theme(base, "locked", DIRS % b"Locked", ["d/locked-icon.svg"])
    os.chmod(os.path.join(base, "locked", "d"), 0)

    dbdir = os.path.join(tmp, "db")
    os.mkdir(dbdir)
    os.chmod(dbdir, 0o777)
    db = os.path.join(dbdir, "index.sqlite")
    cmd = [ICONFS, "index", "--db", db, "--icon-dirs", base]
    if os.getuid() == 0 and shutil.which("setpriv"):
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(p.stderr)
    check_eq(p.returncode, 0, "index exit status")
    err = p.stderr.splitlines()
    for needle in ("garbage/index.theme", "emptyt/index.theme", "locked/d"):
        check(any(needle in line for line in err), f"a line names '{needle}'")
    check(all(len(line) < 600 for line in err), "problems are one short line each")

    os.chmod(os.path.join(base, "locked", "d"), 0o755)
    for theme_name, icon in (("good", "good-icon"), ("hugeline", "huge-icon"),
                             ("badutf8", "utf-icon"), ("loop", "loop-icon")):
        q = run("lookup", "--db", db, "--icon-dirs", base, "--theme", theme_name,
                icon, "16", env=dict(os.environ))
        check_eq(q.stdout.strip(), os.path.join(base, theme_name, "d", icon + ".svg"),
                 f"{icon} indexed")
    q = run("lookup", "--db", db, "--icon-dirs", base, "--theme", "garbage", "good-icon", "16")
    check_eq((q.returncode, "unknown theme 'garbage'" in q.stderr), (1, True),
             f"a garbage theme is no theme, and lookup says so ({q.stderr.strip()[-200:]})")

    # a corrupt index file is moved aside and rebuilt, with a log line
    with open(db, "r+b") as f:
        f.write(b"\0" * 4096)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    q = run("index", "--db", db, "--icon-dirs", base)
    check_eq(q.returncode, 0, "index over a zeroed file")
    check("moved aside" in q.stderr, "zeroed index is logged as moved aside")
    check(os.path.exists(db + ".broken"), "zeroed index kept as .broken")
    # a foreign SQLite database likewise
    foreign = os.path.join(tmp, "foreign.sqlite")
    subprocess.run(["sqlite3", foreign, "CREATE TABLE t(x); INSERT INTO t VALUES (1);"], check=True)
    q = run("lookup", "--db", foreign, "--icon-dirs", base, "--theme", "good", "good-icon", "16")
    check_eq(q.returncode, 0, "lookup over a foreign database file")
    check("moved aside" in q.stderr, "foreign index is logged as moved aside")
finish()

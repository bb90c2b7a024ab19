#!/usr/bin/env python3
"""The shared layer of renders: `iconfs render --shared-db` builds it for a
fixture theme and Papirus at 48 px (in two runs, the second refreshing the
first's layer); a new user's fresh mount reads 100 icons from it with no
render, byte for byte what a private render gives; a source changed after
the layer was built is rendered fresh (the stale shared blob is never
served); a mount leaves the layer's bytes as they were; a corrupt, foreign,
other-version, writable-by-others or unopenable layer is ignored with a log
line, and the mount renders as without one. A first login's index is
layered over the layer's index: the same icons as one read from the
directories, none of the layer's icon rows in the user's file (but not
over a layer that cannot be used). GTK's symbolic encodings are in a
layer whose budget its larger sizes reach. A first GTK 3 window's icon,
loaded at every size the mount lists its name at (a Scale=2 directory's
pixels among them), comes from a layer of the default sizes with no
render. The layer travels: the same files copied with `cp -a` (other
inodes) serve from it with no render."""
import hashlib
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import tempfile
import time

from common import (REAL_BASES, check, check_eq, counters, finish, mounted, need_theme,
                    png_size, run, squares_theme, svg_square, wait_for)

need_theme("Papirus", "hicolor", "Adwaita")
N_SQUARES = 10
CLIENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients.py")


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read_all(mnt, files):
    out = {}
    for p in files:
        with open(os.path.join(mnt, p), "rb") as f:
            out[p] = f.read()
    return out


def fresh_user(tmp, name, bases):
    db = os.path.join(tmp, name, "index.sqlite")
    os.makedirs(os.path.dirname(db))
    run("index", "--db", db, "--icon-dirs", bases, check_rc=0)
    return db


def index_rows(db):
    """What an index says of the directories, whatever its ids."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return (sorted(c.execute("SELECT d.path, i.name, i.ext FROM icon i "
                                 "JOIN dir d ON d.listing_id = i.listing_id")),
                sorted(c.execute("SELECT path, kind, relpath, ino, mtime_ns FROM dir")),
                sorted(c.execute("SELECT name, index_path, valid, inherits FROM theme")),
                list(c.execute("SELECT path FROM basedir ORDER BY pos")))


def daemon_log():
    with open(mounted.log_path) as f:
        return f.read()


with tempfile.TemporaryDirectory() as tmp:
    base = os.path.join(tmp, "icons")
    d = squares_theme(base, "fix", N_SQUARES)
    bases = f"{base}:{REAL_BASES}"
    layer = os.path.join(tmp, "var", "shared.sqlite")

    p = run("render", "--shared-db", layer, "--icon-dirs", bases, "--theme", "fix",
            "--sizes", "48", "--scales", "1")
    check_eq(p.returncode, 0, f"layer for the fixture theme: {p.stderr}")
    first_build = os.stat(layer)
    p = run("render", "--shared-db", layer, "--icon-dirs", bases, "--theme", "Papirus",
            "--sizes", "48", "--scales", "1")
    check_eq(p.returncode, 0, f"Papirus added to the layer: {p.stderr}")
    st = os.stat(layer)
    check(st.st_ino != first_build.st_ino, "a refresh is renamed over the layer, not written in place")
    check_eq(stat.S_IMODE(st.st_mode), 0o644, "the layer is world-readable, written by its owner only")
    check(not os.path.exists(layer + "-wal") and not os.path.exists(layer + ".new"),
          "the layer is one sealed file")
    with sqlite3.connect(f"file:{layer}?mode=ro", uri=True) as c:
        in_layer = c.execute("SELECT count(*) FROM blob WHERE status = 0").fetchone()[0]
        fix_rows = c.execute("SELECT count(*) FROM blob WHERE source LIKE ? AND px = 48",
                             (os.path.realpath(d) + "/%",)).fetchone()[0]
    check_eq(fix_rows, N_SQUARES, "the fixture theme's renders stayed through the refresh")
    check(in_layer > 5000, f"Papirus at 48 px is in the layer ({in_layer} renders)")

    papirus = sorted(n[:-4] for n in os.listdir("/usr/share/icons/Papirus/48x48/apps")
                     if n.endswith(".svg"))[:90]
    files = ([f"icons/fix/48x48/sq-{i:02d}.png" for i in range(N_SQUARES)] +
             [f"icons/Papirus/48x48/{n}.png" for n in papirus])
    check_eq(len(files), 100, "100 icons")
    before = digest(layer)

    # a new user: everything from the layer, nothing rendered
    db = fresh_user(tmp, "alice", bases)
    with mounted(db, bases, theme="fix", extra=("--shared-db", layer)) as mnt:
        shared = read_all(mnt, files)
        c = counters(mnt)
        check_eq(c["renders"], 0, "a new user's 100 icons need no render")
        check(c["shared_hits"] >= 100, f"served from the shared layer ({c['shared_hits']} hits)")
        check("reading renders from the shared layer" in daemon_log(), "the mount says so")
    with sqlite3.connect(db) as c:
        check_eq(c.execute("SELECT count(*) FROM blob").fetchone()[0], 0,
                 "nothing is copied into the user's own table")
    check_eq(digest(layer), before, "the layer's bytes are unchanged by a mount")
    status = run("status", "--db", db, "--shared-db", layer, check_rc=1).stdout  # 1: not mounted
    check(f"shared layer     {layer}: {in_layer} PNGs" in status, f"iconfs status shows the layer: {status}")

    # a first login (no index yet): the user's index is layered over the
    # machine's (the layer's index): the same icons as one read from the
    # directories (alice's), without the layer's icon rows in the user's file
    first = os.path.join(tmp, "dave", "index.sqlite")
    os.makedirs(os.path.dirname(first))
    with mounted(first, bases, theme="fix", extra=("--shared-db", layer)) as mnt:
        seeded = read_all(mnt, files)
        check("the index is layered over the machine's" in daemon_log(),
              "a first login's index is layered over the layer's")
        check_eq(counters(mnt)["renders"], 0, "and renders nothing")
    check(seeded == shared, "the same icons")
    read = os.path.join(tmp, "read", "index.sqlite")
    os.makedirs(os.path.dirname(read))
    with mounted(read, bases, theme="fix"):
        pass  # without the layer: read from the directories
    rows, full = index_rows(first), index_rows(read)
    check(len(full[0]) > 50000, f"an index read from the directories holds the icons ({len(full[0])} rows)")
    check_eq(len(rows[0]), 0, "the layered index holds none of the machine's icon rows")
    check(rows[1:] == full[1:], "and the same directories, themes and base directories")
    size = os.path.getsize(first)
    check(size < 2 << 20, f"its file is small ({size} bytes)")

    # GTK 3 and 4 load Adwaita and hicolor after any theme: a first login's
    # GTK app reads their synthesized files beside its own theme's, and the
    # layer holds them all (built with Papirus's): the mount builds none
    gtk_first = os.path.join(tmp, "gtk-first", "index.sqlite")
    os.makedirs(os.path.dirname(gtk_first))
    with mounted(gtk_first, bases, theme="Papirus", extra=("--shared-db", layer)) as mnt:
        for t in ("Papirus", "Adwaita", "hicolor"):
            for name in ("index.theme", "icon-theme.cache"):
                with open(os.path.join(mnt, "icons", t, name), "rb") as f:
                    check(len(f.read()) > 0, f"{t}/{name} is served")
        check_eq(counters(mnt)["synth_builds"], 0,
                 "a first GTK login's synthesized files all come from the layer")

    # the layer holds each desktop's toolkit's files (a first KDE login with
    # Papirus built its own for half a second before its first answer): a
    # first KDE login reads its theme's and breeze's (KIconLoader's
    # default) from there, and its index stores none of its own
    kde_first = os.path.join(tmp, "kde-first", "index.sqlite")
    os.makedirs(os.path.dirname(kde_first))
    with mounted(kde_first, bases, theme="Papirus",
                 extra=("--shared-db", layer, "--rules", "kde")) as mnt:
        for t in ("Papirus", "breeze", "hicolor"):
            with open(os.path.join(mnt, "icons", t, "index.theme")) as f:
                check("[Icon Theme]" in f.read(), f"{t}/index.theme is served under kde")
        check_eq(counters(mnt)["synth_builds"], 0,
                 "a first KDE login's synthesized files all come from the layer")
    for db, who in ((gtk_first, "GTK"), (kde_first, "KDE")):
        with sqlite3.connect(db) as c:
            check_eq(c.execute("SELECT count(*) FROM synth").fetchone()[0], 0,
                     f"a first {who} login's index stores no synthesized file of its own")

    # the same icons rendered privately: the same bytes
    db = fresh_user(tmp, "bob", bases)
    with mounted(db, bases, theme="fix") as mnt:
        private = read_all(mnt, files)
        # one render per source (Papirus links names together)
        sources = {os.path.realpath(os.getxattr(os.path.join(mnt, p), "user.iconfs.source"))
                   for p in files}
        check_eq(counters(mnt)["renders"], len(sources), "without the layer they are rendered")
        check_eq(counters(mnt)["shared_hits"], 0, "--no-shared-db reads no layer")
    check(shared == private, "the layer's bytes equal a private render's")
    check_eq(png_size(shared["icons/fix/48x48/sq-03.png"]), (48, 48), "exact size")

    # a source changed after the layer was built: rendered fresh
    with open(os.path.join(d, "sq-00.svg"), "w") as f:
        f.write(svg_square("lime", 16))
    db = fresh_user(tmp, "carol", bases)
    with mounted(db, bases, theme="fix", extra=("--shared-db", layer)) as mnt:
        got = read_all(mnt, ["icons/fix/48x48/sq-00.png", "icons/fix/48x48/sq-01.png"])
        c = counters(mnt)
        check_eq(c["renders"], 1, "the changed source is rendered, the unchanged one is not")
        check(got["icons/fix/48x48/sq-00.png"] != shared["icons/fix/48x48/sq-00.png"],
              "the stale shared render is not served")
        check_eq(got["icons/fix/48x48/sq-01.png"], shared["icons/fix/48x48/sq-01.png"],
                 "the unchanged icon still comes from the layer")
    check_eq(digest(layer), before, "still unchanged")

    # sized by use: what a mount had to render itself, it asks the layer to
    # hold (content/asked.h); the next build of the layer takes it in, and
    # a later user's mount renders nothing of it
    requests = os.path.join(os.path.dirname(layer), "requests")
    check_eq(stat.S_IMODE(os.stat(requests).st_mode), 0o1733,
             "the layer's requests directory: anyone adds, nobody else lists")
    at24 = [f"icons/Papirus/24x24/{n}.png" for n in papirus[:20]]
    frank = fresh_user(tmp, "frank", bases)
    with mounted(frank, bases, theme="fix", extra=("--shared-db", layer)) as mnt:
        read_all(mnt, at24)
        asked_renders = counters(mnt)["renders"]
        srcs = {os.path.realpath(os.getxattr(os.path.join(mnt, p), "user.iconfs.source")
                                 .decode()) for p in at24}
    check(asked_renders >= 10, f"Papirus at 24 px is not in the layer ({asked_renders} renders)")
    lines = set()
    for name in os.listdir(requests):
        with open(os.path.join(requests, name)) as f:
            lines |= set(f.read().splitlines())
    check(lines >= {f"24 {s}" for s in srcs},
          f"the mount asked for each of them ({len(lines)} lines)")
    # requests for what is not an icon file of the system's directories
    evil = os.path.join(tmp, "evil.svg")
    with open(evil, "w") as f:
        f.write(svg_square("red", 16))
    with open(os.path.join(requests, "forged"), "w") as f:
        f.write(f"24 {evil}\n48 /etc/passwd\n24 {os.path.realpath(__file__)}\n"
                f"99999 {sorted(srcs)[0]}\n")
    # and a theme a user asked for (not the layer's own, nor loaded beside
    # it under KDE's or Qt's rules)
    with open(os.path.join(requests, "adwaita-user"), "w") as f:
        f.write("theme Adwaita\n")
    p = run("render", "--shared-db", layer, "--icon-dirs", bases, "--theme", "fix",
            "--sizes", "48", "--scales", "1")
    check_eq(p.returncode, 0, f"the layer takes in the requests: {p.stderr}")
    taken = re.search(r"asked for by the machine's users: (\d+) of (\d+) icons", p.stdout)
    check(taken and taken.group(1) == taken.group(2) and int(taken.group(2)) >= len(srcs),
          f"every request for an icon file is rendered: {p.stdout!r}")
    with sqlite3.connect(f"file:{layer}?mode=ro", uri=True) as c:
        got = {r[0] for r in c.execute("SELECT source FROM blob WHERE px = 24 AND status = 0")}
        forged = c.execute("SELECT count(*) FROM blob WHERE source IN (?, ?, ?) OR px = 99999",
                           (evil, "/etc/passwd", os.path.realpath(__file__))).fetchone()[0]
    check(srcs <= got, f"the layer holds what was asked for ({len(srcs & got)} of {len(srcs)})")
    check_eq(forged, 0, "and nothing that is not an icon of the system's directories")
    # an asked theme's synthesized files by the service's own rules only:
    # every toolkit's for each asked theme grew the layer by a third (M4)
    with sqlite3.connect(f"file:{layer}?mode=ro", uri=True) as c:
        rules = sorted({m.rsplit("/", 1)[1] for (m,) in c.execute(
            "SELECT made_by FROM synth WHERE theme = 'Adwaita'")})
    check_eq(rules, ["gtk"], "an asked theme's synthesized files in the layer, by rules")
    check_eq(os.listdir(requests), [], "the requests read are removed")
    db = fresh_user(tmp, "grace", bases)
    with mounted(db, bases, theme="fix", extra=("--shared-db", layer)) as mnt:
        read_all(mnt, at24)
        check_eq(counters(mnt)["renders"], 0, "a later user renders none of them")
    # and the user who rendered them keeps them no more: read from below
    with sqlite3.connect(frank) as c:
        had = c.execute("SELECT count(*) FROM blob WHERE px = 24").fetchone()[0]
    with mounted(frank, bases, theme="fix", extra=("--shared-db", layer)) as mnt:
        read_all(mnt, at24)
        check_eq(counters(mnt)["renders"], 0, "their first user renders none of them again")
        # a line its store thread writes as it starts, beside the requests
        check(wait_for(lambda: "renders are in the shared layer now" in daemon_log(), 10)
              is not None, "and says why")
        time.sleep(3)  # at rest
        disk = sum(os.path.getsize(frank + x) for x in ("", "-wal", "-shm")
                   if os.path.exists(frank + x))
        check(disk <= 2 << 20, f"a layered user's index at rest takes at most 2 MiB ({disk} bytes)")
    with sqlite3.connect(frank) as c:
        kept = c.execute("SELECT count(*) FROM blob WHERE px = 24").fetchone()[0]
    check(had >= len(srcs) and kept == 0,
          f"its own copies are dropped from its table ({had} -> {kept})")
    before = digest(layer)

    # layers that cannot be used: one log line, then as without a layer
    bad = {}
    bad["corrupt"] = os.path.join(tmp, "corrupt.sqlite")
    with open(bad["corrupt"], "wb") as f:
        f.write(os.urandom(8192))
    bad["foreign"] = os.path.join(tmp, "foreign.sqlite")
    with sqlite3.connect(bad["foreign"]) as c:
        c.execute("CREATE TABLE blob (x)")
    bad["another version"] = os.path.join(tmp, "version.sqlite")
    shutil.copy(layer, bad["another version"])
    with sqlite3.connect(bad["another version"]) as c:
        c.execute("PRAGMA user_version = 999")
    bad["writable by others"] = os.path.join(tmp, "open.sqlite")
    shutil.copy(layer, bad["writable by others"])
    os.chmod(bad["writable by others"], 0o666)
    bad["unopenable"] = os.path.join(tmp, "a-directory.sqlite")
    os.mkdir(bad["unopenable"])
    bad["missing"] = os.path.join(tmp, "missing.sqlite")
    for why, path in bad.items():
        db = fresh_user(tmp, "u-" + why.replace(" ", "-"), bases)
        with mounted(db, bases, theme="fix", extra=("--shared-db", path)) as mnt:
            got = read_all(mnt, files[:12])
            c = counters(mnt)
            check_eq(c["shared_hits"], 0, f"{why} layer: not read")
            check(c["renders"] >= 11, f"{why} layer: the mount renders as without one")
            log = daemon_log()
            check(f"shared layer '{path}'" in log and "ignored" in log,
                  f"{why} layer: one log line says it is ignored: {log!r}")
        check(got["icons/fix/48x48/sq-01.png"] == shared["icons/fix/48x48/sq-01.png"],
              f"{why} layer: the same bytes")
    # nor is a first login's index layered over such a layer's
    for why in ["another version", "writable by others"]:
        first = os.path.join(tmp, "first-" + why.replace(" ", "-"), "index.sqlite")
        os.makedirs(os.path.dirname(first))
        with mounted(first, bases, theme="fix", extra=("--shared-db", bad[why])) as mnt:
            log = daemon_log()
            check(f"the machine's index in '{bad[why]}'" in log and
                  "indexing every directory" in log and "layered over" not in log,
                  f"{why} layer: a first login reads every directory, and says so: {log!r}")
        check(index_rows(first) == index_rows(read), f"{why} layer: the same index")

    # GTK's symbolic encodings come before the larger sizes: a layer whose
    # budget the 16 px renders reach still holds every one of them, and a
    # new user's GTK reads them with no render
    small = os.path.join(tmp, "small", "shared.sqlite")
    p = run("render", "--shared-db", small, "--icon-dirs", REAL_BASES, "--theme", "Papirus",
            "--sizes", "16,64", "--scales", "1", "--budget", "1")
    check_eq(p.returncode, 0, f"a layer of 1 MiB: {p.stderr}")
    check("stopped: the byte budget is reached" in p.stdout, f"the budget stops it: {p.stdout!r}")
    with sqlite3.connect(f"file:{small}?mode=ro", uri=True) as c:
        at64 = c.execute("SELECT count(*) FROM blob WHERE px = 64").fetchone()[0]
    check_eq(at64, 0, "no 64 px render fits in the budget")
    encoded = [f"icons/Papirus/16x16/{n[:-4]}.symbolic.png" for n in
               sorted(os.listdir("/usr/share/icons/Papirus/symbolic/actions"))[:40]
               if n.endswith("-symbolic.svg")]
    check(len(encoded) >= 30, f"Papirus has symbolic actions ({len(encoded)})")
    db = fresh_user(tmp, "heidi", REAL_BASES)
    with mounted(db, REAL_BASES, theme="Papirus", extra=("--shared-db", small)) as mnt:
        got = read_all(mnt, encoded)
        c = counters(mnt)
        check_eq(c["renders"], 0, f"{len(encoded)} encodings need no render")
        check(c["shared_hits"] >= len(encoded), f"read from the layer ({c['shared_hits']} hits)")
    check(all(v[:8] == b"\x89PNG\r\n\x1a\n" and png_size(v) == (16, 16) for v in got.values()),
          "each a 16x16 PNG")
    # a first login's copy of the machine's index is made once mounted; its
    # --theme is judged by the machine's index before that
    first = os.path.join(tmp, "ivan", "index.sqlite")
    os.makedirs(os.path.dirname(first))
    p = run("mount", "-f", "--db", first, "--icon-dirs", REAL_BASES, "--theme", "NoSuchTheme",
            "--shared-db", small, os.path.join(tmp, "ivan"))
    check(p.returncode == 2 and "unknown theme 'NoSuchTheme'" in p.stderr,
          f"an unknown theme still fails a first login's mount ({p.returncode}: {p.stderr!r})")

    # A first GTK 3 app realizes its window: GTK loads the window icon at
    # every size the mount's cache lists the name at, Papirus-like
    # 22x22@2x's 44 px and the sizes toolkits ask for among them; a layer
    # of `iconfs render`'s default sizes holds them all, so the app's start
    # starts no render worker. A name its theme has at 16 only is not
    # rendered at the other's 36 (M4: every name at every directory's size
    # grew the machine's layer by half).
    hbase = os.path.join(tmp, "hidpi-icons")
    dirs = {"16x16": (16, 1), "22x22": (22, 1), "22x22@2x": (22, 2), "36x36": (36, 1),
            "48x48": (48, 1)}
    os.makedirs(os.path.join(hbase, "hidpi"))
    with open(os.path.join(hbase, "hidpi", "index.theme"), "w") as f:
        f.write("[Icon Theme]\nName=HiDPI\nDirectories=" + ",".join(dirs) + "\n")
        for rel, (size, scale) in dirs.items():
            f.write(f"\n[{rel}]\nSize={size}\nScale={scale}\nType=Fixed\n")
    for rel in dirs:
        os.makedirs(os.path.join(hbase, "hidpi", rel))
        with open(os.path.join(hbase, "hidpi", rel, "hidpi-app.svg"), "w") as f:
            f.write(svg_square("navy", 12))
    with open(os.path.join(hbase, "hidpi", "16x16", "hidpi-solo.svg"), "w") as f:
        f.write(svg_square("teal", 12))
    hlayer = os.path.join(tmp, "var-hidpi", "shared.sqlite")
    p = run("render", "--shared-db", hlayer, "--icon-dirs", hbase, "--theme", "hidpi")
    check_eq(p.returncode, 0, f"a layer of the default sizes: {p.stderr}")
    with sqlite3.connect(f"file:{hlayer}?mode=ro", uri=True) as q:
        at = {(os.path.basename(src), px)
              for src, px in q.execute("SELECT source, px FROM blob WHERE status = 0")}
    check(("hidpi-app.svg", 36) in at and ("hidpi-solo.svg", 128) in at,
          "the layer holds each name at 128, and at 36 where its theme has it")
    check(("hidpi-solo.svg", 36) not in at, "a name its theme has at 16 only is not at 36")
    first = os.path.join(tmp, "hidpi-user", "index.sqlite")
    os.makedirs(os.path.dirname(first))
    with mounted(first, hbase, theme="hidpi", extra=("--shared-db", hlayer)) as mnt:
        env = dict(os.environ, XDG_DATA_DIRS=f"{mnt}:/usr/share")
        env.pop("PYTHONPATH", None)
        p = subprocess.run(["xvfb-run", "-a", "/usr/bin/python3", CLIENTS, "gtk3-window",
                            "hidpi", "0", "hidpi-app"],
                           capture_output=True, text=True, env=env, timeout=240)
        check_eq(p.returncode, 0, f"GTK 3 realized the window ({p.stderr[-500:]})")
        sizes = p.stdout.strip().split("\t")[-1].split()
        check({"36", "44", "96", "128"} <= set(sizes),
              f"GTK 3 loads the window icon at 36, 44, 96 and 128 px among {sizes}")
        c = counters(mnt)
        check_eq(c["renders"], 0, "a first GTK 3 window's icons all come from the layer")
        check(c["shared_hits"] >= len(sizes), f"served from the layer ({c['shared_hits']} hits)")

    # The layer travels: the same files copied file by file (cp -a and
    # rsync -a keep size and mtime, not inodes) still serve from it with
    # no render; a file of other bytes with the same size and mtime does not.
    old_ino = os.stat(os.path.join(d, "sq-01.svg")).st_ino
    os.rename(d, d + ".orig")
    subprocess.run(["cp", "-a", d + ".orig", d], check=True)
    shutil.rmtree(d + ".orig")
    check(os.stat(os.path.join(d, "sq-01.svg")).st_ino != old_ino, "the copies have other inodes")
    other = os.path.join(d, "sq-02.svg")
    st = os.stat(other)
    with open(other) as f:
        text = f.read()
    with open(other, "w") as f:
        f.write(text.replace('height="6"', 'height="7"'))
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    check_eq(os.stat(other).st_size, st.st_size, "other bytes, the same size and mtime")
    copied = [f"icons/fix/48x48/sq-{i:02d}.png" for i in range(1, N_SQUARES)]
    db = fresh_user(tmp, "erin", bases)
    with mounted(db, bases, theme="fix", extra=("--shared-db", layer)) as mnt:
        got = read_all(mnt, copied)
        c = counters(mnt)
        check_eq(c["renders"], 1, "after cp -a only the file of other bytes is rendered")
        check_eq(c["shared_hits"] >= N_SQUARES - 2, True,
                 f"the others come from the layer ({c['shared_hits']} hits)")
    check(all(got[p] == shared[p] for p in copied if "sq-02" not in p),
          "the same bytes as before the copy")
    check(got["icons/fix/48x48/sq-02.png"] != shared["icons/fix/48x48/sq-02.png"],
          "the file of other bytes shows them")

finish()

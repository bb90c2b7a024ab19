"""scripts/bench's figures of the synthetic GTK loader (scripts/bench_gtk.py,
300 Papirus icons at 48 px): S, R, L1, L2, L0 and P3 (bench_lib.py says how
a figure declares its set-up)."""
import os
import statistics
import subprocess
import time

from bench_lib import (BASES, ICONFS, RUNS, asuser, figure, gtk, mounted, remove_db, row)
from common import counters, forget_working_set, symlink_farm


@figure("S", needs=("native",), provides=("working_set",))
def s_later_app(c):
    """S: a later app, steady state, against the same PNGs as a
    one-directory theme with its cache on native disk (and, for reference,
    stock Papirus with and without its cache). Its runs through the mount
    teach it the working set."""
    with mounted(c.db, BASES, theme="Papirus") as mnt:
        nocache = os.path.join(c.tmp, "nocache", "icons")
        symlink_farm(nocache, ["Papirus", "breeze", "hicolor"], with_cache=False)
        # the MIME database alone, which gdk-pixbuf needs to load images
        mime = os.path.join(c.tmp, "mimeonly")
        os.makedirs(mime)
        os.symlink("/usr/share/mime", os.path.join(mime, "mime"))
        variants = [("stock Papirus with icon-theme.cache", "/usr/share"),
                    ("stock Papirus without cache", f"{os.path.dirname(nocache)}:{mime}"),
                    ("pre-rendered PNG copy on native disk",
                     f"{os.path.dirname(os.path.dirname(c.native))}:{mime}"),
                    ("iconfs mount", f"{mnt}:/usr/share")]
        res = {}
        for label, dirs in variants:
            res[label] = [gtk("load", "Papirus", 48, c.names300, dirs)[0]
                          for _ in range(RUNS + 1)][1:]
        a = row("S", "later GTK app, 300 Papirus @48: " + variants[2][0],
                res[variants[2][0]], "s")
        row("S", "later GTK app: " + variants[0][0], res[variants[0][0]], "s", anchor=a)
        row("S", "later GTK app: " + variants[1][0], res[variants[1][0]], "s", anchor=a)
        row("S", "later GTK app: iconfs mount", res["iconfs mount"], "s", anchor=a, goal=1.25,
            goal_text="<= 1.25x the same PNGs as a one-directory theme")


def read_all(paths):
    """Microseconds per open/read/close of `paths`, as a toolkit does them
    (Python's open() adds an isatty() ioctl, which FUSE sends to the
    daemon)."""
    t0 = time.monotonic()
    for _ in range(10):
        for q in paths:
            fd = os.open(q, os.O_RDONLY)
            while os.read(fd, 65536):
                pass
            os.close(fd)
    return (time.monotonic() - t0) / (10 * len(paths)) * 1e6


@figure("R", needs=("native", "working_set"))
def r_read(c):
    """R: open + read + close of one icon, steady state."""
    with mounted(c.db, BASES, theme="Papirus") as mnt:
        mpaths = [os.path.join(mnt, "icons/Papirus/48x48", n + ".png") for n in c.names300]
        npaths = [os.path.join(c.native, "48x48", n + ".png") for n in c.names300]
        read_all(mpaths)
        read_all(npaths)
        a = row("R", "open+read+close per icon: native directory",
                [read_all(npaths) for _ in range(RUNS)], "us")
        row("R", "open+read+close per icon: iconfs mount",
            [read_all(mpaths) for _ in range(RUNS)], "us",
            anchor=a, goal=2.0, goal_text="<= 2x a native directory")


def first_app(c, cold):
    """The first GTK app right after the mount appears, each run on a new
    mount (with `cold`, 3 runs, each after dropping the page cache)."""
    out = []
    for _ in range(RUNS if not cold else 3):
        if cold:
            asuser.drop_caches()
        with mounted(c.db, BASES, theme="Papirus") as m:
            out.append(gtk("load", "Papirus", 48, c.names300, f"{m}:/usr/share")[0])
    return out


def stock_app(c, cold):
    """The same app on stock Papirus with its cache."""
    out = []
    for _ in range(RUNS if not cold else 3):
        if cold:
            asuser.drop_caches()
        out.append(gtk("load", "Papirus", 48, c.names300, "/usr/share")[0])
    return out


@figure("L1", needs=("native", "working_set"))
def l1_first_app(c):
    """L1: the first GTK app right after the mount appears, blob table
    filled and the index's synthesized files stored (as at login), the
    working set learned from the sessions before."""
    stock_app(c, False)
    a = row("L1", "loader: first GTK app after the mount: stock Papirus with cache",
            stock_app(c, False), "s")
    row("L1", "loader: first GTK app after the mount: iconfs", first_app(c, False), "s", anchor=a,
        goal=0.5, goal_text="the first GTK app after the mount: ≥ 2× faster than stock")


@figure("L2", needs=("native", "working_set"))
def l2_dropped(c):
    """L2: L1 after dropping the page cache (root's, through asuser)."""
    if asuser.drop_caches():
        a = row("L2", "loader: same after dropping the page cache: stock with cache",
                stock_app(c, True), "s")
        row("L2", "loader: same after dropping the page cache: iconfs", first_app(c, True), "s",
            anchor=a, goal=0.5, goal_text=">= 2x faster than stock after the same drop")
    else:
        print("L2  skipped: dropping the page cache needs root")


@figure("L0", needs=("native",))
def l0_first_login(c):
    """L0: the first login ever, nothing learned (the working set empty)
    and the renders already there, as on a machine whose shared layer was
    built: the first GTK app after a new mount, stock Papirus with its
    cache run alternately with both of
    - a user whose index a session before left (its synthesized files
      stored), renders in the user's blob table (made by `native`);
    - a new user: the index built by the mount itself, as the login's
      `iconfs mount` does when there is none (the synthesized files are
      stored by the watcher's start-up, at idle priority, racing the app),
      renders in the shared layer (Papirus at 48 px)."""
    layer0 = os.path.join(c.tmp, "l0-shared", "shared.sqlite")
    os.makedirs(os.path.dirname(layer0))
    subprocess.run([ICONFS, "render", "--shared-db", layer0, "--icon-dirs", BASES,
                    "--theme", "Papirus", "--sizes", "48"], capture_output=True, check=True)
    newdb = os.path.join(c.tmp, "l0-new", "index.sqlite")
    os.makedirs(os.path.dirname(newdb))
    seen, phases = {}, {"stock": [], "blob": [], "new": []}

    def stock_login():
        t = gtk("load", "Papirus", 48, c.names300, "/usr/share")[0]
        phases["stock"].append(gtk.phases)
        return t

    def first_login(label, dbx, extra=()):
        forget_working_set(dbx)
        with mounted(dbx, BASES, theme="Papirus", extra=extra) as m:
            t = gtk("load", "Papirus", 48, c.names300, f"{m}:/usr/share")[0]
            phases[label].append(gtk.phases)
            seen[label] = counters(m)
        return t

    def new_user():
        remove_db(newdb)
        return first_login("new", newdb, ("--shared-db", layer0))
    stock_login()
    first_login("blob", c.db)
    new_user()
    for v in phases.values():
        v.clear()
    trip = [(stock_login(), first_login("blob", c.db), new_user()) for _ in range(RUNS)]
    l0_rows(trip)
    l0_phases(phases, seen)


def l0_rows(trip):
    a = row("L0", "loader: first login ever: stock Papirus with cache",
            [t[0] for t in trip], "s")
    row("L0", "loader: first login ever: iconfs, renders in the user's table", [t[1] for t in trip],
        "s", anchor=a, goal=1.0, goal_text="no slower than stock (≤ 1.0×)",
        note="nothing learned; the index and its synthesized files from a session before")
    row("L0", "loader: first login ever: iconfs, a new user, shared layer", [t[2] for t in trip],
        "s", anchor=a, goal=1.0, goal_text="no slower than stock (≤ 1.0×)",
        note="the index built by the mount, renders in the shared layer")


def l0_phases(phases, seen):
    """Where L0's time went (bench_gtk.py's phases), with the daemon's
    counters after each iconfs login."""
    keys = ("lookups", "opens", "reads", "blob_hits", "shared_hits", "renders",
            "watch_ready")
    for label in ("stock", "blob", "new"):
        ph = [statistics.median(x) * 1000 for x in zip(*phases[label])]
        print(f"    L0 {label}: the app's first lookup {ph[0]:.1f} ms, 299 lookups "
              f"{ph[1]:.1f} ms, 300 loads {ph[2]:.1f} ms (medians)" +
              ("" if label == "stock" else "; daemon counters after it: " +
               " ".join(f"{k}={seen[label][k]}" for k in keys if k in seen[label])))


@figure("P3", needs=("native", "working_set"))
def p3_first_icon(c):
    """P3: time to first icon after the mount, whole process."""
    def first(dirs):
        t0 = time.monotonic()
        gtk("first", "Papirus", 48, ["firefox"], dirs)
        return time.monotonic() - t0

    def first_after_mount():
        with mounted(c.db, BASES, theme="Papirus") as m:
            return first(f"{m}:/usr/share")
    first("/usr/share")
    # stock and iconfs runs alternate: the machine's drift (page cache,
    # other work) lands on both sides
    pairs = [(first("/usr/share"), first_after_mount()) for _ in range(RUNS)]
    a = row("P3", "loader: GTK time to first icon: stock Papirus with cache", [p[0] for p in pairs],
            "s")
    row("P3", "loader: GTK time to first icon after the mount: iconfs", [p[1] for p in pairs],
        "s", anchor=a, goal=1.0, goal_text="no worse than stock's")

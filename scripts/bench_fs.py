"""scripts/bench's figures of the filesystem and its commands: P5 (index),
P2 (stat), P4 (render), H8 (invalidation), B1-B4 (browsing), SH (the
shared layer), P6 (mount) and P7 (soak) (bench_lib.py says how a figure
declares its set-up)."""
import os
import shutil
import statistics
import subprocess
import threading
import time

from bench_lib import (BASES, ICONFS, NULLFS, QUICK, RUNS, asuser, blob_bytes, connected, copy_db,
                       figure, gtk, mounted, overlay, provider, remove_db, row, rss_kib, series,
                       timed)
from bench_loader import stock_app
from common import counters, forget_working_set


@figure("P5", needs=("papirus_copy", "plain_index"))
def p5_index(c):
    """P5: `iconfs index` of Papirus, fresh, against gtk-update-icon-cache
    of the same copy; and a no-change refresh of the index of every
    installed theme (before the synthesized files are stored: see ORDER)."""
    assert "index" not in c.done, "P5 runs before the step index"
    fresh = os.path.join(c.tmp, "p5-index.sqlite")
    idx = timed(lambda: (remove_db(fresh),
                         subprocess.run([ICONFS, "index", "--db", fresh, "--icon-dirs", c.cp],
                                        capture_output=True, check=True)), runs=3)
    guc = timed(lambda: subprocess.run(["gtk-update-icon-cache", "-f", "-q", c.pap],
                                       check=True), runs=3)
    a = row("P5", "gtk-update-icon-cache, Papirus", guc, "s")
    row("P5", "iconfs index (fresh), Papirus", idx, "s", anchor=a, goal=0.35,
        goal_text="iconfs index ≤ 0.35× gtk-update-icon-cache")
    remove_db(fresh)
    noop = timed(lambda: subprocess.run([ICONFS, "index", "--db", c.db, "--icon-dirs", BASES],
                                        capture_output=True, check=True))
    row("P5", "iconfs index, no change, all installed themes", noop, "s", anchor=a,
        goal=0.050, judge="value", goal_text="a no-change refresh ≤ 50 ms")


def stat_rate(ps, missing=False):
    """Stats per second over the paths `ps` (with `missing`, misses too)."""
    t0 = time.monotonic()
    for p in ps:
        try:
            os.stat(p)
        except FileNotFoundError:
            if not missing:
                raise
    return len(ps) / (time.monotonic() - t0)


def nullfs_rate(c):
    """P2's FUSE round-trip limit: stats per second of a trivial low-level
    FUSE filesystem answering from memory (scripts/bench-nullfs.c)."""
    nullmnt = os.path.join(c.tmp, "nullfs")
    os.mkdir(nullmnt)
    nproc = subprocess.Popen([NULLFS, nullmnt, "100000"])
    while not os.path.ismount(nullmnt):
        time.sleep(0.05)
    nul = [stat_rate([os.path.join(nullmnt, str(k * 3000 + i)) for i in range(3000)])
           for k in range(3)]
    subprocess.run(["fusermount3", "-u", nullmnt])
    nproc.wait()
    return nul


@figure("P2", needs=("index", "samples"))
def p2_stats(c):
    """P2: stats per second, uncached (fresh mount, blobs present) and cached."""
    with mounted(c.db, BASES, theme="Papirus") as mnt:
        for n in c.names:
            os.stat(os.path.join(mnt, "48", n + ".png"))  # renders once
    # the anchor of cached stats: a native directory of the same 3000
    # names, stat'ed the same way right after each iconfs pass
    sdir = os.path.join(c.tmp, "native-stat")
    os.makedirs(sdir)
    for n in c.names:
        open(os.path.join(sdir, n + ".png"), "wb").close()
    nat_paths = [os.path.join(sdir, n + ".png") for n in c.names]
    unc, cac, mis, nat = [], [], [], []
    for k in range(3):
        # first-time stats: nothing read ahead from the working set
        forget_working_set(c.db)
        with mounted(c.db, BASES, theme="Papirus") as mnt:
            paths = [os.path.join(mnt, "48", n + ".png") for n in c.names]
            mis.append(stat_rate([os.path.join(mnt, "48", f"no-such-{k}-{i}.png")
                                  for i in range(3000)], missing=True))
            unc.append(stat_rate(paths))
            for _ in range(3):
                cac.append(stat_rate(paths))
                nat.append(stat_rate(nat_paths))
    nul = nullfs_rate(c)
    a = row("P2", "stat/s, native directory of the same 3000 names (page cache)", nat, "1/s",
            better="higher")
    b = row("P2", "stat/s, trivial FUSE fs from memory (round-trip limit)", nul, "1/s",
            anchor=a, better="higher")
    row("P2", "stat/s through iconfs, kernel cache cold", unc, "1/s", anchor=b, goal=0.5,
        better="higher", note="ratio to the FUSE round-trip limit",
        goal_text=">= 50% of the FUSE round-trip limit")
    row("P2", "stat/s of misses through iconfs, kernel cache cold", mis, "1/s", anchor=b,
        goal=0.5, better="higher", note="ratio to the FUSE round-trip limit",
        goal_text=">= 50% of the FUSE round-trip limit")
    row("P2", "stat/s through iconfs, kernel cache warm", cac, "1/s", anchor=a, goal=0.8,
        better="higher", note="ratio to the native directory",
        goal_text=">= 0.8x native")


@figure("P4", needs=("samples",))
def p4_render(c):
    """P4: rendering 400 SVGs at 64 px: first pass with one and two
    workers, second pass, and rsvg-convert."""
    rtheme = os.path.join(c.tmp, "render", "icons", "bench")
    os.makedirs(os.path.join(rtheme, "scalable"))
    with open(os.path.join(rtheme, "index.theme"), "w") as f:
        f.write("[Icon Theme]\nName=bench\nDirectories=scalable\n\n[scalable]\nSize=48\n"
                "Type=Scalable\nMinSize=1\nMaxSize=1024\n")
    for n in c.picks:
        shutil.copy(os.path.realpath(f"/usr/share/icons/Papirus/48x48/apps/{n}.svg"),
                    os.path.join(rtheme, "scalable", n + ".svg"))
    rbases = os.path.dirname(rtheme)

    def render_pass(workers, fresh):
        rdb = os.path.join(c.tmp, f"render-{workers}.sqlite")
        if fresh and os.path.exists(rdb):
            os.unlink(rdb)
        t0 = time.monotonic()
        subprocess.run([ICONFS, "render", "--db", rdb, "--icon-dirs", rbases, "--theme",
                        "bench", "--sizes", "64", "--workers", str(workers)],
                       capture_output=True, check=True)
        return time.monotonic() - t0
    one = [render_pass(1, True) for _ in range(3)]
    two = [render_pass(2, True) for _ in range(3)]
    second = [render_pass(2, False) for _ in range(3)]
    out_png = os.path.join(c.tmp, "rsvg-out.png")
    conv = timed(lambda: [subprocess.run(["rsvg-convert", "-w", "64", "-h", "64", "-o",
                                          out_png, os.path.join(rtheme, "scalable", n + ".svg")])
                          for n in c.picks], runs=1, warmup=0)
    a = row("P4", "rsvg-convert, 400 SVGs @64, one process each", conv, "s")
    b = row("P4", "iconfs render, first pass, 1 worker", one, "s", anchor=a)
    c2 = row("P4", "iconfs render, first pass, 2 workers", two, "s", anchor=b, goal=0.75,
             note="ratio to 1 worker")
    # the same command run again: the first pass renders, the second
    # finds every render in the blob table
    row("P4", "iconfs render, second pass (blob table)", second, "s", anchor=c2, goal=0.05,
        note="ratio to the first pass, both with 2 workers",
        goal_text="the second pass (blob table) ≥ 20× faster than the first (render)")


def h8_change(c, mnt):
    """One H8 trial on `mnt`: (entries the kernel holds, invalidations
    sent for a change of Papirus's index.theme, the worst stall of a miss
    looked up meanwhile, in ms)."""
    for n in c.names[:2000]:
        os.stat(os.path.join(mnt, "48", n + ".png"))
    for i in range(2000):
        try:
            os.stat(os.path.join(mnt, "48", f"flood-miss-{i}.png"))
        except FileNotFoundError:
            pass
    before = counters(mnt)
    worst = [0.0]
    stop = threading.Event()

    def misses():
        i = 0
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                os.stat(os.path.join(mnt, "32", f"during-{i}.png"))
            except FileNotFoundError:
                pass
            worst[0] = max(worst[0], time.monotonic() - t0)
            i += 1
    th = threading.Thread(target=misses)
    th.start()
    theme_file = os.path.join(c.pap, "index.theme")
    if not (c.pap_overlay and asuser.as_root("touch", theme_file)):
        os.utime(theme_file)
    t0 = time.monotonic()
    while (counters(mnt)["invalidations"] == before["invalidations"] and
           time.monotonic() - t0 < 30):
        time.sleep(0.05)
    time.sleep(0.5)
    stop.set()
    th.join()
    return (before["nodes"] + before.get("negatives", 0),
            counters(mnt)["invalidations"] - before["invalidations"], worst[0] * 1000)


@figure("H8", needs=("papirus_copy", "samples"))
def h8_invalidations(c):
    """H8: one theme's index.theme changes while the kernel holds many
    entries: invalidations sent, and the worst stall of a miss looked up
    meanwhile (the copy of Papirus comes first, so that its index.theme
    can be touched: by root, as a package would)."""
    hdb = os.path.join(c.tmp, "flood.sqlite")
    hbases = f"{c.cp}:{BASES}"
    subprocess.run([ICONFS, "index", "--db", hdb, "--icon-dirs", hbases],
                   capture_output=True, check=True)
    trials = []
    for _ in range(3):
        with mounted(hdb, hbases, theme="Papirus") as mnt:
            trials.append(h8_change(c, mnt))
    held, sent, stalls = (list(x) for x in zip(*trials))
    a = row("H8", "kernel entries held (nodes + misses)", held, "")
    row("H8", "invalidations sent for one index.theme change", sent, "", anchor=a)
    row("H8", "worst stall of a miss during that change", stalls, "ms")


def ls(d):
    t0 = time.monotonic()
    subprocess.run(["ls", "-l", d], stdout=subprocess.DEVNULL, check=True)
    return time.monotonic() - t0


@figure("B1", needs=("index",))
def b1_ls(c):
    """B1: `ls -l` of Papirus's 48x48 view (Papirus, breeze and hicolor
    inherited, plus pixmaps), blob table filled, against a native directory
    of the same names."""
    bdb = os.path.join(c.tmp, "browse.sqlite")
    copy_db(c.db, bdb)
    subprocess.run([ICONFS, "render", "--db", bdb, "--icon-dirs", BASES, "--theme",
                    "Papirus", "--sizes", "48"], capture_output=True, check=True)
    ndir = os.path.join(c.tmp, "native-ls")
    os.makedirs(ndir)
    with mounted(bdb, BASES, theme="Papirus") as mnt:
        view = os.path.join(mnt, "icons/Papirus/48x48")
        for n in os.listdir(view):
            with open(os.path.join(ndir, n), "wb") as f:
                f.write(b"\x89PNG")
        ls(view)
        ls(ndir)
        a = row("B1", f"ls -l of {len(os.listdir(ndir))} names: native directory",
                [ls(ndir) for _ in range(RUNS)], "s")
        row("B1", "ls -l of Papirus 48x48 through iconfs, blob table filled",
            [ls(view) for _ in range(RUNS)], "s", anchor=a, goal=2.0,
            goal_text="<= 2x a native directory of the same names")


@figure("B2", needs=("index",))
def b2_first_ls(c):
    """B2: the first listing with nothing rendered against `iconfs render`
    of the same icons."""
    for k in ("b2-render", "b2-ls"):
        copy_db(c.db, os.path.join(c.tmp, k + ".sqlite"))
        with connected(os.path.join(c.tmp, k + ".sqlite")) as d:
            d.execute("DELETE FROM blob")
    t0 = time.monotonic()
    subprocess.run([ICONFS, "render", "--db", os.path.join(c.tmp, "b2-render.sqlite"),
                    "--icon-dirs", BASES, "--theme", "Papirus", "--sizes", "40"],
                   capture_output=True, check=True)
    a = row("B2", "iconfs render, Papirus at 40 px, empty blob table",
            [time.monotonic() - t0], "s")
    with mounted(os.path.join(c.tmp, "b2-ls.sqlite"), BASES, theme="Papirus") as mnt:
        t0 = time.monotonic()
        subprocess.run(["ls", "-l", os.path.join(mnt, "icons/Papirus/40x40")],
                       stdout=subprocess.DEVNULL, check=True)
        row("B2", "first ls -l of Papirus 40x40, empty blob table", [time.monotonic() - t0],
            "s", anchor=a, goal=1.2, goal_text="<= 1.2x the time iconfs render takes")


def find(root):
    t0 = time.monotonic()
    p = subprocess.run(["find", root, "-name", "firefox.png"], capture_output=True,
                       text=True)
    return time.monotonic() - t0, p.stdout.split()


@provider("walked", needs=("index", "samples"))
def _walked(c):
    """B3's walks: a copy of the index, `c.wdb`, after a login (the GTK
    app's icons rendered, read and learned), then `find MNT -name
    firefox.png` over the whole mount, each on a new mount: `c.walks`
    holds the times, renders, what was found and the blob table before and
    after."""
    c.wdb = os.path.join(c.tmp, "walk.sqlite")
    copy_db(c.db, c.wdb)
    with mounted(c.wdb, BASES, theme="Papirus") as m:
        gtk("load", "Papirus", 48, c.names300, f"{m}:/usr/share")
    before = blob_bytes(c.wdb)
    times, renders, found = [], 0, []
    for _ in range(3):
        with mounted(c.wdb, BASES, theme="Papirus") as mnt:
            took, found = find(mnt)
            times.append(took)
            renders += counters(mnt)["renders"]
    c.walks = {"times": times, "renders": renders, "found": found, "before": before,
               "after": blob_bytes(c.wdb)}


def native_tree(c, ntree):
    """A native tree of the directories and names of the mount of `c.wdb`
    (empty files, made from its listings alone: d_type, no stat, which
    renders nothing); the number of entries."""
    os.makedirs(ntree)
    entries = 0
    with mounted(c.wdb, BASES, theme="Papirus") as mnt:
        for top, dirs, files in os.walk(mnt):
            rel = os.path.relpath(top, mnt)
            dst = os.path.join(ntree, rel)
            for d in dirs:
                os.mkdir(os.path.join(dst, d))
            for f in files:
                os.close(os.open(os.path.join(dst, f), os.O_CREAT | os.O_WRONLY, 0o644))
            entries += len(dirs) + len(files)
    return entries


@figure("B3", needs=("walked",))
def b3_find(c):
    """B3: `find MNT -name firefox.png` over the whole mount (every
    installed theme) renders nothing and leaves the blob table's bytes as
    they were, against find over a native tree of the same directories and
    names (on the disk the bench runs on, not a tmpfs: find's fts sorts a
    large directory's entries by inode number on every filesystem but
    tmpfs and NFS, so a tmpfs tree would skip work find does on a user's
    disk and on FUSE)."""
    w = c.walks
    ntree = os.path.join(c.tmp, "native-tree")
    entries = native_tree(c, ntree)
    find(ntree)
    a = row("B3", f"find -name over a native tree of the same {entries} entries",
            [find(ntree)[0] for _ in range(3)], "s")
    shutil.rmtree(ntree, ignore_errors=True)
    row("B3", f"find MNT -name firefox.png, whole mount, new mount ({len(w['found'])} found)",
        w["times"], "s", anchor=a, goal=2.0,
        goal_text="finishes with 0 renders and the blob table's bytes unchanged, "
                  "in ≤ 2× the time find takes over a native tree",
        met=(w["renders"] == 0 and w["after"] == w["before"] and a is not None and
             statistics.median(w["times"]) <= 2.0 * a))
    print(f"B3: {w['renders']} renders in {len(w['times'])} walks; blob table {w['before']} -> "
          f"{w['after']} (rows, bytes)", flush=True)


@figure("B4", needs=("walked",))
def b4_after_walks(c):
    """B4: after B3's walks plus `du -s` of three size directories of other
    themes, the first GTK app after a new mount is served from what was
    stored: no render; its time against stock (as L1)."""
    with mounted(c.wdb, BASES, theme="Papirus") as mnt:
        for d in ("breeze/48x48", "Adwaita/32x32", "oxygen/48x48"):
            subprocess.run(["du", "-s", os.path.join(mnt, "icons", d)],
                           capture_output=True)
        du_renders = counters(mnt)["renders"]
    apps, app_renders = [], []
    for _ in range(RUNS):
        with mounted(c.wdb, BASES, theme="Papirus") as m:
            apps.append(gtk("load", "Papirus", 48, c.names300, f"{m}:/usr/share")[0])
            app_renders.append(counters(m)["renders"])
    a = row("B4", "first GTK app after the mount: stock Papirus with cache",
            stock_app(c, False), "s")
    row("B4", f"first GTK app after a find and du -s of 3 other views ({du_renders} "
        "renders): iconfs", apps, "s", anchor=a, goal=0.5,
        goal_text="the first GTK app after a new mount still served entirely from what "
                  "was stored (0 renders), and L1 unchanged (≥ 2× faster than stock)",
        met=max(app_renders) == 0 and statistics.median(apps) <= 0.5 * a)
    print(f"B4: renders by the first GTK app after each new mount: {app_renders}",
          flush=True)


def sh_caches(c):
    """SH's anchor: gtk-update-icon-cache over every installed theme, in
    an overlay of /usr/share/icons mounted by root; its time, or None."""
    themes = sorted(d for d in os.listdir("/usr/share/icons")
                    if os.path.isfile(f"/usr/share/icons/{d}/index.theme"))
    all_icons = os.path.join(c.tmp, "all-icons")
    if not overlay("/usr/share/icons", all_icons, os.path.join(c.tmp, "upper-all"),
                   os.path.join(c.tmp, "work-all")):
        print("SH  gtk-update-icon-cache over all themes skipped: needs root for an overlay")
        return None
    c.binds.append(all_icons)
    # each theme's directory the user's, as the overlay's top one is, for
    # the cache the user writes there
    asuser.as_root("chown", f"{os.getuid()}:{os.getgid()}",
                   *(os.path.join(all_icons, t) for t in themes))
    t0 = time.monotonic()
    for t in themes:
        subprocess.run(["gtk-update-icon-cache", "-f", "-q", os.path.join(all_icons, t)],
                       capture_output=True)
    a = row("SH", f"gtk-update-icon-cache, all {len(themes)} installed themes",
            [time.monotonic() - t0], "s")
    caches = sum(os.path.getsize(os.path.join(all_icons, t, "icon-theme.cache"))
                 for t in themes
                 if os.path.exists(os.path.join(all_icons, t, "icon-theme.cache")))
    row("SH", "their icon-theme.cache files", [caches / 2**20], "MiB")
    return a


@figure("SH", needs=("samples",))
def sh_shared_layer(c):
    """SH: the shared layer, built once per machine for every installed
    theme at the default sizes (beside gtk-update-icon-cache over the same
    themes), and a new user's first read of 300 icons with and without it."""
    layer = os.path.join(c.tmp, "shared", "shared.sqlite")
    t0 = time.monotonic()
    p = subprocess.run([ICONFS, "render", "--shared-db", layer, "--icon-dirs", BASES,
                        "--all-themes"], capture_output=True, text=True)
    build = time.monotonic() - t0
    stopped = "budget" in p.stdout
    a = sh_caches(c)
    row("SH", "iconfs render --shared-db --all-themes, default sizes" +
        (" (stopped by its 1 GiB budget)" if stopped else ""), [build], "s", anchor=a)
    with connected(f"file:{layer}?mode=ro", uri=True) as d:
        n_layer, b_layer = d.execute("SELECT count(*), total(bytes) FROM blob").fetchone()
    row("SH", f"shared layer file ({n_layer} renders, {b_layer / 2**20:.0f} MiB of PNG, "
        "and its index)", [os.path.getsize(layer) / 2**20], "MiB")

    def first_read(extra):
        udb = os.path.join(c.tmp, "sh-user.sqlite")
        remove_db(udb)
        subprocess.run([ICONFS, "index", "--db", udb, "--icon-dirs", BASES],
                       capture_output=True, check=True)
        with mounted(udb, BASES, theme="Papirus", extra=extra) as m:
            t0 = time.monotonic()
            for n in c.names300:
                with open(os.path.join(m, "icons/Papirus/48x48", n + ".png"), "rb") as f:
                    f.read()
            return time.monotonic() - t0
    a = row("SH", "a new user's first read of 300 Papirus icons @48, no layer",
            [first_read(()) for _ in range(3)], "s")
    row("SH", "the same with the shared layer",
        [first_read(("--shared-db", layer)) for _ in range(3)], "s", anchor=a)


@figure("P6", needs=("index", "samples"))
def p6_mount(c):
    """P6: mount to first answer, index present, nothing learned (as P2
    leaves it in a full run: a read-ahead would hold the mount busy at its
    unmount)."""
    forget_working_set(c.db)

    def mount_first():
        mnt = os.path.join(c.tmp, "m6")
        os.makedirs(mnt, exist_ok=True)
        t0 = time.monotonic()
        p = subprocess.Popen([ICONFS, "mount", "-f", "--db", c.db, "--icon-dirs", BASES,
                              "--theme", "Papirus", mnt], stderr=subprocess.DEVNULL)
        target = os.path.join(mnt, "48", c.names[0] + ".png")
        while True:
            try:
                if os.path.ismount(mnt):
                    os.stat(target)
                    break
            except OSError:
                pass
            time.sleep(0.002)
        dt = time.monotonic() - t0
        subprocess.run(["fusermount3", "-u", mnt])
        p.wait()
        return dt
    row("P6", "mount to first answer (index of all installed themes)",
        [mount_first() for _ in range(RUNS)], "s", goal=0.1, goal_text="<= 100 ms")


def soak(c, mnt, n_renders, n_lookups, samples):
    """P7's load on `mnt`: `n_renders` renders at sizes no theme has, then
    `n_lookups` lookups, half of them misses; the time the renders took."""
    t_start = samples.t_start
    sizes = [s for s in range(17, 64) if s not in (22, 24, 32, 48)]
    pairs = set()
    while len(pairs) < n_renders:
        pairs.add((c.rng.choice(c.papirus48), c.rng.choice(sizes)))
    pairs = list(pairs)
    for n, s in pairs:
        os.stat(os.path.join(mnt, "icons/Papirus", f"{s}x{s}", n + ".png"))
    t_renders = time.monotonic() - t_start
    for i in range(n_lookups):
        if i % 2:
            n, s = pairs[c.rng.randrange(len(pairs))]
            p = os.path.join(mnt, str(s), n + ".png")
        else:
            p = os.path.join(mnt, "48", f"no-such-{i}.png")
        try:
            os.stat(p)
        except FileNotFoundError:
            pass
    return t_renders


class RssSampler(list):
    """(seconds since t_start, rss_kib(pid)) every 0.2 s, in a thread."""

    def __init__(self, pid):
        super().__init__()
        self.stop = threading.Event()
        self.t_start = time.monotonic()

        def sample():
            while not self.stop.is_set():
                self.append((time.monotonic() - self.t_start, rss_kib(pid)))
                time.sleep(0.2)
        self.th = threading.Thread(target=sample)
        self.th.start()

    def end(self):
        self.stop.set()
        self.th.join()


@figure("P7", needs=("index", "samples"))
def p7_soak(c):
    """P7: soak: 20,000 renders and 1,000,000 lookups, sampling RSS; the
    index with nothing learned, as P2 and P6 leave it in a full run."""
    forget_working_set(c.db)
    n_renders, n_lookups = (4000, 200000) if QUICK else (20000, 1000000)
    with mounted(c.db, BASES, theme="Papirus") as mnt:
        samples = RssSampler(mounted.pid)
        t_renders = soak(c, mnt, n_renders, n_lookups, samples)
        samples.end()
        cnt = counters(mnt)
    total = samples[-1][0]
    at50 = next(r for t, r in samples if t >= total * 0.5)
    peak = max(r[0] for _, r in samples)
    growth = (samples[-1][1][1] - at50[1]) / at50[1] * 100
    series["rss"] = [(t, r[0]) for t, r in samples]
    print(f"    soak: {n_renders} renders in {t_renders:.1f} s, {n_lookups} lookups, "
          f"{cnt['renders']} renders counted, {total:.1f} s in all")
    row("P7", "daemon RssAnon growth over the second half of the soak", [growth], "%",
        goal=5.0, goal_text="<= 5%")
    row("P7", "daemon peak RSS during the soak", [peak / 1024], "MiB", goal=64.0,
        goal_text="<= 64 MiB")
    row("P7", "daemon RssAnon at the end", [samples[-1][1][1] / 1024], "MiB")
    row("P7", "daemon RssFile at the end", [samples[-1][1][2] / 1024], "MiB")

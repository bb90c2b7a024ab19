#!/usr/bin/env python3
"""Real clients through the mount: GTK 3 and GTK 4 (python3-gi) and Qt 5
(PyQt5), with XDG_DATA_DIRS=MNT:<original>, resolve names of Papirus,
breeze and Adwaita to files under the mount and load pixmaps of the asked
size; -symbolic icons still load and recolour in GTK, from GTK's
pre-encoded NAME.symbolic.png at 16 px for themes that ship SVGs only."""
import os
import re
import shutil
import subprocess
import tempfile
import time

from common import (REAL_BASES, check, check_eq, counters, finish, forget_working_set, mounted,
                    need_theme, scalable_theme, shared_db, skip, svg_square)

need_theme("Papirus", "breeze", "Adwaita", "oxygen")
PY = "/usr/bin/python3"
if not os.path.exists(PY) or not shutil.which("xvfb-run"):
    skip("Debian's python3 and xvfb-run are needed (run scripts/setup)")
CLIENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients.py")
SAMPLES = {
    "Papirus": ["firefox", "folder", "text-x-generic", "utilities-terminal", "edit-copy"],
    "breeze": ["document-open", "folder", "edit-copy", "system-file-manager"],
    "Adwaita": ["folder", "edit-copy", "text-x-generic", "user-trash"],
}


def client(kind, theme, size, names, data_dirs):
    env = dict(os.environ, XDG_DATA_DIRS=data_dirs, HOME=os.environ.get("HOME", "/root"))
    env.pop("PYTHONPATH", None)
    cmd = [PY, CLIENTS, kind, theme, str(size), *names]
    cmd = ["xvfb-run", "-a", *cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=240)
    check_eq(p.returncode, 0, f"{kind} client exit ({p.stderr[-800:]})")
    return [line.split("\t") for line in p.stdout.splitlines() if "\t" in line]


def pixels(path):
    """A PNG's size and straight RGBA bytes, as GdkPixbuf decodes it."""
    code = ("import sys, gi; gi.require_version('GdkPixbuf', '2.0')\n"
            "from gi.repository import GdkPixbuf\n"
            "p = GdkPixbuf.Pixbuf.new_from_file(sys.argv[1])\n"
            "w, h, s, n = p.get_width(), p.get_height(), p.get_rowstride(), p.get_n_channels()\n"
            "d = p.get_pixels()\n"
            "print(w, h, n, b''.join(d[y * s:y * s + w * n] for y in range(h)).hex())")
    p = subprocess.run([PY, "-c", code, path], capture_output=True, text=True, timeout=60)
    check_eq(p.returncode, 0, f"decode {path} ({p.stderr[-300:]})")
    return p.stdout.strip()


db = shared_db("real-index.sqlite")
# what the clients below read reaches the daemon, not what an earlier
# test's mount read ahead
forget_working_set(db)
with mounted(db, REAL_BASES, theme="Papirus") as mnt:
    original = "/usr/local/share:/usr/share"
    data_dirs = f"{mnt}:{original}"
    for kind in ("gtk3", "gtk4"):
        for theme, names in SAMPLES.items():
            rows = client(kind, theme, 48, names, data_dirs)
            check_eq(len(rows), len(names), f"{kind} {theme} answered every name")
            for name, path, dims, *_ in rows:
                check(path.startswith(f"{mnt}/icons/{theme}/48x48/"),
                      f"{kind} {theme} {name} from the mount: {path}")
                check_eq(dims, "48x48", f"{kind} {theme} {name} size")
    # symbolic icons: GTK's pre-encoded NAME.symbolic.png where the theme
    # has one of that size (Adwaita at 16 and 48), else the SVG of
    # scalable/ (at 20), as stock picks them; recoloured by GTK either way
    symbolic = ["edit-copy-symbolic", "go-next-symbolic"]
    # the theme's own bytes, in the size views Adwaita has them in only
    pre = "folder-symbolic.symbolic.png"
    with open(f"{mnt}/icons/Adwaita/24x24/{pre}", "rb") as f, \
            open(f"/usr/share/icons/Adwaita/24x24/places/{pre}", "rb") as g:
        check(f.read() == g.read(), f"24x24/{pre} is Adwaita's own file")
    check(pre in os.listdir(f"{mnt}/icons/Adwaita/24x24"), f"24x24 lists {pre}")
    for view in ("22x22", "24x24@2"):
        check(pre not in os.listdir(f"{mnt}/icons/Adwaita/{view}"),
              f"no {view}/{pre} listed: Adwaita has none of that size")
    # named, a scale-1 view has it made from the SVG, never Adwaita's own
    # rescaled; a scale-2 view not at all
    check_eq(os.getxattr(f"{mnt}/icons/Adwaita/22x22/{pre}", "user.iconfs.source").decode(),
             "/usr/share/icons/Adwaita/scalable/places/folder-symbolic.svg",
             f"22x22/{pre} named: encoded from the SVG")
    check(not os.path.exists(f"{mnt}/icons/Adwaita/24x24@2/{pre}"), f"no 24x24@2/{pre}")
    for kind in ("gtk3", "gtk4"):
        for size in (16, 20, 48):
            stock = client(kind, "Adwaita", size, symbolic, original)
            via = client(kind, "Adwaita", size, symbolic, data_dirs)
            check_eq(len(via), len(symbolic), f"{kind} symbolic at {size} answered every name")
            for (name, spath, *_), (_, path, dims, *red) in zip(stock, via):
                want = (f"{mnt}/icons/Adwaita/{size}x{size}/{name}.symbolic.png"
                        if spath.endswith(".symbolic.png") else
                        f"{mnt}/icons/Adwaita/scalable/{name}.svg")
                check_eq(path, want, f"{kind} symbolic {name} {size} as stock ({spath})")
                check_eq((dims, *red), (f"{size}x{size}", *(["red"] if red else [])),
                         f"{kind} {name} {size} loads and recolours")

    # themes that ship symbolic icons as SVG only (Papirus, breeze): at 16 px
    # GTK 3 and 4 take NAME.symbolic.png of the mount's 16x16, made from
    # the SVG that stock draws, pixel for pixel what gtk-encode-symbolic-svg
    # makes of it, and recolour it; at 24 px the SVG, as stock
    for theme in ("Papirus", "breeze"):
        for kind in ("gtk3", "gtk4"):
            for size in (16, 24):
                stock = client(kind, theme, size, symbolic, original)
                via = client(kind, theme, size, symbolic, data_dirs)
                for (name, spath, *_), (_, path, dims, *red) in zip(stock, via):
                    check(spath.endswith(".svg"), f"stock {kind} {theme} {name} {size}: an SVG")
                    if size == 16:
                        check_eq(path, f"{mnt}/icons/{theme}/16x16/{name}.symbolic.png",
                                 f"{kind} {theme} {name} {size} through the mount")
                    else:
                        check(path.startswith(f"{mnt}/icons/{theme}/") and
                              path.endswith(f"/{name}.svg"),
                              f"{kind} {theme} {name} {size} through the mount: {path}")
                    check_eq(os.getxattr(path, "user.iconfs.source").decode(), spath,
                             f"{kind} {theme} {name} {size}: made from stock's SVG")
                    check_eq((dims, *red), (f"{size}x{size}", *(["red"] if red else [])),
                             f"{kind} {theme} {name} {size} loads and recolours")
        for name in symbolic:
            served = f"{mnt}/icons/{theme}/16x16/{name}.symbolic.png"
            out = tempfile.mkdtemp(dir=os.path.dirname(db))
            src = os.getxattr(served, "user.iconfs.source").decode()
            p = subprocess.run(["gtk-encode-symbolic-svg", "-o", out, src, "16x16"],
                               capture_output=True, text=True, timeout=60)
            check_eq(p.returncode, 0, f"gtk-encode-symbolic-svg {src} ({p.stderr[-300:]})")
            made = os.path.join(out, f"{name}.symbolic.png")
            check_eq(pixels(served), pixels(made),
                     f"{theme} {name}.symbolic.png is gtk-encode-symbolic-svg's")
            shutil.rmtree(out)

    # GTK's built-in icons (its GResource, attached only under hicolor's
    # real directory names) stay reachable: the same pick as stock, where
    # neither oxygen nor hicolor has the name (and GTK's own 'folder')
    for kind, theme, size, names in (
            ("gtk4", "oxygen", 16, ["window-close-symbolic", "pan-down-symbolic",
                                    "open-menu-symbolic"]),
            ("gtk3", "oxygen", 16, ["window-close-symbolic", "pan-down-symbolic"]),
            ("gtk3", "hicolor", 24, ["folder"])):
        stock = client(kind, theme, size, names, original)
        via = client(kind, theme, size, names, data_dirs)
        for (name, path, *_), (_, vpath, *_) in zip(stock, via):
            check("/org/gtk/libgtk/icons/" in path,
                  f"{kind} {theme} {name} {size} is GTK's built-in stock: {path!r}")
            check_eq(vpath, path, f"{kind} {theme} {name} {size} through the mount")

    # Qt 5 does not say which file it read: first with the mount alone (so
    # it can only find the icons there), then prepended, counting reads of
    # a size nobody read yet (the kernel answers the rest from its caches).
    # (Qt takes its search path from the platform theme: xcb under Xvfb.)
    for theme, names in SAMPLES.items():
        rows = client("qt5", theme, 48, names, mnt)
        for name, found, dims in rows:
            check_eq((found, dims), ("found", "48x48"), f"qt5 {theme} {name} through the mount")
        before = counters(mnt)["reads"]
        rows = client("qt5", theme, 32, names[:2], data_dirs)
        check(all(r[1] == "found" and r[2] == "32x32" for r in rows), f"qt5 {theme} prepended")
        check(counters(mnt)["reads"] > before, f"qt5 {theme} prepended reads the mount")
    # Qt 6 likewise: the mount alone, icons at the asked size; a size
    # nobody read yet reaches the daemon
    for theme, names in SAMPLES.items():
        before = counters(mnt)["reads"]
        rows = client("qt6", theme, 64, names, mnt)
        for name, found, dims in rows:
            check_eq((found, dims), ("found", "64x64"), f"qt6 {theme} {name} through the mount")
        check(counters(mnt)["reads"] > before, f"qt6 {theme} read files of the mount")

    # GTK's whole symbolic rule: Adwaita's -symbolic-rtl icons are never a
    # plain PNG in a size view; GTK takes them where stock does (Adwaita's
    # pre-encoded NAME.symbolic.png at 48)
    listed = os.listdir(os.path.join(mnt, "icons/Adwaita/48x48"))
    check_eq([n for n in listed if "-symbolic-" in n and n.endswith(("-ltr.png", "-rtl.png"))], [],
             "no directional symbolic PNG in icons/Adwaita/48x48")
    rtl = sorted(f[:-4] for f in os.listdir(os.path.join(mnt, "icons/Adwaita/scalable"))
                 if f.endswith("-symbolic-rtl.svg"))
    check(len(rtl) > 0, f"Adwaita's -symbolic-rtl icons in scalable/ ({len(rtl)})")
    stock = client("gtk3", "Adwaita", 48, rtl[:3], original)
    rows = client("gtk3", "Adwaita", 48, rtl[:3], data_dirs)
    for (name, spath, *_), (_, path, *_) in zip(stock, rows):
        want = (f"{mnt}/icons/Adwaita/48x48/{name}.symbolic.png"
                if spath.endswith(".symbolic.png") else f"{mnt}/icons/Adwaita/scalable/{name}.svg")
        check_eq(path, want, f"gtk3 finds {name} where stock does ({spath})")

    # GTK reads the synthesized icon-theme.cache and no size directory
    if shutil.which("strace"):
        env = dict(os.environ, XDG_DATA_DIRS=data_dirs)
        trace = os.path.join(os.path.dirname(db), "gtk-strace.txt")
        p = subprocess.run(["xvfb-run", "-a", "strace", "-f", "-e", "trace=openat,open",
                            "-o", trace, PY, CLIENTS, "gtk3", "Papirus", "48", "firefox", "folder"],
                           capture_output=True, text=True, env=env, timeout=240)
        check_eq(p.returncode, 0, "gtk3 under strace")
        text = open(trace).read()
        os.unlink(trace)
        opened = [l for l in text.splitlines() if f"{mnt}/icons/Papirus/" in l]
        caches = [l for l in opened if "icon-theme.cache" in l and "= -1" not in l]
        dirs = [l for l in opened if "O_DIRECTORY" in l]
        check(len(caches) >= 1, "GTK opened the synthesized icon-theme.cache")
        check_eq(len(dirs), 0, "GTK read no directory of the theme")
        print(f"gtk3 with the cache: {len(opened)} opens under the theme, {len(dirs)} directories")
    else:
        check(False, "strace is needed (run scripts/setup)")

# Qt asks access(2) of a name in every directory of the theme's cache that
# holds it (37 size views of the mount's breeze) and loads one of them: a
# mount of a new index, where no render of an earlier test is stored,
# renders only what Qt loads
with tempfile.TemporaryDirectory() as fresh:
    with mounted(os.path.join(fresh, "index.sqlite"), REAL_BASES, theme="breeze") as mnt:
        names = SAMPLES["breeze"]
        before = counters(mnt)
        rows = client("qt5", "breeze", 48, names, mnt)
        check_eq([tuple(r[1:]) for r in rows], [("found", "48x48")] * len(names),
                 "qt5 breeze through a new mount")
        after = counters(mnt)
        looked, rendered = (after[k] - before[k] for k in ("lookups", "renders"))
        print(f"qt5, {len(names)} breeze icons at 48: {looked} lookups, {rendered} renders")
        check(looked >= 10 * len(names), f"Qt looked each name up in many directories ({looked})")
        check(0 < rendered <= len(names), f"only what Qt loads is rendered: {rendered}")

# Under Qt's rules the cache lists a name where its own theme has it and
# at the sizes toolkits ask for (synth-file.c's cache_sizes), not in every
# size view: Qt looks for a .png and then a .svg in each directory listed
# (with every view listed, 36 of Papirus's, a Qt app sent twice the
# lookups after a mount)
ASKED = {16, 22, 24, 32, 48, 64, 96, 128}


def view_px(view):
    size, _, scale = view.partition("@")
    return int(size.split("x")[0]) * int(scale.rstrip("x") or 1)


with tempfile.TemporaryDirectory() as fresh:
    with mounted(os.path.join(fresh, "index.sqlite"), REAL_BASES, theme="Papirus",
                 extra=("--rules", "qt")) as mnt:
        root = "/usr/share/icons/Papirus"
        own = {view_px(d.split("/")[0]) for d in os.listdir(root)
               if os.path.exists(os.path.join(root, d, "places", "folder.svg"))}
        views = [v for v in os.listdir(os.path.join(mnt, "icons", "Papirus"))
                 if re.fullmatch(r"\d+x\d+(@\d+)?", v)]
        listed = [v for v in views if view_px(v) in own | ASKED]
        before = counters(mnt)["lookups"]
        rows = client("qt5", "Papirus", 48, ["folder"], mnt)
        check_eq([tuple(r[1:]) for r in rows], [("found", "48x48")], "qt5 Papirus under qt rules")
        looked = counters(mnt)["lookups"] - before
        print(f"qt5 folder under qt rules: {looked} lookups; {len(listed)} of {len(views)} "
              f"size views list it")
        check(len(listed) < len(views), f"some views do not list folder ({len(listed)})")
        check(len(listed) <= looked <= 2 * len(listed) + 12,
              f"Qt looked for folder in the listed views only: {looked} lookups")

# A screenshot: the same GTK window on the mount and on the stock theme.
SHOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "screenshot.py")
GRID = ["firefox", "folder", "user-trash", "text-x-generic", "utilities-terminal",
        "edit-copy", "document-open", "system-file-manager", "accessories-calculator",
        "preferences-system", "help-browser", "image-x-generic"]


def screenshot(data_dirs, out):
    env = dict(os.environ, XDG_DATA_DIRS=data_dirs)
    p = subprocess.run(["xvfb-run", "-a", PY, SHOT, "Papirus", out, *GRID],
                       capture_output=True, text=True, env=env, timeout=120)
    check_eq(p.returncode, 0, f"screenshot ({p.stderr[-300:]})")


def pixels(path):
    import gi
    gi.require_version("GdkPixbuf", "2.0")
    from gi.repository import GdkPixbuf
    pb = GdkPixbuf.Pixbuf.new_from_file(path)
    return pb.get_width(), pb.get_height(), pb.get_n_channels(), pb.get_rowstride(), pb.get_pixels()


shots = os.environ.get("ICONFS_TEST_DIR") or tempfile.gettempdir()
with mounted(db, REAL_BASES, theme="Papirus") as mnt:
    screenshot(f"{mnt}:/usr/local/share:/usr/share", os.path.join(shots, "shot-mount.png"))
screenshot("/usr/local/share:/usr/share", os.path.join(shots, "shot-stock.png"))
if os.path.exists(os.path.join(shots, "shot-mount.png")):
    wm, hm, nm, rm, a = pixels(os.path.join(shots, "shot-mount.png"))
    ws, hs, ns, rs, b = pixels(os.path.join(shots, "shot-stock.png"))
    check_eq((wm, hm), (ws, hs), "screenshots have the same size")
    # per icon cell: mean absolute difference, and "not a black box"
    close = 0
    for i in range(len(GRID)):
        x0, y0 = 8 + (i % 6) * 56, 8 + (i // 6) * 56
        diff, dark, n, drawn = 0, 0, 0, 0
        bg = bytes(a[0:3])  # the window's background, at its corner
        for y in range(y0, y0 + 48):
            for x in range(x0, x0 + 48):
                o1, o2 = y * rm + x * nm, y * rs + x * ns
                diff += sum(abs(a[o1 + c] - b[o2 + c]) for c in range(3))
                dark += sum(a[o1 + c] for c in range(3)) < 30
                drawn += bytes(a[o1:o1 + 3]) != bg
                n += 1
        mean = diff / (3 * n)
        close += mean < 12
        print(f"{GRID[i]}: mean difference {mean:.1f}/255, dark pixels {dark}/{n}")
        check(dark < n * 0.9 and n * 0.05 < drawn < n * 0.98,
              f"{GRID[i]} is a picture ({drawn}/{n} drawn), not a box")
    check(close >= len(GRID) - 2, f"{close}/{len(GRID)} icons look the same as stock")

# The cache stays valid after a live change: a running GTK process finds a
# new icon after its 5-second recheck.
with tempfile.TemporaryDirectory() as tmp:
    base = os.path.join(tmp, "icons")
    scalable_theme(base, "watchme", max_size=256)
    svg = svg_square()
    with open(os.path.join(base, "watchme", "scalable", "old.svg"), "w") as f:
        f.write(svg)
    with mounted(os.path.join(tmp, "db.sqlite"), base, theme="watchme") as mnt:
        env = dict(os.environ, XDG_DATA_DIRS=f"{mnt}:/usr/share")
        proc = subprocess.Popen(["xvfb-run", "-a", PY, CLIENTS, "gtk3-watch", "watchme", "32",
                                 "brand-new"], stdout=subprocess.PIPE, text=True, env=env)
        check_eq(proc.stdout.readline().strip(), "ready", "gtk3 watcher started")
        time.sleep(1.0)
        with open(os.path.join(base, "watchme", "scalable", "brand-new.svg"), "w") as f:
            f.write(svg)
        out, _ = proc.communicate(timeout=60)
        fields = out.strip().split("\t")
        check(len(fields) == 3 and fields[1] == f"{mnt}/icons/watchme/32x32/brand-new.png",
              f"running GTK found the new icon through the mount: {out.strip()!r}")
        if len(fields) == 3:
            print(f"running GTK saw the new icon after {fields[2]} s")
finish()

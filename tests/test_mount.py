#!/usr/bin/env python3
"""The mounted tree on real themes: files exist exactly when `iconfs lookup`
finds the name, are PNGs of the exact size, carry the lookup's answer in
user.iconfs.source; symbolic icons only under scalable/; listings; every
write fails with EROFS; bad paths give ENOENT (or ENAMETOOLONG)."""
import errno
import os
import random
import stat
import subprocess

from spec_reference import Spec
from common import (errno_of, REAL_BASES, is_symbolic, check, check_eq, finish, lookup_batch, mounted,
                    need_theme, png_size, shared_db)

THEMES = ["Papirus", "breeze", "Adwaita", "oxygen"]
need_theme(*THEMES)
db = shared_db("real-index.sqlite")
rng = random.Random(4)


def names_of(theme):
    out = set()
    for root, _, files in os.walk(f"/usr/share/icons/{theme}", followlinks=True):
        out.update(f.rsplit(".", 1)[0] for f in files if f.endswith((".png", ".svg")))
    return sorted(out)


with mounted(db, REAL_BASES, theme="Papirus") as mnt:
    check_eq(sorted(os.listdir(mnt))[:3], ["128", "128@2", "16"], "root listing")
    listed_themes = os.listdir(os.path.join(mnt, "icons"))
    for t in THEMES + ["hicolor"]:
        check(t in listed_themes, f"icons/ lists {t}")
    st = os.stat(mnt)
    check_eq(stat.S_IMODE(st.st_mode), 0o555, "directory mode")
    info = next(l.split() for l in open("/proc/self/mountinfo") if l.split()[4] == mnt)
    opts = set(info[5].split(",")) | set(info[-1].split(","))
    # private, read-only, noexec; the kernel's permission checks are not
    # asked for (README: why), which refuse nothing here: every file is
    # 0444, every directory 0555, the user's own (below: writes, exec)
    check({"ro", "noexec"} <= opts and not {"allow_other", "default_permissions"} & opts,
          f"mounted ro,noexec without allow_other or default_permissions: {sorted(opts)}")
    check_eq(st.st_uid, os.getuid(), "owned by the mounting user")

    for theme in THEMES:
        sample = rng.sample(names_of(theme), 25) + ["no-such-icon-at-all"]
        want = lookup_batch(db, REAL_BASES, theme, [(n, 48) for n in sample])
        for name, source in zip(sample, want):
            path = os.path.join(mnt, "icons", theme, "48x48", name + ".png")
            # a symbolic name is there only as the theme's own pre-encoded
            # NAME.symbolic.png of exactly this size
            pre = name.endswith(".symbolic") and is_symbolic(name) and bool(source) and \
                png_size(open(source, "rb").read()) == (48, 48)
            exists = os.path.exists(path)
            check_eq(exists, bool(source) and (not is_symbolic(name) or pre), f"exists {path}")
            if not exists:
                continue
            data = open(path, "rb").read()
            check_eq(png_size(data), (48, 48), f"{path} is 48x48")
            check_eq(os.stat(path).st_size, len(data), f"{path} st_size")
            check_eq(stat.S_IMODE(os.stat(path).st_mode), 0o444, f"{path} mode")
            check_eq(os.getxattr(path, "user.iconfs.source").decode(), source,
                     f"{path} source")
        # scale 2: 96x96 pixels
        name = next(n for n, s in zip(sample, want) if s and not is_symbolic(n))
        data = open(os.path.join(mnt, "icons", theme, "24x24@2", name + ".png"), "rb").read()
        check_eq(png_size(data), (48, 48), f"{theme} 24x24@2/{name}.png")

    # the flat view of the default theme, with scales
    sample = rng.sample(names_of("Papirus"), 20)
    want = lookup_batch(db, REAL_BASES, "Papirus", [(n, 48) for n in sample])
    for name, source in zip(sample, want):
        path = os.path.join(mnt, "48", name + ".png")
        check_eq(os.path.exists(path), bool(source), f"exists {path}")
        if source:
            check_eq(png_size(open(path, "rb").read()), (48, 48), f"{path} size")
            check_eq(os.getxattr(path, "user.iconfs.source").decode(), source, f"{path} source")
    name = "firefox" if "firefox" in names_of("Papirus") else sample[0]
    check_eq(png_size(open(os.path.join(mnt, "20@3", name + ".png"), "rb").read()), (60, 60),
             "20@3 is 60x60")
    check_eq(png_size(open(os.path.join(mnt, "1", name + ".png"), "rb").read()), (1, 1), "1 px")
    check_eq(png_size(open(os.path.join(mnt, "1024", name + ".png"), "rb").read()),
             (1024, 1024), "1024 px")

    # symbolic names: only scalable/ under icons/, rendered in the flat view
    sym = [n for n in names_of("Adwaita") if n.endswith("-symbolic")][:5]
    check(len(sym) == 5, "Adwaita has symbolic icons")
    for n in sym:
        check(not os.path.exists(os.path.join(mnt, "icons/Adwaita/16x16", n + ".png")),
              f"{n} not in 16x16/")
        svg = os.path.join(mnt, "icons/Adwaita/scalable", n + ".svg")
        source = lookup_batch(db, REAL_BASES, "Adwaita", [(n, 16)])[0]
        check_eq(open(svg, "rb").read(), open(source, "rb").read(), f"{svg} bytes")
    check(os.path.exists(os.path.join(mnt, "16", "edit-copy-symbolic.png")) or
          not lookup_batch(db, REAL_BASES, "Papirus", [("edit-copy-symbolic", 16)])[0],
          "flat view renders symbolic icons")
    listing = set(os.listdir(os.path.join(mnt, "icons/Adwaita/16x16")))
    check(not any(n.endswith("-symbolic.png") for n in listing), "no symbolic PNG listed")
    scal = set(os.listdir(os.path.join(mnt, "icons/Adwaita/scalable")))
    check(all(n + ".svg" in scal for n in sym), "scalable/ lists the symbolic SVGs")

    # listings: every resolvable name of Papirus (the themes of its chain,
    # then hicolor, plus the unthemed fallbacks), as names, not a scan
    spec = Spec(REAL_BASES.split(":"))
    chain, todo = [], ["Papirus", "hicolor"]
    while todo:
        t = todo.pop(0)
        if t not in chain and spec.theme(t):
            chain.append(t)
            todo[:0] = spec.theme(t).parents
    check("breeze" in chain, "Papirus inherits breeze")
    want_names = set()
    for t in chain:
        th = spec.theme(t)
        for d in th.subdirs:
            for root in th.roots:
                dpath = os.path.join(root, d["path"])
                if not os.path.isdir(dpath):
                    continue
                for f in os.listdir(dpath):
                    stem, _, ext = f.rpartition(".")
                    if (ext in ("png", "svg", "xpm") and stem and
                            not is_symbolic(stem) and
                            spec.exists(os.path.join(dpath, f))):
                        want_names.add(stem)
    want_names.update(f.rsplit(".", 1)[0] for f in os.listdir("/usr/share/pixmaps")
                      if f.endswith((".png", ".svg", ".xpm")) and
                      os.path.isfile(os.path.join("/usr/share/pixmaps", f)) and
                      not is_symbolic(f.rsplit(".", 1)[0]))
    listed = os.listdir(os.path.join(mnt, "icons/Papirus/48x48"))
    got = {n[:-4] for n in listed if n.endswith(".png")}
    check_eq(len(got ^ want_names), 0, "icons/Papirus/48x48 lists every resolvable name")
    # and as SVG the symbolic names whose 48 px pick is a variant of its own
    variants = [n for n in listed if n.endswith(".svg")]
    check(all(is_symbolic(n[:-4]) for n in variants),
          f"icons/Papirus/48x48 lists only symbolic names as SVG: {variants[:5]}")
    for n in variants[:5]:
        src = os.getxattr(os.path.join(mnt, "icons/Papirus/48x48", n),
                          "user.iconfs.source").decode()
        nominal = os.getxattr(os.path.join(mnt, "icons/Papirus/scalable", n),
                              "user.iconfs.source").decode()
        check(src.endswith("/" + n) and src != nominal,
              f"48x48/{n} is the theme's own 48 px SVG ({src}), not scalable/'s ({nominal})")
    ls = subprocess.run(["ls", "-l", os.path.join(mnt, "icons/Papirus/8x8")],
                        capture_output=True, text=True)
    check_eq(ls.returncode, 0, "ls -l of a Papirus size directory")
    if ls.returncode: print(ls.stderr[:2000])
    check_eq(len(ls.stdout.splitlines()) - 1, len(want_names), "ls -l lists every name")

    # the synthetic index.theme
    text = open(os.path.join(mnt, "icons/Papirus/index.theme")).read()
    for needle in ("Name=Papirus", "Inherits=hicolor", "[48x48]\nSize=48\nType=Fixed",
                   "[scalable]", "MaxSize=1024", "Type=Scalable", "[44x44]\nSize=44"):
        check(needle in text, f"index.theme has {needle!r}")
    # under gtk an @2 group only of a Size Papirus has Scale=2 directories
    # of (22x22@2x): GTK at 22@2 takes those drawings there, not 44x44's;
    # the other @2 views exist unlisted
    check("[22x22@2]\nSize=22\nScale=2\nType=Fixed" in text,
          "the gtk rules' index.theme lists Papirus's 22x22@2")
    check("[44x44@2]" not in text, "... and no @2 directory of a size it has none of")

    # read-only everywhere
    f48 = os.path.join(mnt, "48", name + ".png")
    for what, fn in [
        ("open for writing", lambda: open(f48, "r+b")),
        ("create", lambda: open(os.path.join(mnt, "48", "new.png"), "wb")),
        ("mkdir", lambda: os.mkdir(os.path.join(mnt, "icons", "x"))),
        ("unlink", lambda: os.unlink(f48)),
        ("rmdir", lambda: os.rmdir(os.path.join(mnt, "48"))),
        ("rename", lambda: os.rename(f48, f48 + ".x")),
        ("symlink", lambda: os.symlink("x", os.path.join(mnt, "l"))),
        ("link", lambda: os.link(f48, os.path.join(mnt, "48", "y.png"))),
        ("chmod", lambda: os.chmod(f48, 0o644)),
        ("truncate", lambda: os.truncate(f48, 0)),
        ("utime", lambda: os.utime(f48, (0, 0))),
        ("setxattr", lambda: os.setxattr(f48, "user.x", b"1")),
        ("removexattr", lambda: os.removexattr(f48, "user.iconfs.source")),
        ("mknod", lambda: os.mknod(os.path.join(mnt, "fifo"), stat.S_IFIFO | 0o600)),
    ]:
        check_eq(errno_of(fn), errno.EROFS, f"{what} fails with EROFS")
    check_eq((os.access(f48, os.R_OK), os.access(f48, os.W_OK), os.access(f48, os.X_OK)),
             (True, False, False), "access(2): readable, not writable, not executable")
    check_eq(errno_of(lambda: subprocess.run([f48])), errno.EACCES, "a 0444 file is not run")

    # bad paths
    for bad in ["0/x.png", "1025/x.png", "abc/x.png", "48@9/x.png", "048/x.png",
                "icons/Papirus/48x48/.png", "icons/Papirus/48x48/x.svg",
                "icons/Papirus/48x48@3/x.png", "icons/no-theme", "48/" + "a" * 250 + ".png",
                "icons/Papirus/index.theme/x"]:
        e = errno_of(lambda: os.stat(os.path.join(mnt, bad)))
        check(e in (errno.ENOENT, errno.ENOTDIR), f"{bad}: errno {e}")
    e = errno_of(lambda: os.stat(os.path.join(mnt, "48", "a" * 300 + ".png")))
    check_eq(e, errno.ENAMETOOLONG, "name over 255 bytes")
    check_eq(os.path.realpath(os.path.join(mnt, "48", "..", "48")), os.path.join(mnt, "48"),
             "'..' stays in the mount")
    check(os.path.exists(os.path.join(mnt, "48//" + name + ".png")), "empty component is ignored")
    check(os.path.ismount(mnt), "daemon still serving")
finish()

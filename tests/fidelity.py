"""What real toolkits show stock and through the mount, compared: the
helper of test_fidelity.py and of the bench's fidelity figures. Not a test.

A sample of (theme, name, size[, scale]) goes to a child /usr/bin/python3
(Debian's, with python3-gi and PyQt6) under Xvfb twice: with XDG_DATA_DIRS
as it is, and with the mount first. GTK 3 gives its pixels
(GtkIconInfo.load_icon, or load_symbolic with fixed colours for symbolic
names); GTK 4 the file it picked (no pixels: PyGObject cannot hand a
GskTextureNode back), both at the case's scale (1 unless given); Qt 6 its
pixels (QIcon.fromTheme(...).pixmap); KDE the file KIconLoader picks at the
theme's Desktop group size (`kiconfinder5`, one run per name, the theme set
in a kdeglobals of its own). Run as a program
(`fidelity.py child gtk3|gtk4|qt6|kde CASES.json`), it is that child.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

PY = "/usr/bin/python3"
BUILTIN = ["window-close-symbolic", "pan-down-symbolic", "open-menu-symbolic",
           "go-next-symbolic", "edit-copy-symbolic"]


def desktop_icons(limit=40):
    """Icon names of the installed applications' .desktop files."""
    out, d = [], "/usr/share/applications"
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        try:
            for line in open(os.path.join(d, f), errors="replace"):
                if line.startswith("Icon=") and "/" not in line:
                    out.append(line[5:].strip())
                    break
        except OSError:
            continue
    return sorted(set(out))[:limit]


def sample(mnt, themes, sizes, per_theme, rng):
    """Cases (theme, name, size): names a size view of each theme lists (its
    own and its parents'), its symbolic names, .desktop icons, GTK's
    built-in names."""
    cases = []
    apps = desktop_icons()
    for theme in themes:
        # not GTK's pre-encoded NAME.symbolic files: no program asks for
        # "NAME.symbolic" itself
        listed = [n[:-4] for n in os.listdir(os.path.join(mnt, "icons", theme, "48x48"))
                  if not n[:-4].endswith(".symbolic")]
        svg = [n[:-4] for n in os.listdir(os.path.join(mnt, "icons", theme, "scalable"))
               if n.endswith("-symbolic.svg")]
        names = rng.sample(listed, min(per_theme, len(listed)))
        names += rng.sample(svg, min(per_theme // 4, len(svg))) + apps + BUILTIN
        for name in sorted(set(names)):
            for size in sizes:
                cases.append((theme, name, size))
    return cases


def kde_cases(cases):
    """KIconLoader's cases: each (theme, name) once, at the Desktop group's
    size (0: the theme's own default)."""
    return sorted({(t, n, 0) for t, n, _ in cases})


def run(kind, cases, data_dirs):
    """One client run: a result dict per case."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cases, f)
    env = dict(os.environ, XDG_DATA_DIRS=data_dirs)
    env.pop("PYTHONPATH", None)
    try:
        p = subprocess.run(["xvfb-run", "-a", PY, os.path.abspath(__file__), "child", kind,
                            f.name], capture_output=True, text=True, env=env, timeout=900)
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        raise AssertionError(f"{kind} client exited {p.returncode}: {p.stderr[-1500:]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def max_diff(a, b):
    x, y = base64.b64decode(a), base64.b64decode(b)
    if len(x) != len(y):
        return 255
    return max((abs(p - q) for p, q in zip(x, y)), default=0)


def premultiplied(data):
    """RGBA bytes with each colour weighed by its alpha: what is drawn."""
    out = bytearray(data)
    for i in range(0, len(out) - 3, 4):
        a = out[i + 3]
        for c in range(3):
            out[i + c] = (out[i + c] * a + 127) // 255
    return bytes(out)


def max_diff_premultiplied(a, b):
    x, y = base64.b64decode(a), base64.b64decode(b)
    if len(x) != len(y):
        return 255
    return max((abs(p - q) for p, q in zip(premultiplied(x), premultiplied(y))), default=0)


# GTK 3's verdict where only the colours of nearly transparent pixels differ,
# weighed by their alpha the same: the same picture drawn. GTK 3 draws a
# symbolic SVG in its colours and stores the result unpremultiplied, so a
# pixel of alpha 3 comes back as #5555aa for #336699; from a pre-encoded
# NAME.symbolic.png it computes the exact colour. Counted as the same (the
# table shows how many).
FAINT = "same drawn (faint pixels' colour differs)"


def same_pixels(a, b, drawn=False):
    """Two pixel results of the same size, every channel within 2 (with
    `drawn`, of the colours weighed by alpha: Qt keeps its pixmaps
    premultiplied, so a faint pixel's colour comes back rounded)."""
    if (a["w"], a["h"]) != (b["w"], b["h"]):
        return False
    return (max_diff_premultiplied if drawn else max_diff)(a["rgba"], b["rgba"]) <= 2


def compare(kind, cases, stock, via, mnt):
    """Per case: 'same' (GTK 3, Qt 6: every channel within 2, or for GTK 3
    FAINT; GTK 4, KDE: the same file, or the mount's file of that source),
    'lost' (stock shows one, the mount none), else the cause of the
    difference; and a table of counts."""
    rows = []
    for case, s, v in zip(cases, stock, via):
        if not s["path"]:
            verdict = "none stock"
        elif not v["path"]:
            verdict = "lost"
        elif kind == "gtk3":
            verdict = "same" if same_pixels(s, v) else FAINT if same_pixels(s, v, drawn=True) \
                else "other source" if v.get("source") != s["path"] else "same source, other pixels"
        elif kind == "qt6":
            verdict = "same" if same_pixels(s, v, drawn=True) else (
                "other size" if (s["w"], s["h"]) != (v["w"], v["h"]) else "other pixels")
        elif kind == "kde" and v.get("source") == s["path"] and v["path"].endswith(".png") \
                and s["path"].endswith(".svg"):
            verdict = "svg served as png (no recolouring)"
        else:
            same = v["path"] == s["path"] or v.get("source") == s["path"]
            verdict = "same" if same else "other source"
        rows.append((case, verdict, s["path"], v["path"], v.get("source")))
    counts = {}
    for _, verdict, *_ in rows:
        counts[verdict] = counts.get(verdict, 0) + 1
    return rows, counts


def results(kind, cases, original, mnt):
    """The client's results stock and through the mount (with each file's
    source, from the mount's xattr)."""
    stock = run(kind, cases, original)
    via = run(kind, cases, f"{mnt}:{original}")
    for v in via:
        if v["path"].startswith(mnt + "/"):
            try:
                v["source"] = os.getxattr(v["path"], "user.iconfs.source").decode()
            except OSError:
                v["source"] = None
    return stock, via


def measure(kind, cases, original, mnt):
    stock, via = results(kind, cases, original, mnt)
    return compare(kind, cases, stock, via, mnt)


def agreement(cases, a, b):
    """How many non-symbolic lookups both answer, and how many of those
    show the same pixels in both (GTK 3 against Qt 6: figure F3)."""
    both = same = 0
    for (_, name, _), x, y in zip(cases, a, b):
        if name.endswith(("-symbolic", "-symbolic-ltr", "-symbolic-rtl")):
            continue
        if x["path"] and y["path"]:
            both += 1
            same += same_pixels(x, y, drawn=True)
    return both, same


def share(counts):
    """The identical share of the lookups stock answers."""
    answered = sum(n for k, n in counts.items() if k != "none stock")
    return (counts.get("same", 0) + counts.get(FAINT, 0)) / answered if answered else 1.0


def child(kind, path):
    import gi
    cases = json.load(open(path))
    if kind == "gtk3":
        gi.require_version("Gtk", "3.0")
        gi.require_version("Gdk", "3.0")
        from gi.repository import Gdk, Gtk
        themes = {}
        fg, ok, warn, err = (Gdk.RGBA(0.2, 0.4, 0.6, 1), Gdk.RGBA(0, 1, 0, 1),
                             Gdk.RGBA(1, 0.5, 0, 1), Gdk.RGBA(1, 0, 0, 1))
        for theme, name, size, *scale in cases:
            it = themes.get(theme)
            if not it:
                it = themes[theme] = Gtk.IconTheme.new()
                it.set_custom_theme(theme)
            info = it.lookup_icon_for_scale(name, size, scale[0] if scale else 1,
                                            Gtk.IconLookupFlags.FORCE_SIZE)
            out = {"path": "", "w": 0, "h": 0, "rgba": ""}
            if info:
                try:
                    if name.endswith(("-symbolic", "-symbolic-ltr", "-symbolic-rtl")):
                        pb, _ = info.load_symbolic(fg, ok, warn, err)
                    else:
                        pb = info.load_icon()
                    if not pb.get_has_alpha():
                        pb = pb.add_alpha(False, 0, 0, 0)
                    out = {"path": info.get_filename() or "", "w": pb.get_width(),
                           "h": pb.get_height(),
                           "rgba": base64.b64encode(pb.get_pixels()).decode()}
                except Exception as e:  # a file GTK cannot load: shown as nothing
                    out["error"] = str(e)
            print(json.dumps(out), flush=True)
    else:
        gi.require_version("Gtk", "4.0")
        from gi.repository import Gtk
        Gtk.init()
        themes = {}
        for theme, name, size, *scale in cases:
            it = themes.get(theme)
            if not it:
                it = themes[theme] = Gtk.IconTheme()
                it.set_theme_name(theme)
            p = it.lookup_icon(name, None, size, scale[0] if scale else 1,
                               Gtk.TextDirection.LTR, 0)
            f = p.get_file()
            path = (f.get_path() or f.get_uri()) if f else ""
            if path.endswith("image-missing.png") and name != "image-missing":
                path = ""
            print(json.dumps({"path": path}), flush=True)


def child_qt6(cases):
    from PyQt6.QtCore import QSize
    from PyQt6.QtGui import QGuiApplication, QIcon, QImage
    app = QGuiApplication([])  # noqa: F841 (Qt needs it alive)
    for theme, name, size in cases:
        QIcon.setThemeName(theme)
        icon = QIcon.fromTheme(name)
        out = {"path": "", "w": 0, "h": 0, "rgba": ""}
        if not icon.isNull():
            img = icon.pixmap(QSize(size, size)).toImage().convertToFormat(
                QImage.Format.Format_RGBA8888)
            w, h, bpl = img.width(), img.height(), img.bytesPerLine()
            bits = img.constBits()
            bits.setsize(img.sizeInBytes())
            data = bytes(bits)
            rows = b"".join(data[y * bpl:y * bpl + 4 * w] for y in range(h))
            out = {"path": "found", "w": w, "h": h,
                   "rgba": base64.b64encode(rows).decode()}
        print(json.dumps(out), flush=True)


def child_kde(cases):
    with tempfile.TemporaryDirectory() as home:
        conf = os.path.join(home, ".config")
        os.makedirs(conf)
        env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=conf,
                   XDG_RUNTIME_DIR=home, QT_QPA_PLATFORM="offscreen")
        for theme, name, _ in cases:
            with open(os.path.join(conf, "kdeglobals"), "w") as f:
                f.write(f"[Icons]\nTheme={theme}\n")
            p = subprocess.run(["kiconfinder5", name], capture_output=True, text=True,
                               env=env, timeout=60)
            path = p.stdout.strip() if p.returncode == 0 else ""
            print(json.dumps({"path": path}), flush=True)


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "child" \
        and sys.argv[2] in ("qt6", "kde"):
    (child_qt6 if sys.argv[2] == "qt6" else child_kde)(json.load(open(sys.argv[3])))
elif __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "child":
    child(sys.argv[2], sys.argv[3])

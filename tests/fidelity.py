"""What real GTK shows stock and through the mount, compared: the helper of
test_fidelity.py and of the bench's fidelity figure. Not a test.

A sample of (theme, name, size) goes to a child /usr/bin/python3 (Debian's,
with python3-gi) under Xvfb twice: with XDG_DATA_DIRS as it is, and with the
mount first. GTK 3 gives its pixels (GtkIconInfo.load_icon, or load_symbolic
with fixed colours for symbolic names); GTK 4 the file it picked (no pixels:
PyGObject cannot hand a GskTextureNode back). Run as a program
(`fidelity.py child gtk3|gtk4 CASES.json`), it is that child.
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
        listed = [n[:-4] for n in os.listdir(os.path.join(mnt, "icons", theme, "48x48"))]
        svg = [n[:-4] for n in os.listdir(os.path.join(mnt, "icons", theme, "scalable"))
               if n.endswith("-symbolic.svg")]
        names = rng.sample(listed, min(per_theme, len(listed)))
        names += rng.sample(svg, min(per_theme // 4, len(svg))) + apps + BUILTIN
        for name in sorted(set(names)):
            for size in sizes:
                cases.append((theme, name, size))
    return cases


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


def compare(kind, cases, stock, via, mnt):
    """Per case: 'same' (GTK 3: every channel within 2; GTK 4: the same
    file, or the mount's file of that source), 'lost' (stock shows one, the
    mount none), else the cause of the difference; and a table of counts."""
    rows = []
    for case, s, v in zip(cases, stock, via):
        if not s["path"]:
            verdict = "none stock"
        elif not v["path"]:
            verdict = "lost"
        elif kind == "gtk3":
            d = max_diff(s["rgba"], v["rgba"]) if (s["w"], s["h"]) == (v["w"], v["h"]) else 255
            verdict = "same" if d <= 2 else (
                "other source" if v.get("source") != s["path"] else "same source, other pixels")
        else:
            same = v["path"] == s["path"] or v.get("source") == s["path"]
            verdict = "same" if same else "other source"
        rows.append((case, verdict, s["path"], v["path"], v.get("source")))
    counts = {}
    for _, verdict, *_ in rows:
        counts[verdict] = counts.get(verdict, 0) + 1
    return rows, counts


def measure(kind, cases, original, mnt):
    stock = run(kind, cases, original)
    via = run(kind, cases, f"{mnt}:{original}")
    for v in via:
        if v["path"].startswith(mnt + "/"):
            try:
                v["source"] = os.getxattr(v["path"], "user.iconfs.source").decode()
            except OSError:
                v["source"] = None
    return compare(kind, cases, stock, via, mnt)


def share(counts):
    """The identical share of the lookups stock answers."""
    answered = sum(n for k, n in counts.items() if k != "none stock")
    return counts.get("same", 0) / answered if answered else 1.0


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
        for theme, name, size in cases:
            it = themes.get(theme)
            if not it:
                it = themes[theme] = Gtk.IconTheme.new()
                it.set_custom_theme(theme)
            info = it.lookup_icon(name, size, Gtk.IconLookupFlags.FORCE_SIZE)
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
        for theme, name, size in cases:
            it = themes.get(theme)
            if not it:
                it = themes[theme] = Gtk.IconTheme()
                it.set_theme_name(theme)
            p = it.lookup_icon(name, None, size, 1, Gtk.TextDirection.LTR, 0)
            f = p.get_file()
            path = (f.get_path() or f.get_uri()) if f else ""
            if path.endswith("image-missing.png") and name != "image-missing":
                path = ""
            print(json.dumps({"path": path}), flush=True)


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "child":
    child(sys.argv[2], sys.argv[3])

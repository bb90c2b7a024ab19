"""An independent reading of the freedesktop Icon Theme Specification 0.13,
written for the tests: it walks the real directories with os.path and shares
no code or data with iconfs. Used to check `iconfs lookup` on real themes."""
import os

EXTS = ("png", "svg", "xpm")


def parse_index(path):
    """Return {group: {key: value}} with lenient parsing."""
    groups, cur = {}, None
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and "]" in line:
            cur = groups.setdefault(line[1:line.index("]")], {})
        elif "=" in line and cur is not None:
            k, v = line.split("=", 1)
            cur[k.strip()] = v.strip()
    return groups


def split_list(v):
    return [p.strip() for p in (v or "").split(",") if p.strip()]


def to_int(v, default):
    try:
        return int(v.strip())
    except (ValueError, AttributeError):
        return default


class Theme:
    def __init__(self, name, index_path, bases):
        self.name = name
        g = parse_index(index_path)
        top = g.get("Icon Theme", {})
        self.parents = split_list(top.get("Inherits"))
        self.roots = [os.path.join(b, name) for b in bases]
        self.subdirs = []
        seen = set()
        for d in split_list(top.get("Directories")) + split_list(top.get("ScaledDirectories")):
            d = d.rstrip("/") or d
            if d in seen or d not in g or "Size" not in g[d]:
                continue
            size = to_int(g[d]["Size"], None)
            if size is None:
                continue
            seen.add(d)
            t = g[d].get("Type", "Threshold")
            if t not in ("Fixed", "Scalable", "Threshold"):
                t = "Threshold"
            self.subdirs.append(dict(
                path=d, size=size, type=t,
                scale=to_int(g[d].get("Scale", "1"), 1),
                min=to_int(g[d].get("MinSize", str(size)), size),
                max=to_int(g[d].get("MaxSize", str(size)), size),
                threshold=to_int(g[d].get("Threshold", "2"), 2)))


class Spec:
    def __init__(self, bases):
        self.bases = bases
        self.real_bases = [os.path.realpath(b) for b in bases if os.path.isdir(b)]
        self.themes = {}

    def theme(self, name):
        if name not in self.themes:
            t = None
            for b in self.bases:
                p = os.path.join(b, name, "index.theme")
                if os.path.isfile(p):
                    try:
                        t = Theme(name, p, self.bases)
                        if "Icon Theme" not in parse_index(p):
                            t = None
                    except OSError:
                        t = None
                    break
            self.themes[name] = t
        return self.themes[name]

    def exists(self, path):
        if not os.path.isfile(path):
            return False
        real = os.path.realpath(path)
        return any(real.startswith(b + "/") for b in self.real_bases)

    @staticmethod
    def matches(d, size, scale):
        if d["scale"] != scale:
            return False
        if d["type"] == "Fixed":
            return d["size"] == size
        if d["type"] == "Scalable":
            return d["min"] <= size <= d["max"]
        return d["size"] - d["threshold"] <= size <= d["size"] + d["threshold"]

    @staticmethod
    def distance(d, size, scale):
        want = size * scale
        if d["type"] == "Fixed":
            return abs(d["size"] * d["scale"] - want)
        if d["type"] == "Scalable":
            if want < d["min"] * d["scale"]:
                return d["min"] * d["scale"] - want
            if want > d["max"] * d["scale"]:
                return want - d["max"] * d["scale"]
            return 0
        if want < (d["size"] - d["threshold"]) * d["scale"]:
            return d["min"] * d["scale"] - want
        if want > (d["size"] + d["threshold"]) * d["scale"]:
            return want - d["max"] * d["scale"]
        return 0

    def lookup_icon(self, name, size, scale, t):
        for d in t.subdirs:
            if not self.matches(d, size, scale):
                continue
            for root in t.roots:
                for e in EXTS:
                    p = os.path.join(root, d["path"], f"{name}.{e}")
                    if self.exists(p):
                        return p
        best, minimal = None, None
        for d in t.subdirs:
            for root in t.roots:
                for e in EXTS:
                    p = os.path.join(root, d["path"], f"{name}.{e}")
                    if self.exists(p):
                        dist = self.distance(d, size, scale)
                        if minimal is None or dist < minimal:
                            best, minimal = p, dist
        return best

    def helper(self, name, size, scale, theme, seen):
        if theme in seen:
            return None
        seen.add(theme)
        t = self.theme(theme)
        if t is None:
            return None
        found = self.lookup_icon(name, size, scale, t)
        if found:
            return found
        for parent in t.parents:
            found = self.helper(name, size, scale, parent, seen)
            if found:
                return found
        return None

    def find_icon(self, name, size, scale, theme):
        if not name or "/" in name or name in (".", ".."):
            return None
        seen = set()
        found = self.helper(name, size, scale, theme, seen)
        if not found:
            found = self.helper(name, size, scale, "hicolor", seen)
        if found:
            return found
        for b in self.bases:
            for e in EXTS:
                p = os.path.join(b, f"{name}.{e}")
                if self.exists(p):
                    return p
        return None

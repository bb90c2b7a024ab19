#!/usr/bin/env python3
"""Load: three threads doing random stat, open+read and readdir over
several real themes, sizes and scales, while a fourth adds and removes
icons underneath in a theme of its own. Zero unexpected errors, and every
answer on the real themes equals `iconfs lookup`. One minute by default;
SOAK_SECONDS=600 for the documented long run."""
import errno
import os
import random
import shutil
import tempfile
import threading
import time

from common import (REAL_BASES, check, check_eq, counters, finish, is_symbolic, lookup_batch,
                    mounted, need_theme, png_size, scalable_theme, shared_db, svg_square)

SECONDS = float(os.environ.get("SOAK_SECONDS", "60"))
THEMES = ["Papirus", "breeze", "Adwaita"]
SIZES = [16, 22, 24, 32, 48, 64]
need_theme(*THEMES)
rng = random.Random(7)


def rss_anon_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("RssAnon:"))


tmp = tempfile.mkdtemp(prefix="iconfs-soak-")
try:
    churn = os.path.join(tmp, "icons")
    scalable_theme(churn, "churn")
    bases = f"{churn}:{REAL_BASES}"
    db = os.path.join(tmp, "index.sqlite")

    # expected answers for the real themes, from `iconfs lookup`
    expected = {}
    for theme in THEMES:
        names = set()
        for root, _, files in os.walk(f"/usr/share/icons/{theme}", followlinks=True):
            names.update(f.rsplit(".", 1)[0] for f in files if f.endswith((".png", ".svg")))
        sample = rng.sample(sorted(n for n in names if not is_symbolic(n)), 150) + ["nope-x", "nope-y"]
        for size in SIZES:
            got = lookup_batch(db, bases, theme, [(n, size) for n in sample])
            for n, src in zip(sample, got):
                expected[(theme, n, size)] = src
    keys = list(expected)

    ops = {"stat": 0, "read": 0, "readdir": 0, "churn": 0}
    unexpected = []
    lock = threading.Lock()
    stop = threading.Event()

    with mounted(db, bases, theme="Papirus") as mnt:
        def worker(seed):
            r = random.Random(seed)
            while not stop.is_set():
                theme, name, size = keys[r.randrange(len(keys))]
                path = os.path.join(mnt, "icons", theme, f"{size}x{size}", name + ".png")
                want = expected[(theme, name, size)]
                op = r.choice(["stat", "read", "read", "readdir"])
                try:
                    if op == "stat":
                        os.stat(path)
                        if os.getxattr(path, "user.iconfs.source").decode() != want:
                            raise AssertionError(f"{path}: source is not {want}")
                    elif op == "read":
                        data = open(path, "rb").read()
                        if png_size(data) != (size, size):
                            raise AssertionError(f"{path}: {png_size(data)}")
                    else:
                        listing = os.listdir(os.path.dirname(path))
                        if want is not None and name + ".png" not in listing:
                            raise AssertionError(f"{name} not listed")
                    if want is None and op != "readdir":
                        raise AssertionError(f"{path} exists, lookup says none")
                except FileNotFoundError:
                    if want is not None:
                        with lock:
                            unexpected.append(f"{path}: ENOENT, lookup says {want}")
                except OSError as e:
                    with lock:
                        unexpected.append(f"{path}: {errno.errorcode.get(e.errno)}")
                except AssertionError as e:
                    with lock:
                        unexpected.append(str(e))
                # the churning theme: anything but ENOENT is unexpected
                cp = os.path.join(mnt, "icons/churn/16x16", f"c{r.randrange(50)}.png")
                try:
                    data = open(cp, "rb").read()
                    if png_size(data) != (16, 16):
                        with lock:
                            unexpected.append(f"{cp}: {png_size(data)}")
                except FileNotFoundError:
                    pass
                except OSError as e:
                    with lock:
                        unexpected.append(f"{cp}: {errno.errorcode.get(e.errno)}")
                with lock:
                    ops[op] += 1

        def churner():
            r = random.Random(3)
            h = 1
            while not stop.is_set():
                p = os.path.join(churn, "churn", "scalable", f"c{r.randrange(50)}.svg")
                if os.path.exists(p) and r.random() < 0.5:
                    os.unlink(p)
                else:
                    h = h % 16 + 1
                    with open(p + ".tmp", "w") as f:
                        f.write(svg_square(height=h))
                    os.rename(p + ".tmp", p)
                with lock:
                    ops["churn"] += 1
                time.sleep(0.01)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
        threads.append(threading.Thread(target=churner))
        for t in threads:
            t.start()
        time.sleep(SECONDS / 2)
        rss_half = rss_anon_kib(mounted.pid)
        time.sleep(SECONDS / 2)
        rss_end = rss_anon_kib(mounted.pid)
        stop.set()
        for t in threads:
            t.join()
        # the last changes land (the design's bound is 2 s; allow more
        # before failing, and report how long it took)
        on_disk = sorted(f[:-4] for f in os.listdir(os.path.join(churn, "churn", "scalable"))
                         if f.endswith(".svg"))
        t0 = time.monotonic()
        while True:
            listed = sorted(n[:-4] for n in os.listdir(os.path.join(mnt, "icons/churn/16x16"))
                            if n.startswith("c") and n[1:-4].isdigit())
            if listed == on_disk or time.monotonic() - t0 > 10:
                break
            time.sleep(0.05)
        print(f"last change visible after {time.monotonic() - t0:.2f} s")
        c = counters(mnt)
    check_eq(listed, on_disk, "after the soak the churned names listed equal the directory")
    print(f"{SECONDS:.0f} s: {ops}, daemon: {c['lookups']} lookups, {c['renders']} renders, "
          f"{c['nodes']} nodes")
    print(f"daemon RssAnon: {rss_half} KiB at half time, {rss_end} KiB at the end")
    for u in unexpected[:20]:
        print("unexpected:", u)
    check_eq(len(unexpected), 0, "unexpected errors")
    check(sum(ops.values()) > 1000, "the soak did work")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()

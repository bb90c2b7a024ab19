"""The library of scripts/bench's figures (git's t/perf: one script per
measurement over a shared library): the run's configuration, the
measuring helpers (timed, gtk, mounted, ...), the table's rows, the
registry of figures and of the set-up steps they need, the run itself
and the files it writes (bench-results.json, BENCHMARKS.md,
docs/bench-rss.png).

A figure is a function registered with @figure(NAME, needs=(...)): it
names the set-up steps it needs, each a provider registered with
@provider(NAME, needs=(...)) that makes something once and keeps it on the
run's context (`c`, a Ctx). The run sets up, just before each figure, what
it needs and is not made yet: a figure alone (`--only X`) gets the same
set-up as in a full run, and nothing more. A figure may also say that
running it `provides` a step (S teaches the mount the working set, as the
working_set step does); a transient provider is undone after the last
figure of the run that needs it (the real apps' X display)."""
import contextlib
import io
import json
import os
import platform
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
BUILD = os.path.join(ROOT, "build")
os.environ.setdefault("ICONFS", os.path.join(BUILD, "cli", "iconfs"))
# common.py drops privileges when it is imported as root; the bench drops
# them itself, at the start of main()
_as_root_env = os.environ.get("ICONFS_TEST_AS_ROOT")
os.environ["ICONFS_TEST_AS_ROOT"] = "1"
import asuser  # noqa: E402
from common import ICONFS, is_symbolic, mounted as mounted_logged  # noqa: E402
if _as_root_env is None:
    del os.environ["ICONFS_TEST_AS_ROOT"]
else:
    os.environ["ICONFS_TEST_AS_ROOT"] = _as_root_env

FIGS = ["A1", "A2", "A3", "A4", "D1",
        "P5", "S", "R", "L1", "L2", "L0", "P3", "P2", "P4", "H8", "B1", "B2", "B3", "B4", "SH",
        "P6", "P7",
        "K2", "K1", "F1", "F2", "F3", "M1", "M2", "M3", "M4", "M5"]
# the order the figures run in: P5 first (its no-change refresh is of the
# index as `iconfs index` leaves it, before the step `index` stores the
# synthesized files), then the real apps, which lead the table; S before
# the loader figures it teaches the working set; K1 late (it boots a
# container: nothing is measured beside it); F3 beside F1, whose mount it
# shares
ORDER = ["P5", "A1", "A2", "A3", "A4", "D1",
         "S", "R", "L1", "L2", "L0", "P3", "P2", "P4", "H8", "B1", "B2", "B3", "B4", "SH",
         "P6", "P7",
         "K2", "M1", "M2", "M3", "M4", "M5", "K1", "F1", "F3", "F2"]


def _only():
    for i, a in enumerate(sys.argv):
        v = (sys.argv[i + 1] if a == "--only" and i + 1 < len(sys.argv) else
             a[len("--only="):] if a.startswith("--only=") else None)
        if v is not None:
            figs = {f.strip().upper() for f in v.split(",") if f.strip()}
            bad = figs - set(FIGS)
            if bad:
                sys.exit(f"bench: unknown figure(s) {', '.join(sorted(bad))}; "
                         f"known: {', '.join(FIGS)}")
            return figs
    return None


QUICK = "--quick" in sys.argv
ONLY = _only()
RUNS = 3 if QUICK else 5
PY = "/usr/bin/python3"
GTK = os.path.join(ROOT, "scripts", "bench_gtk.py")
NULLFS = os.path.join(BUILD, "scripts", "bench-nullfs")
BASES = "/usr/share/icons:/usr/share/pixmaps"
rows, series = [], {}


def want(*figs):
    return ONLY is None or any(f in ONLY for f in figs)


def stats(xs):
    return statistics.median(xs), min(xs), max(xs)


def row(fig, what, values, unit, anchor=None, goal=None, better="lower", note="",
        goal_text=None, judge="ratio", met=None, shown=None):
    """One figure; with `goal`, the ratio (or, with judge="value" or without
    an anchor, the median) is held to it, or `met` says whether it is met;
    `goal_text` states the goal as its issue does. `shown` replaces the
    median in the table (e.g. "10 s+" for a wait given up)."""
    med, lo, hi = stats(values)
    r = {"figure": fig, "what": what, "median": med, "min": lo, "max": hi, "unit": unit,
         "runs": len(values), "note": note}
    if goal_text:
        r["goal_text"] = goal_text
    if shown:
        r["shown"] = shown
    if anchor is not None:
        r["ratio"] = med / anchor if anchor else None
    if goal is not None:
        r["goal"] = goal
        x = med if judge == "value" else r.get("ratio", med)
        r["meets_goal"] = (met if met is not None else
                           x <= goal if better == "lower" else x >= goal)
    rows.append(r)
    ratio = f"{r['ratio']:.2f}x" if r.get("ratio") is not None else ""
    verdict = ("" if goal is None else
               (goal_text or f"goal {'<=' if better == 'lower' else '>='} {goal}") + ": " +
               ("met" if r["meets_goal"] else "MISSED"))
    value = f"{shown:>10} {'':6}" if shown else f"{med:10.3f} {unit:6}"
    print(f"{fig:3} {what:52} {value} [{lo:.3f}-{hi:.3f}] {ratio:>7} {verdict}",
          flush=True)
    return med


def not_run(fig, what, why, goal_text=None):
    """A figure that could not be measured in this run, and why."""
    r = {"figure": fig, "what": what, "not_run": why}
    if goal_text:
        r["goal_text"] = goal_text
    rows.append(r)
    print(f"{fig:3} {what:52} {why}" + (f"  ({goal_text})" if goal_text else ""), flush=True)


def timed(fn, runs=RUNS, warmup=1):
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(runs):
        t0 = time.monotonic()
        fn()
        out.append(time.monotonic() - t0)
    return out


def gtk(mode, theme, size, names, data_dirs):
    env = dict(os.environ, XDG_DATA_DIRS=data_dirs)
    env.pop("PYTHONPATH", None)
    p = subprocess.run(["xvfb-run", "-a", PY, GTK, mode, theme, str(size), *names],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-500:])
    out = p.stdout.split()
    # bench_gtk.py's breakdown of the time: first lookup, other lookups, loads
    gtk.phases = [float(x) for x in out[2:5]]
    return float(out[0]), int(out[1])


def proc_stats():
    """pid -> the fields of /proc/PID/stat after the command's name."""
    stats = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    stats[int(p)] = f.read().rsplit(")", 1)[1].split()
            except OSError:
                pass
    return stats


def process_tree(pid, stats=None):
    """`pid` and every live process below it (a daemon's render workers,
    guard and read ahead), given proc_stats()."""
    stats = proc_stats() if stats is None else stats
    children = {}
    for p, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(p)
    tree, todo = [], [pid] if pid in stats else []
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += children.get(p, ())
    return tree


def rss_kib(pid):
    """(VmRSS, RssAnon, RssFile) of `pid` in KiB."""
    got = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k = line.split(":")[0]
            if k in ("VmRSS", "RssAnon", "RssFile"):
                got[k] = int(line.split()[1])
    return got.get("VmRSS", 0), got.get("RssAnon", 0), got.get("RssFile", 0)


# what every mount logs: left out of the bench's output
ROUTINE = re.compile(r"iconfs: (serving theme|reading renders from the shared layer"
                     r"|the index is layered over the machine.s,) ")


@contextlib.contextmanager
def mounted(*args, **kw):
    """common.mounted, whose daemon log is printed without its routine lines."""
    cm = mounted_logged(*args, **kw)
    m = cm.__enter__()
    mounted.pid = mounted_logged.pid
    try:
        yield m
    except BaseException:
        if not cm.__exit__(*sys.exc_info()):
            raise
    else:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            cm.__exit__(None, None, None)
        said = [ln for ln in buf.getvalue().splitlines()
                if ln.strip() and ln != "daemon log:" and not ROUTINE.match(ln)]
        if said:
            print("daemon log:\n" + "\n".join(said), flush=True)


def mount_points():
    """The mount points this process sees (/proc/self/mountinfo)."""
    with open("/proc/self/mountinfo") as f:
        return {line.split()[4] for line in f}


def lists(path, timeout=10):
    """Whether a listing of `path` answers, with entries, within `timeout`
    (in a child: a dead or hung mount fails the check, not the bench)."""
    try:
        p = subprocess.run([PY, "-c", f"import os, sys; sys.exit(0 if os.listdir({path!r}) else 1)"],
                           capture_output=True, timeout=timeout)
        return p.returncode == 0
    except subprocess.TimeoutExpired:
        return False


@contextlib.contextmanager
def connected(db, **kw):
    """A connection to `db`, its changes committed and itself closed at the
    end of the `with` block: a connection left to the garbage collector
    may keep a read snapshot open, which stops the daemon's writes from
    being checkpointed (its WAL grows and every lookup slows)."""
    with contextlib.closing(sqlite3.connect(db, **kw)) as d, d:
        yield d


def copy_db(src, dst):
    """A copy of index `src` through SQLite's backup API (the WAL's pages too)."""
    with connected(dst) as d, connected(src) as s:
        s.backup(d)


def remove_db(path):
    """The index `path` gone, with its -wal and -shm files."""
    for sfx in ("", "-wal", "-shm"):
        if os.path.exists(path + sfx):
            os.unlink(path + sfx)


def blob_bytes(db):
    """(rows, bytes) of the blob table of index `db`."""
    with connected(db) as c:
        return c.execute("SELECT count(*), total(bytes) FROM blob").fetchone()


def overlay(lower, path, upper, work):
    """Mount, as root, an overlay of `lower` on `path` whose changes land in
    `upper` (the user's): the user can then write in its top directory,
    which `upper` stands for. False when there is no root to ask."""
    for d in (path, upper, work):
        os.makedirs(d, exist_ok=True)
    return asuser.as_root("mount", "-t", "overlay", "overlay", "-o",
                          f"lowerdir={lower},upperdir={upper},workdir={work}", path)


# the registry: figures and the set-up steps they need

class Step:
    """A figure (fn measures) or a provider (fn sets up) and what it needs."""

    def __init__(self, name, fn, needs=(), provides=(), transient=False):
        self.name, self.fn, self.needs = name, fn, tuple(needs)
        self.provides, self.transient = tuple(provides), transient


FIGURES, PROVIDERS = {}, {}


def figure(name, needs=(), provides=()):
    """Register `fn(c)` as figure `name`, run after the steps `needs`."""
    def register(fn):
        assert name in FIGS and name not in FIGURES, name
        assert all(n in PROVIDERS for n in needs), (name, needs)
        FIGURES[name] = Step(name, fn, needs, provides)
        return fn
    return register


def provider(name, needs=(), transient=False):
    """Register `fn(c)` as set-up step `name`. It keeps what it makes on
    `c`; a transient one returns how to undo it."""
    def register(fn):
        assert name not in PROVIDERS and all(n in PROVIDERS for n in needs), name
        PROVIDERS[name] = Step(name, fn, needs, transient=transient)
        return fn
    return register


def closure(needs):
    """`needs` and every step they need in turn."""
    out = set()
    for n in needs:
        out |= {n} | closure(PROVIDERS[n].needs)
    return out


class Ctx:
    """The run's context: its temporary directory (the user's), the user's
    index `db`, the overlays root mounted (`binds`, unmounted at the end),
    and what the providers made, as attributes they name."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.db = os.path.join(tmp, "index.sqlite")
        self.binds = []
        self.done = set()
        self.undo = {}

    def setup(self, name):
        """Provider `name` run once, after those it needs."""
        if name in self.done:
            return
        p = PROVIDERS[name]
        for n in p.needs:
            self.setup(n)
        undo = p.fn(self)
        if p.transient and undo:
            self.undo[name] = undo
        self.done.add(name)

    def release(self, keep=()):
        """The transient steps no longer needed (none of `keep`) undone."""
        for name in [n for n in self.undo if n not in keep]:
            self.undo.pop(name)()
            self.done.discard(name)


# the set-up steps every part of the bench shares

@provider("samples")
def _samples(c):
    """Every sample drawn first, in one order: the same names whichever
    figures run (and `c.rng` where P7 goes on from)."""
    c.rng = random.Random(1130)
    c.papirus48 = sorted(f[:-4] for f in os.listdir("/usr/share/icons/Papirus/48x48/apps")
                         if f.endswith(".svg") and not is_symbolic(f[:-4]))
    c.names300 = c.rng.sample(c.papirus48, 300)
    c.names = c.rng.sample(c.papirus48, 3000)
    c.picks = c.rng.sample(c.papirus48, 400)


@provider("papirus_copy")
def _papirus_copy(c):
    """The same Papirus for P5 and H8, as a directory of its own, `c.pap`
    under `c.cp` (an overlay mounted by root, `c.pap_overlay`, so that the
    cache gtk-update-icon-cache writes lands in the overlay, else a copy):
    iconfs never indexes what lies outside its base directories, so a
    symlink farm would not do here."""
    c.cp = os.path.join(c.tmp, "gtkcache", "icons")
    c.pap = os.path.join(c.cp, "Papirus")
    c.pap_overlay = overlay("/usr/share/icons/Papirus", c.pap, os.path.join(c.tmp, "upper"),
                            os.path.join(c.tmp, "work"))
    if c.pap_overlay:
        c.binds.append(c.pap)
    else:
        os.rmdir(c.pap)
        shutil.copytree("/usr/share/icons/Papirus", c.pap, symlinks=True)


@provider("plain_index")
def _plain_index(c):
    """`c.db`, the user's index of every installed theme, as `iconfs index`
    leaves it."""
    subprocess.run([ICONFS, "index", "--db", c.db, "--icon-dirs", BASES], capture_output=True,
                   check=True)


@provider("index", needs=("plain_index",))
def _index(c):
    """The index as a login session would have left it: Papirus's
    synthesized files stored (by `iconfs index --theme` where it takes one,
    else by a mount's watcher at its start-up)."""
    if subprocess.run([ICONFS, "index", "--db", c.db, "--icon-dirs", BASES, "--theme", "Papirus"],
                      capture_output=True).returncode != 0:
        with mounted(c.db, BASES, theme="Papirus", settled=True):
            pass
    with connected(c.db) as d:
        if not d.execute("SELECT count(*) FROM synth WHERE theme = 'Papirus'").fetchone()[0]:
            print("    (Papirus's synthesized files are not stored in the index)")


@provider("native", needs=("index", "samples"))
def _native(c):
    """`c.native`: a pre-rendered copy of the 300 icons on native disk, with
    its own cache; making it renders them into the blob table."""
    c.native = os.path.join(c.tmp, "native", "icons", "Papirus")
    os.makedirs(os.path.join(c.native, "48x48"))
    with mounted(c.db, BASES, theme="Papirus") as mnt:
        for n in c.names300:
            shutil.copy(os.path.join(mnt, "icons/Papirus/48x48", n + ".png"),
                        os.path.join(c.native, "48x48", n + ".png"))
        with open(os.path.join(c.native, "index.theme"), "w") as f:
            f.write("[Icon Theme]\nName=Papirus\nDirectories=48x48\n\n[48x48]\nSize=48\n"
                    "Type=Fixed\n")
        subprocess.run(["gtk-update-icon-cache", "-f", "-q", c.native], check=True)


@provider("working_set", needs=("native",))
def _working_set(c):
    """The mount taught its working set, the 300 icons, by a GTK app
    through it (as the sessions before a login would have; S does it too)."""
    with mounted(c.db, BASES, theme="Papirus") as mnt:
        gtk("load", "Papirus", 48, c.names300, f"{mnt}:/usr/share")


# the run

def run_figures(c, selected):
    """Each figure of `selected` (in ORDER) after the set-up it needs."""
    for i, name in enumerate(selected):
        fig = FIGURES[name]
        for n in fig.needs:
            c.setup(n)
        fig.fn(c)
        c.done.update(fig.provides)
        c.release(keep=closure(n for f in selected[i + 1:] for n in FIGURES[f].needs))


def clean_up(c):
    c.release()
    subprocess.run(["sh", "-c", f"for m in {c.tmp}/*/; do fusermount3 -uz $m 2>/dev/null; done"])
    for b in c.binds:
        asuser.as_root("umount", "-l", b)
    shutil.rmtree(c.tmp, ignore_errors=True)
    if os.path.exists(c.tmp):
        # an overlay's work directory is root's
        asuser.as_root("rm", "-rf", "--one-file-system", c.tmp)


def main():
    assert sorted(ORDER) == sorted(FIGS) == sorted(FIGURES), "every figure registered, once"
    # as the user from here on (asuser.py): the temporary directory and
    # everything in it are the user's; the working directory too
    asuser.drop()
    os.chdir(ROOT)
    c = Ctx(tempfile.mkdtemp(prefix="iconfs-bench-"))
    try:
        print(f"measuring as {os.environ.get('USER', os.getuid())} (uid {os.getuid()})"
              f"{'' if ONLY is None else ', only ' + ','.join(f for f in FIGS if f in ONLY)}")
        print(f"{'':3} {'measurement':52} {'median':>10} unit   [min-max]   ratio  goal")
        run_figures(c, [f for f in ORDER if want(f)])
    finally:
        clean_up(c)
    if ONLY is None:
        write_outputs()
    else:
        print("(--only: nothing written)")


# the files a full run writes

def publish(name, write):
    """Write ROOT/`name` with write(path): directly when the user may, else
    into a file of the user's that root copies there (the source tree is
    root's when the bench was started as root)."""
    dst = os.path.join(ROOT, name)
    d = os.path.dirname(dst)
    if os.access(d, os.W_OK) and (not os.path.exists(dst) or os.access(dst, os.W_OK)):
        write(dst)
        return True
    stage = tempfile.mkdtemp(prefix="iconfs-bench-out-")
    try:
        src = os.path.join(stage, os.path.basename(name))
        write(src)
        os.chmod(src, 0o644)
        os.chmod(stage, 0o755)
        ok = asuser.as_root("mkdir", "-p", d) and asuser.as_root("cp", src, dst)
        if not ok:
            print(f"bench: could not write {dst}", file=sys.stderr)
        return ok
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def plot_rss():
    """docs/bench-rss.png: P7's RSS over the soak and the ratios with a
    goal; its name, or None when it could not be made."""
    plot = "docs/bench-rss.png"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
        if series.get("rss"):
            ts, rs = zip(*series["rss"])
            ax1.plot(ts, [r / 1024 for r in rs])
            ax1.set_xlabel("seconds into the soak")
            ax1.set_ylabel("daemon RSS (MiB)")
            ax1.set_title("P7: RSS during renders, then lookups")
        ratios = [r for r in rows if r.get("ratio") is not None and r.get("goal") is not None]
        ax2.barh([f"{r['figure']} {r['what'][:38]}" for r in ratios], [r["ratio"] for r in ratios])
        ax2.set_xlabel("ratio (see goal column)")
        ax2.set_title("ratios against the anchors")
        fig.tight_layout()
        if not publish(plot, lambda p: fig.savefig(p, dpi=80, format="png")):
            plot = None
    except ImportError:
        plot = None
    return plot


ANCHORS = ("Anchors: A1-A4 and D1 the same real Debian apps (and the Xfce session) stock, "
           "each start paired with one through the mount in the same round "
           "(`scripts/bench_apps.py`: Xvfb, a session bus, time to the first mapped window "
           "from X events, CPU of the app's session and the daemon over 2.5 s); "
           "L1/L2/L0/P3 are the synthetic loader (`scripts/bench_gtk.py`, 300 Papirus icons); "
           "L1/L2/P3 stock GTK 3 on the installed Papirus with its "
           "`icon-theme.cache` (a fresh process each run; L2 after dropping the page cache); "
           "L0 the same, run alternately with a first login (nothing learned, the renders in "
           "the user's table or, for a new user, in the shared layer); "
           "S the same PNGs as a one-directory theme with its cache on native disk (stock "
           "Papirus with and without its cache for reference); R open/read/close as a toolkit "
           "does them, on a native directory; P2 `stat` on a native directory of the same names "
           "and a trivial low-level FUSE filesystem answering from memory "
           "(`scripts/bench-nullfs.c`); P4 `rsvg-convert`, and the same `iconfs render` run "
           "again; P5 `gtk-update-icon-cache`; B1 `ls -l` of a native directory of the "
           "same names; B2 `iconfs render` of the same icons; H8 the kernel entries iconfs "
           "holds at the change; SH `gtk-update-icon-cache` over the same themes, and a new user "
           "without the layer. K2 (no systemd: `iconfs mount` in the background, the daemon "
           "killed with `kill -9`, the time until its mount leaves `/proc/self/mountinfo`, "
           "given up at 10 s, and the next `iconfs mount` at the same place) and K1 (the "
           "systemd user unit in a booted container, `tests/test_login.py`) have no anchor. "
           "Goals are written as their issues state them.")


def table_line(r):
    """BENCHMARKS.md's line of row `r`."""
    if "not_run" in r:
        goal = f"{r['goal_text']} (not measured)" if r.get("goal_text") else ""
        return f"| {r['figure']} | {r['what']} | {r['not_run']} |  |  | {goal} |"
    ratio = f"{r['ratio']:.2f}x" if r.get("ratio") is not None else ""
    goal = ""
    if "goal" in r:
        goal = (f"{r.get('goal_text', r['goal'])} "
                f"({'met' if r['meets_goal'] else '**MISSED**'})")
    value = r.get("shown") or f"{r['median']:.3f} {r['unit']}"
    return (f"| {r['figure']} | {r['what']}{(' — ' + r['note']) if r['note'] else ''} | "
            f"{value} | {r['min']:.3f}-{r['max']:.3f} | {ratio} | {goal} |")


def write_outputs():
    machine = (f"{platform.node()}: {os.cpu_count()} cores, "
               f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
               f"Linux {platform.release()}, {platform.freedesktop_os_release().get('PRETTY_NAME', '')}")
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    user = os.environ.get("USER", str(os.getuid()))

    def results(path):
        with open(path, "w") as f:
            json.dump({"when": when, "machine": machine, "user": user, "quick": QUICK,
                       "rows": rows, "rss_samples": series.get("rss", [])}, f, indent=1)
    publish("bench-results.json", results)
    plot = plot_rss()
    lines = ["# Benchmarks", "",
             f"Latest run: {when}{' (quick)' if QUICK else ''}, on {machine}, "
             f"measured as the user {user}.", "",
             "Reproduce: `scripts/setup && scripts/bench` (`--quick` for fewer runs and a shorter "
             "soak, `--only L0,K2` for some figures, printed only). Started as root, the bench "
             "measures as an unprivileged user, as users run iconfs (`tests/asuser.py`); root "
             "only mounts the overlays of the installed themes, drops the page cache (L2) and "
             "runs the booted login test (K1). Each figure is the median of several runs after a "
             "warm-up, with min-max; ratios are against the anchor measured in the same run. "
             "Numbers are written by the script, never by hand.", "",
             "| fig | measurement | median | min-max | ratio | goal |",
             "|---|---|---|---|---|---|"]
    lines += [table_line(r) for r in rows]
    if plot:
        lines += ["", "![RSS and ratios](docs/bench-rss.png)"]
    lines += ["", ANCHORS, ""]

    def markdown(path):
        with open(path, "w") as f:
            f.write("\n".join(lines))
    publish("BENCHMARKS.md", markdown)

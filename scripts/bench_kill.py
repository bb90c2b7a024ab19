"""scripts/bench's figures of a daemon killed: K2 (without systemd) and K1
(the login under systemd, tests/test_login.py, as root) (bench_lib.py says
how a figure declares its set-up)."""
import os
import re
import shlex
import signal
import statistics
import subprocess
import tempfile
import time

from bench_lib import (BASES, BUILD, ICONFS, PY, ROOT, asuser, figure, lists, mount_points,
                       not_run, row)
from common import daemons, forget_working_set

K2_GOAL = ("a killed daemon's mount gone ≤ 1 s, and the next iconfs mount at that place "
           "works")


class K2Mount:
    """`iconfs mount` of the user's index at `kmnt`, in the background, as
    the plain user runs it without systemd."""

    def __init__(self, c, names):
        self.kmnt = os.path.join(c.tmp, "k2")
        os.mkdir(self.kmnt)
        self.names = names
        self.argv = [ICONFS, "mount", "--db", c.db, "--no-shared-db", "--icon-dirs", BASES,
                     "--theme", "Papirus", self.kmnt]

    def clean(self):
        subprocess.run([ICONFS, "umount", self.kmnt], capture_output=True, timeout=60)
        for pid in daemons(self.kmnt):
            os.kill(pid, signal.SIGKILL)
        for _ in range(10):
            if self.kmnt not in mount_points():
                break
            subprocess.run(["fusermount3", "-uz", self.kmnt], capture_output=True)
            time.sleep(0.05)

    def mount(self):
        """`iconfs mount` in the background: its exit status and what it
        said (through a file: a pipe would stay open as long as the daemon
        keeps the command's stderr)."""
        with tempfile.TemporaryFile("w+") as err:
            rc = subprocess.run(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err, timeout=60).returncode
            err.seek(0)
            return rc, err.read().strip()

    def trial(self):
        """A few icons read and a size directory listed, the daemon killed
        (-9): (seconds until its mount is gone, or None after 10 s, whether
        the next `iconfs mount` at the same place serves, why not)."""
        kmnt = self.kmnt
        rc, err = self.mount()
        if rc != 0:
            raise RuntimeError(f"iconfs mount: {err}")
        for n in self.names[:20]:
            with open(os.path.join(kmnt, "48", n + ".png"), "rb") as f:
                f.read()
        subprocess.run(["ls", "-l", os.path.join(kmnt, "48")], stdout=subprocess.DEVNULL,
                       check=True, timeout=60)
        pids = daemons(kmnt)
        if len(pids) != 1:
            raise RuntimeError(f"K2: daemons serving {kmnt}: {pids}")
        t0 = time.monotonic()
        os.kill(pids[0], signal.SIGKILL)
        gone = None
        while time.monotonic() - t0 < 10:
            if kmnt not in mount_points():
                gone = time.monotonic() - t0
                break
            time.sleep(0.01)
        rc, err = self.mount()
        works = rc == 0 and lists(os.path.join(kmnt, "48"))
        err = " / ".join(err.splitlines())
        why = ("" if works else f"exit {rc}: {err}" if rc else
               "mounted, but a listing does not answer")
        self.clean()
        return gone, works, why


@figure("K2", needs=("index", "samples"))
def k2_kill(c):
    """K2: without systemd, as the plain user: `iconfs mount` in the
    background, a few icons read and a size directory listed, the daemon
    killed (-9): how long until its mount is gone, and whether the next
    `iconfs mount` at the same place serves. The index with nothing
    learned, as P7 leaves it in a full run."""
    forget_working_set(c.db)
    k = K2Mount(c, c.names300)
    trials, failed = [], None
    try:
        for _ in range(3):
            trials.append(k.trial())
    except (OSError, RuntimeError, subprocess.SubprocessError) as e:
        failed = f"not measured: {e}"
    finally:
        k.clean()
    if failed:
        not_run("K2", "kill -9, no systemd: the mount gone after", failed, goal_text=K2_GOAL)
        return
    gone = [g if g is not None else 10.0 for g, _, _ in trials]
    ok = sum(w for _, w, _ in trials)
    whys = sorted({y for _, _, y in trials if y})
    shown = "10 s+" if statistics.median(gone) >= 10.0 else None
    row("K2", "kill -9, no systemd: the mount gone after", gone, "s",
        goal=1.0, met=all(g <= 1.0 for g in gone) and ok == len(trials), shown=shown,
        note=f"the next iconfs mount there worked {ok}/{len(trials)}" +
        (f" ({'; '.join(whys)})" if whys else ""),
        goal_text=K2_GOAL)
    print(f"    K2: the next iconfs mount at that place worked {ok}/{len(trials)}" +
          (f": {'; '.join(whys)}" if whys else ""))


K1_KILL = "kill -9 under systemd: a working mount again"
K1_HANG = "a hang under systemd: a working mount again"
G_KILL = "a working mount again ≤ 3 s after kill -9"
G_HANG = "≤ WatchdogSec + 5 s after a hang"


def k1_login(c):
    """tests/test_login.py run as root; (what it printed, or None, and why
    not)."""
    login = os.path.join(ROOT, "tests", "test_login.py")
    log = os.path.join(c.tmp, "k1.log")
    if not os.path.exists(login):
        return None, "not run (tests/test_login.py missing)"
    env = {"ICONFS": ICONFS, "ICONFS_TEST_DIR": os.path.join(BUILD, "tests"),
           "ICONFS_TEST_AS_ROOT": "1"}
    cmd = (f"cd {shlex.quote(ROOT)} && env " +
           " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) +
           f" timeout 1800 {PY} tests/test_login.py > {shlex.quote(log)} 2>&1; "
           f"echo \"exit $?\" >> {shlex.quote(log)}")
    asuser.as_root("sh", "-c", cmd)
    try:
        with open(log) as f:
            return f.read(), None
    except OSError:
        return None, "not run (needs root)"


def num(s):
    try:
        return float(s)
    except ValueError:
        return None


@figure("K1")
def k1_systemd(c):
    """K1: the login under systemd (tests/test_login.py, as root), in a
    booted container: a mount working again after kill -9 and after a
    hang."""
    text, why = k1_login(c)
    m = re.search(r"^K1 kill=(\S+) hang=(\S+) watchdog=(\S+)", text or "", re.M)
    if why is None and not m:
        last = [ln for ln in text.strip().splitlines() if ln.strip()][-3:]
        why = "not measured: test_login.py printed no K1 line (" + " / ".join(last) + ")"
    if why:
        not_run("K1", K1_KILL, why, goal_text=G_KILL)
        not_run("K1", K1_HANG, why, goal_text=G_HANG)
        return
    # a figure that is not a number (the test gave up) is shown as
    # printed, and misses its goal
    wd = num(m.group(3))
    for what, tok, limit, g in ((K1_KILL, m.group(1), 3.0, G_KILL),
                                (K1_HANG, m.group(2), (wd or 0) + 5, G_HANG)):
        v = num(tok)
        row("K1", what, [v if v is not None else float("inf")], "s", goal=limit,
            judge="value", goal_text=g, shown=None if v is not None else tok,
            note=f"WatchdogSec={m.group(3)}" if what == K1_HANG else "")

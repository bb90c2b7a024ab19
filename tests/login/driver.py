#!/usr/bin/python3
"""The login test's driver, inside the booted box (tests/test_login.py).

A system unit of the box (iconfs-login-install.service, ordered before
systemd-logind, which starts the lingering user's manager at boot) runs
`driver.py install RESULTS`: `dpkg -i` of the iconfs package, as an
administrator installs it, recorded in RESULTS/install.json. Another
(iconfs-login-check.service, started beside it) runs `driver.py RESULTS` as
root. It measures, as the user and in the user's session, what the host
side then judges: it writes RESULTS/results.json after every step (a box
that overruns still leaves what it measured), diagnostics beside it, and
powers the box off. After the login's checks come the package's: the
shared layer (its build started by the installation, check-shared.sh), a
theme package installed and removed (the dpkg trigger), the package
installed again, and last the package purged. Python standard library only: the box has python3 and
nothing else of ours.

`driver.py probe MNT TIMEOUT [CHANGED_FROM]`, run as the user, is the
probe: it says "ready", waits for "go" on stdin, then asks the mount for
user.iconfs.theme every 10 ms until it answers (with a value other than
CHANGED_FROM when given) and prints one JSON line: the CLOCK_MONOTONIC
time of that answer (the clock systemd's *TimestampMonotonic use), the
value and the errors seen before it. A request to a stopped daemon blocks:
a timer ends the probe at TIMEOUT whatever the main thread is doing.
"""
import errno
import glob
import json
import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time

USER = "alice"
UID = 1000
RUN = f"/run/user/{UID}"
MNT = f"{RUN}/iconfs"
XATTR = "user.iconfs.theme"
SELF = os.path.abspath(__file__)
LOGIN = os.path.dirname(SELF)
# the packages, put there by the host (nspawn mounts a tmpfs on /tmp)
DEBS = "/var/tmp/iconfs-login"
TEST_THEME = "iconfs-test-theme"
SHARED = "iconfs-shared.service"
SHARED_PATH = "iconfs-shared.path"
OURS = "iconfs-login-"  # the test's own units
LAYER = "/var/cache/iconfs/shared.sqlite"
# what the package installs, and what enabling its units makes
PACKAGE_PATHS = [
    "/usr/bin/iconfs", "/usr/lib/systemd/user/iconfs.service",
    "/usr/lib/systemd/system/iconfs-shared.service", "/usr/lib/systemd/system/iconfs-shared.path",
    "/usr/lib/systemd/system/iconfs-shared.timer",
    "/usr/lib/environment.d/60-iconfs.conf", "/usr/share/man/man1/iconfs.1.gz",
    "/usr/share/bash-completion/completions/iconfs", "/usr/share/doc/iconfs",
    "/usr/share/lintian/overrides/iconfs", "/var/cache/iconfs",
    "/etc/systemd/user/default.target.wants/iconfs.service",
    "/etc/systemd/system/paths.target.wants/iconfs-shared.path",
    "/etc/systemd/system/timers.target.wants/iconfs-shared.timer",
    "/var/lib/dpkg/info/iconfs.list",
]
ADMIN_ENV = dict(os.environ, DEBIAN_FRONTEND="noninteractive",
                 PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
# the user's commands: the environment of a login's processes that talk to
# the user manager (runuser has no pam_systemd: no logind session of its own)
AS_USER = ["runuser", "-u", USER, "--", "env", f"HOME=/home/{USER}",
           f"XDG_RUNTIME_DIR={RUN}", f"DBUS_SESSION_BUS_ADDRESS=unix:path={RUN}/bus"]
# a program in the session: a transient service of the user manager, with
# the manager's environment (environment.d applied), as a desktop starts it
SESSION = AS_USER + ["systemd-run", "--user", "--wait", "--pipe", "--quiet", "--collect", "--"]


# ---------------------------------------------------------------- probe

def probe(mnt, timeout, changed_from=None):
    errors = {}
    state = {"last": None}

    def out(obj):
        os.write(1, (json.dumps(obj) + "\n").encode())

    def overran():
        out({"t": None, "value": state["last"], "errors": errors,
             "error": f"no answer{' with a new value' if changed_from is not None else ''} "
                      f"within {timeout} s"})
        os._exit(1)

    out({"ready": True})
    sys.stdin.readline()  # "go"
    timer = threading.Timer(timeout, overran)
    timer.daemon = True
    timer.start()
    while True:
        try:
            v = os.getxattr(mnt, XATTR).decode()
        except OSError as e:
            name = errno.errorcode.get(e.errno, str(e.errno))
            errors[name] = errors.get(name, 0) + 1
        else:
            t = time.monotonic()
            state["last"] = v
            if changed_from is None or v != changed_from:
                try:
                    icons = sorted(os.listdir(os.path.join(mnt, "icons")))
                except OSError as e:
                    icons = f"listing {mnt}/icons: {e}"
                timer.cancel()
                out({"t": t, "value": v, "errors": errors, "icons": icons})
                os._exit(0)
        time.sleep(0.01)


# ---------------------------------------------------------------- driver

def run(argv, timeout=60, input=None, env=None):
    """(returncode, stdout, stderr); a command that overruns is killed (-9)."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                           input=input, stdin=None if input is not None else subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        def s(x):
            return x.decode(errors="replace") if isinstance(x, bytes) else (x or "")
        return -9, s(e.stdout), s(e.stderr) + f"\n(killed after {timeout} s)"


def user(*argv, timeout=60):
    return run(AS_USER + list(argv), timeout=timeout)


def session(*argv, timeout=60):
    return run(SESSION + list(argv), timeout=timeout)


def show(unit, *props, as_user=False):
    args = ["systemctl"] + (["--user"] if as_user else []) + ["show", unit]
    for p in props:
        args += ["-p", p]
    rc, out, _ = user(*args) if as_user else run(args)
    return dict(l.split("=", 1) for l in out.splitlines() if "=" in l)


def mono_us(v):
    try:
        return int(v) / 1e6 if int(v) else None
    except (TypeError, ValueError):
        return None


def timespan(text):
    """Seconds of a systemd time span as `systemctl show` prints it
    ("30s", "1min 30s", "500ms"); None for none or infinity."""
    units = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "sec": 1, "min": 60, "m": 60,
             "h": 3600, "d": 86400}
    text = (text or "").strip()
    if not text or text == "infinity":
        return None
    total = 0.0
    for num, unit in re.findall(r"([\d.]+)\s*([a-zµ]*)", text):
        total += float(num) * units.get(unit or "s", 1)
    return total


class Probe:
    """A probe (see the module's comment) started as the user, ready before
    the step it measures begins."""

    def __init__(self, timeout, changed_from=None):
        self.timeout = timeout
        argv = AS_USER + ["python3", SELF, "probe", MNT, str(timeout)]
        if changed_from is not None:
            argv.append(changed_from)
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.ready = self.p.stdout.readline()

    def go(self):
        self.t_go = time.monotonic()
        self.p.stdin.write("go\n")
        self.p.stdin.flush()
        return self

    def result(self):
        try:
            out, err = self.p.communicate(timeout=self.timeout + 15)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
            return {"t": None, "error": "the probe itself overran", "stderr": err[-2000:]}
        lines = out.strip().splitlines()
        try:
            r = json.loads(lines[-1])
        except (IndexError, ValueError):
            return {"t": None, "error": f"probe said {out!r} {err[-2000:]!r} (ready: {self.ready!r})"}
        if err.strip():
            r["stderr"] = err[-2000:]
        return r


def answer(timeout):
    return Probe(timeout).go().result()


def mount_entries():
    """The mounts at MNT as the user's manager (and so the session) sees them."""
    pid = show(f"user@{UID}.service", "MainPID").get("MainPID", "0")
    path = f"/proc/{pid}/mountinfo" if pid not in ("", "0") else "/proc/self/mountinfo"
    found = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if point == MNT:
                dash = fields.index("-")
                found.append(f"{fields[dash + 1]} {fields[dash + 2]} (id {fields[0]})")
    return found


def main_pid():
    try:
        return int(show("iconfs.service", "MainPID", as_user=True).get("MainPID", "0"))
    except ValueError:
        return 0


def unit_state():
    s = show("iconfs.service", "ActiveState", "SubState", "Result", "NRestarts", "MainPID",
             as_user=True)
    return f"{s.get('ActiveState')}/{s.get('SubState')} result={s.get('Result')} " \
           f"restarts={s.get('NRestarts')} pid={s.get('MainPID')}"


def gone(pid, timeout):
    deadline = time.monotonic() + timeout
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.005)
    return not os.path.exists(f"/proc/{pid}")


def stopped(pid, timeout):
    """Wait until every thread of `pid` is stopped: kill(SIGSTOP) returns
    before the group stop is done, and a thread still running may answer
    a request sent at once."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            states = []
            for t in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{t}/stat") as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            return False
        if states and all(st in "tT" for st in states):
            return True
        time.sleep(0.001)
    return False


# ---------------------------------------------------------------- the package

def the_deb(pattern):
    found = sorted(glob.glob(os.path.join(DEBS, pattern)))
    if len(found) != 1:
        raise RuntimeError(f"expected one {pattern} in {DEBS}, found {found}")
    return found[0]


def admin(*argv, timeout=120):
    """A command of the administrator's (dpkg, apt-get): root, non-interactive."""
    return run(list(argv), timeout=timeout, env=ADMIN_ENV)


def shared_state():
    """iconfs-shared.service's last run as systemd shows it (times in
    CLOCK_MONOTONIC seconds)."""
    s = show(SHARED, "ActiveState", "SubState", "Result", "ExecMainStatus", "InvocationID",
             "ExecMainStartTimestampMonotonic", "ExecMainExitTimestampMonotonic")
    return {"state": f"{s.get('ActiveState')}/{s.get('SubState')}", "result": s.get("Result"),
            "status": s.get("ExecMainStatus"), "invocation": s.get("InvocationID"),
            "start": mono_us(s.get("ExecMainStartTimestampMonotonic")),
            "exit": mono_us(s.get("ExecMainExitTimestampMonotonic"))}


def wait_shared(started_after=None, start_timeout=20, timeout=240):
    """Wait for a run of iconfs-shared.service to end: one that started after
    `started_after` (monotonic s; None: whatever runs or is queued now).
    The state at the end, with `waited_s`; `started` False when no new run
    began within `start_timeout`."""
    t0 = time.monotonic()
    st = shared_state()
    if started_after is not None:
        while (st["start"] or 0) <= started_after:
            if time.monotonic() - t0 > start_timeout:
                st.update(started=False, waited_s=time.monotonic() - t0)
                return st
            time.sleep(0.1)
            st = shared_state()
    while True:
        queued = run(["systemctl", "list-jobs", "--no-legend", SHARED], timeout=20)[1].strip()
        if not st["state"].startswith("activating") and not queued:
            break
        if time.monotonic() - t0 > timeout:
            st.update(started=True, ended=False, waited_s=time.monotonic() - t0)
            return st
        time.sleep(0.2)
        st = shared_state()
    st.update(started=True, ended=True, waited_s=time.monotonic() - t0)
    return st


def dpkg_refresh(res, *args, timeout=120):
    """`dpkg ARGS` as the administrator, into res: "dpkg" (exit status,
    output, seconds), "at_dpkg_end" (iconfs-shared.service when dpkg
    returned) and "after", the run of the service that started after dpkg
    began (wait_shared), with when it started after dpkg began and ended
    after dpkg returned."""
    t0 = time.monotonic()
    rc, out, err = admin("dpkg", *args, timeout=timeout)
    t1 = time.monotonic()
    res["dpkg"] = {"rc": rc, "output": (out + err)[-2000:], "took_s": t1 - t0}
    res["at_dpkg_end"] = shared_state()
    after = res["after"] = wait_shared(started_after=t0, timeout=240)
    if after.get("start"):
        res["started_after_dpkg_began_s"] = after["start"] - t0
    if after.get("exit"):
        res["ended_after_dpkg_returned_s"] = after["exit"] - t1
    return after


def layer_facts():
    """The shared layer's file and what it holds, opened immutable as mounts
    open it."""
    try:
        st = os.lstat(LAYER)
    except FileNotFoundError:
        return {"exists": False}
    f = {"exists": True, "regular": stat.S_ISREG(st.st_mode), "uid": st.st_uid,
         "mode": f"{stat.S_IMODE(st.st_mode):04o}", "size": st.st_size,
         "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}
    try:
        d = os.lstat(os.path.dirname(LAYER))
        f["dir"] = f"{'symlink ' if stat.S_ISLNK(d.st_mode) else ''}" \
                   f"{stat.S_IMODE(d.st_mode):04o} uid {d.st_uid}"
        db = sqlite3.connect(f"file:{LAYER}?immutable=1", uri=True)
        try:
            ok = "status = 0 AND data IS NOT NULL"
            f["renders"] = db.execute(f"SELECT count(*) FROM blob WHERE {ok}").fetchone()[0]
            like = f"%/{TEST_THEME}/%"
            f["test_theme_rows"] = db.execute(
                "SELECT count(*) FROM blob WHERE source LIKE ?", (like,)).fetchone()[0]
            f["test_theme_renders"] = db.execute(
                f"SELECT count(*) FROM blob WHERE source LIKE ? AND {ok}", (like,)).fetchone()[0]
            # the machine's index in the layer (a user's index is layered over it)
            f["test_theme_icons"] = db.execute(
                "SELECT count(*) FROM icon i JOIN dir d ON d.listing_id = i.listing_id "
                "JOIN theme t ON t.id = d.theme_id WHERE t.name = ? AND t.valid",
                (TEST_THEME,)).fetchone()[0]
        finally:
            db.close()
    except (OSError, sqlite3.Error) as e:
        f["error"] = f"{type(e).__name__}: {e}"
    return f


def user_status():
    """The user's `iconfs status`, and its shared layer line."""
    rc, out, err = user("iconfs", "status", timeout=60)
    line = next((l for l in out.splitlines() if l.startswith("shared layer")), None)
    m = re.search(r": (\d+) PNGs", line or "")
    return {"rc": rc, "line": line, "pngs": int(m.group(1)) if m else None,
            "output": (out + err)[-1500:]}


def install(out):
    """`driver.py install RESULTS`, run by iconfs-login-install.service
    before the user's manager starts: dpkg -i of the package."""
    res = {}
    try:
        deb = the_deb("iconfs_*.deb")
        res["deb"] = os.path.basename(deb)
        res["start"] = time.monotonic()
        rc, o, e = admin("dpkg", "-i", deb, timeout=150)
        res["end"] = time.monotonic()
        res.update(rc=rc, output=(o + e)[-3000:], took_s=res["end"] - res["start"])
        # the layer's build started by the installation, as dpkg left it
        res["shared_at_end"] = shared_state()
        rc, o, e = run(["systemctl", "list-jobs", "--no-legend"], timeout=20)
        res["jobs_at_end"] = [l for l in o.splitlines() if "iconfs" in l]
    except Exception as e:  # recorded: the host says what failed
        res["error"] = f"{type(e).__name__}: {e}"
    tmp = os.path.join(out, "install.json.tmp")
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
    os.rename(tmp, os.path.join(out, "install.json"))
    print(f"install: {json.dumps(res)[:2000]}", flush=True)


class Driver:
    def __init__(self, out):
        self.out = out
        self.results = {"steps": []}
        self.diagnosed = False
        self.log = open(os.path.join(out, "driver.log"), "a", buffering=1)

    def say(self, *args):
        line = f"[{time.monotonic():10.3f}] " + " ".join(str(a) for a in args)
        print(line, flush=True)
        self.log.write(line + "\n")

    def save(self):
        tmp = os.path.join(self.out, "results.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.results, f, indent=1)
        os.rename(tmp, os.path.join(self.out, "results.json"))

    def step(self, name, fn):
        self.say(f"--- {name}")
        t = time.monotonic()
        try:
            r = fn()
        except Exception as e:  # recorded, and the next step still runs
            import traceback
            r = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        self.say(f"{name}: {json.dumps(r)[:1500]} ({time.monotonic() - t:.1f} s)")
        self.results[name] = r
        self.results["steps"].append(name)
        self.save()
        return r

    def recover(self, after):
        """Give the next step a working mount when `after` left none: lazily
        unmount what is left at MNT (as the user, as a user would), reset
        and restart the unit. Recorded: a later check that passes after a
        recovery says nothing about the step before it."""
        r = answer(3)
        if r["t"] is not None:
            return
        notes = {"left": mount_entries(), "unit": unit_state(), "probe": r}
        for _ in range(5):
            if not mount_entries():
                break
            user("fusermount3", "-uz", MNT, timeout=10)
        user("systemctl", "--user", "reset-failed", "iconfs.service", timeout=20)
        rc, o, e = user("systemctl", "--user", "restart", "iconfs.service", timeout=40)
        notes["restart"] = [rc, (o + e)[-500:]]
        notes["after"] = answer(20)
        self.say(f"recovered after {after}: {json.dumps(notes)[:1500]}")
        self.results.setdefault("recovered", {})[after] = notes
        self.save()

    # ------------------------------------------------------------ steps

    def login(self):
        """1: the mount answers within seconds of the user manager's start.
        The probe polls from before logind starts the manager."""
        probe = Probe(150).go()
        deadline = time.monotonic() + 150
        state = None
        while time.monotonic() < deadline:
            state = show(f"user@{UID}.service", "ActiveState").get("ActiveState")
            if state == "active" and os.path.exists(f"{RUN}/bus"):
                break
            time.sleep(0.1)
        r = probe.result()
        u = show(f"user@{UID}.service", "InactiveExitTimestampMonotonic",
                 "ActiveEnterTimestampMonotonic")
        i = show("iconfs.service", "InactiveExitTimestampMonotonic",
                 "ActiveEnterTimestampMonotonic", as_user=True)
        start = mono_us(u.get("InactiveExitTimestampMonotonic"))
        res = {"manager_state": state, "probe": r, "probe_started": probe.t_go,
               "manager_start": start,
               "manager_ready": mono_us(u.get("ActiveEnterTimestampMonotonic")),
               "unit_start": mono_us(i.get("InactiveExitTimestampMonotonic")),
               "unit_ready": mono_us(i.get("ActiveEnterTimestampMonotonic")),
               "unit": unit_state()}
        if r["t"] is not None and start is not None:
            res["answer_after_s"] = r["t"] - start
        return res

    def environment(self):
        """2: the session's environment."""
        rc, out, err = user("systemctl", "--user", "show-environment")
        env = dict(l.split("=", 1) for l in out.splitlines() if "=" in l)
        return {"rc": rc, "stderr": err[-1000:], "XDG_DATA_DIRS": env.get("XDG_DATA_DIRS")}

    def gtk(self):
        """3: GTK 3 started in the session finds its icons on the mount."""
        rc, out, err = session("python3", "/login/gtk_icon.py", "Adwaita", "48",
                               "edit-copy", "folder", timeout=120)
        res = {"rc": rc, "stderr": err[-2000:]}
        try:
            res.update(json.loads(out.strip().splitlines()[-1]))
        except (IndexError, ValueError):
            res["stdout"] = out[-2000:]
        return res

    def journal(self):
        """8: the daemon's messages in the user's journal, read as the user."""
        rc, out, err = user("journalctl", "--user", "-u", "iconfs.service", "--no-pager",
                            "-o", "cat", timeout=60)
        lines = out.splitlines()
        return {"rc": rc, "stderr": err[-1000:], "lines": len(lines),
                "serving": [l for l in lines if "serving theme" in l][:3],
                "head": lines[:15]}

    def theme_switch(self):
        """7: a change of GNOME's icon-theme setting in the session is
        followed by the mount within a second."""
        res = {}
        rc, out, err = session("gsettings", "get", "org.gnome.desktop.interface", "icon-theme")
        res["setting_before"] = out.strip() if rc == 0 else f"rc={rc} {err[-500:]}"
        first = answer(10)
        res["before"] = first.get("value")
        if first["t"] is None:
            res["error"] = f"the mount does not answer: {first}"
            return res
        current = first["value"]
        for key, theme in (("to_hicolor", "hicolor"), ("back", "Adwaita")):
            probe = Probe(10, changed_from=current).go()
            t0 = time.monotonic()
            rc, out, err = session("gsettings", "set", "org.gnome.desktop.interface",
                                   "icon-theme", theme)
            t1 = time.monotonic()
            r = probe.result()
            step = {"set_rc": rc, "set_output": (out + err)[-500:], "set_took_s": t1 - t0,
                    "value": r.get("value"), "errors": r.get("errors"),
                    "probe_error": r.get("error")}
            if r["t"] is not None:
                step["after_s"] = r["t"] - t1
                step["after_start_s"] = r["t"] - t0
                current = r["value"]
            res[key] = step
        return res

    def kill(self):
        """4: kill -9 of the daemon: a working mount again within seconds."""
        pid = main_pid()
        if not pid:
            return {"error": f"no daemon to kill ({unit_state()})"}
        probe = Probe(20)
        t0 = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        died = gone(pid, 5)
        probe.go()
        r = probe.result()
        res = {"pid": pid, "died": died, "probe": r, "new_pid": main_pid(),
               "mounts": mount_entries(), "unit": unit_state()}
        if r["t"] is not None:
            res["answer_after_s"] = r["t"] - t0
        return res

    def hang(self):
        """5: SIGSTOP of the daemon (a hang): the watchdog kills it and a
        working mount is back within WatchdogSec and a few seconds."""
        wd = show("iconfs.service", "WatchdogUSec", as_user=True).get("WatchdogUSec")
        watchdog = timespan(wd)
        pid = main_pid()
        if not pid:
            return {"error": f"no daemon to stop ({unit_state()})", "watchdog_s": watchdog}
        limit = (watchdog or 30) + 5
        probe = Probe(limit + 20)
        t0 = time.monotonic()
        os.kill(pid, signal.SIGSTOP)
        was_stopped = stopped(pid, 5)
        probe.go()
        r = probe.result()
        res = {"pid": pid, "stopped": was_stopped, "watchdog": wd, "watchdog_s": watchdog,
               "probe": r,
               "new_pid": main_pid(), "mounts": mount_entries(), "unit": unit_state()}
        if r["t"] is not None:
            res["answer_after_s"] = r["t"] - t0
        if os.path.exists(f"/proc/{pid}"):
            res["old_daemon_still_there"] = True
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
        return res

    def stop(self):
        """6: stopping the unit leaves no mount; starting it mounts again."""
        before = mount_entries()
        t0 = time.monotonic()
        rc, out, err = user("systemctl", "--user", "stop", "iconfs.service", timeout=60)
        res = {"before": before, "stop_rc": rc, "stop_output": (out + err)[-500:],
               "stop_took_s": time.monotonic() - t0, "after_stop": mount_entries(),
               "unit_after_stop": unit_state()}
        rc, out, err = user("systemctl", "--user", "start", "iconfs.service", timeout=60)
        res["start_rc"] = rc
        res["start_output"] = (out + err)[-500:]
        res["after_start"] = answer(20)
        res["mounts_after_start"] = mount_entries()
        return res

    # ------------------------------------------------------------ the package

    def package(self):
        """9: the package as dpkg -i installed it before the login
        (install.json), and what its installation enabled: the user unit
        for every user (nothing else enables it in the box) and the path
        unit of the shared layer."""
        try:
            with open(os.path.join(self.out, "install.json")) as f:
                res = json.load(f)
        except (OSError, ValueError) as e:
            res = {"error": f"iconfs-login-install.service left no install.json: {e}"}
        rc, out, err = run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev}${Version}", "iconfs"])
        res["dpkg_query"] = (out + err).strip()
        rc, out, err = run(["systemctl", "--global", "is-enabled", "iconfs.service"])
        res["global_enabled"] = (out + err).strip()
        try:
            res["wants_link"] = os.readlink("/etc/systemd/user/default.target.wants/iconfs.service")
        except OSError as e:
            res["wants_link"] = None
            res["wants_link_error"] = str(e)
        for what in ("is-enabled", "is-active"):
            rc, out, err = run(["systemctl", what, SHARED_PATH])
            res[f"path_{what.split('-')[1]}"] = (out + err).strip()
        return res

    def shared(self):
        """10: the shared layer. The installation started its build (the
        postinst, without making dpkg wait): nothing else starts
        iconfs-shared.service before this step. Then check-shared.sh, and
        the user's `iconfs status`."""
        inst = self.results.get("package") or {}
        res = {"first_run": wait_shared(timeout=240)}
        first = res["first_run"]
        if inst.get("start") is not None and first.get("start"):
            res["started_after_dpkg_began_s"] = first["start"] - inst["start"]
        if inst.get("end") is not None and first.get("exit"):
            res["ended_after_dpkg_returned_s"] = first["exit"] - inst["end"]
        if first.get("start") and first.get("exit"):
            res["ran_s"] = first["exit"] - first["start"]
        res["layer"] = layer_facts()
        res["status"] = user_status()
        t0 = time.monotonic()
        rc, out, err = run(["sh", os.path.join(LOGIN, "check-shared.sh")], timeout=900,
                           env=dict(ADMIN_ENV, ICONFS_SHARED_TIMEOUT="240"))
        res["check_shared"] = {
            "rc": rc, "took_s": time.monotonic() - t0, "stderr": err[-2000:],
            "tap": [l for l in out.splitlines() if re.match(r"(not )?ok \d+", l)],
            "plan": next((l for l in out.splitlines() if re.match(r"1\.\.\d+", l)), None),
            "comments": [l for l in out.splitlines() if l.startswith("#")][:80]}
        res["layer_after_check_shared"] = layer_facts()
        return res

    def theme_package(self):
        """11: a theme package installed with dpkg -i refreshes the layer
        through the dpkg trigger. The path unit is stopped meanwhile (it
        stays enabled, as the trigger asks): only the trigger can start
        the service."""
        deb = the_deb(f"{TEST_THEME}_*.deb")
        res = {"deb": os.path.basename(deb), "idle_before": wait_shared(timeout=240)}
        rc, out, err = run(["systemctl", "stop", SHARED_PATH])
        res["path_stop"] = [rc, (out + err)[-300:]]
        res["before"] = shared_state()
        res["layer_before"] = layer_facts()
        res["status_before"] = user_status()
        dpkg_refresh(res, "-i", deb)
        res["layer_after"] = layer_facts()
        res["status_after"] = user_status()
        rc, out, err = run(["systemctl", "start", SHARED_PATH])
        res["path_start"] = [rc, (out + err)[-300:]]
        return res

    def theme_removal(self):
        """12: the theme package purged: the layer is refreshed again and
        holds none of its renders (the path unit is active again, as on
        any machine; the trigger and it may both start the service)."""
        res = {"idle_before": wait_shared(timeout=240), "before": shared_state()}
        dpkg_refresh(res, "--purge", TEST_THEME)
        res["layer_after"] = layer_facts()
        res["theme_dir_left"] = os.path.lexists(f"/usr/share/icons/{TEST_THEME}")
        return res

    def reinstall(self):
        """13: dpkg -i of the same package again (configure as an upgrade's,
        with the installed version as its argument): the layer's build
        starts again, and the user's running mount is left alone."""
        deb = the_deb("iconfs_*.deb")
        res = {"idle_before": wait_shared(timeout=240), "before": shared_state(),
               "pid_before": main_pid()}
        dpkg_refresh(res, "-i", deb, timeout=150)
        res["mount"] = answer(5)
        res["pid_after"] = main_pid()
        return res

    def purge(self):
        """14, last: the user's unit stopped, then `apt-get purge iconfs`
        leaves nothing of the package behind."""
        res = {}
        rc, out, err = user("systemctl", "--user", "stop", "iconfs.service", timeout=60)
        res["user_stop"] = [rc, (out + err)[-300:]]
        res["mounts_after_user_stop"] = mount_entries()
        res["idle_before"] = wait_shared(timeout=240)
        t0 = time.monotonic()
        rc, out, err = admin("apt-get", "purge", "-y", "iconfs", timeout=180)
        said = "\n".join(l for l in (out + err).splitlines() if "Reading database" not in l)
        res["apt"] = {"rc": rc, "output": said[-2500:], "took_s": time.monotonic() - t0}
        res["left"] = [p for p in PACKAGE_PATHS if os.path.lexists(p)]
        rc, out, err = run(["dpkg", "-L", "iconfs"])
        res["dpkg_L"] = {"rc": rc, "files": out.split(), "stderr": err.strip()[-300:]}
        rc, out, err = run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev}", "iconfs"])
        res["dpkg_query"] = {"rc": rc, "output": (out + err).strip()[-300:]}
        rc, out, err = run(["systemctl", "--global", "is-enabled", "iconfs.service"])
        res["global_enabled"] = {"rc": rc, "output": (out + err).strip()[-300:]}
        # (the test's own units, iconfs-login-*, are not the package's)
        rc, out, err = run(["systemctl", "list-unit-files", "--no-legend", "iconfs*"])
        res["unit_files"] = [l for l in out.splitlines() if not l.startswith(OURS)]
        links = []
        for top in ("/etc/systemd/user", "/etc/systemd/system"):
            for d, dirs, files in os.walk(top):
                for n in dirs + files:
                    p = os.path.join(d, n)
                    target = os.readlink(p) if os.path.islink(p) else ""
                    if OURS in n or OURS in target:
                        continue
                    if "iconfs" in n or "iconfs" in target:
                        links.append(f"{p} -> {target}" if target else p)
        res["etc_systemd"] = links
        try:
            with open("/var/lib/dpkg/triggers/File") as f:
                res["trigger_interest"] = [l.strip() for l in f if "iconfs" in l]
        except OSError:
            res["trigger_interest"] = []
        # anything else named after it, on the box's own filesystem and in
        # /run; the test's packages (DEBS) and users' own data are not the
        # package's
        rc, out, err = run(["find", "/", "/run", "-xdev", "(", "-path", DEBS, "-o", "-path",
                            "/home", "-o", "-path", "/run/user", ")", "-prune", "-o",
                            "-name", "*iconfs*", "-print"], timeout=120)
        res["named"] = [p for p in out.splitlines() if OURS not in p]
        rc, out, err = run(["find", "/home", "/run/user", "-name", "*iconfs*"], timeout=60)
        res["users_data"] = out.splitlines()[:20]
        return res

    def package_diagnostics(self):
        """The package's units' and dpkg's messages, at the end."""
        for name, argv in {
                "shared-journal.txt": ["journalctl", "-b", "--no-pager", "-u", SHARED, "-u",
                                       SHARED_PATH, "-u", "iconfs-login-install.service"],
                "dpkg-log.txt": ["tail", "-n", "200", "/var/log/dpkg.log"],
                "journal-end.txt": ["journalctl", "-b", "--no-pager", "-n", "300"]}.items():
            rc, out, err = run(argv, timeout=30)
            with open(os.path.join(self.out, name), "w") as f:
                f.write(out + err)

    def diagnostics(self):
        """The login's state (before the package's steps take it away)."""
        self.diagnosed = True
        files = {
            "journal.txt": ["journalctl", "-b", "--no-pager", "-n", "400"],
            "user-journal-root.txt": ["journalctl", "-b", "--no-pager", "--user-unit",
                                      "iconfs.service"],
            "mountinfo.txt": ["cat", "/proc/self/mountinfo"],
            "failed.txt": ["systemctl", "--failed", "--no-pager"],
        }
        for name, argv in files.items():
            rc, out, err = run(argv, timeout=30)
            with open(os.path.join(self.out, name), "w") as f:
                f.write(out + err)
        for name, argv in {
                "status.txt": ["systemctl", "--user", "status", "iconfs.service", "--no-pager",
                               "-l", "-n", "60"],
                "user-units.txt": ["systemctl", "--user", "list-units", "--all", "--no-pager"],
                "user-journal.txt": ["journalctl", "--user", "-u", "iconfs.service",
                                     "--no-pager"]}.items():
            rc, out, err = user(*argv, timeout=30)
            with open(os.path.join(self.out, name), "w") as f:
                f.write(out + err)
        return {"written": sorted(os.listdir(self.out))}

    def main(self):
        self.say("driver started")
        try:
            self.step("login", self.login)
            self.step("environment", self.environment)
            self.step("gtk", self.gtk)
            self.step("journal", self.journal)
            self.step("theme_switch", self.theme_switch)
            self.recover("theme_switch")
            self.step("kill", self.kill)
            self.recover("kill")
            self.step("hang", self.hang)
            self.recover("hang")
            self.step("stop", self.stop)
            self.step("diagnostics", self.diagnostics)
            self.step("package", self.package)
            self.step("shared", self.shared)
            self.step("theme_package", self.theme_package)
            self.step("theme_removal", self.theme_removal)
            self.step("reinstall", self.reinstall)
            self.step("purge", self.purge)  # last: no iconfs after it
        finally:
            try:
                if not self.diagnosed:
                    self.diagnostics()
                self.package_diagnostics()
            finally:
                self.results["done"] = True
                self.save()
                self.say("driver done: powering off")
                run(["systemctl", "poweroff", "--no-block"])


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "probe":
        probe(sys.argv[2], float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
    if len(sys.argv) > 2 and sys.argv[1] == "install":
        install(sys.argv[2])
        sys.exit(0)
    Driver(sys.argv[1]).main()

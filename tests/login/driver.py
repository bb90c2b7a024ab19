#!/usr/bin/python3
"""The login test's driver, inside the booted box (tests/test_login.py).

A system unit of the box (iconfs-login-check.service, ordered before
systemd-logind, which starts the lingering user's manager at boot) runs
`driver.py RESULTS` as root. It measures, as the user and in the user's
session, what the host side then judges: it writes RESULTS/results.json
after every step (a box that overruns still leaves what it measured),
diagnostics beside it, and powers the box off. Python standard library
only: the box has python3 and nothing else of ours.

`driver.py probe MNT TIMEOUT [CHANGED_FROM]`, run as the user, is the
probe: it says "ready", waits for "go" on stdin, then asks the mount for
user.iconfs.theme every 10 ms until it answers (with a value other than
CHANGED_FROM when given) and prints one JSON line: the CLOCK_MONOTONIC
time of that answer (the clock systemd's *TimestampMonotonic use), the
value and the errors seen before it. A request to a stopped daemon blocks:
a timer ends the probe at TIMEOUT whatever the main thread is doing.
"""
import errno
import json
import os
import re
import signal
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

def run(argv, timeout=60, input=None):
    """(returncode, stdout, stderr); a command that overruns is killed (-9)."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
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


class Driver:
    def __init__(self, out):
        self.out = out
        self.results = {"steps": []}
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

    def diagnostics(self):
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
        finally:
            try:
                self.diagnostics()
            finally:
                self.results["done"] = True
                self.save()
                self.say("driver done: powering off")
                run(["systemctl", "poweroff", "--no-block"])


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "probe":
        probe(sys.argv[2], float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
    Driver(sys.argv[1]).main()

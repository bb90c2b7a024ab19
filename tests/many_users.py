"""Many users' first logins at once, each a user of its own (made as
asuser.py makes its one user), on one machine with its shared layer: every
user's `iconfs mount` starts together with no index of its own yet, as at a
lab's or a terminal server's first morning. Used by test_many_users.py
(what each mount does) and scripts/bench (M1: how long they take).

Root only: it makes the users and starts each mount as its user. The
binaries are copied where every user can read them, since a checkout in a
directory of root's is out of their reach."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import asuser

USERS = [f"iconfs-m{i:02d}" for i in range(1, 21)]


def copy_binaries(iconfs, into):
    """iconfs and its helper programs (found beside it) copied into `into`,
    readable by all; the copy of iconfs."""
    os.makedirs(into, mode=0o755, exist_ok=True)
    for name in ("iconfs", "iconfs-render", "iconfs-guard", "iconfs-helper"):
        shutil.copy2(os.path.join(os.path.dirname(iconfs), name), into)
    return os.path.join(into, "iconfs")


def _ticks(pid):
    """User and system CPU of process `pid` in clock ticks; 0 once gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except OSError:
        return 0


def _daemon_pid(home):
    """The pid the user's daemon wrote into its index's lock (fs/owner.h)."""
    try:
        with open(os.path.join(home, ".cache", "iconfs", "index.sqlite.lock")) as f:
            return int(f.readline())
    except (OSError, ValueError):
        return 0


def as_user(pw, run, argv, env=None):
    """Start `argv` as `pw`'s user (HOME, XDG_RUNTIME_DIR `run`)."""
    def child():
        asuser.become(pw, run)
        if env:
            os.environ.update(env)
    return subprocess.Popen(argv, preexec_fn=child, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd="/")


def first_logins(iconfs, layer, bases, n=len(USERS)):
    """Start `iconfs mount` for n users at once, each with no index yet,
    and list the mount's icons/ as soon as it returns (it returns once
    mounted, and answers once its index is ready). Each user's shell is
    started first and waits at a gate (a FIFO's end of file), opened for
    all together: starting a process as another user takes this process
    tens of ms each. One dict per user: name, rc, seconds (from the gate
    until its mount answered), cpu (seconds of its daemon's CPU until
    then), log (what it logged), and the pw, run and mnt to reach it with;
    stop them with stop_all()."""
    users = []
    for name in USERS[:n]:
        pw, run = asuser.other_user(name)
        shutil.rmtree(os.path.join(pw.pw_dir, ".cache"), ignore_errors=True)
        shutil.rmtree(os.path.join(pw.pw_dir, ".local", "state"), ignore_errors=True)
        users.append({"name": name, "pw": pw, "run": run,
                      "mnt": os.path.join(run, "iconfs")})
    tck = os.sysconf("SC_CLK_TCK")
    gate_dir = tempfile.mkdtemp(prefix="iconfs-gate-")
    gate = os.path.join(gate_dir, "gate")
    os.chmod(gate_dir, 0o755)
    os.mkfifo(gate)
    os.chmod(gate, 0o644)
    held = os.open(gate, os.O_RDWR)  # each shell's open of it returns at once
    try:
        for u in users:
            u["proc"] = as_user(
                u["pw"], u["run"],
                ["sh", "-c", 'read go < "$4"; t0=$(date +%s%N) && '
                 '"$0" mount --shared-db "$1" --icon-dirs "$2" && ls "$3/icons" > /dev/null && '
                 'echo $(($(date +%s%N) - t0))', iconfs, layer, bases, u["mnt"], gate])
        deadline = time.monotonic() + 60
        while not all(_waits_at(u["proc"].pid, gate) for u in users):
            if time.monotonic() > deadline:
                raise RuntimeError("the users' shells did not reach the gate")
            time.sleep(0.01)
    finally:
        os.close(held)  # the end of file: every shell goes on at once
        shutil.rmtree(gate_dir, ignore_errors=True)
    pending = list(users)
    while pending:
        for u in list(pending):
            if u["proc"].poll() is not None:
                u["rc"] = u["proc"].returncode
                u["cpu"] = _ticks(_daemon_pid(u["pw"].pw_dir)) / tck
                pending.remove(u)
        time.sleep(0.01)
    for u in users:
        out, err = u.pop("proc").communicate()
        u["seconds"] = int(out) / 1e9 if u["rc"] == 0 else float("nan")
        u["stderr"] = err.strip()
        log = os.path.join(u["pw"].pw_dir, ".local", "state", "iconfs", "iconfs.log")
        u["log"] = open(log).read() if os.path.exists(log) else ""
        u["pid"] = _daemon_pid(u["pw"].pw_dir)
    return users


def _waits_at(pid, gate):
    """Whether process `pid` reads the FIFO `gate` (its standard input)."""
    try:
        return os.readlink(f"/proc/{pid}/fd/0") == gate
    except OSError:
        return False


def stop_all(users, iconfs):
    """`iconfs umount` as each user; a daemon still there is killed."""
    for u in users:
        p = as_user(u["pw"], u["run"], [iconfs, "umount", u["mnt"]])
        p.communicate(timeout=60)
    for u in users:
        if u.get("pid"):
            try:
                os.kill(u["pid"], signal.SIGKILL)
            except OSError:
                pass


def main(iconfs, out, n):
    """The M1 measurement of scripts/bench (run as root): the machine's
    layer built for the system's themes (its index; hicolor's renders),
    then n first logins at once; per user [seconds, cpu, seeded] as JSON
    in `out`."""
    import json
    import tempfile

    bases = "/usr/share/icons:/usr/share/pixmaps"
    tmp = tempfile.mkdtemp(prefix="iconfs-many-")
    os.chmod(tmp, 0o755)
    try:
        exe = copy_binaries(iconfs, os.path.join(tmp, "bin"))
        layer = os.path.join(tmp, "shared.sqlite")
        subprocess.run([exe, "render", "--shared-db", layer, "--icon-dirs", bases,
                        "--theme", "hicolor", "--sizes", "16"], capture_output=True,
                       check=True, timeout=600)
        users = first_logins(exe, layer, bases, n)
        stop_all(users, exe)
        with open(out, "w") as f:
            json.dump([[u["seconds"], u["cpu"], u["rc"] == 0 and
                        "the index is layered over the machine's" in u["log"]] for u in users], f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    import sys
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))

"""Tests and benchmarks run as a user, not as root.

A user mounts iconfs without privileges: fusermount3, an unprivileged
daemon and its helpers, SCHED_IDLE and RLIMIT_NICE as the kernel applies
them to a user. So a test or benchmark started as root calls drop() first:
the process forks, the child goes on as the unprivileged user USER (made
on first use, with its own HOME and XDG_RUNTIME_DIR), and the parent stays
root only to run, on the child's request, the few commands that need root
(`as_root`: dropping the page cache, mounting a small tmpfs or an overlay),
then exits with the child's status. Started as a user, drop() does nothing
and as_root() fails.

The user must reach the checkout: the tests, their data and the built
programs. A clone in root's home (/root is 0700) is out of its reach, so
scripts/test, run as root, first calls `asuser.py grant STATE PATH...`:
search permission for USER on each directory above a PATH that it cannot
enter (a POSIX ACL entry, setfacl), written down in STATE and taken back
by `asuser.py revoke STATE` when the run ends. Where that is not enough
(files only their owner may read, a filesystem without ACLs) it says so
in one line and the run stops; drop() checks the same for a test started
some other way.
"""
import json
import os
import pwd
import signal
import socket
import stat
import subprocess
import sys

USER = "iconfs-test"
_channel = None  # the child's end of the line to its root parent


def _user(name=USER):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    # a system user with a home of its own; two tests making it at once
    # both end with the same user
    subprocess.run(["useradd", "--system", "--create-home", "--home-dir",
                    f"/var/lib/{name}", "--shell", "/bin/sh", name],
                   capture_output=True)
    return pwd.getpwnam(name)


def other_user(name):
    """User `name` made as USER is (root only), with its runtime directory:
    for tests of many users at once (many_users.py)."""
    pw = _user(name)
    return pw, _prepare(pw)


def become(pw, run):
    """This process (a fresh child of root) goes on as `pw`'s user for
    good, with its HOME and XDG_RUNTIME_DIR `run` and nothing of root's
    XDG settings."""
    _become(pw)
    for k in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
              "DBUS_SESSION_BUS_ADDRESS", "SUDO_USER", "SUDO_UID", "SUDO_GID"):
        os.environ.pop(k, None)
    os.environ.update(HOME=pw.pw_dir, USER=pw.pw_name, LOGNAME=pw.pw_name,
                      XDG_RUNTIME_DIR=run)


def _prepare(pw):
    """What the user needs from root: /dev/fuse open to users as Debian's
    udev rule makes it (0666; machines without udev leave 0600), the
    fusectl filesystem, and a runtime directory as logind makes it."""
    st = os.stat("/dev/fuse")
    if stat.S_IMODE(st.st_mode) != 0o666:
        print("asuser: /dev/fuse made 0666, the mode Debian gives it", flush=True)
        os.chmod("/dev/fuse", 0o666)
    if not os.path.ismount("/sys/fs/fuse/connections"):
        subprocess.run(["mount", "-t", "fusectl", "none", "/sys/fs/fuse/connections"],
                       capture_output=True)
    run = f"/run/user/{pw.pw_uid}"
    os.makedirs(run, mode=0o700, exist_ok=True)
    os.chown(run, pw.pw_uid, pw.pw_gid)
    os.chmod(run, 0o700)
    return run


def _serve(sock, child):
    """The root parent: run what the child asks until it closes the line."""
    f = sock.makefile("rwb", buffering=0)
    for line in f:
        argv = line.decode().rstrip("\n").split("\0")
        p = subprocess.run(argv, capture_output=True)
        f.write(f"{p.returncode}\n".encode())
    _, status = os.waitpid(child, 0)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _become(pw):
    """This process becomes `pw`'s user for good (no way back to root)."""
    os.setgroups([])
    os.setresgid(pw.pw_gid, pw.pw_gid, pw.pw_gid)
    os.setresuid(pw.pw_uid, pw.pw_uid, pw.pw_uid)


def _user_may(pw, path, mode):
    """Whether `pw`'s user may access `path` with `mode` (os.access in a
    child that has become the user)."""
    pid = os.fork()
    if pid == 0:
        try:
            _become(pw)
            os._exit(0 if os.access(path, mode) else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _parents(path):
    """The directories above `path`, nearest first, / last."""
    chain, d = [], os.path.dirname(os.path.abspath(path))
    while True:
        chain.append(d)
        if d == "/":
            return chain
        d = os.path.dirname(d)


def _need(path):
    """What the user needs of `path`: read (and list, for a directory)."""
    return os.R_OK | os.X_OK if os.path.isdir(path) else os.R_OK


def unreachable(pw, paths):
    """The first of `paths` that `pw`'s user cannot read, with a line on
    why and what to do; None when it reaches them all."""
    for path in map(os.path.abspath, paths):
        if _user_may(pw, path, _need(path)):
            continue
        # the first directory from / down that the user cannot enter
        bar = next((d for d in reversed(_parents(path)) if not _user_may(pw, d, os.X_OK)),
                   None)
        where = (f"its directory '{bar}' (mode {stat.S_IMODE(os.stat(bar).st_mode):o}) bars it"
                 if bar else f"its mode is {stat.S_IMODE(os.stat(path).st_mode):o}")
        return (f"the tests run as the user '{USER}', who cannot read '{path}': {where}; "
                f"clone the checkout where other users may read it (/tmp, /srv, a home "
                f"of mode 0755), or run the tests as yourself rather than root")
    return None


def _acl(path):
    """The extended ACL entries of `path` (getfacl's, without the base)."""
    p = subprocess.run(["getfacl", "--skip-base", "--omit-header", "--absolute-names", path],
                       capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else ""


def grant(state, paths):
    """Search permission for USER on every directory above `paths` that
    it cannot enter, recorded in the file `state` for revoke(); 0, or 1
    with one line on stderr when the user still cannot read them."""
    pw = _user()
    granted = []
    for path in paths:
        for d in reversed(_parents(path)):
            if _user_may(pw, d, os.X_OK):
                continue
            had = bool(_acl(d))
            if subprocess.run(["setfacl", "-m", f"u:{USER}:x", d],
                              capture_output=True).returncode != 0:
                break
            granted.append((d, had))
    with open(state, "w") as f:
        json.dump(granted, f)
    why = unreachable(pw, paths)
    if why:
        revoke(state)
        print(f"asuser: {why}", file=sys.stderr)
        return 1
    for d, _ in granted:
        print(f"asuser: '{USER}' may enter '{d}' for this run (an ACL entry, taken back "
              f"at its end)")
    return 0


def revoke(state):
    """Take back what grant() gave (the file `state` says what)."""
    try:
        with open(state) as f:
            granted = json.load(f)
    except (OSError, ValueError):
        return 0
    for d, had in reversed(granted):
        # an ACL made only for the run goes whole (mask included)
        argv = ["setfacl", "-x", f"u:{USER}", d] if had else ["setfacl", "-b", d]
        subprocess.run(argv, capture_output=True)
    os.unlink(state)
    return 0


def drop(writable=()):
    """Go on as USER when running as root (see the module's comment).
    `writable`: directories (made if missing) that the user must be able to
    write, such as a build's shared test directory."""
    global _channel
    if os.geteuid() != 0:
        return
    pw = _user()
    here = os.path.dirname(os.path.abspath(__file__))
    why = unreachable(pw, [os.path.join(here, "common.py"), os.path.join(here, "data")])
    if why:
        print(f"asuser: {why} (scripts/test grants it for a run)", flush=True)
        sys.exit(1)
    run = _prepare(pw)
    for d in writable:
        os.makedirs(d, exist_ok=True)
        os.chown(d, pw.pw_uid, pw.pw_gid)
    parent_end, child_end = socket.socketpair()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        child_end.close()
        # a time-out of the test runner ends the child too
        signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGTERM))
        _serve(parent_end, pid)
    parent_end.close()
    _channel = child_end.makefile("rwb", buffering=0)
    become(pw, run)


def as_root(*argv):
    """Run `argv` as root through the parent; True when it exited 0. False
    when this process never was root."""
    if _channel is None:
        return os.geteuid() == 0 and subprocess.run(argv, capture_output=True).returncode == 0
    _channel.write(("\0".join(argv) + "\n").encode())
    return _channel.readline().strip() == b"0"


def drop_caches():
    """Write back and drop the page cache, dentries and inodes (root)."""
    return as_root("sh", "-c", "sync && echo 3 > /proc/sys/vm/drop_caches")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "grant":
        sys.exit(grant(sys.argv[2], sys.argv[3:]))
    if len(sys.argv) == 3 and sys.argv[1] == "revoke":
        sys.exit(revoke(sys.argv[2]))
    sys.exit("usage: asuser.py grant STATE PATH... | revoke STATE")

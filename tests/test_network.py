#!/usr/bin/env python3
"""A home on a network filesystem, for real: an sshfs mount of a directory
served by an sshd on 127.0.0.1 (both run by the test user), used as the
user's cache home and as a base directory. The index goes to local disk
(/var/tmp/iconfs-UID) with a log line saying why, and `iconfs status` names
the place; a directory there that others may write is refused for the
runtime directory. An icon added on the server side (not through the sshfs
mount, so no inotify event here) is served within 35 s. Two hosts (two
machine ids, through a mount namespace made by root) given the same
explicit --db on the sshfs open two different files. An index there is
never stamped as checked (sshfs has no user xattrs): damage with its mtime
kept is still found and the file moved aside."""
import errno
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time

import asuser
from common import (ICONFS, check, check_eq, errno_of, finish, need_fuse, scalable_theme, skip,
                    svg_square, wait_for)

need_fuse()
for tool in ("/usr/sbin/sshd", "sshfs", "ssh-keygen"):
    if not shutil.which(tool):
        skip(f"{tool} is not installed (run scripts/setup)")

UID = os.getuid()
LOCAL = f"/var/tmp/iconfs-{UID}"
PORT = 22000 + os.getpid() % 1000


with tempfile.TemporaryDirectory() as tmp:
    srv = os.path.join(tmp, "srv")  # the server's side
    net = os.path.join(tmp, "net")  # the sshfs mount of it
    os.makedirs(os.path.join(srv, "cache"))
    os.mkdir(net)
    key, hostkey = os.path.join(tmp, "userkey"), os.path.join(tmp, "hostkey")
    for k in (key, hostkey):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", k], check=True)
    auth = os.path.join(tmp, "authorized_keys")
    shutil.copy(key + ".pub", auth)
    cfg = os.path.join(tmp, "sshd_config")
    with open(cfg, "w") as f:
        f.write(f"Port {PORT}\nListenAddress 127.0.0.1\nHostKey {hostkey}\n"
                f"PidFile {tmp}/sshd.pid\nUsePAM no\nStrictModes no\n"
                f"AuthorizedKeysFile {auth}\nSubsystem sftp internal-sftp\n")
    sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", cfg],
                            stderr=open(os.path.join(tmp, "sshd.log"), "w"))
    daemon = None
    try:
        mounted_net = False
        for _ in range(50):
            p = subprocess.run(["sshfs", "-p", str(PORT), "-o",
                                f"IdentityFile={key},StrictHostKeyChecking=no,"
                                "UserKnownHostsFile=/dev/null,BatchMode=yes",
                                f"127.0.0.1:{srv}", net], capture_output=True, text=True)
            if p.returncode == 0:
                mounted_net = True
                break
            time.sleep(0.1)
        check(mounted_net, f"sshfs mounts the served directory ({p.stderr.strip()})")
        if not mounted_net:
            finish()

        # a base directory on the network, and the cache home there too
        theme = scalable_theme(os.path.join(srv, "icons"), "net")
        for i in range(3):
            with open(os.path.join(theme, f"n{i}.svg"), "w") as f:
                f.write(svg_square("blue", 4 + i))
        for f in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm"):
            if os.path.exists(os.path.join(LOCAL, f)):
                os.unlink(os.path.join(LOCAL, f))
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(net, "cache"),
                   GSETTINGS_BACKEND="memory")
        bases = os.path.join(net, "icons")

        st = subprocess.run([ICONFS, "status", "--no-shared-db"], capture_output=True,
                            text=True, env=env)
        lines = dict(l.split(None, 1) if not l.startswith("index place") else
                     ("index place", l[len("index place"):].strip()) for l in st.stdout.splitlines()
                     if l.strip())
        check_eq(lines.get("index", "").strip(), f"{LOCAL}/index.sqlite",
                 "status: the index is on this host")
        check_eq(lines.get("index place"),
                 f"the cache directory '{net}/cache/iconfs' is on a network filesystem "
                 f"(fuse.sshfs): the index is kept on this host, in '{LOCAL}/index.sqlite'",
                 "status says why")

        mnt = os.path.join(tmp, "mnt")
        os.mkdir(mnt)
        log = open(os.path.join(tmp, "daemon.log"), "w+")
        daemon = subprocess.Popen([ICONFS, "mount", "-f", "--no-shared-db", "--icon-dirs", bases,
                                   "--theme", "net", mnt], env=env, stdout=log, stderr=log)
        up = wait_for(lambda: os.path.ismount(mnt), 60)
        check(up is not None, "the mount comes up")
        log.seek(0)
        text = log.read()
        check(f"iconfs: the cache directory '{net}/cache/iconfs' is on a network filesystem "
              f"(fuse.sshfs): the index is kept on this host, in '{LOCAL}/index.sqlite'" in text,
              f"one log line says where the index went and why: {text!r}")
        check(f"iconfs: base directory '{bases}' is on a network filesystem (fuse.sshfs): its "
              "stamps are checked every 10 s" in text, "the base directory's periodic check")
        check(os.path.exists(f"{LOCAL}/index.sqlite"), "the index file is on local disk")
        check(not os.path.exists(os.path.join(srv, "cache", "iconfs", "index.sqlite")),
              "and not in the network home")
        st = os.lstat(LOCAL)
        check_eq((oct(st.st_mode & 0o777), st.st_uid), (oct(0o700), UID),
                 "the local directory is the user's, 0700")
        check(os.path.exists(os.path.join(mnt, "icons/net/32x32/n1.png")), "an icon is served")
        status = subprocess.run([ICONFS, "status", "--no-shared-db", mnt], capture_output=True,
                                text=True, env=env).stdout
        check(f"index place      the cache directory '{net}/cache/iconfs' is on a network "
              "filesystem" in status and "(mounted)" in status,
              "status of the mount names the place")

        # made on "another host": written on the server's side directly
        time.sleep(1)
        with open(os.path.join(theme, "added.svg"), "w") as f:
            f.write(svg_square("green", 9))
        new = os.path.join(mnt, "icons/net/32x32/added.png")
        took = wait_for(lambda: os.path.exists(new), 40)
        print(f"an icon added on the server side: served after {took} s")
        check(took is not None and took <= 35,
              f"an icon added on the server side is served within 35 s ({took})")
    finally:
        if daemon:
            subprocess.run(["fusermount3", "-uz", os.path.join(tmp, "mnt")], capture_output=True)
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                daemon.kill()

    # a local directory that others may write is refused
    try:
        os.chmod(LOCAL, 0o777)
        st = subprocess.run([ICONFS, "status", "--no-shared-db"], capture_output=True, text=True,
                            env=env).stdout
        rt = os.path.join(os.environ["XDG_RUNTIME_DIR"], "iconfs-cache")
        check(f"index            {rt}/index.sqlite" in st and
              f"'{LOCAL}' is not a directory of this user's that only it may write" in st,
              f"a /var/tmp directory others may write is refused: {st!r}")
    finally:
        os.chmod(LOCAL, 0o700)

    # two hosts, one explicit --db on the network: two files
    shared = os.path.join(net, "shared.sqlite")
    ids = ["0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"]
    for i, mid in enumerate(ids):
        idfile = os.path.join(tmp, f"machine-id-{i}")
        with open(idfile, "w") as f:
            f.write(mid + "\n")
        ran = asuser.as_root(
            "unshare", "-m", "sh", "-c",
            f"mount --bind {idfile} /etc/machine-id && exec setpriv --reuid={UID} "
            f"--regid={os.getgid()} --clear-groups env HOME={os.environ['HOME']} "
            f"{ICONFS} index --db {shared} --icon-dirs {bases}")
        check(ran, f"iconfs index on host {i}")
    got = sorted(f for f in os.listdir(srv) if f.startswith("shared."))
    check_eq([f for f in got if f.endswith(".sqlite")],
             [f"shared.{ids[0]}.sqlite", f"shared.{ids[1]}.sqlite"],
             "two hosts open two different files")
    check(not os.path.exists(os.path.join(srv, "shared.sqlite")), "never the shared name")

    # sshfs has no user xattrs: no index there is ever stamped as checked
    # (db.h), so damage made outside SQLite, its mtime kept, is still found
    with open("/etc/machine-id") as f:
        mine = os.path.join(srv, f"mine.{f.read().strip()}.sqlite")
    for _ in range(2):
        p = subprocess.run([ICONFS, "index", "--db", os.path.join(net, "mine.sqlite"),
                            "--icon-dirs", bases], capture_output=True, text=True)
        check_eq(p.returncode, 0, f"iconfs index --db on the sshfs ({p.stderr.strip()})")
    check_eq(errno_of(lambda: os.getxattr(os.path.join(net, os.path.basename(mine)),
                                          "user.iconfs.checked")),
             errno.EOPNOTSUPP, "no stamp on the sshfs")
    with sqlite3.connect(mine) as c:
        page, size = c.execute("SELECT rootpage, (SELECT page_size FROM pragma_page_size) "
                               "FROM sqlite_schema WHERE name = 'icon'").fetchone()
    st = os.stat(mine)
    with open(mine, "r+b") as f:
        f.seek((page - 1) * size)
        f.write(b"\xff" * size)
    os.utime(mine, ns=(st.st_atime_ns, st.st_mtime_ns))
    p = subprocess.run([ICONFS, "index", "--db", os.path.join(net, "mine.sqlite"),
                        "--icon-dirs", bases], capture_output=True, text=True)
    check(p.returncode == 0 and "moved aside" in p.stderr and os.path.exists(mine + ".broken"),
          f"the damage is found and the file moved aside ({p.returncode}, {p.stderr.strip()})")

    subprocess.run(["fusermount3", "-u", net], capture_output=True)
    sshd.send_signal(signal.SIGTERM)
    sshd.wait(timeout=10)
finish()

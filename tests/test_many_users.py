#!/usr/bin/env python3
"""Twenty users' first logins at once on one machine with its shared layer
(many_users.py; run as root, which makes the users): every `iconfs mount`
serves, one daemon per user, and every user's new index is layered over
the machine's (the layer's index) instead of reading every directory;
each mount answers its own user with the layer's themes."""
import os
import shutil
import subprocess
import tempfile

from common import ICONFS, check, check_eq, finish
import many_users

BASES = "/usr/share/icons:/usr/share/pixmaps"

tmp = tempfile.mkdtemp(prefix="iconfs-many-")
os.chmod(tmp, 0o755)
try:
    iconfs = many_users.copy_binaries(ICONFS, os.path.join(tmp, "bin"))
    layer = os.path.join(tmp, "shared.sqlite")
    p = subprocess.run([iconfs, "render", "--shared-db", layer, "--icon-dirs", BASES,
                        "--theme", "hicolor", "--sizes", "16"],
                       capture_output=True, text=True, timeout=600)
    check_eq(p.returncode, 0, f"the machine's layer is built ({p.stderr.strip()})")
    users = many_users.first_logins(iconfs, layer, BASES)
    try:
        for u in users:
            check_eq(u["rc"], 0, f"{u['name']}: its mount serves ({u['stderr']})")
        daemons = {u["pid"] for u in users if u["pid"]}
        check_eq(len(daemons), len(users), "one daemon per user")
        seeded = [u["name"] for u in users if "the index is layered over the machine's" in u["log"]]
        check_eq(len(seeded), len(users), "every new index is layered over the machine's")
        for u in users:
            p = many_users.as_user(u["pw"], u["run"],
                                   ["ls", os.path.join(u["mnt"], "icons")])
            out, _ = p.communicate(timeout=60)
            check("hicolor" in out.split() and "Papirus" in out.split(),
                  f"{u['name']}: its mount shows the themes ({out.split()[:4]})")
        times = sorted(u["seconds"] for u in users)
        cpu = sorted(u["cpu"] for u in users)
        print(f"{len(users)} first logins at once: answered after {times[0]:.2f}-{times[-1]:.2f} s "
              f"(median {times[len(times) // 2]:.2f}), daemon CPU {cpu[0]:.2f}-{cpu[-1]:.2f} s")
    finally:
        many_users.stop_all(users, iconfs)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()

#!/usr/bin/env python3
"""Session integration: `meson install` puts the binary, the systemd user
unit, the environment.d drop-in and the shared layer's system service and
path unit in place; `systemd-analyze verify` accepts the units; the drop-in
expands to the mountpoint prepended to the original list (or the
specification's default when it is unset)."""
import os
import re
import shutil
import subprocess
import tempfile

from common import check, check_eq, finish, skip

build = os.environ.get("MESON_BUILD_ROOT") or os.path.join(os.path.dirname(os.environ["ICONFS"]), "..")
if not shutil.which("systemd-analyze"):
    skip("systemd-analyze is not installed")

with tempfile.TemporaryDirectory() as dest:
    p = subprocess.run(["meson", "install", "-C", build, "--destdir", dest, "--no-rebuild",
                        "--quiet"], capture_output=True, text=True)
    check_eq(p.returncode, 0, f"meson install ({p.stderr[-500:]})")
    prefix = subprocess.run(["meson", "introspect", build, "--buildoptions"],
                            capture_output=True, text=True).stdout
    import json
    prefix = next(o["value"] for o in json.loads(prefix) if o["name"] == "prefix")
    root = dest + prefix
    binary = os.path.join(root, "bin", "iconfs")
    # the render worker: in libexecdir, where the installed iconfs looks
    libexecdir = next(o["value"] for o in json.loads(subprocess.run(
        ["meson", "introspect", build, "--buildoptions"], capture_output=True,
        text=True).stdout) if o["name"] == "libexecdir")
    worker = os.path.join(root, libexecdir, "iconfs", "iconfs-render")
    guard = os.path.join(root, libexecdir, "iconfs", "iconfs-guard")
    helper = os.path.join(root, libexecdir, "iconfs", "iconfs-helper")
    unit = os.path.join(root, "lib", "systemd", "user", "iconfs.service")
    dropin = os.path.join(root, "lib", "environment.d", "60-iconfs.conf")
    shared_service = os.path.join(root, "lib", "systemd", "system", "iconfs-shared.service")
    shared_path = os.path.join(root, "lib", "systemd", "system", "iconfs-shared.path")
    shared_timer = os.path.join(root, "lib", "systemd", "system", "iconfs-shared.timer")
    for f in (binary, worker, guard, helper, unit, dropin, shared_service, shared_path, shared_timer):
        check(os.path.exists(f), f"installed {f[len(dest):]}")

    text = open(unit).read()
    check(f"ExecStart={prefix}/bin/iconfs mount -f %t/iconfs" in text, "unit starts the installed binary")
    keys = dict(l.split("=", 1) for l in text.splitlines() if "=" in l and not l.startswith("#"))
    check_eq((keys.get("Type"), keys.get("Restart")), ("notify", "always"),
             "the unit waits for READY=1 and always comes back")
    check(int(keys.get("WatchdogSec", "0")) > 0, "the unit has a watchdog")
    check(keys.get("ExecStop", "").endswith("-uz %t/iconfs"), "the unit unmounts lazily on stop")
    check_eq(keys.get("ExecStopPost"), f"{prefix}/bin/iconfs mount-guard %t/iconfs",
             "the unit clears the mount a killed daemon leaves")
    # verify against the installed binary: point ExecStart into the destdir
    verify_dir = os.path.join(dest, "verify")
    os.makedirs(verify_dir)
    vunit = os.path.join(verify_dir, "iconfs.service")
    with open(vunit, "w") as f:
        f.write(text.replace(f"{prefix}/bin/iconfs", binary))
    p = subprocess.run(["systemd-analyze", "--user", "verify", "--man=no", vunit],
                       capture_output=True, text=True,
                       env=dict(os.environ, XDG_RUNTIME_DIR=verify_dir))
    problems = [l for l in (p.stdout + p.stderr).splitlines() if "iconfs.service" in l]
    check_eq((p.returncode, problems), (0, []),
             "systemd-analyze verify has nothing to say about the unit")

    # the shared layer: a oneshot system service that indexes every theme
    # and renders what is used into the system path (the default theme, what
    # users asked for: not every theme), started by a path unit when themes
    # change and by a timer
    text = open(shared_service).read()
    check(f"ExecStart={prefix}/bin/iconfs render --shared-db /var/cache/iconfs/shared.sqlite\n"
          in text, "the service renders what is used into the system's layer, not every theme")
    keys = dict(l.split("=", 1) for l in text.splitlines() if "=" in l and not l.startswith("#"))
    check_eq((keys.get("Type"), keys.get("CacheDirectory"), keys.get("CacheDirectoryMode")),
             ("oneshot", "iconfs", "0755"), "a oneshot with a world-readable cache directory")
    # it renders SVGs any package may ship: confined, but still uid 0, since
    # mounts trust only a layer owned by root or by themselves (fs/blob.c)
    check_eq((keys.get("User"), keys.get("DynamicUser")), (None, None),
             "the layer is written as root (a dynamic or system user's file is not trusted)")
    check_eq((keys.get("CapabilityBoundingSet"), keys.get("ProtectSystem"),
              keys.get("PrivateNetwork"), keys.get("NoNewPrivileges")),
             ("", "strict", "yes", "yes"),
             "the render has no capabilities, a read-only system and no network")
    path_text = open(shared_path).read()
    check("PathChanged=/usr/share/icons" in path_text and "Unit=iconfs-shared.service" in path_text,
          "the path unit starts it when /usr/share/icons changes")
    timer_text = open(shared_timer).read()
    check("OnUnitInactiveSec=" in timer_text and "Unit=iconfs-shared.service" in timer_text,
          "the timer starts it again now and then (users' requests)")
    sys_dir = os.path.join(dest, "verify-system")
    os.makedirs(sys_dir)
    with open(os.path.join(sys_dir, "iconfs-shared.service"), "w") as f:
        f.write(text.replace(f"{prefix}/bin/iconfs", binary))
    shutil.copy(shared_path, sys_dir)
    shutil.copy(shared_timer, sys_dir)
    p = subprocess.run(["systemd-analyze", "verify", "--man=no", os.path.join(sys_dir, "iconfs-shared.path"),
                        os.path.join(sys_dir, "iconfs-shared.timer"),
                        os.path.join(sys_dir, "iconfs-shared.service")],
                       capture_output=True, text=True)
    problems = [l for l in (p.stdout + p.stderr).splitlines() if "iconfs-shared" in l]
    check_eq((p.returncode, problems), (0, []),
             "systemd-analyze verify has nothing to say about the system units")
    p = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--threshold=30",
                        os.path.join(sys_dir, "iconfs-shared.service")],
                       capture_output=True, text=True)
    exposure = re.search(r"Overall exposure level for iconfs-shared\.service: ([0-9.]+)",
                         p.stdout + p.stderr)
    check(p.returncode == 0 and exposure and float(exposure.group(1)) <= 3.0,
          f"systemd-analyze security rates the shared service 3.0 or safer "
          f"({exposure.group(1) if exposure else (p.stdout + p.stderr)[-300:]})")

    gen = "/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator"
    if os.path.exists(gen):
        conf = os.path.join(dest, "config")
        os.makedirs(os.path.join(conf, "environment.d"))
        shutil.copy(dropin, os.path.join(conf, "environment.d"))
        for original, want in (("/opt/share:/usr/share", "/run/user/4242/iconfs:/opt/share:/usr/share"),
                               (None, "/run/user/4242/iconfs:/usr/local/share/:/usr/share/")):
            env = {"XDG_CONFIG_HOME": conf, "XDG_RUNTIME_DIR": "/run/user/4242", "PATH": os.environ["PATH"]}
            if original:
                env["XDG_DATA_DIRS"] = original
            out = subprocess.run([gen], capture_output=True, text=True, env=env).stdout
            got = [l.split("=", 1)[1] for l in out.splitlines() if l.startswith("XDG_DATA_DIRS=")]
            check_eq(got, [want], f"drop-in expands with XDG_DATA_DIRS={original}")
    else:
        check(False, "systemd's environment.d generator is missing")
finish()

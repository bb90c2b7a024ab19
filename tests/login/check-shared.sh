#!/bin/sh
# The shared layer as the Debian package installs it, in a booted Debian 12
# box (systemd as PID 1) with the iconfs package installed: run as root,
#
#   sh check-shared.sh
#
# it checks that the package enabled what it should, starts
# iconfs-shared.service (the confined oneshot render) and waits for it, and
# checks that /var/cache/iconfs/shared.sqlite exists, is trusted by mounts
# (a regular file of root's, writable by nobody else, fs/blob.c), readable
# by others, holds renders, and that an unprivileged user's `iconfs status`
# takes it; then that the dpkg trigger and the path unit start the service
# again. Prints one "ok"/"not ok" line per check (TAP) and the service's
# journal on a failure; exits 1 when a check failed, 77 when it cannot run.
# Needs only the box's own tools (systemd, util-linux, python3).
set -u

LAYER=/var/cache/iconfs/shared.sqlite
UNIT=iconfs-shared.service
TIMEOUT=${ICONFS_SHARED_TIMEOUT:-600}
n=0
failed=0

check() {
	# check DESCRIPTION COMMAND...: one TAP line for the command's status
	desc=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		failed=1
	fi
}

if [ "$(id -u)" -ne 0 ] || [ ! -d /run/systemd/system ]; then
	echo "1..0 # SKIP needs root in a booted systemd"
	exit 77
fi

# When a start of the service ends: wait while it is activating.
wait_idle() {
	t=0
	while [ "$(systemctl show -P ActiveState "$UNIT")" = activating ]; do
		[ "$t" -ge "$TIMEOUT" ] && return 1
		sleep 1
		t=$((t + 1))
	done
	return 0
}

succeeded() {
	[ "$(systemctl show -P Result "$UNIT")" = success ] &&
		[ "$(systemctl show -P ExecMainStatus "$UNIT")" = 0 ]
}

# The start time of the last run (monotonic µs; 0 before the first).
started() {
	systemctl show -P ExecMainStartTimestampMonotonic "$UNIT"
}

# Renders in the layer (rows with data), read as the box's python3 reads
# any file: opened immutable, as mounts open it.
renders() {
	python3 - "$LAYER" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?immutable=1", uri=True)
print(db.execute("SELECT count(*) FROM blob WHERE status = 0 AND data IS NOT NULL").fetchone()[0])
EOF
}

# --- what the package set up
check "the user unit is enabled for every user" \
	sh -c '[ "$(systemctl --global is-enabled iconfs.service)" = enabled ]'
check "iconfs-shared.path is enabled" systemctl --quiet is-enabled iconfs-shared.path
check "iconfs-shared.path is active" systemctl --quiet is-active iconfs-shared.path
check "the environment.d drop-in is installed" test -f /usr/lib/environment.d/60-iconfs.conf

# --- one run of the confined service
systemctl reset-failed "$UNIT" 2>/dev/null
wait_idle
before=$(started)
t0=$(date +%s)
timeout "$TIMEOUT" systemctl start "$UNIT"
rc=$?
t1=$(date +%s)
echo "# $UNIT ran in $((t1 - t0)) s (systemctl start exit status $rc)"
check "$UNIT ran" sh -c "[ $rc -eq 0 ] && [ '$(started)' != '$before' ]"
check "$UNIT succeeded" succeeded

check "/var/cache/iconfs is a directory (not a symlink), mode 0755, root's" \
	sh -c '[ ! -L /var/cache/iconfs ] && [ "$(stat -c %a:%u /var/cache/iconfs)" = 755:0 ]'
check "$LAYER is a regular file" sh -c "[ -f $LAYER ] && [ ! -L $LAYER ]"
check "$LAYER is root's, mode 0644 (mounts trust it)" \
	sh -c "[ \"\$(stat -c %a:%u $LAYER)\" = 644:0 ]"
check "$LAYER is readable by others (nobody)" \
	runuser -u nobody -- sh -c "head -c 16 $LAYER | grep -q 'SQLite format 3'"
count=$(renders 2>&1)
echo "# $LAYER: $(stat -c %s "$LAYER" 2>/dev/null) bytes, $count renders"
check "$LAYER holds renders" sh -c "[ '$count' -gt 0 ] 2>/dev/null"
check "no copy or lock file of a run is left beside it" \
	sh -c "[ ! -e $LAYER.new ] && [ ! -e $LAYER.new-journal ]"

# --- an unprivileged user's iconfs takes the layer (fs/blob.c's rule)
home=$(mktemp -d)
chown nobody "$home"
status=$(runuser -u nobody -- env -i PATH=/usr/bin:/bin HOME="$home" \
	XDG_CACHE_HOME="$home/cache" XDG_RUNTIME_DIR="$home" \
	sh -c 'iconfs index >/dev/null 2>&1; iconfs status 2>&1')
echo "$status" | sed 's/^/# /'
check "an unprivileged user's iconfs status takes the layer" \
	sh -c "echo '$status' | grep -q '^shared layer *$LAYER: [1-9][0-9]* PNGs'"
rm -rf "$home"

# --- a user's request (content/asked.h) is taken in by the next run
REQUESTS=/var/cache/iconfs/requests
check "$REQUESTS is root's, mode 1733 (anyone adds, nobody lists)" \
	sh -c "[ \"\$(stat -c %a:%u $REQUESTS)\" = 1733:0 ]"
asked=$(readlink -f "$(find /usr/share/icons -path '*/scalable/*' -name '*.svg' | sort | head -1)")
runuser -u nobody -- sh -c "printf '40 %s\\n' '$asked' > $REQUESTS/65534.check"
wait_idle
timeout "$TIMEOUT" systemctl start "$UNIT"
wait_idle
rendered=$(python3 - "$LAYER" "$asked" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?immutable=1", uri=True)
print(db.execute("SELECT count(*) FROM blob WHERE source = ? AND px = 40 AND status = 0",
                 (sys.argv[2],)).fetchone()[0])
EOF
)
echo "# asked for $asked at 40 px: $rendered render(s) in the layer"
check "a user's request is rendered into the layer by the confined service" \
	sh -c "[ '$rendered' = 1 ]"
check "and the request is taken away" sh -c "[ ! -e $REQUESTS/65534.check ]"

# --- the dpkg trigger (debian/iconfs.postinst) starts it again
before=$(started)
dpkg-trigger --no-await /usr/share/icons && dpkg --triggers-only iconfs
sleep 1
wait_idle
check "the dpkg trigger on /usr/share/icons starts $UNIT" \
	sh -c "[ '$(started)' != '$before' ]"
check "... and it succeeded" succeeded

# --- the path unit starts it when a theme directory comes or goes
before=$(started)
mkdir /usr/share/icons/iconfs-check-shared && rmdir /usr/share/icons/iconfs-check-shared
t=0
while [ "$(started)" = "$before" ] && [ $t -lt 10 ]; do
	sleep 1
	t=$((t + 1))
done
wait_idle
check "iconfs-shared.path starts $UNIT when /usr/share/icons changes" \
	sh -c "[ '$(started)' != '$before' ]"
check "... and it succeeded" succeeded
count=$(renders 2>&1)
check "$LAYER still holds renders, root's, mode 0644" \
	sh -c "[ '$count' -gt 0 ] 2>/dev/null && [ \"\$(stat -c %a:%u $LAYER)\" = 644:0 ]"

echo "1..$n"
if [ "$failed" -ne 0 ]; then
	echo "# the service's journal:"
	journalctl -b -u "$UNIT" --no-pager | tail -60 | sed 's/^/# /'
	systemctl status --no-pager "$UNIT" | sed 's/^/# /'
fi
exit "$failed"

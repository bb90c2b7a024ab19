#!/bin/sh
# Run each libFuzzer target that meson built (-Dfuzz=true, see
# fuzz/meson.build) for FUZZ_SECONDS (default 15) from the seed corpus in
# tests/data/fuzz/<target>/, keeping what it finds beside the targets.
# A long run:  FUZZ_SECONDS=3600 tests/fuzz.sh build-fuzz/fuzz
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: fuzz.sh DIR-OF-FUZZ-TARGETS}
seconds=${FUZZ_SECONDS:-15}

status=0
for t in theme view lookup; do
	if [ ! -x "$out/fuzz-$t" ]; then
		echo "FAIL: $out/fuzz-$t is not built (meson -Dfuzz=true)"
		exit 1
	fi
	corpus=$out/corpus-$t
	mkdir -p "$corpus"
	cp -n "$src/tests/data/fuzz/$t"/* "$corpus"/ 2>/dev/null || true
	echo "fuzz-$t: $seconds s"
	if ! ASAN_OPTIONS=detect_leaks=0 "$out/fuzz-$t" -max_total_time="$seconds" \
		-max_len=65536 -timeout=10 -artifact_prefix="$out/crash-$t-" "$corpus" \
		>"$out/fuzz-$t.log" 2>&1; then
		echo "FAIL: fuzz-$t found a crash:"
		tail -40 "$out/fuzz-$t.log"
		status=1
	fi
	grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs" "$out/fuzz-$t.log" | tail -1
done
exit $status

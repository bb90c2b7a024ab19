#!/bin/sh
# Build the libFuzzer targets in fuzz/ with clang (ASan + UBSan) and run
# each for FUZZ_SECONDS (default 15) from the seed corpus in
# tests/data/fuzz/<target>/. Exit 77 (skipped) without clang's libFuzzer.
# A long run:  FUZZ_SECONDS=3600 tests/fuzz.sh BUILD_DIR
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
out=$build/fuzz
seconds=${FUZZ_SECONDS:-15}

command -v clang >/dev/null || { echo "SKIP: no clang"; exit 77; }
mkdir -p "$out"
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' > "$out/probe.c"
clang -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" 2>/dev/null ||
	{ echo "SKIP: clang has no libFuzzer (libclang-rt-14-dev)"; exit 77; }

flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
	-std=c11 -D_GNU_SOURCE -DFUSE_USE_VERSION=312
	-I$src/basic -I$src/indexer -I$src/fs -I$src/schema
	$(pkg-config --cflags glib-2.0 sqlite3)"
libs="$(pkg-config --libs glib-2.0 sqlite3)"
idx="$src/indexer/theme.c $src/indexer/db.c $src/indexer/scan.c
	$src/indexer/lookup.c $src/indexer/basedirs.c $src/basic/log.c
	$build/schema/schema.c"

# shellcheck disable=SC2086
clang $flags "$src/fuzz/fuzz-theme.c" "$src/indexer/theme.c" "$src/basic/log.c" \
	-o "$out/fuzz-theme" $libs
# shellcheck disable=SC2086
clang $flags "$src/fuzz/fuzz-view.c" "$src/fs/view.c" $idx -o "$out/fuzz-view" $libs
# shellcheck disable=SC2086
clang $flags "$src/fuzz/fuzz-lookup.c" $idx -o "$out/fuzz-lookup" $libs

status=0
for t in theme view lookup; do
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

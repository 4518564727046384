#!/usr/bin/env bash
# Builds carve twice and runs every test in both builds:
#   build/       Release (-O2), then the core unit tests again under valgrind
#   build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer
# then, when clang and its libFuzzer runtime are installed, the fuzz targets:
#   build-fuzz/  tests/fuzz, each target run FUZZ_SECONDS (default 20) s,
#                JOBS at a time; a new crash fails (docs/fuzzing.md)
# Exits non-zero on the first failure.  Needs scripts/setup-debian.sh first.
# pipefail: a failing ctest must fail the script even through tee.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}

echo "== Release build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$JOBS"
(cd build && ctest --output-on-failure -j"$JOBS") | tee build/ctest.log

echo "== AddressSanitizer + UBSan build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Asan >/dev/null
cmake --build build-asan -j"$JOBS"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$JOBS") |
	tee build-asan/ctest.log

if command -v valgrind >/dev/null 2>&1; then
	echo "== valgrind on the core unit tests (Release build)"
	for t in quantity rng resource mig cluster ytree; do
		[ -x "build/tests/test_$t" ] || continue
		CARVE_SOURCE_DIR="$(pwd)" valgrind -q --error-exitcode=99 \
			--leak-check=full --errors-for-leak-kinds=definite \
			"build/tests/test_$t" >/dev/null
		echo "valgrind: test_$t clean"
	done
else
	echo "valgrind not installed: skipping the valgrind pass" >&2
fi
fuzz_rt() {
	echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
		clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null
}
if command -v clang >/dev/null 2>&1 && fuzz_rt; then
	echo "== fuzz targets (clang, libFuzzer), ${FUZZ_SECONDS:-20} s each"
	cmake -S . -B build-fuzz -DCARVE_FUZZ=ON -DCMAKE_C_COMPILER=clang \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build build-fuzz -j"$JOBS" --target fuzz >/dev/null
	tests/fuzz/run.sh -t "${FUZZ_SECONDS:-20}" -j "$JOBS" build-fuzz
else
	echo "clang or its libFuzzer runtime not installed: skipping the fuzz step" >&2
fi
# ctest's own lines say "N tests failed out of M"; sum both builds.
total=$(cat build/ctest.log build-asan/ctest.log |
	sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' |
	awk '{ s += $1 } END { print s + 0 }')
echo "tests: $total passed, 0 failed"

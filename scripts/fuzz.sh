#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang, AddressSanitizer and UndefinedBehaviorSanitizer (in
# build-fuzz/), runs the NFs' unit tests built there under the same sanitizers, then runs each target for a bounded
# time from its seed corpus. Prints each target's executions and the coverage it reached; exits 1 on the first
# failing test, crash or sanitizer report, keeping the input that caused it.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 30; the test command runs it)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
seconds="${1:-30}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz: SECONDS_PER_TARGET must be a whole number of seconds above 0, got '$seconds'" >&2
  exit 2
fi
for tool in clang clang++; do
  command -v "$tool" >/dev/null || { echo "fuzz: $tool is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang CXX=clang++ meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C build-fuzz >/dev/null
# A sanitizer report is a crash: UBSan's too, and it must say where.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The NFs' unit tests (known vectors for every frame they must read) under ASan, UBSan and LeakSanitizer.
if ! meson test -C build-fuzz --print-errorlogs >"build-fuzz/unit-tests.log" 2>&1; then
  tail -60 build-fuzz/unit-tests.log >&2
  echo "fuzz: the NFs' unit tests failed under ASan and UBSan (build-fuzz/unit-tests.log)" >&2
  exit 1
fi
echo "fuzz: the NFs' unit tests pass under ASan, UBSan and LeakSanitizer ($(grep -o '^Ok: *[0-9]*' \
  build-fuzz/unit-tests.log | grep -o '[0-9]*$') suites)"
work=$(mktemp -d /tmp/tandem-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
for target in build-fuzz/tests/fuzz/*_fuzz; do
  name=$(basename "$target" _fuzz)
  seeds="tests/fuzz/corpus/$name"
  mkdir -p "$work/$name"  # the run's new inputs go here, not into the repository's seeds
  log="$work/$name.log"
  if ! "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$here/build-fuzz/crash-$name-" "$work/$name" "$seeds" >"$log" 2>&1; then
    tail -60 "$log" >&2
    echo "fuzz: $name FAILED; the input is build-fuzz/crash-$name-*; replay it with: $target build-fuzz/crash-$name-*" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  coverage=$(grep -o 'DONE *cov: [0-9]*' "$log" | grep -o '[0-9]*$' || true)
  corpus=$(find "$work/$name" -type f | wc -l)
  echo "fuzz: $name: $runs executions in $seconds s under ASan and UBSan, ${coverage:-?} coverage edges," \
    "$corpus new inputs; no crash"
done

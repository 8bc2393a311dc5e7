#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, AddressSanitizer + UBSan) in build-fuzz
# and runs each for a bounded time on a copy of its committed seed corpus in
# fuzz/corpus/. Any crash, sanitizer report, leak or time-out fails the script
# (libFuzzer exits non-zero) and leaves the input under build-fuzz/artifacts/.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DEDDY_FUZZ=ON -DEDDY_SANITIZE=address,undefined -DEDDY_BUILD_TESTS=OFF \
  -DEDDY_BUILD_GUI=OFF -DEDDY_WERROR=ON >/dev/null
cmake --build build-fuzz -j2 --target fuzz_config fuzz_snapshot fuzz_ic_csv
work=$(mktemp -d /tmp/eddy-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p build-fuzz/artifacts
for t in config snapshot ic_csv; do
  mkdir -p "$work/$t"
  cp fuzz/corpus/$t/* "$work/$t/"   # new inputs go to the copy, not the repository
  echo "eddy: fuzzing $t for ${secs}s"
  status=0
  build-fuzz/fuzz/fuzz_$t -max_total_time="$secs" -max_len=8192 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/$t- \
    "$work/$t" >"$work/$t.log" 2>&1 || status=$?
  grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/$t.log" || true
  if [[ $status -ne 0 ]]; then
    tail -n 60 "$work/$t.log" >&2
    echo "eddy: fuzz_$t FAILED (exit $status); reproducer in build-fuzz/artifacts/" >&2
    exit 1
  fi
done
echo "eddy: fuzzing passed"

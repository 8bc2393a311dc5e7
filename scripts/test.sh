#!/usr/bin/env bash
# One command from a fresh Debian 12 checkout: install what is missing, build
# with warnings as errors, run the whole test suite (on PoCL's CPU device).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDDY_WERROR=ON
cmake --build build -j"$(nproc)"
cd build
ctest --output-on-failure -j"$(nproc)" "$@"

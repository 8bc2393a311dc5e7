#!/usr/bin/env bash
# One command from a fresh Debian 12 checkout: install what is missing, build,
# start eddy (the desktop app where a display exists, else a headless demo).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
exec build/app/eddy "$@"

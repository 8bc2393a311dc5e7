#!/usr/bin/env bash
# Issue 15 on the H200 (through the device tool): the external buffer path's
# GPU tests and the app's frame times for each buffer path, in one call.
# Carry the GL loader .debs (.gl/), .device/ (../shared/device/prepare) and a
# folder BIN holding stripped `eddy` and `eddy_external_tests` and lib/ (the
# GLFW/X11/stb libraries `eddy` links), then run:  bash scripts/h200_external.sh BIN
# Every app run has a hard limit (timeout -k): the semaphore run hung once.
set -u
bin=$(cd "${1:-.h-ext}" && pwd)
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export EDDY_LEAD_NOTE_SEEN=1
source .device/env.sh
export LD_LIBRARY_PATH=$bin/lib:$LD_LIBRARY_PATH
export EDDY_TEST_DEVICE=gpu EDDY_APP=$bin/eddy
out=${OUT:-/tmp}
log=$out/log.txt
exec >"$log" 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== tests"
timeout -k 5 180 "$bin/eddy_external_tests"
echo "tests rc=$?"
echo "== app"
common="--offscreen --sim sph --scene dam_break --size 1920x1080 --frames 120 --substeps 1 --style spheres --hide-panel --stats --device gpu"
run() {  # name, environment (or -), extra arguments
  local name=$1 env=$2
  shift 2
  echo "-- $name ($env) $*"
  if [[ $env == - ]]; then env=""; fi
  env $env timeout -k 5 60 "$bin/eddy" $common "$@"
  echo "rc=$?"
}
big="--set spacing=0.00038"                     # 948150 particles
ref="--set spacing=0.00072 --set depth=0.05715"  # 992319: bench frame's reference scene
run auto - $big --screenshot "$out/auto.png"
run host - $big --buffer-path host --screenshot "$out/host.png"
run external - $big --buffer-path external
run host2 - $big --buffer-path host
run external2 - $big --buffer-path external
run refhost - $ref --buffer-path host
run refexternal - $ref --buffer-path external
run semaphore EDDY_EXTERNAL_SYNC=semaphore $big --buffer-path external
cmp "$out/auto.png" "$out/host.png" && echo "screenshots auto (external) and host copy: identical bytes"

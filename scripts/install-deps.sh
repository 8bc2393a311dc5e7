#!/usr/bin/env bash
# Installs every Debian 12 package eddy needs to build, test and run, if missing.
# libegl1 + libegl-mesa0: the app's --offscreen EGL context (glad loads libEGL at run time).
# libvulkan-dev: Vulkan's headers for the external buffer path (the loader, libvulkan1,
# is opened at run time; without a Vulkan driver the app takes another path).
# python3-vtk9: VTK's own reader checks the ParaView export (tests/check_vtk.py);
# pybind11-dev + python3-dev: the Python module (app/python/); python3-numpy,
# python3-matplotlib, python3-pytest: its arrays, the examples' plots, its tests;
# libassimp-dev: reads obstacle and body meshes (STL, OBJ, PLY; sim/geometry/mesh.cpp).
# clang + libclang-rt-14-dev: the libFuzzer targets (scripts/fuzz.sh).
# Safe to run repeatedly; needs root (or sudo) only when something is missing.
set -euo pipefail
pkgs=(
  build-essential cmake pkg-config git
  ocl-icd-opencl-dev opencl-clhpp-headers pocl-opencl-icd clinfo
  libglfw3-dev python3-glad libglm-dev libimgui-dev libstb-dev
  libx11-dev libxrandr-dev libgl1-mesa-dri
  libegl1 libegl-mesa0 libvulkan-dev
  libgtest-dev nlohmann-json3-dev libcli11-dev libassimp-dev
  python3-vtk9 python3-numpy
  pybind11-dev python3-dev python3-matplotlib python3-pytest
  clang libclang-rt-14-dev
  xvfb xauth
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "eddy: installing missing packages: ${missing[*]}"
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

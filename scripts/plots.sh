#!/usr/bin/env bash
# Regenerates the plots in docs/ with the Python examples (docs/examples/):
#   docs/plot-dam-break.png        dam-break front of each SPH solver vs Martin & Moyce
#   docs/plot-plummer-energy.png   Plummer energy error vs time, method=direct and tree
#   docs/plot-bench-realtime.png   bench realtime, from docs/bench/h200-realtime.json
#   docs/plot-bench-nbody.png      bench nbody, from docs/bench/h200-nbody.json
# The simulations run on the default device (a GPU, else the CPU through PoCL:
# about two minutes on 2 cores). The benchmark plots read the recorded H200
# figures; plot a new measurement with
#   eddy-cli bench realtime --json > rt.json && python3 docs/examples/bench_plot.py rt.json --out rt.png
#
# usage: scripts/plots.sh [--big]   (--big: finer runs, for a GPU)
set -euo pipefail
cd "$(dirname "$0")/.."
big=0
[[ ${1:-} == --big ]] && big=1
[[ -d build ]] || cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)" --target eddy_python
py=${EDDY_PYTHON:-/usr/bin/python3}  # Debian's, with python3-numpy and python3-matplotlib
export PYTHONPATH=$PWD/build/python${PYTHONPATH:+:$PYTHONPATH}
if ((big)); then
  "$py" docs/examples/dam_break.py --resolution 40 --out docs/plot-dam-break.png
  "$py" docs/examples/plummer_energy.py --n 65536 --out docs/plot-plummer-energy.png
else
  "$py" docs/examples/dam_break.py --out docs/plot-dam-break.png
  "$py" docs/examples/plummer_energy.py --out docs/plot-plummer-energy.png
fi
"$py" docs/examples/bench_plot.py docs/bench/h200-realtime.json --out docs/plot-bench-realtime.png
"$py" docs/examples/bench_plot.py docs/bench/h200-nbody.json --out docs/plot-bench-nbody.png

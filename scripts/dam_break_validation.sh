#!/usr/bin/env bash
# Dam break vs Martin & Moyce (1952): runs eddy-cli for the n^2 = 2 and n^2 = 1
# columns and writes, per case, the simulated front and the experiment on the
# same dimensionless axes (see tests/data/mm1952_*.csv and
# /work/shared/validation/README.md for the scaling):
#   OUT/front_n2eq2.csv  T,Z_sim,Z_sim_gate_shifted      (T = t sqrt(2 g / a), Z = front_x / a)
#   OUT/front_n2eq1.csv  T,Z_sim,Z_sim_gate_shifted      (T = t sqrt(g / a))
#   OUT/compare_n2eq2.csv, OUT/compare_n2eq1.csv  T,Z_exp,Z_sim,err,Z_sim_shifted,err_shifted
# "shifted" uses the gate-release delay 0.175 (in t sqrt(2g/a)) that Lethe's
# dam-break example applies to the same data: Z_sim_shifted(T) = Z_sim(T - 0.175).
#
# usage: scripts/dam_break_validation.sh [OUT_DIR] [PARTICLES_PER_A]   (default: validation 20)
#   e.g. scripts/dam_break_validation.sh out 40   (a/dx = 40, 12 800 particles for n^2 = 2)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-validation}
per=${2:-20}
cli=${EDDY_CLI:-build/app/eddy-cli}
[ -x "$cli" ] || { echo "build first: cmake -S . -B build && cmake --build build" >&2; exit 1; }
mkdir -p "$out"
a=0.05715
dx=$(awk -v a=$a -v p="$per" 'BEGIN{printf "%.9g", a/p}')
for n2 in 2 1; do
  case $n2 in
    2) scale=$(awk -v a=$a 'BEGIN{printf "%.9g", sqrt(2*9.81/a)}'); exp=tests/data/mm1952_front_n2eq2_a2.25in_table2_ocellaris.csv ;;
    1) scale=$(awk -v a=$a 'BEGIN{printf "%.9g", sqrt(9.81/a)}');   exp=tests/data/mm1952_front_square_n2eq1_trixiparticles.csv ;;
  esac
  shift_T=$(awk -v n2=$n2 'BEGIN{printf "%.9g", 0.175/sqrt(2/n2)}')
  tend=$(awk -v s="$scale" 'BEGIN{printf "%.9g", 2.6/s}')
  diag="$out/diag_n2eq$n2.csv"
  "$cli" run --sim sph --scene dam_break --quiet \
    --set spacing="$dx" --set column_width=$a \
    --set column_height=$(awk -v a=$a -v n=$n2 'BEGIN{printf "%.9g", n*a}') \
    --set depth=$(awk -v d="$dx" 'BEGIN{printf "%.9g", 4*d}') \
    --set tank_length=$(awk -v a=$a 'BEGIN{printf "%.9g", 4.5*a}') \
    --set tank_height=$(awk -v a=$a -v n=$n2 'BEGIN{printf "%.9g", 1.3*n*a}') \
    --until "$tend" --diag "$diag" --diag-every 10 >"$out/run_n2eq$n2.txt"
  # simulated front on the experiment's axes
  awk -F, -v s="$scale" -v a=$a 'NR==1{for(i=1;i<=NF;i++) c[$i]=i; print "T,Z_sim"; next}
       {printf "%.6g,%.6g\n", $c["time"]*s, $c["front_x"]/a}' "$diag" >"$out/front_n2eq$n2.csv"
  # experiment vs simulation (linear interpolation), with and without the gate shift
  awk -F, -v sh="$shift_T" '
    FNR==1 && NR==1 {next}
    NR==FNR {T[n]=$1; Z[n]=$2; n++; next}
    /^#/ || /^T/ {next}
    function at(t,   k,w) { for (k=1;k<n;k++) if (T[k]>=t) { w=(t-T[k-1])/(T[k]-T[k-1]); return Z[k-1]+w*(Z[k]-Z[k-1]) } return Z[n-1] }
    BEGIN {print "T,Z_exp,Z_sim,err,Z_sim_shifted,err_shifted"}
    { if ($1 > T[n-1]) next; z=at($1); zs=at($1-sh);
      printf "%.4g,%.4g,%.4g,%+.4f,%.4g,%+.4f\n", $1, $2, z, (z-$2)/$2, zs, (zs-$2)/$2 }' \
    "$out/front_n2eq$n2.csv" "$exp" >"$out/compare_n2eq$n2.csv"
  echo "n^2 = $n2 (a/dx = $per): $out/compare_n2eq$n2.csv"
  column -s, -t "$out/compare_n2eq$n2.csv"
done

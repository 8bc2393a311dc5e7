#!/usr/bin/env bash
# Output identity of two eddy-cli binaries (issue 10, the restructuring): runs a
# fixed set of commands with each and compares exit codes, stdout, stderr and
# every file written, byte for byte, after masking what depends on the wall
# clock (wall_s, steps_per_s, the profile's times, "steps/s" and "ms" figures).
#
#   scripts/output_identity.sh OLD/eddy-cli NEW/eddy-cli [WORKDIR]
#
# Exit 0 when every case is identical, 1 otherwise (the differing cases are
# listed and `diff -r` shows them). Runs on PoCL in about a minute.
set -uo pipefail
old=$(realpath "$1")
new=$(realpath "$2")
work=${3:-$(mktemp -d /tmp/eddy-identity.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"

# name | arguments (run in an empty folder; files it writes are compared)
cases=$(cat <<'EOF'
help|--help
version|--version
no_args|
bad_command|frobnicate
params_nbody|params --sim nbody
params_sph|params --sim sph
params_bad|params --sim foo
nbody_json|run --sim nbody --n 257 --steps 30 --set dt=0.002 --json --quiet
nbody_files|run --sim nbody --scene galaxies --n 300 --steps 40 --diag diag.csv --diag-every 10 --out out.csv --save end.snap
nbody_collapse|run --sim nbody --scene collapse --n 128 --steps 20 --json --quiet
nbody_until|run --sim nbody --n 64 --until 0.05 --json --quiet
nbody_export|run --sim nbody --n 100 --steps 20 --export exp --export-every 10 --quiet
sph_json|run --sim sph --steps 60 --json --quiet
sph_files|run --sim sph --scene drop --steps 50 --diag diag.csv --diag-every 10 --out out.csv --save end.snap
sph_double|run --sim sph --scene double_dam_break --steps 30 --json --quiet
sph_until|run --sim sph --until 0.002 --json --quiet
sph_export|run --sim sph --steps 40 --export exp --export-every 20 --quiet
sph_set|run --sim sph --set spacing=0.008 --set viscosity=0.05 --steps 20 --json --quiet
bad_set_key|run --set nosuch=1 --steps 1
bad_set_range|run --set dt=-1 --steps 1
bad_set_value|run --set dt=abc --steps 1
bad_sim|run --sim foo --steps 1
bad_scene|run --scene foo --steps 1
bad_steps|run --steps -3
bad_n|run --n 0 --steps 1
bad_flag|run --frobnicate
missing_value|run --steps
bad_ic|run --ic nosuch.csv --steps 1
bad_load|run --load nosuch.snap --steps 1
bad_config|run --config nosuch.json
bad_device|run --device 9:9 --steps 1
bench_bad|bench nbody --wg 3
bench_unknown|bench foo
nbody_check|run --sim nbody --n 64 --steps 25 --check-every 7 --diag diag.csv --diag-every 3 --export exp --export-every 6 --quiet
sph_until_files|run --sim sph --until 0.003 --diag diag.csv --diag-every 4 --export exp --export-every 7 --out out.csv --quiet
sph_ic|run --sim sph --ic nosuch.csv --steps 1
sph_n|run --sim sph --n 100 --steps 1
sph_devices|run --sim sph --devices cpu --steps 1
bench_frame|bench frame --sim nbody --n 200 --frames 3 --json
bench_frame_sph|bench frame --sim sph --set spacing=0.01 --frames 2 --substeps 2 --json
EOF
)

mask() {  # mask wall-clock dependent figures in one file, in place
  python3 - "$1" <<'PY'
import json, re, sys
path = sys.argv[1]
text = open(path, encoding="utf-8", errors="replace").read()
# global_mem_bytes: PoCL reports the memory free at the moment.
TIME_KEYS = {"wall_s", "steps_per_s", "step_ms", "wall_ms", "particle_steps_per_s", "global_mem_bytes"}
def scrub(v):
    if isinstance(v, dict):
        return {k: ("<t>" if (k in TIME_KEYS or k.endswith("_ms") or "_ms_" in k) else scrub(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [scrub(x) for x in v]
    return v
try:
    out = json.dumps(scrub(json.loads(text)), indent=1, sort_keys=True) + "\n"
except ValueError:
    num = r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?"
    lines = []
    for line in text.splitlines():
        if re.search(r"steps/s|\bms\b|ms/step|wall|%|global memory", line):
            line = re.sub(r"\s+", " ", re.sub(num, "#", line))
            # Progress lines are printed by the wall clock: their count varies.
            if re.match(r"^ ?step # \(#%\)", line):
                continue
        lines.append(line)
    out = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
open(path, "w", encoding="utf-8").write(out)
PY
}

run_all() {  # $1 binary, $2 output folder
  local bin=$1 dst=$2
  rm -rf "$dst"
  mkdir -p "$dst"
  while IFS='|' read -r name args; do
    [[ -n $name ]] || continue
    local d="$dst/$name"
    mkdir -p "$d/files"
    # shellcheck disable=SC2086
    (cd "$d/files" && timeout 300 "$bin" $args >../stdout 2>../stderr; echo $? >../rc)
    # The binary's own path appears in some messages.
    sed -i "s#$bin#eddy-cli#g" "$d/stdout" "$d/stderr"
    mask "$d/stdout"
    mask "$d/stderr"
    find "$d/files" -type f \( -name '*.csv' -o -name '*.pvd' \) -print0 |
      while IFS= read -r -d '' f; do mask "$f"; done
  done <<<"$cases"
}

run_all "$old" "$work/old"
run_all "$new" "$work/new"
if diff -r "$work/old" "$work/new" >"$work/diff.txt"; then
  echo "output identity: all $(grep -c '|' <<<"$cases") cases identical ($work)"
  exit 0
fi
echo "output identity: differences (full diff in $work/diff.txt):"
diff -rq "$work/old" "$work/new" | sed 's/^/  /'
exit 1

#!/usr/bin/env bash
# sweep-scaling: wall time of the same 4-point sweep run one point at a time (-j 1) and two at
# a time (-j 2), and the speed-up. The points are scenarios/tune-ecn.ini with four Kmin values
# and larger transfers, so that each point runs for about a second and process start-up is
# small beside it. Both sweeps must produce the same sweep.csv (each point is deterministic).
#
#   bench/sweep-scaling.sh                 # uses build/rocesim
#   ROCESIM=build/rocesim-san bench/sweep-scaling.sh
#   SIZE=8MB bench/sweep-scaling.sh        # permutation size per host (default 32MB)
#
# On a machine with fewer than 2 free cores the speed-up stays near 1: the sweep cannot go
# faster than the cores it is given.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ROCESIM:-build/rocesim}
size=${SIZE:-32MB}
incast=${INCAST_SIZE:-8MB}
[ -x "$bin" ] || { echo "sweep-scaling: $bin not found: run make all first" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rocesim-sweep-scaling-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

args=(scenarios/tune-ecn.ini --vary switch.ecn_kmin=25KB..200KB*2
      --set "workload.perm.size=$size" --set "workload.incast.size=$incast" --no-plots --quiet)

run() { # $1 = jobs; prints "wall cpu" in seconds (cpu: user + system of the sweep and its points)
  local TIMEFORMAT='%R %U %S' t
  t=$( { time "$bin" sweep "${args[@]}" -j "$1" -o "$tmp/j$1" >/dev/null; } 2>&1 )
  awk -v t="$t" 'BEGIN { split(t, f, " "); printf "%.2f %.2f\n", f[1], f[2] + f[3] }'
}

echo "sweep-scaling: 4 points of scenarios/tune-ecn.ini (perm $size per host, incast $incast per sender)," \
     "$(nproc) cores online"
read -r w1 c1 < <(run 1)
echo "  -j 1: ${w1} s wall (${c1} s CPU)"
read -r w2 c2 < <(run 2)
echo "  -j 2: ${w2} s wall (${c2} s CPU)"
awk -v a="$w1" -v b="$w2" 'BEGIN { printf "  speed-up: %.2fx\n", (b > 0 ? a / b : 0) }'
awk -v w="$w2" -v c="$c2" 'BEGIN { if (w > 0 && c / w < 1.5)
  print "  (with -j 2 the points got " sprintf("%.1f", c / w) " cores on average: the machine is busy)" }'
if ! cmp -s "$tmp/j1/sweep.csv" "$tmp/j2/sweep.csv"; then
  echo "sweep-scaling: sweep.csv differs between -j 1 and -j 2" >&2
  exit 1
fi
echo "  sweep.csv identical for -j 1 and -j 2"

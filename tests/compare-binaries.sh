#!/usr/bin/env bash
# tests/compare-binaries.sh BASE NEW [OUT]: runs two rocesim binaries on every scenarios/*.ini
# and bench/*.ini and compares the results folders file by file (diff -r). The only differences
# allowed are the wall-clock, RSS and output-path figures of summary.json's "engine" object and
# of report.html; those are masked before comparing. bench/large.ini runs with a shortened stop
# (LARGE_STOP, default 100us) because it takes minutes, and so do bench/scale-alltoall.ini and
# bench/scale-ring.ini (BIG4096_STOP, default 20us); the 256-host variant of bench/fabric.ini
# that bench/run measures runs with FABRIC256_STOP (default 200us). Exit 0 when identical.
# NEW_ARGS="..." are extra arguments for NEW alone (e.g. --set output.sample_ports=all to
# compare NEW's full-detail files with a binary that predates [output] sample_ports);
# summary.json's scenario.output keys that BASE does not know are masked. BASE_OUT=DIR reuses BASE's folders from an earlier call (BASE is then not run); ONLY_BASE=1
# runs BASE alone into OUT/base (to prepare BASE_OUT).
set -u
cd "$(dirname "$0")/.."
base=$1 new=$2 out=${3:-$(mktemp -d)}
large_stop=${LARGE_STOP:-100us} f256_stop=${FABRIC256_STOP:-200us} big_stop=${BIG4096_STOP:-20us}
mkdir -p "$out/base" "$out/new"
runs=()
for s in scenarios/*.ini bench/*.ini; do
  name=$(basename "$(dirname "$s")")-$(basename "$s" .ini)
  extra=()
  [ "$s" = bench/large.ini ] && extra=(--set "scenario.stop=$large_stop")
  # the 4096-host AllToAll and ring take minutes (and the AllToAll 10 GB) run to the end
  case $s in bench/scale-alltoall.ini|bench/scale-ring.ini) extra=(--set "scenario.stop=$big_stop") ;; esac
  runs+=("$name|$s|${extra[*]:-}")
done
runs+=("bench-fabric-256|bench/fabric.ini|--set topology.leaves=16 --set topology.spines=16 --set workload_perm.hosts=0-255 --set workload_ar.ranks=0-255 --set scenario.stop=$f256_stop")

run_one() { # bin dir scenario extra...
  local bin=$1 dir=$2 scen=$3; shift 3
  local args=()
  for a in "$@"; do args+=("${a/workload_/workload }"); done
  rm -rf "$dir"
  "$bin" run "$scen" -o "$dir" -q "${args[@]}" > "$dir.log" 2>&1
  echo $? > "$dir.rc"
}

# summary.json without the wall-clock figures; report.html without lines naming them.
mask() { # folder
  local d=$1
  if [ -f "$d/summary.json" ]; then
    python3 - "$d/summary.json" <<'PY'
import json, sys
p = sys.argv[1]
s = json.load(open(p))
e = s.get("engine", {})
for k in list(e):
    if k in ("wall_s", "setup_s", "events_per_s", "packet_hops_per_s", "peak_rss_bytes", "workers", "partition", "lookahead_ns") or k.startswith("output_"):
        del e[k]
for k in ("sample_ports", "sample_scale", "compress"):
    s.get("scenario", {}).get("output", {}).pop(k, None)
json.dump(s, open(p + ".masked", "w"), indent=1, sort_keys=True)
PY
    rm "$d/summary.json"
  fi
  if [ -f "$d/report.html" ]; then
    # the engine table's wall-clock rows and summary.json's size (its wall figures vary)
    # (and the rows of keys and figures BASE may not have: the [output] selection, output_*)
    grep -v -E 'wall|RSS|rss|_per_s|<code>summary.json</code>|<td>(sample_ports|sample_scale|compress|output_s|output_share|output_stream_s)</td>' \
      "$d/report.html" > "$d/report.html.masked"
    rm "$d/report.html"
  fi
  # the folder's own path, in the report's header and in messages (plots/skipped.txt)
  grep -rlF "$2" "$d" 2>/dev/null | xargs -r sed -i "s|$2|OUT|g"
}

status=0
for r in "${runs[@]}"; do
  IFS='|' read -r name scen extra <<< "$r"
  # --set keys of a [workload NAME] section are written workload_NAME.key (no space in a word)
  # shellcheck disable=SC2086
  if [ -z "${BASE_OUT:-}" ]; then run_one "$base" "$out/base/$name" "$scen" $extra; fi
  [ -n "${ONLY_BASE:-}" ] && { echo "base $name: exit $(cat "$out/base/$name.rc")"; continue; }
  # shellcheck disable=SC2086
  run_one "$new" "$out/new/$name" "$scen" $extra ${NEW_ARGS:-}
  b=${BASE_OUT:-$out/base}/$name
  cp -r "$b" "$out/b.$name" 2>/dev/null; cp "$b.rc" "$out/b.$name.rc" 2>/dev/null
  mask "$out/b.$name" "$b"; mask "$out/new/$name" "$out/new/$name"
  if ! cmp -s "$out/b.$name.rc" "$out/new/$name.rc"; then
    echo "DIFF $name: exit $(cat "$out/b.$name.rc") vs $(cat "$out/new/$name.rc")"; status=1
  elif d=$(diff -r "$out/b.$name" "$out/new/$name" 2>&1); then
    echo "same $name ($(find "$out/new/$name" -type f | wc -l) files, exit $(cat "$out/new/$name.rc"))"
  else
    echo "DIFF $name:"; echo "$d" | head -20; status=1
  fi
  rm -rf "$out/b.$name" "$out/b.$name.rc"
done
[ $status = 0 ] && echo "compare-binaries: all ${#runs[@]} runs identical" || echo "compare-binaries: differences found"
exit $status

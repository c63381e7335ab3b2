#!/usr/bin/env bash
# Adding a congestion-control algorithm, or a topology kind, is one new file plus one line in
# its registry (issue 11): copies the tree, adds tests/fixtures/toy_cc/cc_toy.c as
# models/cc_toy.c with the line `X(toy)` in models/cc_registry.h, and
# tests/fixtures/toy_cc/topology_star.c as models/topology_star.c with its line in
# models/topology_registry.h; checks that the change is exactly that, builds, and runs one
# flow under the toy algorithm on the toy topology. The toy sends at its own [toy] rate
# (10 Gb/s, a tenth of the line rate), so the flow's serialisation takes 10x the ideal's,
# which is computed at line rate: 9 < fct/ideal < 10.5 (the ideal also holds the
# propagation, which does not grow); the fabric is the star's: one switch named star.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$src" ls-files -z | (cd "$src" && xargs -0 cp --parents -t "$tmp")
cd "$tmp"
git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm base
cp tests/fixtures/toy_cc/cc_toy.c models/cc_toy.c
cp tests/fixtures/toy_cc/topology_star.c models/topology_star.c
sed -i 's|^    /\* one line per algorithm above this one \*/$|    X(toy)               \\\n&|' models/cc_registry.h
sed -i 's|^    /\* one line per kind above this one \*/$|    X(STAR, "star", topology_kind_star) \\\n&|' models/topology_registry.h
git add -A
stat=$(git diff --cached --numstat | awk '{print $1 "+" $2 "-" " " $3}' | sort | tr '\n' ' ')
want=$(printf '%s\n' "1+0- models/cc_registry.h" "$(wc -l < models/cc_toy.c)+0- models/cc_toy.c" \
  "1+0- models/topology_registry.h" "$(wc -l < models/topology_star.c)+0- models/topology_star.c" | sort | tr '\n' ' ')
if [ "$stat" != "$want" ]; then
  echo "toy-cc: the change is not one file plus one line: $stat (expected $want)"; exit 1
fi
make -s -j2 PGO=0 build/rocesim >/dev/null # (the layout of the code is what is checked, not its speed)
build/rocesim check tests/fixtures/toy_cc/one-flow.ini >/dev/null
out=$(build/rocesim run tests/fixtures/toy_cc/one-flow.ini --set topology.kind=star -o res -q 2>&1) || { echo "$out"; exit 1; }
if ! grep -q '^star,' res/topology.csv || [ "$(grep -c '^host' res/topology.csv)" != 2 ]; then
  echo "toy-cc: the star topology did not build: $(head -5 res/topology.csv)"; exit 1
fi
ratio=$(awk -F, 'NR == 2 { printf "%.4f", $8 / $9 }' res/transfers.csv)
if ! awk -v r="$ratio" 'BEGIN { exit !(r > 9 && r < 10.5) }'; then
  echo "toy-cc: fct/ideal = $ratio under a 10 Gb/s toy on a 100 Gb/s link: expected 9-10.5"; exit 1
fi
bad=$(build/rocesim check tests/fixtures/toy_cc/one-flow.ini --set toy.rate=fast 2>&1 >/dev/null || true)
case "$bad" in
  *"[toy] rate"*fast*) ;;
  *) echo "toy-cc: a bad [toy] rate is not reported by the loader: $bad"; exit 1 ;;
esac
echo "toy-cc: one file plus one registry line each (a CC, a topology kind); fct/ideal = $ratio at a 10 Gb/s toy rate"

#!/usr/bin/env bash
# Adding a congestion-control algorithm is one new file plus one line in the registry
# (issue 11): copies the tree, adds tests/fixtures/toy_cc/cc_toy.c as models/cc_toy.c and the
# line `X(toy)` to models/cc_registry.h, checks that the change is exactly that, builds, and
# runs one flow under the toy algorithm. The toy sends at its own [toy] rate (10 Gb/s, a tenth
# of the line rate), so the flow's serialisation takes 10x the ideal's, which is computed at
# line rate: 9 < fct/ideal < 10.5 (the ideal also holds the propagation, which does not grow).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$src" ls-files -z | (cd "$src" && xargs -0 cp --parents -t "$tmp")
cd "$tmp"
git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm base
cp tests/fixtures/toy_cc/cc_toy.c models/cc_toy.c
sed -i 's|^    /\* one line per algorithm above this one \*/$|    X(toy)               \\\n&|' models/cc_registry.h
git add -A
stat=$(git diff --cached --numstat | awk '{print $1 "+" $2 "-" " " $3}' | sort | tr '\n' ' ')
want="1+0- models/cc_registry.h $(wc -l < models/cc_toy.c)+0- models/cc_toy.c "
if [ "$stat" != "$want" ]; then
  echo "toy-cc: the change is not one file plus one line: $stat (expected $want)"; exit 1
fi
make -s -j2 build/rocesim >/dev/null
build/rocesim check tests/fixtures/toy_cc/one-flow.ini >/dev/null
out=$(build/rocesim run tests/fixtures/toy_cc/one-flow.ini -o res -q 2>&1) || { echo "$out"; exit 1; }
ratio=$(awk -F, 'NR == 2 { printf "%.4f", $8 / $9 }' res/transfers.csv)
if ! awk -v r="$ratio" 'BEGIN { exit !(r > 9 && r < 10.5) }'; then
  echo "toy-cc: fct/ideal = $ratio under a 10 Gb/s toy on a 100 Gb/s link: expected 9-10.5"; exit 1
fi
bad=$(build/rocesim check tests/fixtures/toy_cc/one-flow.ini --set toy.rate=fast 2>&1 >/dev/null || true)
case "$bad" in
  *"[toy] rate"*fast*) ;;
  *) echo "toy-cc: a bad [toy] rate is not reported by the loader: $bad"; exit 1 ;;
esac
echo "toy-cc: one file plus one registry line; fct/ideal = $ratio at a 10 Gb/s toy rate"

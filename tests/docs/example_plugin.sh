#!/usr/bin/env bash
# Follows examples/cpu_lstm_plugin/README.md: installs this build into
# $HOME/.local of a scratch HOME (the README's first block, less the build
# that is already done), then runs the README's lines between the
# docs.example_plugin markers as they are written, from the source root.
#   example_plugin.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR
set -euo pipefail
src=$1 build=$2 work=$3
rm -rf "$work"
mkdir -p "$work/home"
export HOME=$work/home
cmake --install "$build" --prefix "$HOME/.local" > "$work/install.log"
readme=$src/examples/cpu_lstm_plugin/README.md
block=$(sed -n '/docs.example_plugin: begin/,/docs.example_plugin: end/p' "$readme" | sed '1d;$d' | sed 's/^    //')
[ -n "$block" ] || { echo "FAIL: no docs.example_plugin block in $readme"; exit 1; }
cd "$src"
out=$(bash -euo pipefail -c "$block" 2>&1) || { echo "$out"; echo "FAIL: the README's commands failed"; exit 1; }
echo "$out"
for want in "example:cpu_lstm" "PASS example:cpu_lstm" "1 passed, 0 failed" "100% tests passed"; do
  grep -qF "$want" <<< "$out" || { echo "FAIL: the README's commands printed no '$want'"; exit 1; }
done
echo "PASS: the example plugin's README, followed"

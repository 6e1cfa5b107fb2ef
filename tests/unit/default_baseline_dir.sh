#!/usr/bin/env bash
# The program of a build folder, run from any other folder, keeps using its
# source tree's baselines/ (an installed copy uses ./baselines:
# plugin.installed_baseline_dir), also through a link to it; and writes
# nothing where it runs.
#   default_baseline_dir.sh LSTMCHECK SOURCE_DIR WORK_DIR
set -uo pipefail
exe=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work/elsewhere"
ln -s "$exe" "$work/linked"
cd "$work/elsewhere" || exit 1
for prog in "$exe" "$work/linked"; do
  out=$(env -u LSTMCHECK_BASELINE_DIR "$prog" baseline show --device cpu 2>&1)
  rc=$?
  # 0: this machine has a file there; 3: it has none (either names the file's place)
  if [ $rc != 0 ] && [ $rc != 3 ]; then echo "FAIL: $prog exited $rc: $out"; exit 1; fi
  grep -qF "$src/baselines/" <<<"$out" || { echo "FAIL: $prog did not use $src/baselines/:"; echo "$out"; exit 1; }
done
[ -z "$(ls -A "$work/elsewhere")" ] || { echo "FAIL: it wrote into the folder it ran in"; ls -A "$work/elsewhere"; exit 1; }
echo "PASS: the build's program uses its source tree's baselines/ from any folder"

#!/usr/bin/env bash
# The floors of docs/architecture.md: a file in src/<folder>/ includes only
# headers of its own floor or below; kernels/ (floor 3) likewise. The public
# runner ABI (include/lstmcheck/) is below them all: anyone may include it.
#   check_layers.sh SOURCE_DIR
set -euo pipefail
cd "$1"
floor() {
  case $1 in
    lstmcheck) echo -1 ;; base) echo 0 ;; model) echo 1 ;; device) echo 2 ;; runners|kernels) echo 3 ;;
    check) echo 4 ;; perf) echo 5 ;; report) echo 6 ;; cmd) echo 7 ;; *) echo 99 ;;
  esac
}
bad=0
for f in src/*/*.[ch] src/*/*.def kernels/*.cu kernels/*.cuh kernels/*.h; do
  [ -e "$f" ] || continue
  dir=$(basename "$(dirname "$f")")
  mine=$(floor "$dir")
  if [ "$mine" = 99 ]; then echo "$f: folder '$dir' is on no floor of docs/architecture.md"; bad=1; continue; fi
  while read -r inc; do
    target=${inc%%/*}
    theirs=$(floor "$target")
    if [ "$theirs" -gt "$mine" ]; then
      echo "$f (floor $mine, $dir) includes $inc (floor $theirs): an arrow up"
      bad=1
    fi
  done < <(sed -n 's/^#include "\([a-z_]*\/[^"]*\)".*/\1/p' "$f")
done
[ $bad = 0 ] && echo "every include goes to its own floor or below"
exit $bad

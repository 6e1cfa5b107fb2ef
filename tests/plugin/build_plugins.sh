#!/usr/bin/env bash
# The plugin tests' setup: installs this build into a scratch prefix, then
# builds against that prefix alone (find_package(lstmcheck)), each as a
# project of its own: lstmcheck's test plugins (tests/plugin/plugins) and
# the example plugin with its own CMakeLists (examples/cpu_lstm_plugin).
#   build_plugins.sh BUILD_DIR WORK_DIR SOURCE_DIR CMAKE GENERATOR
set -euo pipefail
build=$1 work=$2 src=$3 cmake=$4 generator=$5
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log"
for f in bin/lstmcheck include/lstmcheck/runner.h; do
  [ -e "$prefix/$f" ] || { echo "FAIL: cmake --install left no $prefix/$f"; exit 1; }
done
build_project() { # SOURCE BINARY [cmake arguments]
  local source=$1 binary=$2
  shift 2
  "$cmake" -S "$source" -B "$binary" -G "$generator" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" "$@" \
    > "$binary.configure.log" 2>&1 || { cat "$binary.configure.log"; exit 1; }
  "$cmake" --build "$binary" > "$binary.build.log" 2>&1 || { cat "$binary.build.log"; exit 1; }
}
build_project "$src/tests/plugin/plugins" "$work/plugins" -DLSTMCHECK_EXAMPLE_DIR="$src/examples/cpu_lstm_plugin"
build_project "$src/examples/cpu_lstm_plugin" "$work/example"
grep "runner ABI" "$work/plugins.configure.log"
echo "PASS: installed into $prefix; plugins built against it"

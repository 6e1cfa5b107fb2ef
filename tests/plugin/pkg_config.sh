#!/usr/bin/env bash
# The example plugin built with the compiler and pkg-config alone, against
# the installed lstmcheck of the plugin tests (build_plugins.sh), and
# checked through the gate. Skips (77) where pkg-config is missing.
#   pkg_config.sh WORK_DIR SOURCE_DIR C_COMPILER
set -euo pipefail
work=$1 src=$2 cc=$3
command -v pkg-config > /dev/null || { echo "SKIP: pkg-config is not installed (ci/install-deps.sh installs it)"; exit 77; }
prefix=$work/prefix
pc=$(find "$prefix" -name lstmcheck.pc)
[ -n "$pc" ] || { echo "FAIL: no lstmcheck.pc under $prefix"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
example=$src/examples/cpu_lstm_plugin
mkdir -p "$work/pkgconfig"
# shellcheck disable=SC2046 # the flags are words
"$cc" -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC $(pkg-config --cflags lstmcheck) \
  -o "$work/pkgconfig/libcpu_lstm.so" "$example/cpu_lstm.c" "$example/plugin.c" -lm
lstmcheck=$(pkg-config --variable=lstmcheck lstmcheck)
"$lstmcheck" check --plugin "$work/pkgconfig/libcpu_lstm.so" --seqLength 5 --hiddenSize 7 --inputSize 6 --miniBatch 3 \
  --numLayers 2
echo "PASS: built with pkg-config --cflags lstmcheck ($(pkg-config --modversion lstmcheck))"

#!/usr/bin/env bash
# The main job: build, then `lstmcheck bench` on the default device
# (CUDA when one exists, else the CPU) at the original's default shape.
# Extra arguments go to lstmcheck bench.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/ci/build.sh"
"$build/lstmcheck" bench "$@"

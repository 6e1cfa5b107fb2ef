#!/usr/bin/env bash
# Configure and build lstmcheck into ${BUILD_DIR:-build} (Release).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/ci/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLSTMCHECK_REQUIRE_ONEDNN=ON -DLSTMCHECK_REQUIRE_TORCH=ON
cmake --build "$build" -j"$(nproc)"

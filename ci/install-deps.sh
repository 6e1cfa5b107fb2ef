#!/usr/bin/env bash
# Installs what lstmcheck needs on a fresh Debian machine: a C compiler,
# CMake, Ninja, OpenBLAS and cJSON; oneDNN 2.x (libdnnl-dev: the onednn
# runner, built when found); libtorch (libtorch-dev: the torch:lstm plugin,
# PyTorch's own CPU LSTM, gated in the numerics tests and timed by
# tests/perf/cpu_peers) and PyTorch's Python (python3-torch: the reference
# against PyTorch in float64, numerics.independent_torch.*); for the tests
# of plugins and reports
# also pkg-config (a plugin built with it), rsvg-convert and xmllint (the
# SVG plot renders and is well-formed XML); for the fuzz targets clang and
# its libFuzzer (libclang-rt-dev: the runtime of Debian's default clang,
# libclang-rt-14-dev on bookworm). The CUDA toolkit and cuDNN are not
# Debian packages here: when /usr/local/cuda/bin/nvcc exists the GPU
# runners are built, otherwise the CPU part alone (GPU tests report skipped).
set -euo pipefail
pkgs=(build-essential cmake ninja-build libopenblas-dev libcjson-dev libdnnl-dev libtorch-dev python3-torch pkg-config librsvg2-bin libxml2-utils
      clang libclang-rt-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "dependencies present: ${pkgs[*]}"

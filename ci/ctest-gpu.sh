#!/bin/sh
# Runs one GPU test on the GPU CTest allocated to it (cmake/gpu_tests.cmake
# adds every GPU test through this). CTest names the allocation in
# CTEST_RESOURCE_GROUP_0_GPUS ("id:N,slots:S"; N is nvidia-smi's index, as
# ci/gpu-resources.sh writes the spec); CUDA gets it as CUDA_VISIBLE_DEVICES,
# counted in nvidia-smi's order (PCI bus). Without a resource spec CTest sets
# nothing, and the test runs as it is, seeing every GPU.
#   ctest-gpu.sh COMMAND [ARGUMENT...]
broken() { # exit 4: something broke (not a finding, not a skip: 77 and 3 are skips)
  printf 'ctest-gpu.sh: %s\n' "$(printf '%s' "$*" | tr '\n' ' ')" >&2 # one line
  exit 4
}
[ $# -ge 1 ] || broken "no test command to run"
if [ -n "${CTEST_RESOURCE_GROUP_COUNT+set}" ]; then
  [ "$CTEST_RESOURCE_GROUP_COUNT" = 1 ] && [ "${CTEST_RESOURCE_GROUP_0:-}" = gpus ] ||
    broken "CTest allocated '${CTEST_RESOURCE_GROUP_COUNT}' groups of '${CTEST_RESOURCE_GROUP_0:-}'; a GPU test asks for one group of gpus (RESOURCE_GROUPS gpus:N)"
  allocation=${CTEST_RESOURCE_GROUP_0_GPUS:-}
  case "$allocation" in *";"*)
    broken "CTest allocated several GPUs to one test ('$allocation'); a GPU test asks for one" ;;
  esac
  id=${allocation#id:}
  id=${id%%,*}
  slots=${allocation#"id:$id,slots:"}
  [ "$allocation" = "id:$id,slots:$slots" ] && [ -n "$slots" ] && [ -n "${slots##*[!0-9]*}" ] ||
    broken "cannot read CTest's allocation CTEST_RESOURCE_GROUP_0_GPUS='$allocation' (one GPU, as id:N,slots:S)"
  case "$id" in
    "" | *[!0-9]*) broken "the resource spec names GPU '$id', not an nvidia-smi index (write the spec with ci/gpu-resources.sh)" ;;
  esac
  CUDA_DEVICE_ORDER=PCI_BUS_ID
  CUDA_VISIBLE_DEVICES=$id
  export CUDA_DEVICE_ORDER CUDA_VISIBLE_DEVICES
fi
exec "$@"

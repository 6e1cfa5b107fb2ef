#!/usr/bin/env bash
# Writes CTest's resource spec for this machine's GPUs, so that
#   ctest -L gpu -j N --resource-spec-file SPEC.json
# runs every GPU test on a GPU of its own share (docs/gpu-resources.md):
# one `gpus` resource per GPU that nvidia-smi lists (its index as the id,
# restricted to CUDA_VISIBLE_DEVICES where that is set), each with as many
# slots as the largest request of the build's GPU tests, so that a timed
# test, which asks for them all, has its GPU to itself
# (LSTMCHECK_GPU_SLOTS, cmake/gpu_tests.cmake).
#
#   bash ci/gpu-resources.sh [--build DIR] SPEC.json
#
# DIR: the configured build (default $BUILD_DIR, else ./build). The file is
# written to a new temporary name and renamed over SPEC.json. Exit 0 written,
# 2 bad usage or a build without GPU tests, 3 no GPU here (no nvidia-smi, no
# driver, none visible), 4 something broke. LSTMCHECK_NVIDIA_SMI names another
# nvidia-smi (tests/unit/gpu_resources.sh gives it a fake one).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: bash ci/gpu-resources.sh [--build DIR] SPEC.json"
build=${BUILD_DIR:-$root/build}
spec=
while (( $# )); do
  case $1 in
    --build) (( $# >= 2 )) || { echo "gpu-resources: --build needs a folder; $usage" >&2; exit 2; }
             build=$2; shift 2 ;;
    -h | --help) echo "$usage"; exit 0 ;;
    -*) echo "gpu-resources: unknown flag '$1'; $usage" >&2; exit 2 ;;
    *) [ -z "$spec" ] || { echo "gpu-resources: one SPEC.json only, got '$spec' and '$1'" >&2; exit 2; }
       spec=$1; shift ;;
  esac
done
[ -n "$spec" ] || { echo "gpu-resources: name the spec file to write; $usage" >&2; exit 2; }
[ -f "$build/CTestTestfile.cmake" ] ||
  { echo "gpu-resources: '$build' is not a configured build (no CTestTestfile.cmake); give it with --build DIR" >&2; exit 2; }
[ -d "$(dirname -- "$spec")" ] || { echo "gpu-resources: no folder '$(dirname -- "$spec")' for '$spec'" >&2; exit 2; }

smi=${LSTMCHECK_NVIDIA_SMI:-nvidia-smi}
command -v "$smi" > /dev/null || { echo "gpu-resources: no $smi here: this machine has no NVIDIA GPU to list" >&2; exit 3; }
if ! gpus=$("$smi" --query-gpu=index,uuid,name --format=csv,noheader 2>&1); then
  echo "gpu-resources: $smi lists no GPU: $(echo "$gpus" | head -1)" >&2
  exit 3
fi

GPUS=$gpus SPEC=$spec BUILD=$build python3 - <<'PY'
import json, os, subprocess, sys, tempfile

def stop(code, why):
    print(f"gpu-resources: {why}", file=sys.stderr)
    sys.exit(code)

# the largest `gpus` request of the build's tests: a GPU's slots
# (listed from a scratch folder: ctest rewrites the LastTest.log of the folder it runs in)
with tempfile.TemporaryDirectory() as scratch:
    with open(os.path.join(scratch, "CTestTestfile.cmake"), "w") as f:
        f.write(f"subdirs([==[{os.path.abspath(os.environ['BUILD'])}]==])\n")
    listed = subprocess.run(["ctest", "--show-only=json-v1"], cwd=scratch, capture_output=True, text=True)
if listed.returncode != 0:
    stop(4, f"ctest could not list the tests of '{os.environ['BUILD']}': {listed.stderr.strip()[:200]}")
requests = [req.get("slots", 1)
            for test in json.loads(listed.stdout).get("tests", [])
            for prop in test.get("properties", []) if prop["name"] == "RESOURCE_GROUPS"
            for group in prop["value"] for req in group["requirements"] if req[".type"] == "gpus"]
if not requests:
    stop(2, f"the build in '{os.environ['BUILD']}' has no GPU tests (configured without CUDA?)")
slots = max(requests)

gpus = []  # (index, uuid, name), in nvidia-smi's order
for line in os.environ["GPUS"].splitlines():
    fields = [f.strip() for f in line.split(",", 2)]
    if len(fields) != 3 or not fields[0].isdigit():
        stop(4, f"cannot read nvidia-smi's line '{line}' (index, uuid, name)")
    gpus.append(tuple(fields))
# CUDA_VISIBLE_DEVICES, where set, limits the GPUs (indices or UUIDs, CUDA's syntax)
visible = os.environ.get("CUDA_VISIBLE_DEVICES")
if visible is not None:
    wanted = [v.strip() for v in visible.split(",") if v.strip()]
    known = {g[0] for g in gpus} | {g[1] for g in gpus}
    unknown = [w for w in wanted if w not in known and not w.startswith("-")]
    if unknown:
        stop(2, f"CUDA_VISIBLE_DEVICES names {', '.join(unknown)}, which nvidia-smi does not list")
    # CUDA stops at the first invalid entry (such as -1)
    first_invalid = next((i for i, w in enumerate(wanted) if w not in known), len(wanted))
    kept = set(wanted[:first_invalid])
    gpus = [g for g in gpus if g[0] in kept or g[1] in kept]
if not gpus:
    stop(3, "no GPU to list: nvidia-smi shows none" + (f" of CUDA_VISIBLE_DEVICES='{visible}'" if visible is not None else ""))

spec = {"version": {"major": 1, "minor": 0},
        "local": [{"gpus": [{"id": index, "slots": slots} for index, _, _ in gpus]}]}
path = os.environ["SPEC"]
tmp = f"{path}.tmp.{os.getpid()}"
try:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
except OSError as e:
    if os.path.lexists(tmp) and not os.path.islink(tmp):
        os.unlink(tmp)
    stop(4, f"cannot write '{path}': {e.strerror}")
print(f"{path}: {len(gpus)} GPU(s), {slots} slots each (a numerics test takes 1, a timed test all {slots})")
for index, uuid, name in gpus:
    print(f"  gpus id {index}: {name} ({uuid})")
PY

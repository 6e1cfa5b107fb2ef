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
#   bash ci/gpu-resources.sh [--build DIR] [--] SPEC.json
#
# DIR: the configured build (default $BUILD_DIR, else this project's build/).
# The file is written to a new temporary name and renamed over SPEC.json.
# Exit 0 written; 2 bad usage, a build without GPU tests, or a
# CUDA_VISIBLE_DEVICES this cannot follow; 3 no GPU here (no nvidia-smi, no
# driver, none visible); 4 something broke. LSTMCHECK_NVIDIA_SMI names another
# nvidia-smi (tests/unit/gpu_resources.sh gives it a fake one).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: bash ci/gpu-resources.sh [--build DIR] [--] SPEC.json"
build=${BUILD_DIR:-$root/build}
spec=
set_spec() {
  [ -z "$spec" ] || { echo "gpu-resources: one SPEC.json only, got '$spec' and '$1'" >&2; exit 2; }
  spec=$1
}
while (( $# )); do
  case $1 in
    --build) (( $# >= 2 )) || { echo "gpu-resources: --build needs a folder; $usage" >&2; exit 2; }
             build=$2; shift 2 ;;
    -h | --help) echo "$usage"; exit 0 ;;
    --) shift; for a in "$@"; do set_spec "$a"; done; break ;;
    -*) echo "gpu-resources: unknown flag '$1'; $usage" >&2; exit 2 ;;
    *) set_spec "$1"; shift ;;
  esac
done
[ -n "$spec" ] || { echo "gpu-resources: name the spec file to write; $usage" >&2; exit 2; }
exec python3 - "$build" "$spec" "${LSTMCHECK_NVIDIA_SMI:-nvidia-smi}" <<'PY'
import json, os, re, shutil, subprocess, sys, tempfile

build, spec_path, smi = sys.argv[1:4]

def stop(code, why):
    print("gpu-resources: " + " ".join(str(why).split()), file=sys.stderr)  # one line
    sys.exit(code)

def first_line(text):
    return next((l.strip() for l in text.splitlines() if l.strip()), "")

# --- what is asked, before any work
if not os.path.isfile(os.path.join(build, "CTestTestfile.cmake")):
    stop(2, f"'{build}' is not a configured build (no CTestTestfile.cmake); give it with --build DIR")
if os.path.isdir(spec_path) or spec_path.endswith("/"):
    stop(2, f"'{spec_path}' is a folder: name the spec file to write")
folder = os.path.dirname(os.path.abspath(spec_path))
if not os.path.isdir(folder):
    stop(2, f"no folder '{folder}' for '{spec_path}'")

# --- the largest `gpus` request of the build's tests: a GPU's slots.
# Listed from a scratch folder (ctest rewrites the LastTest.log of the folder
# it runs in) with an empty spec of its own: a build configured with
# CTEST_RESOURCE_SPEC_FILE cannot be listed while that file does not exist yet.
if shutil.which("ctest") is None:
    stop(4, "no ctest on PATH: the build's tests cannot be listed")
with tempfile.TemporaryDirectory() as scratch:
    absbuild = os.path.abspath(build)
    n = 1
    while f"]{'=' * n}]" in absbuild:
        n += 1
    with open(os.path.join(scratch, "CTestTestfile.cmake"), "w") as f:
        f.write(f"subdirs([{'=' * n}[{absbuild}]{'=' * n}])\n")
    with open(os.path.join(scratch, "none.json"), "w") as f:
        json.dump({"version": {"major": 1, "minor": 0}, "local": [{}]}, f)
    listed = subprocess.run(["ctest", "--show-only=json-v1", "--resource-spec-file", "none.json"],
                            cwd=scratch, capture_output=True, text=True)
try:
    tests = json.loads(listed.stdout)["tests"] if listed.returncode == 0 else None
except (ValueError, KeyError):
    tests = None
if tests is None:
    stop(4, f"ctest could not list the tests of '{build}': {first_line(listed.stderr) or first_line(listed.stdout)}")
requests = [req.get("slots", 1)
            for test in tests for prop in test.get("properties", []) if prop["name"] == "RESOURCE_GROUPS"
            for group in prop["value"] for req in group["requirements"] if req[".type"] == "gpus"]
if not requests or max(requests) < 1:
    stop(2, f"the build in '{build}' has no GPU tests (configured without CUDA?)")
slots = max(requests)

# --- the GPUs, in nvidia-smi's order (the PCI bus)
if shutil.which(smi) is None:
    stop(3, f"no {smi} here: this machine has no NVIDIA GPU to list")
try:
    smi_run = subprocess.run([smi, "--query-gpu=index,uuid,name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60)
except (OSError, subprocess.TimeoutExpired) as e:
    stop(4, f"{smi} did not run: {e}")
said = first_line(smi_run.stdout + "\n" + smi_run.stderr)
# nvidia-smi's codes for no GPU here: 6 none found, 9 no driver loaded, 12 no NVML
if smi_run.returncode in (6, 9, 12) or (smi_run.returncode == 0 and said.startswith("No devices were found")):
    stop(3, f"{smi} lists no GPU: {said or f'exit {smi_run.returncode}'}")
if smi_run.returncode != 0:
    stop(4, f"{smi} failed (exit {smi_run.returncode}): {said}")
gpus = []  # (index, uuid, name)
for line in smi_run.stdout.splitlines():
    fields = [f.strip() for f in line.split(",", 2)]
    if len(fields) != 3 or not re.fullmatch(r"[0-9]+", fields[0]):
        stop(4, f"cannot read {smi}'s line '{line}' (index, uuid, name)")
    if any(g[0] == fields[0] for g in gpus):
        stop(4, f"{smi} lists GPU index {fields[0]} twice")
    gpus.append(tuple(fields))
if not gpus:
    stop(3, f"{smi} lists no GPU")

# --- CUDA_VISIBLE_DEVICES, where set, limits the GPUs as CUDA reads it: in
# order, up to the first entry that names no GPU; an index counts in CUDA's
# order, which is nvidia-smi's only under CUDA_DEVICE_ORDER=PCI_BUS_ID
visible = os.environ.get("CUDA_VISIBLE_DEVICES")
ignored = ""
if visible is not None:
    kept = []
    entries = [e.strip() for e in visible.split(",")]
    for i, e in enumerate(entries):
        if e.startswith("MIG-"):
            stop(2, f"CUDA_VISIBLE_DEVICES names a MIG instance ({e}): CTest gets whole GPUs here; name GPUs")
        if re.fullmatch(r"[0-9]+", e):
            if len(gpus) > 1 and os.environ.get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID":
                stop(2, f"CUDA_VISIBLE_DEVICES='{visible}' counts GPUs in CUDA's order (fastest first), "
                        "not nvidia-smi's: set CUDA_DEVICE_ORDER=PCI_BUS_ID, or name the GPUs by UUID")
            match = [g for g in gpus if int(g[0]) == int(e)]
        else:
            match = [g for g in gpus if e and g[1].startswith(e)] if e.startswith("GPU-") else []
        if len(match) != 1:  # CUDA stops here
            ignored = ",".join(entries[i:])
            break
        if match[0] not in kept:
            kept.append(match[0])
    gpus = sorted(kept, key=lambda g: int(g[0]))
    if not gpus:
        stop(3, f"no GPU visible: CUDA_VISIBLE_DEVICES='{visible}' names none of the GPUs {smi} lists")

# --- written to a new name, then renamed over the spec (a link there is replaced)
spec = {"version": {"major": 1, "minor": 0},
        "local": [{"gpus": [{"id": index, "slots": slots} for index, _, _ in gpus]}]}
tmp, created = None, False
try:
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(spec_path) + ".", suffix=".tmp", dir=folder)
    created = True
    with os.fdopen(fd, "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, spec_path)
except OSError as e:
    if created and os.path.lexists(tmp):
        os.unlink(tmp)
    stop(4, f"cannot write '{spec_path}': {e.strerror}")
print(f"{spec_path}: {len(gpus)} GPU(s), {slots} slots each (a numerics test takes 1, a timed test all {slots})")
for index, uuid, name in gpus:
    print(f"  gpus id {index}: {name} ({uuid})")
if ignored:
    print(f"  (CUDA_VISIBLE_DEVICES: '{ignored}' names no GPU; CUDA ignores it and what follows)")
PY

#!/usr/bin/env bash
# GPU tests over several GPUs through CTest's resource allocation, without a
# GPU (docs/gpu-resources.md):
#   1. this build's GPU tests: each labelled gpu asks for one group of `gpus`
#      and runs through ci/ctest-gpu.sh; a timed one (perf) asks for a whole
#      GPU; nothing else asks;
#   2. ci/gpu-resources.sh, with a fake nvidia-smi of two GPUs, writes a spec
#      with the build's slots per GPU, honours CUDA_VISIBLE_DEVICES, and
#      refuses what it cannot do with its exit code;
#   3. a scratch project of stand-in tests added by cmake/gpu_tests.cmake,
#      run by ctest under that spec: each test's CUDA_VISIBLE_DEVICES is the
#      GPU CTest allocated, a GPU never holds more than its slots, a timed
#      test never shares its GPU (nor, without a configured spec, the
#      machine); with the spec configured the timed tests run side by side.
#   gpu_resources.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# --- 1. this build's GPU tests
# (listed from a scratch folder: ctest rewrites the LastTest.log of the folder it runs in, here the outer run's)
mkdir "$work/list"
echo "subdirs([==[$(cd "$build" && pwd)]==])" > "$work/list/CTestTestfile.cmake"
(cd "$work/list" && ctest --show-only=json-v1) > "$work/tests.json" || { echo "FAIL: ctest cannot list $build"; exit 1; }
if out=$(python3 - "$work/tests.json" "$src/ci/ctest-gpu.sh" "$work/whole" <<'PY'
import json, os, sys
tests, launcher = json.load(open(sys.argv[1]))["tests"], os.path.realpath(sys.argv[2])
bad, slots = [], {}
for t in tests:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    gpu = "gpu" in props.get("LABELS", [])
    groups = props.get("RESOURCE_GROUPS")
    wrapped = len(t["command"]) > 1 and os.path.realpath(t["command"][1]) == launcher
    if not gpu:
        if groups or wrapped:
            bad.append(f"{t['name']}: not labelled gpu, yet {'asks for GPUs' if groups else 'runs through ctest-gpu.sh'}")
        continue
    reqs = [r for g in groups or [] for r in g["requirements"]]
    if len(groups or []) != 1 or len(reqs) != 1 or reqs[0][".type"] != "gpus":
        bad.append(f"{t['name']}: RESOURCE_GROUPS {groups}, not one group of gpus")
        continue
    if not wrapped:
        bad.append(f"{t['name']}: does not run through ctest-gpu.sh: {t['command'][:2]}")
    slots[t["name"]] = (reqs[0].get("slots", 1), "perf" in props.get("LABELS", []))
if not slots:
    bad.append("no test is labelled gpu: nothing was checked")
whole = max((s for s, _ in slots.values()), default=0)
open(sys.argv[3], "w").write(f"{whole}\n")  # what the spec's slots per GPU must be
for name, (s, timed) in sorted(slots.items()):
    if timed != (s == whole and whole > 1):
        bad.append(f"{name}: asks for {s} of a GPU's {whole} slots, and is {'' if timed else 'not '}timed (perf)")
print(f"{len(slots)} GPU tests, {sum(t for _, t in slots.values())} timed (whole GPU: {whole} slots)")
for b in bad[:20]:
    print(b)
sys.exit(1 if bad else 0)
PY
); then pass "registration: $out"; else fail "registration: $out"; fi

# --- 2. the spec writer, on a fake nvidia-smi
cat > "$work/nvidia-smi" <<'SMI'
#!/bin/sh
case ${FAKE_SMI:-} in
  nodriver) echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."; exit 9 ;;
  nodevices) echo "No devices were found"; exit 6 ;;
  noise) echo "WARNING: infoROM is corrupted at gpu 0000:01:00.0" >&2 ;;
  broken) echo "0, GPU-aaaaaaaa-0000-0000-0000-000000000000, NVIDIA H100 80GB HBM3"; exit 15 ;;
  twice) echo "0, GPU-cccccccc-2222-2222-2222-222222222222, NVIDIA H100 80GB HBM3" ;;
esac
echo "0, GPU-aaaaaaaa-0000-0000-0000-000000000000, NVIDIA H100 80GB HBM3"
echo "1, GPU-bbbbbbbb-1111-1111-1111-111111111111, NVIDIA H100 80GB HBM3"
SMI
chmod +x "$work/nvidia-smi"
resources() { # EXPECTED_EXIT WHAT ARGS...: runs ci/gpu-resources.sh on the fake
  local want=$1 what=$2 out rc
  shift 2
  out=$(LSTMCHECK_NVIDIA_SMI=${SMI:-$work/nvidia-smi} bash "$src/ci/gpu-resources.sh" "$@" 2>&1)
  rc=$?
  if [ "$rc" = "$want" ] && { [ "$rc" = 0 ] || [ "$(wc -l <<<"$out")" = 1 ]; }; then
    pass "gpu-resources $what: exit $rc: $(head -1 <<<"$out")"
  else
    fail "gpu-resources $what: exit $rc (want $want, and one line when refused): $out"
  fi
}
spec_ids() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(" ".join("%s:%s" % (g["id"], g["slots"]) for g in s["local"][0]["gpus"]))' "$1"; }
slots=$(cat "$work/whole" 2>/dev/null)
(unset CUDA_VISIBLE_DEVICES; resources 0 "two GPUs" --build "$build" "$work/spec.json")
[ "$(spec_ids "$work/spec.json" 2>&1)" = "0:$slots 1:$slots" ] && pass "spec: GPUs 0 and 1, $slots slots each" ||
  fail "spec: $(spec_ids "$work/spec.json" 2>&1) (want 0:$slots 1:$slots)"
visible() { # CUDA_VISIBLE_DEVICES WANT_IDS WHAT: the spec of the GPUs CUDA would see
  rm -f "$work/one.json"
  CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=$1 resources 0 "$3" --build "$build" "$work/one.json"
  [ "$(spec_ids "$work/one.json" 2>&1)" = "$2" ] && pass "spec of $3: $2" || fail "spec of $3: $(spec_ids "$work/one.json" 2>&1) (want $2)"
}
visible GPU-bbbbbbbb-1111-1111-1111-111111111111 "1:$slots" "CUDA_VISIBLE_DEVICES by UUID"
visible GPU-bbbb "1:$slots" "a UUID's prefix"
visible "1, 7, 0" "1:$slots" "an index, then one nvidia-smi lacks (CUDA stops there)"
visible "1,0,1" "0:$slots 1:$slots" "indices, one twice"
CUDA_VISIBLE_DEVICES=1 resources 2 "an index in CUDA's own order" --build "$build" "$work/x.json"
CUDA_VISIBLE_DEVICES=MIG-aaaaaaaa-0000-0000-0000-000000000000 resources 2 "a MIG instance" --build "$build" "$work/x.json"
CUDA_VISIBLE_DEVICES= resources 3 "no GPU visible" --build "$build" "$work/x.json"
(unset CUDA_VISIBLE_DEVICES
 FAKE_SMI=nodriver resources 3 "no driver" --build "$build" "$work/x.json"
 FAKE_SMI=nodevices resources 3 "no devices" --build "$build" "$work/x.json"
 FAKE_SMI=broken resources 4 "nvidia-smi failing after a line" --build "$build" "$work/x.json"
 FAKE_SMI=twice resources 4 "an index listed twice" --build "$build" "$work/x.json"
 FAKE_SMI=noise resources 0 "warnings on nvidia-smi's stderr" --build "$build" "$work/noise.json"
 resources 2 "a folder for the spec" --build "$build" "$work")
SMI=$work/none resources 3 "no nvidia-smi" --build "$build" "$work/x.json"
resources 2 "no spec named" --build "$build"
resources 2 "not a build" --build "$work" "$work/x.json"
resources 2 "an unknown flag" --slots 2 "$work/x.json"
[ ! -e "$work/x.json" ] && pass "nothing written when refused" || fail "a refused run wrote $work/x.json"
echo keep > "$work/target"
ln -s "$work/target" "$work/link.json"
(unset CUDA_VISIBLE_DEVICES; resources 0 "over a link" --build "$build" -- "$work/link.json")
[ "$(cat "$work/target")" = keep ] && [ ! -L "$work/link.json" ] && pass "a link is replaced, not written through" ||
  fail "the spec was written through the link $work/link.json"

# --- 3. stand-in tests under the spec
mkdir -p "$work/project"
cat > "$work/project/record.sh" <<'REC'
#!/bin/sh
# record.sh NAME LOG: what the test saw, and when it held its GPU
echo "$1 start $(date +%s.%N) ${CUDA_VISIBLE_DEVICES-unset} ${CUDA_DEVICE_ORDER-unset} ${CTEST_RESOURCE_GROUP_0_GPUS-none}" >> "$2"
sleep 0.5
echo "$1 end $(date +%s.%N)" >> "$2"
REC
cat > "$work/project/CMakeLists.txt" <<CML
cmake_minimum_required(VERSION 3.20)
project(gpu_resources NONE)
enable_testing()
include($src/cmake/gpu_tests.cmake)
foreach(i RANGE 1 10)
  lstmcheck_gpu_test(NAME numerics.\${i} LABELS numerics COMMAND sh $work/project/record.sh numerics.\${i} \${LOG})
endforeach()
foreach(i RANGE 1 4)
  lstmcheck_gpu_test(NAME perf.\${i} WHOLE_GPU LABELS perf COMMAND sh $work/project/record.sh perf.\${i} \${LOG})
endforeach()
CML
judge() { # MODE LOG SPEC: the recorded runs, judged (mode: serial, parallel, none)
  python3 - "$1" "$2" "$(spec_ids "$3")" <<'PY'
import sys
mode, log, spec = sys.argv[1], sys.argv[2], dict(g.split(":") for g in sys.argv[3].split())
runs, bad = {}, []
for line in open(log):
    f = line.split()
    if f[1] == "start":
        runs[f[0]] = {"start": float(f[2]), "gpu": f[3], "order": f[4], "alloc": f[5]}
    else:
        runs[f[0]]["end"] = float(f[2])
if len(runs) != 14 or any("end" not in r for r in runs.values()):
    bad.append(f"{len(runs)} of 14 tests ran to their end")
for name, r in runs.items():
    r["slots"] = int(spec["0"]) if name.startswith("perf") else 1
    if mode == "none":
        if r["gpu"] != "unset" or r["alloc"] != "none":
            bad.append(f"{name}: without a spec it got CUDA_VISIBLE_DEVICES={r['gpu']} ({r['alloc']})")
    elif r["gpu"] not in spec or r["order"] != "PCI_BUS_ID" or r["alloc"] != f"id:{r['gpu']},slots:{r['slots']}":
        bad.append(f"{name}: CUDA_VISIBLE_DEVICES={r['gpu']} CUDA_DEVICE_ORDER={r['order']} from {r['alloc']}")
overlap = lambda a, b: a["start"] < b["end"] and b["start"] < a["end"]
names = sorted(runs)
for a in names:
    if not a.startswith("perf") or "end" not in runs[a]:
        continue
    for b in names:
        if b == a or "end" not in runs[b] or not overlap(runs[a], runs[b]):
            continue
        if mode == "serial" or (mode == "parallel" and runs[a]["gpu"] == runs[b]["gpu"]):
            bad.append(f"{a} (GPU {runs[a]['gpu']}) ran beside {b} (GPU {runs[b]['gpu']})")
if mode != "none":
    for gpu in spec:  # never more than a GPU's slots at once
        mine = [r for r in runs.values() if r["gpu"] == gpu and "end" in r]
        peak = max((sum(o["slots"] for o in mine if o["start"] <= r["start"] < o["end"]) for r in mine), default=0)
        if peak > int(spec[gpu]):
            bad.append(f"GPU {gpu} held {peak} slots at once, of {spec[gpu]}")
        if not mine:
            bad.append(f"GPU {gpu} ran no test")
    perf = [runs[n] for n in names if n.startswith("perf") and "end" in runs[n]]
    side_by_side = any(overlap(a, b) for i, a in enumerate(perf) for b in perf[i + 1:])
    if mode == "parallel" and not side_by_side:
        bad.append("no two timed tests ran at once, on their two GPUs")
print(f"{len(runs)} tests on GPUs {sorted({r['gpu'] for r in runs.values()})}")
for b in bad[:12]:
    print(b)
sys.exit(1 if bad else 0)
PY
}
scratch() { # MODE: configures the project afresh, runs it as docs/gpu-resources.md says, judges it
  local mode=$1 b=$work/build-$1 out configure=() run=()
  case $mode in
    serial) run=(--resource-spec-file "$b/gpus.json") ;;
    parallel) configure=("-DCTEST_RESOURCE_SPEC_FILE=$b/gpus.json") ;; # the spec written after configuring
  esac
  cmake -S "$work/project" -B "$b" -DLOG="$b/runs.log" "${configure[@]}" > "$work/cmake-$mode.log" 2>&1 ||
    { fail "$mode: the scratch project does not configure: $(tail -3 "$work/cmake-$mode.log")"; return; }
  if [ "$mode" != none ]; then
    (unset CUDA_VISIBLE_DEVICES; resources 0 "$mode: the scratch project's spec" --build "$b" "$b/gpus.json")
  fi
  (cd "$b" && unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER && ctest -j 8 "${run[@]}" > "$b/ctest.log" 2>&1) ||
    { fail "$mode: ctest failed: $(tail -5 "$b/ctest.log")"; return; }
  [ "$mode" = none ] && cp "$work/spec.json" "$b/gpus.json"
  if out=$(judge "$mode" "$b/runs.log" "$b/gpus.json" 2>&1); then pass "$mode: $out"; else fail "$mode: $out"; fi
}
scratch none
scratch serial
scratch parallel

# --- the launcher refuses an allocation it cannot read
launch() { # EXPECTED_EXIT WHAT COUNT GROUP ALLOCATION
  local out rc
  out=$(CTEST_RESOURCE_GROUP_COUNT=$3 CTEST_RESOURCE_GROUP_0=$4 CTEST_RESOURCE_GROUP_0_GPUS=$5 \
        sh "$src/ci/ctest-gpu.sh" sh -c 'echo "gpu=$CUDA_VISIBLE_DEVICES"' 2>&1)
  rc=$?
  [ "$rc" = "$1" ] && [ "$(wc -l <<<"$out")" = 1 ] && pass "launcher, $2: exit $rc: $out" ||
    fail "launcher, $2: exit $rc (want $1): $out"
}
launch 0 "GPU 3" 1 gpus "id:3,slots:1"
launch 4 "two GPUs at once" 1 gpus "id:0,slots:1;id:1,slots:1"
launch 4 "a GPU named, not numbered" 1 gpus "id:gpu_a,slots:1"
launch 4 "two groups" 2 gpus "id:0,slots:1"
launch 4 "another resource" 1 crypto_chips "id:0,slots:1"
launch 4 "no slots" 1 gpus "id:0,slots:"
launch 4 "more after the slots" 1 gpus "id:0,slots:1,slots:2"
launch 4 "a second GPU on a line of its own" 1 gpus "id:0,slots:1
id:1,slots:1"

[ "$fails" = 0 ] && echo "PASS: GPU tests over the GPUs CTest allocates" && exit 0
echo "FAIL: $fails checks failed"
exit 1

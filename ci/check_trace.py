#!/usr/bin/env python3
"""The GPU proof's check of a `lstmcheck profile` trace (ci/gpu-proof.sh,
step profile): is it a trace Perfetto can show, and did CUPTI see the GPU?

  check_trace.py TRACE RUNNER...

Passes (exit 0, one line per runner) when the file is a Chrome trace
(`traceEvents`, complete events with numeric ts and dur >= 0, every pid
named by a `process_name` event), it has a GPU lane (pid >= 100) holding
kernels, CUPTI dropped no record, and each RUNNER's `runner <name>` range
carries a GPU utilization in (0, 1], a GEMM share in [0, 1] and kernels
inside its window. Else exit 1, naming the first thing wrong; exit 2 for
bad usage or a file that cannot be read as JSON.
"""
import json
import sys

GPU_PID = 100  # src/device/trace.h: GPU lanes are 100 + device


class TraceError(Exception):
    pass


def complete_events(trace):
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list) or not events:
        raise TraceError("no traceEvents list")
    named = {e.get("pid") for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    done = [e for e in events if e.get("ph") == "X"]
    for e in done:
        ts, dur = e.get("ts"), e.get("dur")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (ts, dur)) or dur < 0:
            raise TraceError(f"event '{e.get('name')}' has no numeric ts or a negative dur")
        if e.get("pid") not in named:
            raise TraceError(f"pid {e.get('pid')} has no process_name event")
    return done


def runner_line(done, runner):
    ranges = [e for e in done if e.get("cat") == "host" and e.get("name") == f"runner {runner}"]
    if not ranges:
        raise TraceError(f"no 'runner {runner}' range")
    args = ranges[-1].get("args", {})
    util, share, kernels = args.get("gpu_utilization"), args.get("gemm_share"), args.get("kernels")
    if not isinstance(util, (int, float)) or not 0 < util <= 1:
        raise TraceError(f"{runner}: GPU utilization {util!r} is not in (0, 1]")
    if not isinstance(share, (int, float)) or not 0 <= share <= 1:
        raise TraceError(f"{runner}: GEMM share {share!r} is not in [0, 1]")
    if not isinstance(kernels, int) or kernels < 1:
        raise TraceError(f"{runner}: {kernels!r} kernels in its window")
    return f"{runner}: gpu_utilization {util:.3f}, gemm_share {share:.3f}, {kernels} kernels"


def check(trace, runners):
    done = complete_events(trace)
    gpu = [e for e in done if isinstance(e.get("pid"), int) and e["pid"] >= GPU_PID and e.get("cat") == "kernel"]
    if not gpu:
        raise TraceError("no kernel on a GPU lane: CUPTI recorded no GPU activity")
    dropped = trace.get("otherData", {}).get("dropped_records")
    if dropped != 0:
        raise TraceError(f"CUPTI dropped records: {dropped!r}")
    lines = [runner_line(done, r) for r in runners]
    return lines + [f"{len(done)} complete events, {len(gpu)} kernels on GPU lanes, clock "
                    f"{trace.get('otherData', {}).get('clock')}"]


def main(argv):
    if len(argv) < 3:
        print("usage: check_trace.py TRACE RUNNER...", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_trace: {argv[1]}: {e}", file=sys.stderr)
        return 2
    try:
        lines = check(trace, argv[2:])
    except TraceError as e:
        print(f"check_trace: FAIL: {argv[1]}: {e}")
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

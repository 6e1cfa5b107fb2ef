#!/usr/bin/env python3
"""The GPU proof's check of a `lstmcheck profile` trace (ci/gpu-proof.sh,
step profile): is it a trace Perfetto can show, and did CUPTI see the GPU?

  check_trace.py TRACE RUNNER...

Passes (exit 0, one line per runner) when the file is a Chrome trace
(`traceEvents`, complete events with finite ts and dur >= 0, every pid
named by a `process_name` event), it has a GPU lane (pid >= 100) holding
kernels, CUPTI dropped no record, and each RUNNER's `runner <name>` range
carries a GPU utilization in (0, 1] and a GEMM share in [0, 1], and
kernels of a GPU lane lie in that range (counted here, not taken from the
range's own count). Else exit 1, naming the first thing wrong; exit 2 for
bad usage or a file that cannot be read as JSON.
"""
import json
import math
import sys

GPU_PID = 100  # src/device/trace.h: GPU lanes are 100 + device


class TraceError(Exception):
    pass


def number(v):
    """A finite JSON number (a bool is not one), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return v


def complete_events(trace):
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list) or not events:
        raise TraceError("no traceEvents list")
    if not all(isinstance(e, dict) for e in events):
        raise TraceError("an event that is not an object")
    named = {e.get("pid") for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    done = [e for e in events if e.get("ph") == "X"]
    for e in done:
        ts, dur = number(e.get("ts")), number(e.get("dur"))
        if ts is None or dur is None or dur < 0:
            raise TraceError(f"event '{e.get('name')}' has no finite ts or dur, or a negative dur")
        if e.get("pid") not in named:
            raise TraceError(f"pid {e.get('pid')} has no process_name event")
    return done


def runner_line(done, gpu, runner):
    ranges = [e for e in done if e.get("cat") == "host" and e.get("name") == f"runner {runner}"]
    if not ranges:
        raise TraceError(f"no 'runner {runner}' range")
    r = ranges[-1]
    args = r.get("args") if isinstance(r.get("args"), dict) else {}
    util, share = args.get("gpu_utilization"), args.get("gemm_share")
    if number(util) is None or not 0 < util <= 1:
        raise TraceError(f"{runner}: GPU utilization {util!r} is not in (0, 1]")
    if number(share) is None or not 0 <= share <= 1:
        raise TraceError(f"{runner}: GEMM share {share!r} is not in [0, 1]")
    # host and GPU lanes share CUPTI's clock: the runner's kernels start in its range
    inside = sum(1 for k in gpu if r["ts"] <= k["ts"] <= r["ts"] + r["dur"])
    if inside < 1:
        raise TraceError(f"{runner}: no kernel of a GPU lane starts in its range")
    return f"{runner}: gpu_utilization {util:.3f}, gemm_share {share:.3f}, {inside} kernels in its range"


def check(trace, runners):
    done = complete_events(trace)
    gpu = [e for e in done if number(e.get("pid")) is not None and e["pid"] >= GPU_PID and e.get("cat") == "kernel"]
    if not gpu:
        raise TraceError("no kernel on a GPU lane: CUPTI recorded no GPU activity")
    other = trace.get("otherData")
    dropped = other.get("dropped_records") if isinstance(other, dict) else None
    if number(dropped) is None or dropped != 0:
        raise TraceError(f"CUPTI dropped records: {dropped!r}")
    lines = [runner_line(done, gpu, r) for r in runners]
    return lines + [f"{len(done)} complete events, {len(gpu)} kernels on GPU lanes, clock {other.get('clock')}"]


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

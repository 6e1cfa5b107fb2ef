"""ci/check_trace.py, the GPU proof's check of a profile trace, without a GPU:
a trace shaped as lstmcheck writes one on a GPU passes, and each thing the
check exists for fails it (exit 1, naming it): a CPU-only trace, a dropped
CUPTI record, a runner without its range, with a utilization or GEMM share
out of range or not a number, or with no kernel in its range, an unnamed
lane, a negative or infinite duration; bad usage and a file that is not
JSON exit 2.
usage: check_trace_cases.py CHECK_TRACE SCRATCH_DIR"""
import copy
import json
import os
import subprocess
import sys


def gpu_trace():
    meta = [{"ph": "M", "pid": p, "tid": 0, "name": "process_name", "args": {"name": n}}
            for p, n in ((1, "host (lstmcheck)"), (100, "GPU 0"))]
    runner = {"ph": "X", "cat": "host", "name": "runner cudnn", "pid": 1, "tid": 1, "ts": 0.0, "dur": 900.0,
              "args": {"timed_iterations": 5, "gpu_utilization": 0.8, "gemm_share": 0.6, "kernels": 40}}
    kernel = {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 100, "tid": 7, "ts": 10.0, "dur": 20.0}
    return {"otherData": {"tool": "lstmcheck", "clock": "cupti", "dropped_records": 0},
            "traceEvents": meta + [runner, kernel]}


def mutated(edit):
    t = copy.deepcopy(gpu_trace())
    edit(t)
    return t


def runner_range(t):
    return next(e for e in t["traceEvents"] if e.get("name") == "runner cudnn")


def runner_args(t):
    return runner_range(t)["args"]


CASES = [  # name, trace, exit, text the output must hold
    ("gpu trace", gpu_trace(), 0, "cudnn: gpu_utilization 0.800, gemm_share 0.600, 1 kernels in its range"),
    ("cpu only", mutated(lambda t: t["traceEvents"].pop()), 1, "no kernel on a GPU lane"),
    ("dropped", mutated(lambda t: t["otherData"].update(dropped_records=3)), 1, "CUPTI dropped records: 3"),
    ("no range", mutated(lambda t: runner_range(t).update(name="runner jit")), 1, "no 'runner cudnn' range"),
    ("idle", mutated(lambda t: runner_args(t).update(gpu_utilization=0)), 1, "GPU utilization 0 is not in (0, 1]"),
    ("no util", mutated(lambda t: runner_args(t).pop("gpu_utilization")), 1, "GPU utilization None"),
    ("share", mutated(lambda t: runner_args(t).update(gemm_share=1.5)), 1, "GEMM share 1.5 is not in [0, 1]"),
    ("util bool", mutated(lambda t: runner_args(t).update(gpu_utilization=True)), 1, "GPU utilization True"),
    ("dropped bool", mutated(lambda t: t["otherData"].update(dropped_records=False)), 1, "CUPTI dropped records: False"),
    ("kernel later", mutated(lambda t: t["traceEvents"][-1].update(ts=1e9)), 1, "no kernel of a GPU lane starts in its range"),
    ("kernel on host", mutated(lambda t: t["traceEvents"][-1].update(pid=1)), 1, "no kernel on a GPU lane"),
    ("infinite", mutated(lambda t: t["traceEvents"][-1].update(dur=float("inf"))), 1, "no finite ts or dur"),
    ("not an object", mutated(lambda t: t["traceEvents"].append(3)), 1, "an event that is not an object"),
    ("unnamed lane", mutated(lambda t: t["traceEvents"].pop(1)), 1, "pid 100 has no process_name event"),
    ("negative", mutated(lambda t: t["traceEvents"][-1].update(dur=-1)), 1, "negative dur"),
    ("empty", {"traceEvents": []}, 1, "no traceEvents list"),
]


def run(check, args):
    p = subprocess.run([sys.executable, check] + args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main(check, scratch):
    failures = 0
    os.makedirs(scratch, exist_ok=True)
    for name, trace, code, text in CASES:
        path = os.path.join(scratch, name.replace(" ", "_") + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(trace, f)
        rc, out = run(check, [path, "cudnn"])
        ok = rc == code and text in out
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {rc} (want {code}): {out.strip()}")
    bad = os.path.join(scratch, "not_json.json")
    with open(bad, "w", encoding="utf-8") as f:
        f.write("{")
    for args, text in (([bad, "cudnn"], "not_json.json"), ([bad], "usage")):
        rc, out = run(check, args)
        ok = rc == 2 and text in out
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {args[1:] or 'no runner'}: exit {rc} (want 2): {out.strip()}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

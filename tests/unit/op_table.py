"""The table of operations of `profile` and `bench --trace`, read back: the
CSV parses, and each runner's rows are the operations of the written trace
(every "op" event that starts in the runner's timed iterations, summed per
name): calls and totals to the nanosecond, shares of the window. Refusals
of --csv before any work.
usage: op_table.py LSTMCHECK SCRATCH_DIR"""
import csv
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict

# large enough a step for the cpu runner's team to have two members where two cores are
SHAPE = ["--device", "cpu", "--numLayers", "2", "--seqLength", "6", "--hiddenSize", "128", "--inputSize", "128",
         "--miniBatch", "16"]
LAYERS = int(SHAPE[SHAPE.index("--numLayers") + 1])
# the weight gradients' slabs: 1024 rows (CPU_WGRAD_SLAB) of the T*B
SLABS = -(-int(SHAPE[SHAPE.index("--seqLength") + 1]) * int(SHAPE[SHAPE.index("--miniBatch") + 1]) // 1024)
HEADER = ["runner", "group", "kind", "operation", "calls", "total_ms", "mean_us", "share", "lanes", "window_ms", "iterations"]


def run(exe, args, code=0):
    p = subprocess.run([exe] + args, capture_output=True, text=True)
    assert p.returncode == code, (args, p.returncode, p.stderr)
    return p


def ns(e):
    """An event's [start, end) in ns (ts and dur are microseconds, exact to 1 ns)."""
    start = round(e["ts"] * 1000)
    return start, start + round(e["dur"] * 1000)


def regions(trace):
    """Per (runner, how many times it ran before: its group's place), its
    timed iterations [start, end) in ns, from the host lane's ranges."""
    host = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] == "host"]
    runs = sorted((ns(e), e["name"][len("runner "):]) for e in host if e["name"].startswith("runner "))
    found = defaultdict(list)
    for e in host:
        if " iteration " in e["name"]:
            lo, hi = ns(e)
            (outer, name), = [(r, n) for r, n in runs if r[0] <= lo and hi <= r[1]]
            found[(name, sum(1 for r, n in runs if n == name and r[0] < outer[0]))].append((lo, hi))
    return found


def sums_in(trace, parts):
    """Calls, total ns and lanes of each operation starting in a part."""
    calls, total, lanes = defaultdict(int), defaultdict(int), defaultdict(set)
    for e in trace["traceEvents"]:
        if e["ph"] != "X" or e["cat"] != "op":
            continue
        start = round(e["ts"] * 1000)
        if any(lo <= start < hi for lo, hi in parts):
            calls[e["name"]] += 1
            total[e["name"]] += round(e["dur"] * 1000)
            lanes[e["name"]].add((e["pid"], e["tid"]))
    return calls, total, lanes


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == HEADER, rows[0]
    assert all(len(r) == len(HEADER) for r in rows), rows
    return [dict(zip(HEADER, r)) for r in rows[1:]]


def check_against_trace(rows, trace, runners, iterations, groups=("lstm",)):
    found = regions(trace)
    for runner, (place, group) in [(r, g) for r in runners for g in enumerate(groups)]:
        parts = found[(runner, place)]
        length = sum(hi - lo for lo, hi in parts)
        assert len(parts) == iterations, (runner, parts)
        mine = [r for r in rows if r["runner"] == runner and r["group"] == group]
        assert mine, (runner, "no rows")
        totals = [float(r["total_ms"]) for r in mine]
        assert totals == sorted(totals, reverse=True), (runner, "by total time, longest first")
        calls, total, lanes = sums_in(trace, parts)
        assert sorted(r["operation"] for r in mine) == sorted(calls), (runner, sorted(calls))
        for r in mine:
            name = r["operation"]
            assert r["kind"] == "op" and int(r["calls"]) == calls[name], (r, calls[name])
            assert round(float(r["total_ms"]) * 1e6) == total[name], (r, total[name])
            assert int(r["lanes"]) == len(lanes[name]), (r, lanes[name])
            assert round(float(r["window_ms"]) * 1e6) == length, (r, length)
            assert abs(float(r["share"]) - total[name] / length) < 1e-6, r
            assert int(r["iterations"]) == iterations, r
        if runner == "cpu" and len(os.sched_getaffinity(0)) >= 2 and "OPENBLAS_NUM_THREADS" not in os.environ:
            steps = [r for r in mine if r["operation"] == "step.forward"]
            assert int(steps[0]["lanes"]) >= 2, ("a team member's lane of its own", steps)
        if runner == "cpu" and any(r["operation"] == "step.forward" for r in mine):
            # the fused path's weight gradients: the packing a row of its own, each part once a slab and member
            # (SHAPE's slabs in the lstm group; another group has a shape of its own)
            members = len(lanes["gemm.weight_grads"])
            per_slab = {n: calls.get(n, 0) for n in ("pack.wgrad_strips", "gemm.weight_grads")}
            assert members and len(set(per_slab.values())) == 1, (runner, group, per_slab)
            if group == "lstm":
                expected = iterations * SLABS * LAYERS * members
                assert per_slab["gemm.weight_grads"] == expected, (runner, per_slab, expected)
        # gradients are zeroed once per iteration: warm-up and the gate are outside the window
        zero = [r for r in mine if r["operation"] == "zero.grads"]
        assert zero and int(zero[0]["calls"]) == iterations, (runner, zero)


def check_profile(exe, scratch):
    trace, table = os.path.join(scratch, "profile.json"), os.path.join(scratch, "profile.csv")
    p = run(exe, ["profile"] + SHAPE + ["--rnns", "cpu", "cpu_layernorm", "ref", "--nloops", "3",
                                        "--sleep-between-seconds", "0", "--trace", trace, "--csv", table])
    assert "operations over each runner's timed iterations" in p.stdout, p.stdout
    assert "cpu_layernorm (lstm): 3 timed iterations" in p.stdout and "gemm.recurrent" in p.stdout, p.stdout
    assert "ref (lstm): 3 timed iterations" in p.stdout and "no operations recorded" in p.stdout, p.stdout
    with open(trace) as f:
        events = json.load(f)
    rows = read_csv(table)
    assert not [r for r in rows if r["runner"] == "ref"], "the reference runner marks no operations"
    check_against_trace(rows, events, ["cpu", "cpu_layernorm"], 3)
    return len(rows)


def check_two_groups(exe, scratch):
    """--variable-lstms runs cpu in both groups: two blocks of rows, each
    its group's, each adding up to its own iterations."""
    trace, table = os.path.join(scratch, "groups.json"), os.path.join(scratch, "groups.csv")
    p = run(exe, ["profile"] + SHAPE + ["--rnns", "cpu", "--variable-lstms", "--nloops", "2",
                                        "--sleep-between-seconds", "0", "--trace", trace, "--csv", table])
    assert "cpu (lstm): 2 timed iterations" in p.stdout and "cpu (vl_lstm): 2 timed iterations" in p.stdout, p.stdout
    with open(trace) as f:
        events = json.load(f)
    rows = read_csv(table)
    check_against_trace(rows, events, ["cpu"], 2, ("lstm", "vl_lstm"))
    return len(rows)


def check_bench(exe, scratch):
    trace, table = os.path.join(scratch, "bench.json"), os.path.join(scratch, "bench.csv")
    p = run(exe, ["bench"] + SHAPE + ["--rnns", "cpu", "cpu_dropout", "--nloops", "4", "--warmup", "2",
                                      "--no-progress", "--trace", trace, "--csv", table])
    assert "operations over each runner's timed iterations" in p.stderr and not p.stdout, (p.stdout, p.stderr)
    with open(trace) as f:
        events = json.load(f)
    rows = read_csv(table)
    check_against_trace(rows, events, ["cpu", "cpu_dropout"], 4)
    assert any(r["operation"] == "dropout.mask_output" for r in rows if r["runner"] == "cpu_dropout"), rows
    return len(rows)


def check_refusals(exe, scratch):
    table = os.path.join(scratch, "refused.csv")
    p = run(exe, ["bench"] + SHAPE + ["--csv", table], code=2)
    assert "--csv writes the table of operations of --trace" in p.stderr, p.stderr
    p = run(exe, ["profile", "--tool", "nsys", "--csv", table], code=2)
    assert "--tool nsys replaces" in p.stderr, p.stderr
    p = run(exe, ["profile"] + SHAPE + ["--csv", scratch], code=2)
    assert "a directory, not a file name" in p.stderr, p.stderr
    p = run(exe, ["profile", "--internal-run"] + SHAPE + ["--csv", table], code=2)
    assert "--csv with --internal-run needs --trace" in p.stderr, p.stderr
    p = run(exe, ["bench"] + SHAPE + ["--trace", os.path.join(scratch, "t.json"), "--csv",
                                      os.path.join(scratch, "b" * 228 + ".csv")], code=2)
    assert "at most 227, for the temporary name" in p.stderr, p.stderr
    p = run(exe, ["bench"] + SHAPE + ["--trace", table, "--csv", table], code=2)
    assert "name one place" in p.stderr, p.stderr
    assert not os.path.exists(table), "nothing written"


def check_beside_the_trace(exe, scratch):
    """profile --csv in the folder its trace goes to by default (--out-dir .)."""
    here = os.path.join(scratch, "beside")
    shutil.rmtree(here, ignore_errors=True)  # a run before left its files
    os.makedirs(here)
    p = subprocess.run([exe, "profile"] + SHAPE + ["--rnns", "cpu", "--nloops", "1", "--sleep-between-seconds", "0",
                                                   "--csv", "ops.csv"], cwd=here, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    names = sorted(os.listdir(here))
    assert len(names) == 2 and names[0] == "ops.csv" and names[1].startswith("prof_cpu_"), names
    assert read_csv(os.path.join(here, "ops.csv")), "rows"
    # in an --out-dir not made yet: it is made before either is written
    p = subprocess.run([exe, "profile"] + SHAPE + ["--rnns", "cpu", "--nloops", "1", "--sleep-between-seconds", "0",
                                                   "--out-dir", "new", "--csv", "new/ops.csv"], cwd=here,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    names = sorted(os.listdir(os.path.join(here, "new")))
    assert len(names) == 2 and names[0] == "ops.csv" and names[1].startswith("prof_cpu_"), names


def main():
    exe, scratch = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    n = check_profile(exe, scratch) + check_two_groups(exe, scratch) + check_bench(exe, scratch)
    check_beside_the_trace(exe, scratch)
    check_refusals(exe, scratch)
    print("PASS: the table of operations adds up to the trace (%d CSV rows)" % n)


if __name__ == "__main__":
    main()

"""bench --print-json oss | pep | full on a tiny CPU case: the structure and
key order others read (the bytes are proven by unit.report_json_golden).
usage: bench_json_structure.py LSTMCHECK"""
import json
import subprocess
import sys

ARGS = ["bench", "--device", "cpu", "--seqLength", "4", "--hiddenSize", "8", "--inputSize", "5",
        "--miniBatch", "2", "--nloops", "3", "--warmup", "1", "--variable-lstms", "--print-json"]


def run(exe, fmt):
    out = subprocess.run([exe] + ARGS + [fmt], check=True, capture_output=True, text=True).stdout
    assert out.endswith("\n"), "output ends with a newline"
    return out


def close(a, b):
    return abs(a - b) <= 1e-9 * abs(b)


def check_roofline(full, table):
    """The limit measured, each timed runner's GEMM FLOPs (the backward's
    twice), GFLOP/s and multiple of the limit from its medians, and the
    table's columns the same figures."""
    assert list(full["limit"]) == ["cpu"], full["limit"]  # a limit per device of the run's runners
    limit = full["limit"]["cpu"]
    assert list(limit) == ["what", "gflops", "library", "gemm", "gemm_is", "threads", "libraries"], limit  # none not measured
    assert len(limit["gemm"]) == 3 and limit["threads"] >= 1 and limit["gflops"] > 0, limit
    # the best of the CPU's libraries (OpenBLAS, and oneDNN where the onednn runner is built), the one named
    assert list(limit["libraries"])[0] == "OpenBLAS" and set(limit["libraries"]) <= {"OpenBLAS", "oneDNN"}, limit
    assert limit["gflops"] == max(limit["libraries"].values()) == limit["libraries"][limit["library"]], limit
    flops = {"lstm": 2 * 4 * 8 * (5 + 8) * 4 * 2}  # 2 * 4H * (I + H) per row, T * B rows
    for r in full["runners"]:
        roof = r["roofline"]
        assert list(roof) == ["gemm_flops", "gflops", "x_limit"], list(roof)
        if r["group"] == "lstm":
            assert roof["gemm_flops"]["forward"] == flops["lstm"], roof
        for phase, factor in (("forward", 1), ("backward", 2)):
            f, ms = roof["gemm_flops"][phase], r[phase]["median"]
            assert f == factor * roof["gemm_flops"]["forward"], roof
            assert close(roof["gflops"][phase], f / ms / 1e6), (phase, roof)
            assert close(roof["x_limit"][phase], ms / (f / limit["gflops"] / 1e6)), (phase, roof)
    assert "cpu SGEMM limit: " in table and " GFLOP/s (" in table, table
    header = next(line for line in table.splitlines() if line.split()[:1] == ["name"]).split()
    assert header[-4:] == ["GFLOP/s_fwd", "x_limit_fwd", "GFLOP/s_bwd", "x_limit_bwd"], header
    rows = [line.split() for line in table.splitlines()
            if line.split()[:1] == ["cpu"] and len(line.split()) == len(header)]
    assert rows and all(float(row[-1]) > 0 and float(row[-3]) > 0 for row in rows), rows


def check_context(full, exe):
    """Where, when and with what the run measured: every key, filled as
    --version and this machine say (a CPU run: the CPU's key alone)."""
    ctx = full["context"]
    texts = ["date", "lstmcheck_version", "commit", "build_type", "c_compiler", "cuda_compiler", "openblas",
             "onednn", "cuda", "cudnn"]
    assert list(ctx) == texts + ["tree_clean", "threads", "env", "machines"], list(ctx)
    assert all(ctx[k] for k in texts if k != "cuda_compiler"), ctx
    assert ctx["date"].endswith("Z") and len(ctx["date"]) == 20, ctx["date"]
    version = subprocess.run([exe, "--version"], check=True, capture_output=True, text=True).stdout
    assert ("commit:     " + ctx["commit"]) in version and ctx["openblas"].split(" (")[0] in version, version
    commit_line = next(line for line in version.splitlines() if line.startswith("commit:"))
    assert ctx["tree_clean"] == (None if "not built in a git checkout" in commit_line
                                 else "with uncommitted changes" not in commit_line), (ctx, commit_line)
    assert ctx["threads"]["openblas"] >= 1 and ctx["threads"]["cpus_online"] >= ctx["threads"]["cpus_allowed"] >= 1
    assert list(ctx["env"]) == ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "CUDA_VISIBLE_DEVICES",
                                "LSTMCHECK_CPU_KERNELS", "LSTMCHECK_CUBLAS_MATH", "LSTMCHECK_ISOLATE",
                                "LSTMCHECK_TRACE_NVTX"], ctx["env"]
    assert list(ctx["machines"]) == ["cpu"], ctx["machines"]
    cpu = ctx["machines"]["cpu"]
    assert cpu["key"].startswith("cpu-") and {"cpu_model", "cores", "blas", "blas_core", "blas_threads"} <= set(
        cpu["fields"]), cpu


def main(exe):
    oss = json.loads(run(exe, "oss"))
    assert list(oss) == ["lstm", "lstm-backward", "vl_lstm", "vl_lstm-backward"], list(oss)
    assert list(oss["lstm"]) == ["cpu", "ref"] and all(v > 0 for v in oss["lstm"].values()), oss["lstm"]
    lines = run(exe, "pep").splitlines()
    assert len(lines) == 4 * 2 * 3, len(lines)
    for line in lines:
        prefix, _, doc = line.partition(" ")
        obs = json.loads(doc)
        assert prefix == "Caffe2Observer" and list(obs) == ["type", "metric", "unit", "value"], line
        assert obs["type"] == "NET" and obs["unit"] == "ms" and float(obs["value"]) > 0, line
    table = subprocess.run([exe] + ARGS + ["full"], check=True, capture_output=True, text=True).stderr
    full = json.loads(run(exe, "full"))
    assert list(full) == ["version", "device", "seed", "shape", "variable_lengths", "unit", "context", "limit",
                          "runners"], list(full)
    check_context(full, exe)
    check_roofline(full, table)
    assert list(full["shape"]) == ["seqLength", "numLayers", "inputSize", "hiddenSize", "miniBatch"]
    first = full["runners"][0]
    assert list(first)[:6] == ["name", "group", "model", "sizes", "gate", "gate_worst_ratio"], list(first)
    assert list(first["sizes"]) == ["parameters", "parameter_bytes", "input_bytes", "activation_bytes"]
    assert list(first["forward"]) == ["n", "mean", "std", "median", "min", "max", "q1", "q3", "mad", "samples"]
    assert [r["group"] for r in full["runners"]] == ["lstm", "lstm", "vl_lstm", "vl_lstm"]
    # the vl group's sizes are of its own shape and drawn lengths, which the document gives
    vl = full["variable_lengths"]
    assert list(vl) == ["shape", "lengths"] and len(vl["lengths"]) == vl["shape"]["miniBatch"] == 2, vl
    assert all(30 <= n <= vl["shape"]["seqLength"] == 99 for n in vl["lengths"]), vl
    for r in full["runners"]:  # the cpu runners' model is nn.LSTM's: 6H floats a step
        steps = sum(vl["lengths"]) if r["group"] == "vl_lstm" else 4 * 2
        assert r["model"] == "lstm" and r["sizes"]["activation_bytes"] == 4 * 6 * 8 * steps, r
    print("bench JSON: oss, pep and full have the original's structure")


if __name__ == "__main__":
    main(sys.argv[1])

"""The sizes `list` and `bench --print-json full` give (docs/profiling.md,
Sizes), read back: both say the same at a shape; the parameters are the
elements of the parameter tensors `check --dump` writes, the inputs the
bytes of its other inputs; the activations follow the steps that run; and,
where PyTorch imports, the parameters are what count_parameters says of
nn.LSTM and of the original's LayerNorm cell, their bytes the state_dict's.
usage: sizes.py LSTMCHECK SCRATCH_DIR [TORCH_PYTHON]"""
import ast
import json
import os
import re
import shutil
import subprocess
import sys

I, H, L, T = 4, 8, 2, 5
SHAPE = ["--numLayers", str(L), "--seqLength", str(T), "--hiddenSize", str(H), "--inputSize", str(I)]
CASES = {"fixed": ["--miniBatch", "2"], "lengths": ["--lengths", "3,5"]}
RUNNERS = ["cpu", "cpu_dropout", "cpu_layernorm"]  # one per model
KEYS = ["parameters", "parameter_bytes", "input_bytes", "activation_bytes"]


def run(exe, args, code=0):
    p = subprocess.run([exe] + args, capture_output=True, text=True)
    assert p.returncode == code, (args, p.returncode, p.stderr)
    return p


def npy(path):
    """(elements, bytes) of a .npy file, from its header."""
    with open(path, "rb") as f:
        assert f.read(6) == b"\x93NUMPY", path
        major = f.read(2)[0]
        n = int.from_bytes(f.read(2 if major == 1 else 4), "little")
        header = ast.literal_eval(f.read(n).decode("latin1"))
    count = 1
    for d in header["shape"]:
        count *= d
    return count, count * int(header["descr"][2:])


def from_bench(exe, case):
    out = run(exe, ["bench", "--device", "cpu", "--rnns"] + RUNNERS + SHAPE + CASES[case] +
              ["--nloops", "1", "--warmup", "0", "--print-json", "full"]).stdout
    doc = json.loads(out)
    assert doc.get("lengths") == ([3, 5] if case == "lengths" else None), doc.get("lengths")
    return {r["name"]: (r["model"], r["sizes"]) for r in doc["runners"]}


def from_list(exe, case):
    """Each runner's row (params column, and the rest) and each model's exact line."""
    out = run(exe, ["list", "--device", "cpu"] + SHAPE + CASES[case]).stdout
    rows = {}
    for line in out.splitlines():
        cols = line.split()
        if cols and cols[0] in RUNNERS + ["onednn"] and len(cols) > 9:
            rows[cols[0]] = line
    models = {m: dict(zip(KEYS, map(int, v))) for m, *v in re.findall(
        r"^(\w+) .*\n +(\d+) parameters \((\d+) bytes\), inputs (\d+) bytes, activations (\d+) bytes$", out, re.M)}
    return rows, models


def from_dump(exe, scratch, case, runner):
    """Parameter elements and input bytes of the tensors the gate gave runner."""
    where = os.path.join(scratch, case)
    run(exe, ["check", "--device", "cpu", "--rnns", runner, "--dump", where] + SHAPE + CASES[case])
    folder = os.path.join(where, runner)
    seeded = json.load(open(os.path.join(folder, "index.json")))["seeded"]
    params = inputs = 0
    for name in sorted(os.listdir(folder)):
        if not name.startswith("input_"):
            continue
        tensor = name[len("input_"):-len(".npy")]
        count, nbytes = npy(os.path.join(folder, name))
        if tensor not in ("x", "h0", "c0") and os.path.exists(os.path.join(folder, "reference_d%s.npy" % tensor)):
            params += count  # a tensor with a gradient that is not the LSTM's input or state
        elif tensor not in seeded:  # the backward's seeds are not the model's inputs
            inputs += nbytes
    return params, inputs


TORCH = """
import io, json, sys, torch
I, H, L = map(int, sys.argv[1:4])
def layernorm_cell(i):  # the original's LayerNormLSTMCell (custom_lstms.py)
    m = torch.nn.Module()
    m.weight_ih = torch.nn.Parameter(torch.randn(4 * H, i))
    m.weight_hh = torch.nn.Parameter(torch.randn(4 * H, H))
    m.layernorm_i, m.layernorm_h, m.layernorm_c = torch.nn.LayerNorm(4 * H), torch.nn.LayerNorm(4 * H), torch.nn.LayerNorm(H)
    return m
models = {"lstm": torch.nn.LSTM(I, H, L), "dropout": torch.nn.LSTM(I, H, L, dropout=0.4),
          "layernorm": torch.nn.ModuleList([layernorm_cell(I if l == 0 else H) for l in range(L)])}
out = {}
for name, m in models.items():
    saved = io.BytesIO()
    torch.save(m.state_dict(), saved)
    out[name] = {"parameters": sum(p.numel() for p in m.parameters() if p.requires_grad),
                 "state_bytes": sum(t.numel() * t.element_size() for t in m.state_dict().values()),
                 "saved_file_bytes": saved.getbuffer().nbytes}
print(json.dumps(out))
"""


def torch_says(python):
    """PyTorch's figures, or None where it does not import."""
    if not python or subprocess.run([python, "-c", "import torch"], capture_output=True).returncode:
        return None
    out = subprocess.run([python, "-c", TORCH, str(I), str(H), str(L)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main(exe, scratch, torch_python=None):
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    bench = {case: from_bench(exe, case) for case in CASES}
    for case in CASES:
        rows, models = from_list(exe, case)
        assert sorted(models) == ["dropout", "layernorm", "lstm"], models
        for runner in RUNNERS:
            model, sizes = bench[case][runner]
            assert list(sizes) == KEYS and sizes == models[model], (case, runner, sizes, models[model])
            assert rows[runner].split()[8] == str(sizes["parameters"]), rows[runner]
            params, inputs = from_dump(exe, scratch, case, runner)
            assert params == sizes["parameters"] and 4 * params == sizes["parameter_bytes"], (runner, params, sizes)
            assert inputs == sizes["input_bytes"], (case, runner, inputs, sizes)
        assert rows["onednn"].endswith("yes") == (case == "fixed"), rows["onednn"]
    for runner in RUNNERS:  # lengths 3 and 5: 8 of 10 steps run
        fixed, ragged = bench["fixed"][runner][1], bench["lengths"][runner][1]
        assert ragged["activation_bytes"] * 10 == fixed["activation_bytes"] * 8, (runner, fixed, ragged)
    torch = torch_says(torch_python)
    for model, theirs in (torch or {}).items():
        ours = bench["fixed"][RUNNERS[["lstm", "dropout", "layernorm"].index(model)]][1]
        assert theirs["parameters"] == ours["parameters"], (model, theirs, ours)
        assert theirs["state_bytes"] == ours["parameter_bytes"] < theirs["saved_file_bytes"], (model, theirs, ours)
    # a shape past this machine's memory: listed with its sizes, and no runner runs it here
    out = run(exe, ["list", "--device", "cpu", "--numLayers", "1000000"]).stdout
    row = [line for line in out.splitlines() if line.startswith("cpu ")][0]
    assert row.split()[8] == "2101248000000" and "no: shape" in row and "of host memory" in row, row
    # bad shapes: exit 2, one line, before any work
    for bad, says in ((["--lengths", "3,9"], "exceeds --seqLength"), (["--hiddenSize", "0"], "hiddenSize")):
        p = run(exe, ["list"] + SHAPE[:4] + bad, 2)
        assert says in p.stderr and len(p.stderr.splitlines()) == 1 and not p.stdout, (bad, p.stderr)
    print("PASS: sizes agree between list, bench, the dump%s" % (" and PyTorch" if torch else
                                                                " (PyTorch not here: its part skipped)"))


if __name__ == "__main__":
    main(*sys.argv[1:])

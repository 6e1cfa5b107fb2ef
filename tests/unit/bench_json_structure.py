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
    full = json.loads(run(exe, "full"))
    assert list(full) == ["version", "device", "seed", "shape", "unit", "runners"], list(full)
    assert list(full["shape"]) == ["seqLength", "numLayers", "inputSize", "hiddenSize", "miniBatch"]
    first = full["runners"][0]
    assert list(first)[:4] == ["name", "group", "gate", "gate_worst_ratio"], list(first)
    assert list(first["forward"]) == ["n", "mean", "std", "median", "min", "max", "q1", "q3", "mad", "samples"]
    assert [r["group"] for r in full["runners"]] == ["lstm", "lstm", "vl_lstm", "vl_lstm"]
    print("bench JSON: oss, pep and full have the original's structure")


if __name__ == "__main__":
    main(sys.argv[1])

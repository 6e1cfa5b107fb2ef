#!/usr/bin/env python3
"""PyTorch's own nn.LSTM beside lstmcheck's GPU runners (ci/gpu-proof.sh).

Times forward and backward the way the original fastrnns bench.py does (CUDA
events around each, the backward seed drawn outside the timed region,
gradients zeroed after each iteration) in the three configurations that our
runners pair with (docs/cudnn-runners.md):

  cudnn_tf32  cuDNN on, torch.backends.cudnn.allow_tf32 = True (PyTorch's default)
  cudnn_fp32  cuDNN on, allow_tf32 = False                     pairs with our cudnn
  aten        cuDNN off (the original's aten runner)           pairs with our aten

matmul TF32 stays off (torch.backends.cuda.matmul.allow_tf32 = False, the
default). x, h0 and c0 require gradients, because our runners compute dx,
dh0 and dc0 (--no-input-grad times what bench.py times: parameters only).
Writes one JSON document (--out, or stdout) and a table on stderr.
"""
import argparse
import json
import statistics
import sys

CONFIGS = [
    # name, cuDNN enabled, cuDNN TF32 allowed, our runner it pairs with
    ("cudnn_tf32", True, True, "cudnn_tf32"),
    ("cudnn_fp32", True, False, "cudnn"),
    ("aten", False, False, "aten"),
]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seqLength", type=int, default=100)
    p.add_argument("--numLayers", type=int, default=1)
    p.add_argument("--inputSize", type=int, default=512)
    p.add_argument("--hiddenSize", type=int, default=512)
    p.add_argument("--miniBatch", type=int, default=64)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--nloops", type=int, default=100)
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--no-input-grad", action="store_true", help="x, h0, c0 without gradients, as bench.py")
    p.add_argument("--out", help="write the JSON here instead of stdout")
    return p.parse_args()


def summary(ms):
    return {
        "median": statistics.median(ms),
        "mean": statistics.fmean(ms),
        "std": statistics.stdev(ms) if len(ms) > 1 else 0.0,
        "min": min(ms),
        "n": len(ms),
    }


def time_config(torch, a, cudnn_on, tf32):
    torch.backends.cudnn.enabled = cudnn_on
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(a.seed)
    dev = "cuda"
    lstm = torch.nn.LSTM(a.inputSize, a.hiddenSize, a.numLayers).to(dev)
    grad = not a.no_input_grad
    x = torch.randn(a.seqLength, a.miniBatch, a.inputSize, device=dev, requires_grad=grad)
    h0 = torch.randn(a.numLayers, a.miniBatch, a.hiddenSize, device=dev, requires_grad=grad)
    c0 = torch.randn(a.numLayers, a.miniBatch, a.hiddenSize, device=dev, requires_grad=grad)
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
    fwd, bwd = [], []
    for i in range(a.warmup + a.nloops):
        ev[0].record()
        y, _ = lstm(x, (h0, c0))
        ev[1].record()
        dy = torch.randn_like(y)  # outside the timed regions, as bench.py
        ev[2].record()
        y.backward(dy)
        ev[3].record()
        lstm.zero_grad(set_to_none=False)
        for t in (x, h0, c0):
            t.grad = None
        torch.cuda.synchronize()
        if i >= a.warmup:
            fwd.append(ev[0].elapsed_time(ev[1]))
            bwd.append(ev[2].elapsed_time(ev[3]))
    return summary(fwd), summary(bwd)


def main():
    a = parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"pytorch_lstm: FAIL: cannot import torch ({e})", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("pytorch_lstm: FAIL: torch sees no CUDA device", file=sys.stderr)
        return 1
    doc = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device": torch.cuda.get_device_name(0),
        "shape": {k: getattr(a, k) for k in ("seqLength", "numLayers", "inputSize", "hiddenSize", "miniBatch")},
        "warmup": a.warmup,
        "nloops": a.nloops,
        "input_grad": not a.no_input_grad,
        "times_ms": {},
    }
    print(f"{'config':>12} {'pairs with':>12} {'fwd median':>12} {'bwd median':>12}  (ms)", file=sys.stderr)
    for name, cudnn_on, tf32, ours in CONFIGS:
        f, b = time_config(torch, a, cudnn_on, tf32)
        doc["times_ms"][name] = {"pairs_with": ours, "cudnn_enabled": cudnn_on, "cudnn_allow_tf32": tf32,
                                 "forward": f, "backward": b}
        print(f"{name:>12} {ours:>12} {f['median']:12.4g} {b['median']:12.4g}", file=sys.stderr)
    text = json.dumps(doc, indent=2)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

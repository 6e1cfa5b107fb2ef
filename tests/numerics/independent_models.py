#!/usr/bin/env python3
"""An independent check of the reference's models against one of its dumps.

    independent_models.py [--torch] DUMP      (DUMP: DIR/<runner> of `lstmcheck check --dump DIR`)

Recomputes the dump's model in FP64 from its equations (include/lstmcheck/runner.h,
LSTMCHECK_MODEL_*) and compares y, hy and cy with the dump's reference_*.npy. Nothing
is taken from src/model/reference.c: a shared misreading of the model would hide there.
With --torch, PyTorch in float64 computes the forward and, by autograd of the dump's
loss, the backward, and every reference tensor of the dump is compared, gradients too.

A tensor agrees when max|got - ref| / max|ref| over the tensor is within FORWARD_TOL
(y, hy, cy) or GRAD_TOL (gradients). Exit 0: all agree; 1: one disagrees, or nothing
was compared; 2: usage (no dump, an unreadable file, a model unknown here); 77: --torch
without torch.
"""
import argparse
import ast
import json
import math
import os
import struct
import sys

# FP64 against FP64: only the order of the sums differs, but a long LayerNorm
# recurrence amplifies that: at T=64 H=6 one ulp on every input moved y by
# 8e-13 of its largest element, and the two implementations differed by 1.1e-12
FORWARD_TOL = 1e-10
GRAD_TOL = 1e-10  # backward: longer chains of sums, and torch's own kernels
FORWARD = ["y", "hy", "cy"]

# The models: per-layer parameters (as the dump names them, "<name>.<layer>") and
# whether a mask multiplies each layer's output but the last ("dropout_mask.<layer>").
MODELS = {
    "lstm": (["w_ih", "w_hh", "b_ih", "b_hh"], False),
    "dropout": (["w_ih", "w_hh", "b_ih", "b_hh"], True),
    "layernorm": (["w_ih", "w_hh", "ln_i_weight", "ln_i_bias", "ln_h_weight",
                   "ln_h_bias", "ln_c_weight", "ln_c_bias"], False),
}


class UsageError(Exception):
    """The dump cannot be read as one: exit 2, not a disagreement."""


# ---- the dump ----------------------------------------------------------------

NPY_TYPES = {"<f4": ("f", 4), "<f8": ("d", 8)}  # descr: struct code, bytes per element


def read_npy(path):
    """(shape, flat list) of a little-endian, C-order float32 or float64 .npy file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}")
    if len(data) < 12 or data[:6] != b"\x93NUMPY" or data[6] not in (1, 2, 3):
        raise UsageError(f"{path}: not a .npy file of version 1, 2 or 3")
    size_format, start = ("<H", 10) if data[6] == 1 else ("<I", 12)
    end = start + struct.unpack(size_format, data[8:start])[0]
    try:
        header = ast.literal_eval(data[start:end].decode("latin1"))
        descr, fortran, shape = header["descr"], header["fortran_order"], tuple(header["shape"])
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ValueError(shape)
    except (ValueError, SyntaxError, KeyError, TypeError):
        raise UsageError(f"{path}: unreadable .npy header")
    if descr not in NPY_TYPES or fortran:
        raise UsageError(f"{path}: {descr!r}{' in Fortran order' if fortran else ''}; "
                         "only little-endian C-order float32/float64 is read")
    code, size = NPY_TYPES[descr]
    count = math.prod(shape)
    if len(data) - end != count * size:
        raise UsageError(f"{path}: {len(data) - end} bytes of data, shape {shape} needs {count * size}")
    return shape, list(struct.unpack(f"<{count}{code}", data[end:]))


class Dump:
    """A dump's index.json, its input and reference tensors as (shape, flat list)."""

    def __init__(self, path):
        index_path = os.path.join(path, "index.json")
        if not os.path.isfile(index_path):
            raise UsageError(f"{path}: no index.json there (DUMP is DIR/<runner> of a --dump DIR)")
        try:
            with open(index_path) as f:
                index = json.load(f)
            shape = index["shape"]
            self.T, self.B, self.H, self.L = (shape[k] for k in ("seqLength", "miniBatch",
                                                                  "hiddenSize", "numLayers"))
            self.model, self.seeded = index["model"], index["seeded"]
            self.lengths = index["lengths"] or [self.T] * self.B  # null: every sequence is T long
            files = [(e["file"], e["role"], e["tensor"], e["shape"]) for e in index["files"]]
            whole = [self.T, self.B, self.H, self.L] + list(self.lengths)
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in whole):
                raise TypeError(f"sizes and lengths must be integers, got {whole}")
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UsageError(f"{index_path}: unreadable ({type(e).__name__}: {e})")
        if self.model not in MODELS:
            raise UsageError(f"{index_path}: model {self.model!r} has no independent implementation "
                             f"here (only {', '.join(MODELS)}): add it to MODELS")
        if len(self.lengths) != self.B or not all(1 <= n <= self.T for n in self.lengths):
            raise UsageError(f"{index_path}: lengths {self.lengths} are not B={self.B} lengths in 1..{self.T}")
        self.inputs, self.reference = {}, {}
        for file, role, tensor, listed in files:
            if role not in ("input", "reference") or tensor == "lengths":  # lengths: from index.json
                continue
            shape, flat = read_npy(os.path.join(path, file))
            if list(shape) != listed:
                raise UsageError(f"{file}: shape {shape}, index.json says {listed}")
            (self.inputs if role == "input" else self.reference)[tensor] = (shape, flat)

    def input(self, name):
        if name not in self.inputs:
            raise UsageError(f"the dump has no input {name} (model {self.model})")
        return self.inputs[name]

    def seed(self, name):
        """dy, dhy or dcy; one the dump was not seeded with is zero."""
        if name in self.seeded:
            return self.input(name)
        shape = (self.T if name == "dy" else self.L, self.B, self.H)
        return shape, [0.0] * math.prod(shape)


def nested(tensor):
    """(shape, flat list) as nested lists, C order."""
    shape, flat = tensor
    if len(shape) <= 1:
        return list(flat)
    step = len(flat) // shape[0]
    return [nested((shape[1:], flat[k * step:(k + 1) * step])) for k in range(shape[0])]


def shape_of(v):
    if not isinstance(v, list):
        return ()
    return (len(v),) + (shape_of(v[0]) if v else ())


def flatten(v):
    return [z for item in v for z in flatten(item)] if isinstance(v, list) else [v]


# ---- the comparison ------------------------------------------------------------


def relative_error(got, want):
    """max|got - want| / max|want|: scaled by the tensor, not by its tiny elements."""
    if not all(math.isfinite(v) for v in got + want):
        return math.inf
    worst = max((abs(a - b) for a, b in zip(got, want)), default=0.0)
    scale = max((abs(b) for b in want), default=0.0)
    return worst / scale if scale else (0.0 if worst == 0 else math.inf)


def compare(dump, computed, names, how):
    """One line per tensor and a summary; 0 when all of names agree, else 1."""
    failed = compared = 0
    for name in names:
        tol = FORWARD_TOL if name in FORWARD else GRAD_TOL
        if name not in dump.reference or name not in computed:
            print(f"FAIL {name}: not {'in the dump' if name not in dump.reference else 'computed'}")
            failed += 1
            continue
        shape, want = dump.reference[name]
        got = computed[name]
        if shape_of(got) != shape:
            print(f"FAIL {name}: shape {shape_of(got)}, the reference's {shape}")
            failed += 1
            continue
        err = relative_error(flatten(got), want)
        compared += 1
        failed += not err <= tol
        print(f"{'ok  ' if err <= tol else 'FAIL'} {name:<16} worst relative error {err:.3e} (allowed {tol:.0e})")
    verdict = "agree" if failed == 0 and compared else "DISAGREE"
    if not compared:
        print("FAIL: nothing was compared")
    print(f"{verdict}: {how}, model {dump.model}, T={dump.T} B={dump.B} H={dump.H} L={dump.L} "
          f"lengths {dump.lengths}: {compared} tensors compared, {failed} failed")
    return 0 if verdict == "agree" else 1


# ---- the models in plain Python, FP64 --------------------------------------------


def matvec(w, v):
    return [math.fsum(a * b for a, b in zip(row, v)) for row in w]


def sigmoid(z):
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))  # no overflow


def layer_norm(v, weight, bias):
    """(v - mean) / sqrt(biased variance + 1e-5) * weight + bias, over all of v."""
    mean = math.fsum(v) / len(v)
    inv_std = 1 / math.sqrt(math.fsum((a - mean) ** 2 for a in v) / len(v) + 1e-5)
    return [(a - mean) * inv_std * w + b for a, w, b in zip(v, weight, bias)]


def cell(model, p, x, h, c):
    """One step of one sequence: gates i, f, g, o (H each), then the new (h, c)."""
    if model == "layernorm":
        gates = [a + b for a, b in zip(layer_norm(matvec(p["w_ih"], x), p["ln_i_weight"], p["ln_i_bias"]),
                                       layer_norm(matvec(p["w_hh"], h), p["ln_h_weight"], p["ln_h_bias"]))]
    else:
        gates = [a + b + c1 + c2 for a, b, c1, c2 in
                 zip(matvec(p["w_ih"], x), matvec(p["w_hh"], h), p["b_ih"], p["b_hh"])]
    n = len(h)
    i, f, g, o = (gates[k * n:(k + 1) * n] for k in range(4))
    c = [sigmoid(fk) * ck + sigmoid(ik) * math.tanh(gk) for ik, fk, gk, ck in zip(i, f, g, c)]
    if model == "layernorm":
        c = layer_norm(c, p["ln_c_weight"], p["ln_c_bias"])  # the normalised cell is the state
    return [sigmoid(ok) * math.tanh(ck) for ok, ck in zip(o, c)], c


def times(a, b):
    return [times(u, v) for u, v in zip(a, b)] if isinstance(a, list) else a * b


def python_forward(dump):
    """y, hy, cy as nested lists. Sequence b runs steps 0..lengths[b]-1 of every layer."""
    names, masked = MODELS[dump.model]
    h0, c0 = nested(dump.input("h0")), nested(dump.input("c0"))
    layer_in, hy, cy = nested(dump.input("x")), [], []
    for l in range(dump.L):
        p = {name: nested(dump.input(f"{name}.{l}")) for name in names}
        out = [[[0.0] * dump.H for _ in range(dump.B)] for _ in range(dump.T)]  # zero past the end
        hy.append([])
        cy.append([])
        for b in range(dump.B):
            h, c = h0[l][b], c0[l][b]
            for t in range(dump.lengths[b]):
                h, c = cell(dump.model, p, layer_in[t][b], h, c)
                out[t][b] = h
            hy[l].append(h)
            cy[l].append(c)
        if masked and l < dump.L - 1:  # the next layer reads the masked output; y is not masked
            out = times(out, nested(dump.input(f"dropout_mask.{l}")))
        layer_in = out
    return {"y": layer_in, "hy": hy, "cy": cy}


# ---- the models in PyTorch, float64, forward and autograd backward ---------------------


def torch_cell(torch, model, p):
    """The model's cell on (B, ·) batches. For layernorm, p's LN parameters are replaced
    by those of torch.nn.LayerNorm modules loaded from them (their .grad is read)."""
    def state(gates, c, norm_c):
        i, f, g, o = gates.chunk(4, dim=1)
        c = norm_c(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g))
        return torch.sigmoid(o) * torch.tanh(c), c

    if model != "layernorm":
        return lambda x, h, c: state(x @ p["w_ih"].T + p["b_ih"] + h @ p["w_hh"].T + p["b_hh"], c,
                                     lambda v: v)
    ln = {}
    for k in ("ln_i", "ln_h", "ln_c"):  # normalized_shape 4H, 4H, H: the weight's length
        ln[k] = torch.nn.LayerNorm(p[k + "_weight"].shape[0], eps=1e-5).double()
        with torch.no_grad():
            ln[k].weight.copy_(p[k + "_weight"])
            ln[k].bias.copy_(p[k + "_bias"])
        p[k + "_weight"], p[k + "_bias"] = ln[k].weight, ln[k].bias
    return lambda x, h, c: state(ln["ln_i"](x @ p["w_ih"].T) + ln["ln_h"](h @ p["w_hh"].T), c,
                                 ln["ln_c"])


def torch_run(torch, dump):
    """y, hy, cy and the gradients of the dump's loss (dx, dh0, dc0, d<param>.<l>), nested lists."""
    def tensor(pair, grad=False):  # a leaf: its .grad is the gradient
        return torch.tensor(nested(pair), dtype=torch.float64, requires_grad=grad)

    names, masked = MODELS[dump.model]
    x, h0, c0 = (tensor(dump.input(n), True) for n in ("x", "h0", "c0"))
    leaves = {"dx": x, "dh0": h0, "dc0": c0}
    alive = [torch.tensor([[t < n] for n in dump.lengths]) for t in range(dump.T)]  # (B, 1) per step
    layer_in, hy, cy = x, [], []
    for l in range(dump.L):
        p = {name: tensor(dump.input(f"{name}.{l}"), True) for name in names}
        step = torch_cell(torch, dump.model, p)  # first: it may replace p's LN parameters
        leaves.update({f"d{name}.{l}": v for name, v in p.items()})
        h, c, ys = h0[l], c0[l], []
        for t in range(dump.T):  # a finished sequence keeps its state and outputs zeros
            h_new, c_new = step(layer_in[t], h, c)
            ys.append(torch.where(alive[t], h_new, torch.zeros_like(h_new)))
            h, c = torch.where(alive[t], h_new, h), torch.where(alive[t], c_new, c)
        layer_in = torch.stack(ys)
        hy.append(h)
        cy.append(c)
        if masked and l < dump.L - 1:
            layer_in = layer_in * tensor(dump.input(f"dropout_mask.{l}"))
    out = {"y": layer_in, "hy": torch.stack(hy), "cy": torch.stack(cy)}
    loss = sum((out[n] * tensor(dump.seed("d" + n))).sum() for n in FORWARD)
    loss.backward()
    computed = {n: v.detach().tolist() for n, v in out.items()}
    for name, v in leaves.items():  # no .grad: the loss does not depend on it
        computed[name] = (v.grad if v.grad is not None else torch.zeros_like(v)).tolist()
    return computed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch", action="store_true", help="PyTorch float64 forward and backward")
    parser.add_argument("dump", help="DIR/<runner> of `lstmcheck check --dump DIR`")
    args = parser.parse_args()  # a usage error exits 2
    try:
        dump = Dump(args.dump)
        if not args.torch:
            return compare(dump, python_forward(dump), FORWARD, "plain Python FP64")
        try:
            import torch
        except Exception as e:  # ImportError, or an install that fails to load (OSError)
            why = "is not installed" if isinstance(e, ImportError) else "cannot be imported"
            print(f"SKIP: torch {why} for {sys.executable} ({type(e).__name__}: {e})")
            return 77
        names = FORWARD + [n for n in dump.reference if n not in FORWARD]
        return compare(dump, torch_run(torch, dump), names, f"PyTorch {torch.__version__} float64")
    except UsageError as e:
        print(f"{os.path.basename(sys.argv[0])}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

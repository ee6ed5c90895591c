"""Table 1 of the paper measured: time and memory of one self-attention, recurrent and convolutional layer against n.

    python bench/why_self_attention.py            # writes bench/results/why_self_attention.json (1 thread; 55 s in its record)
    python bench/why_self_attention.py --tiny --out /tmp/w.json   # three short lengths, one repeat (a test)

One layer of each kind, all of the same width d (default 256), on a batch of random sequences of length n
(16, 32, ..., 2048 by default):
* `attention`: the package's `MultiHeadAttention(h, d)` as self-attention, on its explicit path
  (`keep_weights=True`: the n x n weights are materialized, as the paper's formula computes them);
* `attention_fused`: the same module on its default path, PyTorch's fused `scaled_dot_product_attention`;
* `lstm`, `gru`: `nn.LSTM(d, d)` and `nn.GRU(d, d)`, one layer, batch first;
* `conv`: `nn.Conv1d(d, d, kernel_size=3, padding=1)`, a contiguous convolution of kernel k = 3.
All without dropout, in float32 on the CPU, on one thread (`--threads`, default 1).

Time: one forward and backward pass (input and weight gradients, against a fixed random output gradient), the median
of `--repeats` passes after one warm-up pass. Memory: the bytes of the distinct tensor storages that autograd saves
for the backward pass, collected with `torch.autograd.graph.saved_tensors_hooks` (the layer's parameters, which do not
grow with n, left out). That is the memory a layer holds from its forward to its backward pass, the part that grows
with n and that training pays for every layer of a model; it is exact and independent of the allocator and of the
other processes on the machine (tracemalloc does not see torch's allocations, and the process's resident memory
mixes in everything else). The transient buffers of the backward pass itself are not counted.

Not a test: the times depend on the machine and on what else runs on it (the record keeps the load average).
Provenance: the record names the commit and, when the working tree differed from it, the paths that differed
(`changed_files`, from `git status --porcelain`; the diff itself is not kept, so run from a clean checkout, e.g. a
`git worktree add` of the commit, for a record that the commit alone describes).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from provenance import cpu_name, git_commit  # noqa: E402  (bench/provenance.py, next to this script)

from annotated_transformer.multihead import MultiHeadAttention  # noqa: E402

LAYERS = ("attention", "attention_fused", "lstm", "gru", "conv")


class SelfAttention(nn.Module):
    "MultiHeadAttention(h, d) used as self-attention: queries, keys and values are all x."

    def __init__(self, h: int, d: int, fused: bool):
        super().__init__()
        self.attn = MultiHeadAttention(h, d, dropout=0.0)
        self.attn.keep_weights = not fused

    def forward(self, x):
        return self.attn(x, x, x)


class Recurrent(nn.Module):
    "nn.LSTM or nn.GRU of one layer, batch first; returns the outputs at every position."

    def __init__(self, cell: type[nn.Module], d: int):
        super().__init__()
        self.rnn = cell(d, d, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


class Convolution(nn.Module):
    "nn.Conv1d over the positions, kernel k, output as long as the input; (batch, n, d) in and out."

    def __init__(self, d: int, k: int):
        super().__init__()
        self.conv = nn.Conv1d(d, d, kernel_size=k, padding=k // 2)

    def forward(self, x):
        return self.conv(x.transpose(1, 2)).transpose(1, 2)


def changed_files() -> list[str] | None:
    "The paths where the working tree differs from its commit (`git status --porcelain` lines); None: no git."
    try:
        return subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True,
                              check=True, timeout=20).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return None


def make_layer(name: str, d: int, h: int = 4, k: int = 3) -> nn.Module:
    "One layer of width d: 'attention', 'attention_fused', 'lstm', 'gru' or 'conv'."
    layers = {"attention": lambda: SelfAttention(h, d, fused=False),
              "attention_fused": lambda: SelfAttention(h, d, fused=True),
              "lstm": lambda: Recurrent(nn.LSTM, d), "gru": lambda: Recurrent(nn.GRU, d),
              "conv": lambda: Convolution(d, k)}
    return layers[name]().eval()  # eval: no dropout anywhere; gradients are computed all the same


def saved_bytes(layer: nn.Module, x: torch.Tensor) -> int:
    "Bytes of the distinct storages autograd saves in one forward pass of LAYER on X, parameters left out."
    params = {p.untyped_storage().data_ptr() for p in layer.parameters()}
    storages: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        s = t.untyped_storage()
        if s.data_ptr() not in params:
            storages[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        layer(x)
    return sum(storages.values())


def time_pass(layer: nn.Module, x: torch.Tensor, grad: torch.Tensor) -> tuple[float, float]:
    "(CPU seconds, wall seconds) of one forward and backward pass."
    layer.zero_grad(set_to_none=True)
    x.grad = None
    cpu, wall = time.process_time(), time.perf_counter()
    layer(x).backward(grad)
    return time.process_time() - cpu, time.perf_counter() - wall


def measure(name: str, n: int, d: int, batch: int, repeats: int, h: int, k: int) -> dict:
    torch.manual_seed(0)
    layer = make_layer(name, d, h, k)
    x = torch.randn(batch, n, d, requires_grad=True)
    grad = torch.randn(batch, n, d)
    memory = saved_bytes(layer, x)
    time_pass(layer, x, grad)  # warm-up
    cpu, wall = zip(*(time_pass(layer, x, grad) for _ in range(repeats)))
    return {"layer": name, "n": n, "cpu_s": statistics.median(cpu), "cpu_min_s": min(cpu),
            "cpu_max_s": max(cpu), "wall_s": statistics.median(wall), "repeats": repeats,
            "saved_bytes": memory}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=256, help="width of every layer (d_model)")
    ap.add_argument("--heads", type=int, default=4, help="attention heads (d_k = d / heads)")
    ap.add_argument("--kernel", type=int, default=3, help="kernel width k of the convolution")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--lengths", type=int, nargs="+", default=[2 ** i for i in range(4, 12)])
    ap.add_argument("--repeats", type=int, default=5, help="timed passes per point, after one warm-up pass")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tiny", action="store_true", help="lengths 8 16 32, one repeat, d 32 (a quick check)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "why_self_attention.json")
    args = ap.parse_args(argv)
    if args.tiny:
        args.lengths, args.repeats, args.d, args.batch = [8, 16, 32], 1, 32, 2
    torch.set_num_threads(args.threads)
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    start = time.perf_counter()
    rows = []
    for n in args.lengths:
        for name in LAYERS:
            row = measure(name, n, args.d, args.batch, args.repeats, args.heads, args.kernel)
            rows.append(row)
            print(f"n={n:5d} {name:16s} {1e3 * row['cpu_s']:9.2f} ms CPU {1e3 * row['wall_s']:9.2f} ms wall "
                  f"{row['saved_bytes'] / 2 ** 20:9.2f} MiB saved", flush=True)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    record = {
        "what": "forward+backward time and memory saved for backward of one layer of each kind against n",
        "layers": {"attention": f"MultiHeadAttention({args.heads}, {args.d}), explicit path (keep_weights=True)",
                   "attention_fused": f"MultiHeadAttention({args.heads}, {args.d}), fused "
                                      "scaled_dot_product_attention",
                   "lstm": f"nn.LSTM({args.d}, {args.d}, batch_first=True)",
                   "gru": f"nn.GRU({args.d}, {args.d}, batch_first=True)",
                   "conv": f"nn.Conv1d({args.d}, {args.d}, kernel_size={args.kernel}, "
                           f"padding={args.kernel // 2})"},
        "d": args.d, "heads": args.heads, "kernel": args.kernel, "batch": args.batch,
        "lengths": args.lengths, "dtype": "float32",
        "time": f"seconds of one forward and backward pass, median of {args.repeats} after one warm-up pass: "
                "cpu_s the process's CPU time (time.process_time), wall_s the wall-clock time",
        "memory": "bytes of the distinct storages saved for backward (saved_tensors_hooks), parameters excluded",
        "rows": rows,
        "command": " ".join(["python bench/why_self_attention.py", *(argv if argv is not None else sys.argv[1:])]),
        "commit": git_commit(),
        "changed_files": changed_files(),
        "device": f"{cpu_name()} ({os.cpu_count()} logical CPUs)",
        "threads": torch.get_num_threads(),
        "load_average_at_start": [round(v, 2) for v in load_before] if load_before else None,
        "load_average_at_end": [round(v, 2) for v in load] if load else None,
        "wall_seconds": round(time.perf_counter() - start, 1),
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{record['wall_seconds']} s; written to {args.out}")
    return record


if __name__ == "__main__":
    main()

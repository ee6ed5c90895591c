"""Training throughput: our Transformer (annotated_transformer) against torch.nn.Transformer.

Both models get the same embeddings (scaled by sqrt(d_model)), sinusoidal positional encoding, dropout,
generator (linear + log-softmax), label-smoothed loss, Adam with the §5.3 schedule, and the same batches
in the same order. nn.Transformer's extra final LayerNorms (after the encoder and decoder stacks) are
replaced by nn.Identity(), so both compute the paper's post-norm architecture with the same parameter count.
A "step" is forward + backward + optimizer step; throughput counts non-padding source + target tokens.
The two models are timed in alternating rounds (ABBA order) after warm-up steps, in one process, and the
medians are compared.

    python bench/bench_training.py                  # CPU, small model, 1 thread: about 1 minute
    python bench/bench_training.py --device cuda    # GPU: the base model, bf16 autocast, MFU
    python bench/bench_training.py --device cuda --compile --bucket 16 --warmup-shapes --counted-mfu
                                                    # compiled; every batch shape seen before timing

Writes bench/results/training_<device>.json (command, git commit, device, torch version, date).
This is a benchmark, not a test.
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from annotated_transformer.model import make_model  # noqa: E402
from annotated_transformer.positional import sinusoidal_encoding  # noqa: E402
from annotated_transformer.torch_compare import PEAK_FLOPS, counted_step_flops, training_flops  # noqa: E402
from annotated_transformer.sampler import TokenBatchSampler, make_batch  # noqa: E402
from annotated_transformer.loss import LabelSmoothingLoss, make_optimizer
from annotated_transformer.train_config import autocast_context
from annotated_transformer.checks import token_ids_checked
from annotated_transformer.trainer import LogitsSeq2SeqLoss

SIZES = {  # model sizes and batch budgets ("tiny": a smoke test of the script, e.g. bench/gpu.py --tiny)
    "tiny": dict(N=1, d_model=32, h=2, d_ff=64, vocab=500, max_tokens=400),
    "small": dict(N=2, d_model=256, h=4, d_ff=1024, vocab=8000, max_tokens=1500),
    "base": dict(N=6, d_model=512, h=8, d_ff=2048, vocab=32000, max_tokens=8192),
}


class TorchTransformer(nn.Module):
    "torch.nn.Transformer with the same embeddings, positions, dropout and generator as make_model."

    def __init__(self, vocab, N, d_model, h, d_ff, dropout, max_positions=5000):
        super().__init__()
        self.d_model = d_model
        self.src_embed, self.tgt_embed = nn.Embedding(vocab, d_model), nn.Embedding(vocab, d_model)
        self.register_buffer("pe", sinusoidal_encoding(max_positions, d_model), persistent=False)
        self.dropout = nn.Dropout(dropout)
        self.transformer = nn.Transformer(d_model, h, N, N, d_ff, dropout, batch_first=True)
        self.transformer.encoder.norm = nn.Identity()  # the paper's post-norm model has no final norms
        self.transformer.decoder.norm = nn.Identity()
        self.proj = nn.Linear(d_model, vocab)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def embed(self, table, ids):
        return self.dropout(table(ids) * math.sqrt(self.d_model) + self.pe[: ids.size(1)])

    def forward(self, src, tgt, src_keep, tgt_keep):
        T = tgt.size(1)
        causal = torch.ones(T, T, dtype=torch.bool, device=tgt.device).triu(1)  # True = may NOT attend
        src_pad = None if src_keep is None else ~src_keep  # None: no padding on that side
        tgt_pad = None if tgt_keep is None else ~tgt_keep
        out = self.transformer(self.embed(self.src_embed, src), self.embed(self.tgt_embed, tgt), tgt_mask=causal,
                               src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                               memory_key_padding_mask=src_pad, tgt_is_causal=True)
        return torch.log_softmax(self.proj(out), dim=-1)


def synthetic_batches(vocab, max_tokens, n_pairs, seed, bucket=1):
    "Random token-id pairs with lengths 8..48, grouped by length under the token budget, lengths padded to `bucket`."
    rng = random.Random(seed)
    pairs = []
    for _ in range(n_pairs):
        s = rng.randint(8, 48)
        t = max(4, min(48, s + rng.randint(-4, 4)))
        pairs.append(([rng.randrange(3, vocab) for _ in range(s)], [rng.randrange(3, vocab) for _ in range(t)]))
    plan = TokenBatchSampler(pairs, max_tokens, seed=seed).epoch_batches(0)
    return [make_batch([pairs[i] for i in idx], pad_to_multiple=bucket) for idx in plan]


def make_step(name, model, d_model, vocab, device, amp):
    """One training step as each library is used. Ours runs the Trainer's path (chapter 19): no target mask (the
    kernel's causal rule), no source mask for a batch without source padding, the loss of LogitsSeq2SeqLoss (from
    bf16 logits in blocks under autocast), the forward under token_ids_checked() (these synthetic ids lie inside
    the vocabulary by construction). nn.Transformer gets its own fast path on the same batches: tgt_is_causal=True
    with its causal mask, and no key-padding masks where a batch has no padding on that side."""
    crit = LabelSmoothingLoss(vocab, 0, 0.1, reduction="sum")
    opt, sched = make_optimizer(model, d_model, warmup=4000)
    loss_module = LogitsSeq2SeqLoss(model, crit) if name == "ours" else None

    def step(b):
        unpadded_src, unpadded_tgt = b.src_ntokens == b.src.numel(), b.ntokens == b.tgt_out.numel()
        with autocast_context(device, amp):
            if name == "ours":
                with token_ids_checked():
                    loss, _ = loss_module(b.src, b.tgt_in, b.tgt_out, None if unpadded_src else b.src_mask, None)
                loss = loss / b.ntokens
            else:
                src_keep = None if unpadded_src else b.src_mask.squeeze(1)
                tgt_keep = None if unpadded_tgt else b.tgt_in != 0
                logp = model(b.src, b.tgt_in, src_keep, tgt_keep)
                loss = crit(logp.float(), b.tgt_out) / b.ntokens
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        return loss

    return step


def peak_flops(gpu: str):
    "(peak bf16 FLOP/s, its source) for a GPU name; the H200 (not in PEAK_FLOPS) computes as the H100 SXM (GH100)."
    if "H100" in gpu and "PCIe" in gpu:
        return 756e12, "H100 PCIe bf16 dense (data sheet; not in PEAK_FLOPS)"
    if "H200" in gpu or "GH200" in gpu:
        return PEAK_FLOPS["H100 SXM bf16"], "H100 SXM bf16 (PEAK_FLOPS): the H200's compute is the H100 SXM's"
    key = next((k for k in PEAK_FLOPS if k.split()[0] in gpu and "bf16" in k), None)
    return (PEAK_FLOPS[key], f"{key} (PEAK_FLOPS)") if key else (None, None)


def shape_of(b):
    "A batch's shape as torch.compile sees it: (rows, padded source length, padded target length)."
    return (b.src.size(0), b.src.size(1), b.tgt_in.size(1))


def compile_stats() -> dict:
    "torch._dynamo's counters (graphs captured, recompilations...), as plain numbers; {} if unavailable."
    try:
        from torch._dynamo.utils import counters
        return {group: {str(k): int(v) for k, v in counts.items()} for group, counts in counters.items()
                if group in ("stats", "recompiles", "graph_break", "frames") and counts}
    except Exception:  # private API: its absence must not cost the results
        return {}


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def git_commit():
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "annotated_transformer",
                                     "bench"], capture_output=True, text=True).stdout.strip())
        return commit, dirty
    except (OSError, subprocess.CalledProcessError):
        return None, None


from provenance import cpu_name  # noqa: E402  (bench/provenance.py, next to this script)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto (default: cpu)")
    p.add_argument("--size", choices=SIZES, help="model size (default: small on CPU, base on GPU)")
    p.add_argument("--rounds", type=int, default=10, help="timed rounds per model (default: 10)")
    p.add_argument("--steps", type=int, default=3, help="steps per round (default: 3)")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps per model first (default: 3)")
    p.add_argument("--threads", type=int, default=1,
                   help="CPU threads (default: 1; 0 = PyTorch's default). On the small shared machine that made the "
                        "committed results, 2 threads ran 6x slower than 1 for both models")
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--amp", default="auto", help="auto (bf16 on CUDA), bf16, off")
    p.add_argument("--compile", action="store_true", help="torch.compile both models")
    p.add_argument("--compile-backend", default="inductor",
                   help="torch.compile backend (default: inductor; 'eager' only traces: a quick check of the script)")
    p.add_argument("--compile-dynamic", choices=("auto", "true", "false"), default="auto",
                   help="torch.compile(dynamic=...): auto (PyTorch's default: static, then dynamic after a shape "
                        "changes), true (one dynamic-shape graph from the start), false (one graph per shape)")
    p.add_argument("--warmup-shapes", action="store_true",
                   help="before the --warmup steps, one step per distinct batch shape for each model, so that no "
                        "timed step compiles (with --compile) or meets a new shape; its seconds are recorded")
    p.add_argument("--counted-mfu", action="store_true",
                   help="also count each timed step's FLOPs with FlopCounterMode (once per distinct shape, on the "
                        "padded batch) and report that rate and its MFU beside the analytic estimate")
    p.add_argument("--pairs", type=int, default=4000, help="synthetic sentence pairs (default: 4000)")
    p.add_argument("--bucket", type=int, default=1, metavar="K",
                   help="pad every batch's lengths up to a multiple of K: fewer distinct shapes (default: 1, none)")
    p.add_argument("--out", type=Path, help="results file (default: bench/results/training_<device>.json)")
    args = p.parse_args(argv)

    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          ("cpu" if args.device == "auto" else args.device))
    if args.threads:
        torch.set_num_threads(args.threads)
    size = args.size or ("base" if device.type == "cuda" else "small")
    c = SIZES[size]
    torch.manual_seed(0)
    ours = make_model(c["vocab"], c["vocab"], N=c["N"], d_model=c["d_model"], d_ff=c["d_ff"], h=c["h"],
                      dropout=args.dropout, inner_dropout=True,  # nn.Transformer's four dropouts
                      share_embeddings=False).to(device)  # TorchTransformer's three separate tables (§3.4 off in both)
    ref = TorchTransformer(c["vocab"], c["N"], c["d_model"], c["h"], c["d_ff"], args.dropout).to(device)
    n_ours, n_ref = (sum(p.numel() for p in m.parameters()) for m in (ours, ref))
    assert n_ours == n_ref, (n_ours, n_ref)
    models = {"ours": ours, "torch_nn_transformer": ref}
    if args.compile:
        dynamic = {"auto": None, "true": True, "false": False}[args.compile_dynamic]
        if dynamic:  # else a first batch with src_len == tgt_len makes that equality a guard, the next batch recompiles
            try:
                import torch.fx.experimental._config as fx_config
                fx_config.use_duck_shape = False
            except (ImportError, AttributeError):  # a private setting: without it, one more compilation
                pass
        models = {k: torch.compile(m, backend=args.compile_backend, dynamic=dynamic) for k, m in models.items()}
    steps = {k: make_step(k, m, c["d_model"], c["vocab"], device, args.amp) for k, m in models.items()}
    batches = [b.to(device) for b in synthetic_batches(c["vocab"], c["max_tokens"], args.pairs, seed=0,
                                                       bucket=args.bucket)]
    model_config = dict(src_vocab=c["vocab"], tgt_vocab=c["vocab"], N=c["N"], d_model=c["d_model"], d_ff=c["d_ff"])

    cursor = {k: 0 for k in models}

    # the analytic FLOPs against PyTorch's FlopCounterMode on one real batch (our model, explicit attention)
    first = batches[0]
    B, S, T = first.src.size(0), first.src.size(1), first.tgt_in.size(1)
    flop_check = {
        "batch": {"pairs": B, "padded_src_len": S, "padded_tgt_len": T},
        "flop_counter_mode": counted_step_flops(ours, first, LabelSmoothingLoss(c["vocab"], 0, 0.1, reduction="sum")),
        "training_flops_padded_shapes": training_flops(model_config, B * S, B * T, S, T),
        "training_flops_real_tokens": training_flops(model_config, first.src_ntokens, first.ntokens,
                                                     first.src_ntokens / B, first.ntokens / B)}

    # FlopCounterMode's count of every shape the timed steps will see (the two models compute the same FLOPs)
    counted = {}
    if args.counted_mfu:
        crit = LabelSmoothingLoss(c["vocab"], 0, 0.1, reduction="sum")
        for i in range(args.rounds * args.steps):
            b = batches[i % len(batches)]
            if shape_of(b) not in counted:
                counted[shape_of(b)] = counted_step_flops(ours, b, crit)

    def run(name, n, batch_list=None):
        tokens = flops = counted_flops = 0
        loss = None
        sync(device)
        t0 = time.perf_counter()
        for b in batch_list if batch_list is not None else [None] * n:
            if b is None:
                b = batches[cursor[name] % len(batches)]
                cursor[name] += 1
            loss = steps[name](b)
            tokens += b.ntokens + b.src_ntokens
            flops += training_flops(model_config, b.src_ntokens, b.ntokens, b.src_ntokens / len(b),
                                    b.ntokens / len(b))
            counted_flops += counted.get(shape_of(b), 0)
        if loss is not None and not torch.isfinite(loss):
            raise FloatingPointError(f"{name}: loss {loss}")
        sync(device)
        dt = max(time.perf_counter() - t0, 1e-9)
        return tokens / dt, flops / dt, counted_flops / dt

    # warm-up (allocator, kernels, compilation): with --warmup-shapes first one step on each distinct shape
    first_of_shape = {}
    for b in batches:
        first_of_shape.setdefault(shape_of(b), b)
    warmup = {}
    for name in models:
        t0 = time.perf_counter()
        w = {}
        if args.warmup_shapes:
            shapes = list(first_of_shape.values())
            run(name, 1, shapes[:1])
            w["first_step_seconds"] = round(time.perf_counter() - t0, 2)
            run(name, len(shapes) - 1, shapes[1:])
            w["shapes"] = len(shapes)
            w["shapes_seconds"] = round(time.perf_counter() - t0, 2)
        t1 = time.perf_counter()
        run(name, args.warmup)
        w["warmup_steps_seconds"] = round(time.perf_counter() - t1, 2)
        w["seconds"] = round(time.perf_counter() - t0, 2)
        warmup[name] = w
        print(f"warm-up {name}: " + ", ".join(f"{k} {v}" for k, v in w.items()), flush=True)
    for name in models:
        cursor[name] = 0  # both models see the same batches in the same order
    per_round = {k: [] for k in models}
    flops_rate = {k: [] for k in models}
    counted_rate = {k: [] for k in models}
    order = list(models)
    for r in range(args.rounds):
        for name in (order if r % 2 == 0 else order[::-1]):  # alternate which model goes first
            tps, fps, cps = run(name, args.steps)
            per_round[name].append(tps)
            flops_rate[name].append(fps)
            counted_rate[name].append(cps)
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1]:,.0f} tok/s" for k, v in per_round.items()),
              flush=True)

    peak = peak_source = None
    if device.type == "cuda":
        peak, peak_source = peak_flops(torch.cuda.get_device_name(device))
    results = {}
    for name in models:
        med = statistics.median(per_round[name])
        results[name] = {"tokens_per_s": [round(x, 1) for x in per_round[name]], "tokens_per_s_median": round(med, 1),
                         "params": n_ours, "model_flops_per_s_median": statistics.median(flops_rate[name])}
        if counted:
            results[name]["counted_flops_per_s_median"] = statistics.median(counted_rate[name])
        if peak:
            results[name]["mfu"] = statistics.median(flops_rate[name]) / peak
            if counted:
                results[name]["mfu_counted"] = statistics.median(counted_rate[name]) / peak
    ratio = results["ours"]["tokens_per_s_median"] / results["torch_nn_transformer"]["tokens_per_s_median"]
    paired = statistics.median(a / b for a, b in zip(per_round["ours"], per_round["torch_nn_transformer"]))
    commit, dirty = git_commit()
    record = {
        "benchmark": "training throughput (forward + backward + Adam step), non-padding source+target tokens/s",
        "command": " ".join(["python", "bench/bench_training.py", *(sys.argv[1:] if argv is None else argv)]),
        "git_commit": commit, "worktree_dirty": dirty,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else f"cpu ({cpu_name()})",
        "threads": torch.get_num_threads(), "torch": torch.__version__, "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "config": {**c, "size": size, "dropout": args.dropout, "amp": args.amp, "compile": args.compile,
                   "compile_backend": args.compile_backend if args.compile else None,
                   "compile_dynamic": args.compile_dynamic if args.compile else None,
                   "warmup_shapes": args.warmup_shapes, "pairs": args.pairs,
                   "bucket": args.bucket,
                   "steps": "ours: the Trainer's path (no target mask: is_causal; no source mask without source "
                            "padding; LogitsSeq2SeqLoss); nn.Transformer: tgt_is_causal, no key-padding masks "
                            "where a side has no padding; both: make_optimizer (fused Adam on a GPU)",
                   "distinct_shapes": len({(tuple(b.src.shape), tuple(b.tgt_in.shape)) for b in batches}),
                   "rounds": args.rounds, "steps_per_round": args.steps, "warmup_steps": args.warmup,
                   "batches": len(batches), "mean_tokens_per_batch": round(statistics.mean(
                       b.ntokens + b.src_ntokens for b in batches), 1)},
        "results": results, "ratio": round(ratio, 3), "ratio_paired_median": round(paired, 3),
        "peak_flops": peak, "peak_flops_source": peak_source,
        "warmup": warmup,
        "compile_seconds": round(sum(w.get("shapes_seconds", w["seconds"]) for w in warmup.values()), 2)
        if args.compile else None,
        "compile_stats": compile_stats() if args.compile else None,
        "counted_flops_by_shape": [{"rows": k[0], "src_len": k[1], "tgt_len": k[2], "flops": v}
                                   for k, v in counted.items()] or None,
        "flop_check": flop_check,
        "notes": ["ratio = median tokens/s of ours / median tokens/s of torch.nn.Transformer",
                  "nn.Transformer's final encoder/decoder LayerNorms replaced by Identity (paper's post-norm model)",
                  "model_flops_per_s uses annotated_transformer.torch_compare.training_flops (nanoGPT-style estimate) "
                  "on the real (non-padding) tokens; flop_check compares it with torch.utils.flop_counter."
                  "FlopCounterMode on one real step",
                  "counted_flops_per_s / mfu_counted (with --counted-mfu): FlopCounterMode's count of each timed "
                  "step on its padded batch (padding's work included), per second; the same count for both models",
                  "warmup: seconds of the untimed steps per model (with --warmup-shapes, first_step_seconds holds the "
                  "first compilation and shapes_seconds one step on every distinct shape); compile_seconds: their sum "
                  "over both models (with --compile)"],
    }
    out = args.out or REPO / "bench" / "results" / f"training_{device.type}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"ours {results['ours']['tokens_per_s_median']:,.0f} tok/s, torch.nn.Transformer "
          f"{results['torch_nn_transformer']['tokens_per_s_median']:,.0f} tok/s: ratio {ratio:.2f} "
          f"(paired median {paired:.2f}); written to {out}")
    print(f"FLOPs of one step on batch 0: FlopCounterMode {flop_check['flop_counter_mode']:,}, training_flops on its "
          f"padded shapes {flop_check['training_flops_padded_shapes']:,.0f}, on its real tokens "
          f"{flop_check['training_flops_real_tokens']:,.0f}")
    if peak:
        print(f"MFU ours {results['ours']['mfu']:.1%}, torch.nn.Transformer {results['torch_nn_transformer']['mfu']:.1%}"
              + (f"; counted by FlopCounterMode (padding included): ours {results['ours']['mfu_counted']:.1%}, "
                 f"torch.nn.Transformer {results['torch_nn_transformer']['mfu_counted']:.1%}" if counted else ""))


if __name__ == "__main__":
    main()

"""Decoding speed: what the KV cache saves, and what beam search costs (chapter 11).

    python bench/bench_decoding.py                       # CPU, writes bench/results/decoding_cpu.json
    python bench/bench_decoding.py --lengths 16 64 --reps 3 --out /tmp/x.json
    python bench/bench_decoding.py --device cuda --beam-recompute --out bench/results/decoding_cuda.json

For each output length T it times, on one batch of source sentences:
  * greedy decoding with the KV cache,
  * greedy decoding recomputing the whole prefix at every step (use_cache=False),
  * beam search (beam 4, α = 0.6) with the KV cache.
Every decode produces exactly T tokens per sentence: the model is untrained (seeded) and its generator bias for
EOS is set to -1e4, so EOS never wins, no hypothesis finishes early, and the three decoders do the same number of
steps. The three run alternately (greedy-cache, greedy-recompute, beam, then again), after one warm-up round; the
reported numbers are medians of `--reps` rounds, in milliseconds per sentence. `--beam-recompute` adds a fourth,
beam search recomputing the prefix (use_cache=False).
Each row records whether the cached and the recomputed decodes chose the same tokens (`tokens_identical`, and with
`--beam-recompute` `beam_tokens_identical`): on a CPU they do, on a GPU a kernel chosen for one query row can round
differently from the one for all rows, and an untrained model's near-ties can then flip a token; that is recorded,
not asserted.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from annotated_transformer.decoding import beam_search, greedy_decode  # noqa: E402
from annotated_transformer.masking import padding_mask  # noqa: E402
from annotated_transformer.model import make_model  # noqa: E402

PAD, BOS, EOS = 0, 1, 2


from provenance import cpu_name, git_commit  # noqa: E402  (bench/provenance.py, next to this script)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lengths", type=int, nargs="+", default=[16, 64, 256], help="output lengths T")
    p.add_argument("--batch", type=int, default=8, help="source sentences per batch")
    p.add_argument("--src-len", type=int, default=16, help="source length (tokens, EOS included)")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--reps", type=int, default=3, help="timed rounds per length (after one warm-up round)")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--N", type=int, default=3)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--device", default="cpu")
    p.add_argument("--beam-recompute", action="store_true",
                   help="also time beam search without the cache, and compare its tokens with the cached beam's")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "decoding_cpu.json")
    args = p.parse_args(argv)

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(0)
    model_cfg = dict(src_vocab=args.vocab, tgt_vocab=args.vocab, N=args.N, d_model=args.d_model, d_ff=args.d_ff,
                     h=args.heads, dropout=0.0)
    model = make_model(**model_cfg).to(device).eval()
    with torch.no_grad():
        model.generator.proj.bias[EOS] = -1e4  # EOS never wins: every decode runs to max_new_tokens
    src = torch.randint(3, args.vocab, (args.batch, args.src_len), device=device)
    src[:, -1] = EOS
    mask = padding_mask(src, PAD)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    results = []
    for T in args.lengths:
        runs = {
            "greedy_cache": lambda: greedy_decode(model, src, mask, max_new_tokens=T),
            "greedy_recompute": lambda: greedy_decode(model, src, mask, max_new_tokens=T, use_cache=False),
            "beam_cache": lambda: beam_search(model, src, mask, beam_size=args.beam, max_new_tokens=T),
        }
        if args.beam_recompute:
            runs["beam_recompute"] = lambda: beam_search(model, src, mask, beam_size=args.beam, max_new_tokens=T,
                                                         use_cache=False)
        # the outputs are what we claim: T tokens, no EOS; whether cache and recomputation agree is recorded
        out = {name: fn() for name, fn in runs.items()}  # also the warm-up round
        a, b, c = out["greedy_cache"], out["greedy_recompute"], out["beam_cache"]
        for name, o in out.items():
            assert o.shape == (args.batch, T) and not (o == EOS).any(), (name, tuple(o.shape))
        same = {"tokens_identical": torch.equal(a, b), "tokens_agreeing": (a == b).float().mean().item()}
        if args.beam_recompute:
            d = out["beam_recompute"]
            same |= {"beam_tokens_identical": torch.equal(c, d), "beam_tokens_agreeing": (c == d).float().mean().item()}
        if not all(v for k, v in same.items() if k.endswith("identical")):
            print(f"T={T}: the cached and recomputed decodes differ: {same}", flush=True)
        times = {name: [] for name in runs}
        for _ in range(args.reps):
            for name, fn in runs.items():  # alternate, so that slow drifts hit all three alike
                times[name].append(timed(lambda: (fn(), sync())))
        ms = {name: 1e3 * statistics.median(ts) / args.batch for name, ts in times.items()}
        row = {"tokens": T, "greedy_cache_ms": ms["greedy_cache"], "greedy_recompute_ms": ms["greedy_recompute"],
               "recompute_over_cache": ms["greedy_recompute"] / ms["greedy_cache"],
               "beam_cache_ms": ms["beam_cache"], "beam_over_greedy": ms["beam_cache"] / ms["greedy_cache"],
               **({"beam_recompute_ms": ms["beam_recompute"],
                   "beam_recompute_over_cache": ms["beam_recompute"] / ms["beam_cache"]} if args.beam_recompute else {}),
               **same, "raw_seconds": times}
        results.append(row)
        print(f"T={T:4d}: greedy+cache {row['greedy_cache_ms']:8.1f} ms/sentence, recompute "
              f"{row['greedy_recompute_ms']:8.1f} ({row['recompute_over_cache']:.1f}x), beam {args.beam}+cache "
              f"{row['beam_cache_ms']:8.1f} ({row['beam_over_greedy']:.1f}x greedy)"
              + (f", beam recompute {row['beam_recompute_ms']:8.1f} ({row['beam_recompute_over_cache']:.1f}x)"
                 if args.beam_recompute else ""), flush=True)

    report = {
        "command": " ".join(["python bench/bench_decoding.py", *(argv if argv is not None else sys.argv[1:])]),
        "commit": git_commit(),
        "device": f"{cpu_name()} ({os.cpu_count()} logical CPUs)" if device.type == "cpu"
        else torch.cuda.get_device_name(device),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "model": model_cfg | {"generator bias[EOS]": -1e4, "weights": "untrained, torch.manual_seed(0)"},
        "batch": args.batch,
        "src_len": args.src_len,
        "beam_size": args.beam,
        "length_penalty": 0.6,
        "reps": args.reps,
        "statistic": "median over reps, milliseconds per sentence",
        "beam_recompute": args.beam_recompute,
        "all_tokens_identical": all(v for r in results for k, v in r.items() if k.endswith("tokens_identical")),
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    main()

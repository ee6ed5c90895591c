"""Four ways to give a Transformer positions, measured on one small task where order is everything (chapter 26).

The kinds are the keys of chapter 07's POSITIONAL_ENCODINGS (chapter 26's module `positions` adds the last two): `sinusoidal` (§3.5), `learned` (Table 3, row E), `rope`
(rotary positions in the self-attentions) and `relative` (Shaw et al., 2018: learned vectors for the clipped offset
j - i in the self-attentions' scores and values, k = 16). The task is sequence reversal: the source is 1 to
TRAIN_MAX random symbols, the target the same symbols backwards, so every output token must find the source token at
a computed position. Each run trains a tiny encoder-decoder (N 1, d_model 32, 4 heads) from the same seed for the
same updates on one thread, then greedy-decodes two held-out sets: `dev`, lengths 1 to TRAIN_MAX (500 sentences not
in the training set), and `longer`, lengths TRAIN_MAX + 1 to TRAIN_MAX + 4, which training never showed.

    python bench/positions.py run --kind relative --seed 0 1 2     # one kind, several seeds, one after another
    python bench/positions.py all --seed 0 1 2                     # every kind and seed that has no record yet
    python bench/positions.py table                                # the records, side by side

One JSON record per (kind, seed) in bench/results/positions/KIND_sSEED.json: the settings, the two accuracies (the
fraction of sentences reversed exactly), the last training loss, the wall time and the provenance (command, commit,
date, device, torch version, threads). Seeds pair the kinds: seed s draws the same data and the same order of
training batches for every kind. Nothing here is a test; tests/test_positional.py and tests/test_positions.py test the modules.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import cpu_name, git_commit  # noqa: E402

from annotated_transformer.batching import make_batch  # noqa: E402
from annotated_transformer.copytask import copy_accuracy, copy_task_pairs  # noqa: E402
from annotated_transformer.model import POSITIONAL_ENCODINGS, make_model  # noqa: E402
import annotated_transformer.positions  # noqa: E402,F401  (adds rope and relative to the table)

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "positions"
KINDS = list(POSITIONAL_ENCODINGS)  # sinusoidal, learned, rope, relative
VOCAB, TRAIN_MAX, LONGER = 13, 8, 4  # PAD, BOS, EOS + 10 symbols; training lengths 1..8; 9..12 held out
MODEL = dict(N=1, d_model=32, d_ff=64, h=4, dropout=0.0, max_positions=64)
TRAIN = dict(steps=1200, batch=64, lr=1e-3, warmup=100, train_size=20000, dev_size=500, longer_size=500)


def reversal_pairs(n: int, seed: int, min_length: int, max_length: int, exclude=()) -> list:
    "n random symbol sequences (lengths min_length..max_length) paired with themselves reversed."
    return [(s, s[::-1]) for s, _ in copy_task_pairs(n, VOCAB, max_length, seed=seed, min_length=min_length,
                                                     exclude=exclude)]


def train_one(kind: str, seed: int) -> dict:
    "Train one model of KIND from SEED and score it; the measured part of a record."
    torch.manual_seed(seed)
    train = reversal_pairs(TRAIN["train_size"], seed, 1, TRAIN_MAX)
    dev = reversal_pairs(TRAIN["dev_size"], seed + 1000, 1, TRAIN_MAX, exclude=train)
    longer = reversal_pairs(TRAIN["longer_size"], seed + 2000, TRAIN_MAX + 1, TRAIN_MAX + LONGER)
    torch.manual_seed(seed)
    model = make_model(VOCAB, VOCAB, positional=kind, **MODEL)
    opt = torch.optim.Adam(model.parameters(), lr=TRAIN["lr"], betas=(0.9, 0.98), eps=1e-9)
    # linear warm-up, then constant
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / TRAIN["warmup"]))
    order = torch.Generator().manual_seed(seed)
    start, losses = time.perf_counter(), []
    model.train()
    for step in range(TRAIN["steps"]):
        idx = torch.randint(len(train), (TRAIN["batch"],), generator=order).tolist()
        b = make_batch([train[i] for i in idx])
        out = model.generator(model(b.src, b.tgt_in, b.src_mask, b.tgt_mask))
        loss = F.cross_entropy(out.reshape(-1, VOCAB), b.tgt_out.reshape(-1), ignore_index=0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    seconds = time.perf_counter() - start
    return {"dev_accuracy": copy_accuracy(model, dev), "longer_accuracy": copy_accuracy(model, longer),
            "final_train_loss": round(sum(losses[-100:]) / 100, 4), "train_seconds": round(seconds, 1),
            "parameters": sum(p.numel() for p in model.parameters())}


def run(kind: str, seed: int, results: Path = RESULTS, command: str = "") -> Path:
    "Train, score and record one (kind, seed); return the record's path."
    if kind not in KINDS:
        raise SystemExit(f"--kind must be one of {', '.join(KINDS)}, got {kind!r}")
    measured = train_one(kind, seed)
    record = {"kind": kind, "seed": seed, "task": "reversal", "vocab": VOCAB, "train_lengths": [1, TRAIN_MAX],
              "longer_lengths": [TRAIN_MAX + 1, TRAIN_MAX + LONGER], "model": MODEL, "train": TRAIN, **measured,
              "provenance": {"command": command or shlex.join(["python", "bench/positions.py", *sys.argv[1:]]),
                             "commit": git_commit(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                             "device": f"cpu ({cpu_name()})", "threads": torch.get_num_threads(),
                             "torch": torch.__version__}}
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{kind}_s{seed}.json"
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"{kind} seed {seed}: dev {measured['dev_accuracy']:.3f}, longer {measured['longer_accuracy']:.3f}, "
          f"{measured['train_seconds']} s -> {path.relative_to(REPO) if path.is_relative_to(REPO) else path}",
          flush=True)
    return path


def load_records(results: Path = RESULTS) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(Path(results).glob("*.json"))]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="train and record one kind with one or more seeds")
    r.add_argument("--kind", choices=KINDS, required=True)
    a = sub.add_parser("all", help="every kind with every seed that has no record yet")
    for s in (r, a):
        s.add_argument("--seed", type=int, nargs="+", default=[0])
        s.add_argument("--threads", type=int, default=1, help="torch threads (default 1, as the records)")
        s.add_argument("--results", type=Path, default=RESULTS)
    t = sub.add_parser("table", help="print the records")
    t.add_argument("--results", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    if args.cmd == "table":
        for rec in load_records(args.results):
            print(f"{rec['kind']:10s} s{rec['seed']}  dev {rec['dev_accuracy']:.3f}  "
                  f"longer {rec['longer_accuracy']:.3f}  {rec['train_seconds']} s")
        return
    torch.set_num_threads(args.threads)
    if args.cmd == "run":
        for seed in args.seed:
            run(args.kind, seed, args.results)
        return
    for seed in args.seed:
        for kind in KINDS:
            if not (args.results / f"{kind}_s{seed}.json").exists():
                run(kind, seed, args.results, command=shlex.join(
                    ["python", "bench/positions.py", "run", "--kind", kind, "--seed", str(seed)]))


if __name__ == "__main__":
    main()

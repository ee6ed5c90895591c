"""What the inner dropouts do: the paper's dropouts only (today's default) against dropout on the attention weights
and the feed-forward hidden layer too (`inner_dropout=True`, Harvard's notebook and nn.Transformer). Chapter 07.

    python bench/inner_dropout.py copy --seeds 0 1 2 3 4    # chapter 10's copy task, both settings per seed
    python bench/inner_dropout.py collect                   # + the reference recipe's runs -> the record

`copy` trains chapter 10's recipe (1+1 layers, d_model 64, 1,000 updates of 1,000 tokens, P_drop 0.1) once per
seed and setting, with the same initial weights and batches for both settings of a seed (the switch draws no random
numbers when the model is built), and measures dev perplexity (teacher forcing, 500 unseen sequences, no label
smoothing) and exact greedy copies. `collect` adds the reference recipe of chapter 22: the four recorded runs with
both inner dropouts (`results/reference_split.json`, section `ours`) against runs of the same command without them,
read from `runs/deen_paperdrop_s*` (the command is in each run's config.json; a run that has not reached its
1,000th update is listed as in progress, not counted). Both write
`bench/results/inner_dropout.json`, keeping what the other wrote.
"""
import argparse, datetime, json, math, statistics, subprocess, sys, time
from pathlib import Path

import torch
import torch.nn.functional as F

from annotated_transformer.batching import PAD, make_batch
from annotated_transformer.sampler import TokenBatchSampler
from annotated_transformer.copytask import copy_accuracy, copy_task_pairs
from annotated_transformer.loss import LabelSmoothingLoss, make_optimizer, train_loop
from annotated_transformer.model import make_model

sys.path.insert(0, str(Path(__file__).parent))
from provenance import cpu_name  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "bench" / "results" / "inner_dropout.json"


def _stats():
    "bench/stats.py, the experiments' statistics helper: bench/ is not a package, so its folder goes on sys.path."
    if str(Path(__file__).resolve().parent) not in sys.path:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
    import stats
    return stats


def _record(iv) -> dict:
    return {"mean": iv.mean, "se": iv.se, "df": iv.df, "ci95": [iv.low, iv.high]}


def paired_interval(a: list[float], b: list[float]) -> dict:
    "Mean of b - a over paired seeds, with its standard error and 95 % t interval (n - 1 degrees of freedom)."
    return _record(_stats().paired(a, b))


def pooled_interval(a: list[float], b: list[float]) -> dict:
    "mean(b) - mean(a) for independent seeds, with the pooled-variance 95 % t interval (n_a + n_b - 2 d.o.f.)."
    return _record(_stats().student(a, b))


def dev_perplexity(model, pairs) -> float:
    "exp of the mean cross-entropy per target token, teacher forced, in eval mode (no label smoothing)."
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for k in range(0, len(pairs), 250):
            b = make_batch(pairs[k:k + 250])
            logp = model.generator(model(b.src, b.tgt_in, b.src_mask, b.tgt_mask))
            total += F.nll_loss(logp.transpose(1, 2), b.tgt_out, ignore_index=PAD, reduction="sum").item()
            count += (b.tgt_out != PAD).sum().item()
    return math.exp(total / count)


def copy_run(seed: int, inner_dropout: bool, steps: int = 1000) -> dict:
    "Chapter 10's copy-task recipe with one seed and setting."
    vocab, max_length = 11, 10
    train_pairs = copy_task_pairs(20000, vocab, max_length, seed=0)
    test_pairs = copy_task_pairs(500, vocab, max_length, seed=1, exclude=train_pairs)
    torch.manual_seed(seed)
    model = make_model(vocab, vocab, N=1, d_model=64, d_ff=256, h=4, dropout=0.1, inner_dropout=inner_dropout)
    sampler = TokenBatchSampler(train_pairs, max_tokens=1000, seed=seed)
    batches = (make_batch([train_pairs[i] for i in indices]) for _, indices in zip(range(steps), sampler))
    optimizer, scheduler = make_optimizer(model, d_model=64, warmup=200, factor=0.5)
    criterion = LabelSmoothingLoss(vocab, smoothing=0.1, reduction="sum")
    t0 = time.perf_counter()
    losses = train_loop(model, batches, criterion, optimizer, scheduler)
    return {"seed": seed, "inner_dropout": inner_dropout, "updates": len(losses),
            "train_loss_last100": sum(losses[-100:]) / len(losses[-100:]), "dev_ppl": dev_perplexity(model, test_pairs),
            "exact_copies": copy_accuracy(model, test_pairs), "seconds": time.perf_counter() - t0}


def provenance(argv: list[str]) -> dict:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "annotated_transformer"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return {"command": "python bench/inner_dropout.py " + " ".join(argv), "commit": commit + (" + changes" if dirty
            else ""), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "torch": torch.__version__, "device": f"cpu ({cpu_name()}), {torch.get_num_threads()} thread(s)"}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# runs started from a working tree that held the commit's changes uncommitted: what they were
STARTED_FROM = {name: "96af4e9 (the working tree held its changes, committed minutes after the start)"
                for name in ("deen_paperdrop_s0", "deen_paperdrop_s1")}


def paperdrop_run(run: Path) -> dict:
    "A reference-recipe run without the inner dropouts: its command, code and dev perplexity curve."
    config = json.loads((run / "config.json").read_text())
    if config["train"]["model"]["inner_dropout"]:
        raise SystemExit(f"{run}: trained with inner_dropout=True; expected the paper's dropouts only")
    dev = [r for r in read_jsonl(run / "metrics.jsonl") if "dev_ppl" in r]
    code = config.get("code") or {}
    return {"name": run.name, "seed": config["train"]["seed"], "command": " ".join(config["command"]),
            "commit": STARTED_FROM.get(run.name) or (code.get("commit") or "?") + (" + changes" if code.get("modified")
                                                                                else ""),
            "date": config["date"], "torch": config["torch"], "device": f"{config['device']} ({cpu_name()}), 1 thread",
            "steps_done": dev[-1]["step"] if dev else 0,
            "dev_curve": [{"step": r["step"], "dev_ppl": r["dev_ppl"]} for r in dev]}


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    c = sub.add_parser("copy", help="train the copy task with both settings for each seed")
    c.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    c.add_argument("--steps", type=int, default=1000)
    c.add_argument("--out", type=Path, default=RECORD)
    k = sub.add_parser("collect", help="add the reference recipe's runs and the intervals")
    k.add_argument("--runs", type=Path, default=ROOT / "runs")
    k.add_argument("--out", type=Path, default=RECORD)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    started = provenance(argv)  # the code this process imported, before anything runs
    record = json.loads(args.out.read_text()) if args.out.exists() else {}
    if args.what == "copy":
        rows = [copy_run(s, inner, args.steps) for s in args.seeds for inner in (False, True)]
        off = [r["dev_ppl"] for r in rows if not r["inner_dropout"]]
        on = [r["dev_ppl"] for r in rows if r["inner_dropout"]]
        record["copy_task"] = {"what": "chapter 10's copy task: 1+1 layers, d_model 64, d_ff 256, h 4, P_drop 0.1, "
                                       f"{args.steps} updates of 1,000 tokens; dev: 500 unseen sequences",
                               "provenance": started, "rows": rows,
                               "dev_ppl_on_minus_off": paired_interval(off, on) if len(rows) > 2 else None}
    else:
        runs = sorted(args.runs.glob("deen_paperdrop_s*/config.json"))
        started = [paperdrop_run(r.parent) for r in runs if (r.parent / "metrics.jsonl").exists()]
        off = [r for r in started if r["steps_done"] == 1000]
        if not off:
            raise SystemExit(f"no finished runs/deen_paperdrop_s*/ under {args.runs}")
        recorded = json.loads((ROOT / "results" / "reference_split.json").read_text())["ours"]
        on = [{k: r[k] for k in ("name", "command", "commit", "date", "dev_curve", "dev_ppl")} for r in recorded]
        record["reference_recipe"] = {
            "what": "chapter 22's reference recipe, German->English, 1,000 updates; on: the recorded runs "
                    "(inner dropouts were always on then), off: the same command at today's default",
            "inner_dropout_on": on, "inner_dropout_off": off,
            "in_progress": sorted({r.parent.name for r in runs} - {r["name"] for r in off}),
            "dev_ppl_off_minus_on": pooled_interval([r["dev_ppl"] for r in on],
                                                    [r["dev_curve"][-1]["dev_ppl"] for r in off])
            if len(off) >= 2 else None}
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: v.get("dev_ppl_on_minus_off", v.get("dev_ppl_off_minus_on")) for k, v in record.items()},
                     indent=1))


if __name__ == "__main__":
    main()

"""Collect the runs on the fixed reference split into one file for chapter 9b: results/reference_split.json.

    python bench/collect_reference_split.py --runs-dir runs

What it reads (none of it is committed; checkpoints never are):

* `RUNS/ref_*` -- runs of the independent loop `bench/reference_loop.py` (its result.json);
* `annotated-transformer train` runs with the reference split's recipe on its German->English and
  Chinese->English files (config.json, metrics.jsonl) and the `annotated-transformer evaluate --json` files written
  next to them as `RUNS/<run>.eval.<what>.json`, one section per RUN_SECTIONS pattern: `RUNS/deen_fixed_s*` and
  `RUNS/zhen_fixed_s*` with the defaults, `RUNS/deen_cutonce_s*` with the batches cut once and only reordered
  every epoch (`--no-rebatch`); a run that has not reached its last step yet is left out (and said so);
* `RUNS/ab_<variant>_s<seed>` -- full-size runs of `bench/ablate_model.py`, the recipe with one difference from the
  independent loop patched in (compared with `deen_fixed_s<seed>`: same seed, data order and dropout masks); a
  screening run may stop early, and its curve is kept as far as it went;
* `RUNS/px_*` -- the ablation on a small proxy (2+2 layers, d_model 128, 400 updates of 2,000 target tokens,
  warm-up 400, the proxy reference loop's tokenizer for every row, so that perplexities compare).

Each entry keeps its command, commit, device, torch version and date. Entries already in the output file whose run
directories are gone (runs/ is not committed) are kept; `--replace` writes only the runs found now.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import cpu_name  # noqa: E402

# the proxy rows: (run directory, which code, what differs from the row above or from today's default)
ABLATION = [
    ("px_ref", "bench/reference_loop.py", "the independent plain-PyTorch loop"),
    ("px_old", "57d765a", "the package before the fix: Xavier embeddings, budget on max(source, target)"),
    ("px_initonly", "57d765a + N(0, 1/d_model) embeddings", "only the embedding initialization fixed"),
    ("px_budgetonly", "8ef194f with Xavier embeddings", "only the token budget fixed (padded target tokens)"),
    ("px_ours", "8ef194f", "both fixed (today's default)"),
]


# what each variant of bench/ablate_model.py changes (its docstring has the details)
VARIANTS = {"zero_attn_bias": "attention projection biases start at 0 (nn.MultiheadAttention)",
            "final_norm": "a final LayerNorm after each stack (nn.Transformer, post-norm too)",
            "no_generator_bias": "no bias in the pre-softmax projection (the loop)",
            "torch_ce": "nn.CrossEntropyLoss's label smoothing: eps/V on every class",
            "loop_tokenizer": "the loop's sentencepiece model (nmt_nfkc, no byte fallback)",
            "arch_torch": "--arch torch: nn.Transformer's layers (zero attention biases) in the package's trainer",
            "loop_rebatch": "the independent loop itself, its batches cut anew every epoch (--rebatch), as the package's sampler does"}
OPTIONS = ("loop_tokenizer", "arch_torch")  # variants made by train's own options, not by a patch
# the first screens ran a copy of bench/ablate_model.py's patches kept outside the repository, chosen by an
# environment variable; the patches are the ones committed
SCREEN_NOTES = {("ab_zero_attn_bias_s0", "2026-11-25T01:35:08+0000"): "run as runs/screen/patched_train.py "
                "(VARIANT=zero_attn_bias), stopped after step 500",
                ("ab_final_norm_s0", "2026-11-25T01:35:08+0000"): "run as runs/screen/patched_train.py "
                "(VARIANT=final_norm)",
                ("ab_loop_tokenizer_s0", "2026-11-25T02:08:16+0000"): "stopped after step 500",
                ("ab_loop_rebatch_s0", "2026-11-25T03:08:12+0000"): "--rebatch was not committed yet when it started "
                "(it came with 162e5ed; the commit named is the one checked out)"}


# the sections of train runs: section -> run directories (a pattern), what differs from today's defaults
RUN_SECTIONS = {"ours": ("deen_fixed_s*", None),
                "ours_cut_once": ("deen_cutonce_s*", "batches cut once and only reordered every epoch: trained at "
                                  "24c11e4, where that was the default; today add --no-rebatch"),
                "ours_zhen": ("zhen_fixed_s*", None)}


# runs made before `train` wrote its commit into config.json ("code"), keyed by (run, start date): the commit they
# were started from with a clean package, as noted by whoever started them
STARTED_FROM = {("deen_fixed_s0", "2026-11-24T23:01:38+0000"): "a464088",
                ("deen_fixed_s1", "2026-11-24T23:01:39+0000"): "a464088",
                ("deen_fixed_s2", "2026-11-25T00:01:11+0000"): "3266079"}


def code_of(run: Path, config: dict) -> str | None:
    "The commit a run's code came from ('+ changes' when the package differed from it), if known."
    code = config.get("code")
    if code and code.get("commit"):
        return code["commit"] + (" + changes" if code.get("modified") else "")
    return STARTED_FROM.get((run.name, config["date"]))


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def ours_run(run: Path) -> dict:
    config = json.loads((run / "config.json").read_text())
    metrics = read_jsonl(run / "metrics.jsonl")
    train = [r for r in metrics if "loss" in r]
    dev = [r for r in metrics if "dev_ppl" in r]
    evals = {}
    for f in sorted(run.parent.glob(f"{run.name}.eval.*.json")):
        e = json.loads(f.read_text())
        evals[f.name.split(".eval.")[1][:-5]] = {
            k: e.get(k) for k in ("split", "sentences", "decoding", "avg", "checkpoints", "bleu", "chrf", "seconds",
                                  "samples", "command", "date")}
    seconds = sum((r["step"] - p) / r["steps_per_s"] for r, p in zip(train, [0] + [r["step"] for r in train][:-1]))
    command = list(config["command"])
    if command[:1] == ["annotated-transformer"] and command[1:2] != ["train"]:  # config.json before 2b34712 left it out
        command.insert(1, "train")
    return {"name": run.name, "command": " ".join(command), "commit": code_of(run, config), "date": config["date"],
            "torch": config["torch"], "device": f"{config['device']} ({cpu_name()}), 1 thread",
            "train": config["train"], "dev_curve": [{"step": r["step"], "dev_ppl": r["dev_ppl"]} for r in dev],
            "dev_ppl": dev[-1]["dev_ppl"] if dev else None, "seconds_in_training_steps": round(seconds),
            "target_tokens_per_step": sum(r.get("tgt_tokens_per_s", 0) / r["steps_per_s"] for r in train) / len(train)
            if train and "tgt_tokens_per_s" in train[0] else None,
            "evaluations": evals}


def reference_run(run: Path) -> dict:
    r = json.loads((run / "result.json").read_text())
    return {"name": run.name, **{k: r.get(k) for k in ("dev_ppl", "bleu", "bleu_text", "bleu_signature", "chrf",
                                                        "chrf_signature", "test_sentences", "train_seconds",
                                                        "target_tokens_per_step", "samples", "provenance")},
            "dev_curve": [{"step": c["step"], "dev_ppl": c["dev_ppl"]} for c in r["curve"] if "dev_ppl" in c],
            "device": f"cpu ({cpu_name()}), {r['provenance']['threads']} thread(s)"}


def finished(run: Path) -> bool:
    "Whether the run has reached its last step (a run still training, or stopped early, is not collected)."
    if not (run / "metrics.jsonl").exists():
        return False
    steps = json.loads((run / "config.json").read_text())["train"]["steps"]
    done = max((r["step"] for r in read_jsonl(run / "metrics.jsonl") if "loss" in r), default=0)
    if done < steps:
        print(f"left out {run.name}: at step {done} of {steps}")
    return done >= steps


def ablation_run(run: Path) -> dict:
    "A full-size ablation run (possibly stopped early): its variant, curve and how it was made."
    variant, seed = run.name[len("ab_"):].rsplit("_s", 1)
    variant = variant.replace("-", "+")  # a directory name holds a combination as a-b
    if (run / "result.json").exists():  # a run of the independent loop
        r = reference_run(run)
        p = r["provenance"]
        return {"run": run.name, "variant": variant, "what": VARIANTS.get(variant, "?"), "seed": int(seed),
                "paired_with": f"ref_deen_s{seed}", "steps_done": r["dev_curve"][-1]["step"],
                "steps_planned": int(json.loads((run / "result.json").read_text())["args"]["steps"]),
                "dev_curve": r["dev_curve"], "command": "python bench/" + " ".join(p["command"]),
                "commit": p["commit"], "date": p["date"], "device": r["device"],
                "note": SCREEN_NOTES.get((run.name, p["date"]))}
    r = ours_run(run)
    args = r["command"].split(" ", 1)[1]  # after "annotated-transformer"
    patches = "+".join(v for v in variant.split("+") if v not in OPTIONS)
    command = f"python bench/ablate_model.py {patches} {args}" if patches else f"annotated-transformer {args}"
    steps = max((x["step"] for x in read_jsonl(run / "metrics.jsonl") if "loss" in x), default=0)
    what = "; ".join(VARIANTS.get(v, "?") for v in variant.split("+"))
    return {"run": run.name, "variant": variant, "what": what, "seed": int(seed),
            "paired_with": f"deen_fixed_s{seed}", "steps_done": steps,
            "steps_planned": r["train"]["steps"],
            "dev_curve": r["dev_curve"], "command": command, "commit": r["commit"], "date": r["date"],
            "device": r["device"], "note": SCREEN_NOTES.get((run.name, r["date"]))}


def merge_recorded(recorded: dict, found: dict) -> dict:
    """`found` plus every entry of `recorded` whose run is not in `found`: run directories are not committed
    and do not survive a fresh checkout, but their recorded results must."""
    merged = dict(found)
    for key, rows in recorded.items():  # whole sections that no run of today writes (superseded runs, kept for the record)
        if key not in merged:
            merged[key] = rows
    for key, rows in found.items():
        if not isinstance(rows, list):
            continue
        name = "run" if key in ("ablation", "full_size_ablation") else "name"
        have = {r[name] for r in rows}
        kept = [r for r in recorded.get(key, []) if r[name] not in have]
        for r in kept:
            print(f"kept {key} {r[name]}: recorded earlier, its run directory is not here")
        merged[key] = sorted(rows + kept, key=lambda r: r[name]) if key != "ablation" else \
            [r for n, *_ in ABLATION for r in rows + kept if r[name] == n]
    return merged


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs-dir", type=Path, default=REPO / "runs")
    p.add_argument("--out", type=Path, default=REPO / "results" / "reference_split.json")
    p.add_argument("--replace", action="store_true",
                   help="write only the runs found now (default: keep the entries of OUT whose runs are gone)")
    args = p.parse_args(argv)
    runs = args.runs_dir
    out = {"what": "German->English on the reference split (reference:bible-de-en, 29,602 train / 500 dev / 1,000 test verses), "
                   "README recipe: 3+3 layers, d_model 256, 4 heads, d_ff 1024, dropout 0.1, shared 8k BPE, "
                   "label smoothing 0.1, warm-up 1000, 4000-token batches, 1000 updates",
           "reference_loop": [reference_run(d) for d in sorted(runs.glob("ref_*")) if (d / "result.json").exists()],
           **{key: [{**ours_run(d), "differs": differs} for d in sorted(runs.glob(pattern)) if finished(d)]
              for key, (pattern, differs) in RUN_SECTIONS.items()},
           "full_size_ablation": [ablation_run(d) for d in sorted(runs.glob("ab_*_s*"))
                                  if (d / "metrics.jsonl").exists() or (d / "result.json").exists()],
           "ablation": []}
    for name, code, what in ABLATION:
        d = runs / name
        if (d / "result.json").exists():
            r = reference_run(d)
            out["ablation"].append({"run": name, "code": code, "what": what, "dev_ppl": r["dev_ppl"],
                                    "command": " ".join(r["provenance"]["command"]), "date": r["provenance"]["date"],
                                    "target_tokens_per_step": r["target_tokens_per_step"]})
        elif (d / "metrics.jsonl").exists():
            r = ours_run(d)
            out["ablation"].append({"run": name, "code": code, "what": what, "dev_ppl": r["dev_ppl"],
                                    "command": r["command"], "date": r["date"],
                                    "target_tokens_per_step": r["target_tokens_per_step"]})
    if args.out.exists() and not args.replace:
        out = merge_recorded(json.loads(args.out.read_text(encoding="utf-8")), out)
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(out['reference_loop'])} reference, "
          + "".join(f"{len(out[key])} {key}, " for key in RUN_SECTIONS) +
          f"{len(out['full_size_ablation'])} full-size ablation runs, {len(out['ablation'])} proxy ablation rows")


if __name__ == "__main__":
    main()

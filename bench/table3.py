"""Table 3 of the paper (§6.2, "Model Variations"), row by row, at a scale of your choosing; and its collector.

One command trains one row with one seed, scores it and records it as one small JSON file:

    python bench/table3.py run --scale mini --variant A_h1 --seed 0
    python bench/table3.py run --scale mini --variant base --seed 0 1 2      # several seeds, one after another
    python bench/table3.py queue --scale mini --plan plan.txt                # lines "VARIANT SEED", skip recorded
    python bench/table3.py list                                              # the rows, and each scale's settings
    python bench/table3.py table                                             # the table built from the records
    python bench/table3.py recipe-choice RUN_DIR... --out FILE               # candidate recipes of the miniature

A run is three commands of the package (their text goes into the record, as a reader types them):

    annotated-transformer train    RECIPE VARIANT-FLAGS --seed S --out RUN
    annotated-transformer evaluate --model RUN --greedy          --json RUN.eval.greedy.json
    annotated-transformer evaluate --model RUN --beam 4 --avg 5  --json RUN.eval.beam4_avg5.json

Scales (`SCALES`): `mini`, the CPU miniature of chapter 25 (a few minutes per run on one thread); `reference`, the
7.6M-parameter recipe of chapter 9b (about an hour per run on one CPU thread); `base`, the paper's base model
(65M parameters with the paper's vocabulary) on the same split, for a GPU. Each row of Table 3 is a change of the
scale's base (`VARIANTS`): the paper's values where they apply at any width (heads, dropout, label smoothing,
positions), scaled by the scale's ratio to the paper's base where they are sizes (N, d_model, d_ff).

The record (bench/results/table3/SCALE_VARIANT_sSEED.json) holds the settings, the provenance (the three
commands, the package's commit, device, torch version, date, wall times), the parameters counted on the built
model, the learning curves, the dev perplexity and the BLEU/chrF scores with their sacrebleu signatures.
Checkpoints stay in the run directory (outside the repository) and are deleted after scoring unless
--keep-checkpoints. Nothing here is a test; tests/test_table3.py tests it.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import math
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "table3"
RUNS = Path(os.environ.get("TABLE3_RUNS", REPO / "runs" / "table3"))

# ------------------------------------------------------------------------------------------------ the paper
# Table 3 of Vaswani et al. (2017): newstest2013 (English -> German dev set) perplexity per wordpiece, BLEU,
# parameters in millions; unlisted values equal the base model's.
PAPER_BASE = dict(N=6, d_model=512, d_ff=2048, h=8, d_k=64, dropout=0.1, label_smoothing=0.1, steps="100K")
PAPER = {
    "base": dict(ppl=4.92, bleu=25.8, params=65),
    "A_h1": dict(ppl=5.29, bleu=24.9, params=None), "A_h4": dict(ppl=5.00, bleu=25.5, params=None),
    "A_h16": dict(ppl=4.91, bleu=25.8, params=None), "A_h32": dict(ppl=5.01, bleu=25.4, params=None),
    "B_dk16": dict(ppl=5.16, bleu=25.1, params=58), "B_dk32": dict(ppl=5.01, bleu=25.4, params=60),
    "C_N2": dict(ppl=6.11, bleu=23.7, params=36), "C_N4": dict(ppl=5.19, bleu=25.3, params=50),
    "C_N8": dict(ppl=4.88, bleu=25.5, params=80),
    "C_d256": dict(ppl=5.75, bleu=24.5, params=28), "C_d1024": dict(ppl=4.66, bleu=26.0, params=168),
    "C_ff1024": dict(ppl=5.12, bleu=25.4, params=53), "C_ff4096": dict(ppl=4.75, bleu=26.2, params=90),
    "D_p0": dict(ppl=5.77, bleu=24.6, params=None), "D_p2": dict(ppl=4.95, bleu=25.5, params=None),
    "D_ls0": dict(ppl=4.67, bleu=25.3, params=None), "D_ls2": dict(ppl=5.47, bleu=25.7, params=None),
    "E_learned": dict(ppl=4.92, bleu=25.7, params=None),
    # not in Table 3: relative positions (Shaw et al., 2018) in place of the sinusoids, measured the same way
    "E_relative": dict(ppl=None, bleu=None, params=None),
    # (F) is not in the paper: two later changes that most models use today, measured the same way
    "F_prenorm": dict(ppl=None, bleu=None, params=None), "F_rope": dict(ppl=None, bleu=None, params=None),
    "big": dict(ppl=4.33, bleu=26.4, params=213),
}
PAPER_VOCAB = 37000  # the paper's shared source-target BPE vocabulary (§5.1), for the full-size parameter counts


@dataclasses.dataclass(frozen=True)
class Variant:
    "One line of Table 3: what the paper changed, and how to make that change to a scale's base model."
    name: str  # e.g. "A_h1"
    row: str  # "", "A" ... "E", "big"
    paper: str  # the change as the paper's table states it
    change: dict  # flag -> value, or flag -> ("scale", factor): the scale's base value times factor
    reason: str = ""  # why it cannot run (empty: it can)

    def flags(self, base: dict) -> dict:
        "The settings this variant changes, given the scale's base model settings {N, d_model, d_ff, h, ...}."
        if self.reason:
            raise ValueError(f"{self.name} cannot run: {self.reason}")
        out = {}
        for key, value in self.change.items():
            if isinstance(value, tuple) and value[0] == "scale":
                value = max(1, round(base[key] * value[1]))
            elif isinstance(value, tuple) and value[0] == "key_scale":  # row B: a fraction of the base d_k = d_model/h
                value = max(1, round(base["d_model"] // base["h"] * value[1]))
            out[key] = value
        return out


VARIANTS = {v.name: v for v in [
    Variant("base", "", "base model: N 6, d_model 512, d_ff 2048, h 8, d_k 64, P_drop 0.1, eps_ls 0.1, sinusoids", {}),
    Variant("A_h1", "A", "h 1, d_k = d_v 512", {"h": 1}),
    Variant("A_h4", "A", "h 4, d_k = d_v 128", {"h": 4}),
    Variant("A_h16", "A", "h 16, d_k = d_v 32", {"h": 16}),
    Variant("A_h32", "A", "h 32, d_k = d_v 16", {"h": 32}),
    Variant("B_dk16", "B", "d_k 16 (d_v 64)", {"d_k": ("key_scale", 16 / 64)}),
    Variant("B_dk32", "B", "d_k 32 (d_v 64)", {"d_k": ("key_scale", 32 / 64)}),
    Variant("C_N2", "C", "N 2", {"N": ("scale", 2 / 6)}),
    Variant("C_N4", "C", "N 4", {"N": ("scale", 4 / 6)}),
    Variant("C_N8", "C", "N 8", {"N": ("scale", 8 / 6)}),
    Variant("C_d256", "C", "d_model 256, d_k = d_v 32", {"d_model": ("scale", 256 / 512)}),
    Variant("C_d1024", "C", "d_model 1024, d_k = d_v 128", {"d_model": ("scale", 1024 / 512)}),
    Variant("C_ff1024", "C", "d_ff 1024", {"d_ff": ("scale", 1024 / 2048)}),
    Variant("C_ff4096", "C", "d_ff 4096", {"d_ff": ("scale", 4096 / 2048)}),
    Variant("D_p0", "D", "P_drop 0.0", {"dropout": 0.0}),
    Variant("D_p2", "D", "P_drop 0.2", {"dropout": 0.2}),
    Variant("D_ls0", "D", "eps_ls 0.0", {"label_smoothing": 0.0}),
    Variant("D_ls2", "D", "eps_ls 0.2", {"label_smoothing": 0.2}),
    Variant("E_learned", "E", "learned positional embedding", {"positional": "learned"}),
    Variant("E_relative", "E", "relative positions, k 16 (Shaw)", {"positional": "relative"}),  # not in the paper
    Variant("F_prenorm", "F", "pre-norm", {"norm_first": True}),  # row F: not in the paper
    Variant("F_rope", "F", "rotary positions (RoPE)", {"positional": "rope"}),
    Variant("big", "big", "big model: N 6, d_model 1024, d_ff 4096, h 16, P_drop 0.3, 300K steps", {}, reason=(
        "the paper's big model is a different recipe (300K steps on 8 P100 GPUs), quoted for reference only")),
]}

# ------------------------------------------------------------------------------------------------ scales
_DATA = "--data corpus --data-option spec=reference:bible-de-en"


@dataclasses.dataclass(frozen=True)
class Scale:
    "A base recipe that every row changes: its model settings and the rest of the `train` command."
    name: str
    model: dict  # N, d_model, d_ff, h, dropout, label_smoothing, positional: the values rows change
    recipe: str  # the other options of `annotated-transformer train`
    device: str = "cpu"
    threads: int = 1
    avg: int = 5  # checkpoints averaged for the beam-search score (§6.1: the last 5)
    eval_limit: int | None = None  # score only the first N test sentences (None: all)
    what: str = ""


# The mini and reference recipes were recorded when dropout on the attention weights and the feed-forward hidden
# layer was always on; they keep it (--inner-dropout) so that they reproduce. The base scale has the paper's dropouts.
SCALES = {s.name: s for s in [
    Scale("mini", dict(N=2, d_model=128, d_ff=512, h=8, dropout=0.1, label_smoothing=0.1, positional="sinusoidal"),
          f"{_DATA} --data-option vocab_size=4000 --share-embeddings --inner-dropout --max-positions 256 --warmup 400 "
          "--max-tokens 2000 --steps 600 --eval-every 100 --checkpoint-every 20 --keep-last 5 --log-every 20",
          what="the CPU miniature of chapter 25: the paper's widths divided by 4, a third of its depth, "
               "600 updates of about 2,000 target tokens (about 5 minutes per run on one CPU thread, scoring included)"),
    Scale("reference", dict(N=3, d_model=256, d_ff=1024, h=4, dropout=0.1, label_smoothing=0.1,
                             positional="sinusoidal"),
          f"{_DATA} --data-option vocab_size=8000 --share-embeddings --inner-dropout --max-positions 256 --warmup 1000 "
          "--max-tokens 4000 --steps 1000 --eval-every 250 --checkpoint-every 25 --keep-last 12",
          what="the 7.6M-parameter reference recipe of chapter 9b (about an hour per run on one CPU thread)"),
    Scale("base", dict(N=6, d_model=512, d_ff=2048, h=8, dropout=0.1, label_smoothing=0.1, positional="sinusoidal"),
          f"{_DATA} --data-option vocab_size=8000 --share-embeddings --max-positions 256 --warmup 4000 "
          "--max-tokens 25000 --steps 10000 --eval-every 1000 --checkpoint-every 200 --keep-last 5",
          device="cuda", threads=0,
          what="the paper's base model on the same split, for a GPU (not run in the recorded results)"),
]}

_FLAG = {"N": "--N", "d_model": "--d-model", "d_ff": "--d-ff", "h": "--h", "dropout": "--dropout",
         "label_smoothing": "--label-smoothing", "positional": "--positional", "d_k": "--d-k"}


def settings(scale: str, variant: str) -> dict:
    "The model settings (N, d_model, d_ff, h, dropout, label_smoothing, positional) of VARIANT at SCALE."
    base = dict(SCALES[scale].model)
    return {**base, **VARIANTS[variant].flags(base)}


def duplicates(scale: str) -> dict[str, str]:
    "{variant: the earlier variant (or base) with the same settings at this scale}: rows the scale cannot tell apart."
    seen, out = {}, {}
    for name, v in VARIANTS.items():
        if v.reason:
            continue
        key = tuple(sorted(settings(scale, name).items()))
        if key in seen:
            out[name] = seen[key]
        else:
            seen[key] = name
    return out


def run_name(scale: str, variant: str, seed: int) -> str:
    return f"{scale}_{variant}_s{seed}"


def scale_on(scale: str, device: str | None = None) -> Scale:
    "SCALE's recipe, moved to DEVICE if given (one CPU thread per run there: many runs share one GPU)."
    s = SCALES[scale]
    return s if device is None or device == s.device else dataclasses.replace(s, device=device, threads=1)


def _split_files(recipe: list[str], split_dir: str | Path | None) -> list[str]:
    "The recipe reading the reference split from the files `annotated-transformer reference-split` wrote to SPLIT_DIR."
    if split_dir is None:
        return recipe
    def files(option: str) -> str:
        name = option.split(":", 1)[1]
        return "spec=tsv:" + ";".join(str(Path(split_dir) / f"{name}.{part}.tsv") for part in ("train", "dev", "test"))
    return [files(x) if x.startswith("spec=reference:") else x for x in recipe]


def train_args(scale: str, variant: str, seed: int, out: str | Path, device: str | None = None,
               split_dir: str | Path | None = None) -> list[str]:
    "The options of `annotated-transformer train` for one run."
    s = scale_on(scale, device)
    model = settings(scale, variant)
    flags = [x for key in _FLAG if key in model for x in (_FLAG[key], str(model[key]))]  # d_k: row B only
    if model.get("norm_first"):  # row F: a switch, not a value
        flags.append("--norm-first")
    return (_split_files(shlex.split(s.recipe), split_dir) + flags + ["--seed", str(seed), "--threads", str(s.threads),
                                                                     "--device", s.device, "--no-progress", "--out", str(out)])


def eval_args(scale: str, run: str | Path, beam: bool, device: str | None = None) -> list[str]:
    s = scale_on(scale, device)
    how = ["--beam", "4", "--avg", str(s.avg)] if beam else ["--greedy"]
    limit = ["--limit", str(s.eval_limit)] if s.eval_limit else []
    device = ["--device", "cuda"] if s.device.startswith("cuda") else ["--threads", str(max(s.threads, 1))]
    suffix = "beam4_avg5" if beam else "greedy"
    return ["--model", str(run), *how, *limit, *device, "--samples", "2", "--json", f"{run}.eval.{suffix}.json"]


def display(args: list[str], command: str) -> str:
    "A command as a reader types it from the repository's root (run directories under runs/table3/)."
    return shown(shlex.join(["annotated-transformer", command, *args]))


def shown(command: str) -> str:
    "A recorded command with its run directory under runs/table3/, wherever the run directory was."
    return re.sub(r"(?<=[\s=])[^\s=]*/(?=[a-z]+_[A-Za-z0-9]+(?:_[A-Za-z0-9]+)?_s\d+\b)", "runs/table3/", command)


# ------------------------------------------------------------------------------------------------ running
def _cpu_name() -> str:
    sys.path.insert(0, str(REPO / "bench"))
    from provenance import cpu_name
    return cpu_name()


def _package(command: str, args: list[str], log) -> float:
    "Run `annotated-transformer COMMAND ARGS` with this Python (the package on its path); its wall seconds."
    start = time.perf_counter()
    log.write(f"$ {shlex.join(['annotated-transformer', command, *args])}\n")
    log.flush()
    proc = subprocess.run([sys.executable, "-m", "annotated_transformer.cli", command, *args],
                          stdout=log, stderr=subprocess.STDOUT)
    if proc.returncode:
        raise RuntimeError(f"annotated-transformer {command} failed with exit status {proc.returncode}; see {log.name}")
    return time.perf_counter() - start


def _score(record: dict) -> dict:
    import re
    ratio = re.search(r"ratio = ([\d.]+)", record["bleu"]["text"])
    return {"bleu": record["bleu"]["score"], "bleu_text": record["bleu"]["text"],
            "bleu_signature": record["bleu"]["signature"], "chrf": record["chrf"]["score"],
            "chrf_signature": record["chrf"]["signature"], "length_ratio": float(ratio.group(1)) if ratio else None,
            "sentences": record["sentences"], "checkpoints": record["checkpoints"], "avg": record["avg"],
            "decoding": record["decoding"], "decode_seconds": round(record["seconds"], 1),
            "samples": record.get("samples", [])[:2]}


def count_parameters(model_config: dict) -> int:
    "Parameters of the model a run's config.json describes, counted on the built model (shared ones once)."
    import torch
    from annotated_transformer.train_config import build_model
    with torch.device("meta"):
        model = build_model(model_config)
    return sum(p.numel() for p in model.parameters())


def full_size_parameters(variant: str) -> int | None:
    "Parameters of VARIANT at the paper's size (its base model, 37,000 shared wordpieces), counted on the built model."
    v = VARIANTS[variant]
    if v.reason:
        return None
    model = settings_at_paper(variant)
    model.pop("label_smoothing")
    return count_parameters(dict(src_vocab=PAPER_VOCAB, tgt_vocab=PAPER_VOCAB, share_embeddings=True,
                                 max_positions=256, **model))


def settings_at_paper(variant: str) -> dict:
    base = dict(N=6, d_model=512, d_ff=2048, h=8, dropout=0.1, label_smoothing=0.1, positional="sinusoidal")
    return {**base, **VARIANTS[variant].flags(base)}


def run(scale: str, variant: str, seed: int, runs: Path = RUNS, results: Path = RESULTS,
        keep_checkpoints: bool = False, overwrite: bool = False, device: str | None = None,
        split_dir: str | Path | None = None) -> Path:
    "Train, score and record one run; the path of its record."
    import torch
    name = run_name(scale, variant, seed)
    dest = results / f"{name}.json"
    if dest.exists() and not overwrite:
        print(f"{dest} exists: skipped (--overwrite to run it again)")
        return dest
    out = runs / name
    runs.mkdir(parents=True, exist_ok=True)
    t_args = train_args(scale, variant, seed, out, device, split_dir) + (["--overwrite"] if out.exists() else [])
    g_args, b_args = eval_args(scale, out, False, device), eval_args(scale, out, True, device)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    changes = _uncommitted()  # taken now: the code this run imports
    with open(f"{out}.log", "w", encoding="utf-8") as log:
        seconds = {"train": _package("train", t_args, log), "eval_greedy": _package("evaluate", g_args, log),
                   "eval_beam4_avg5": _package("evaluate", b_args, log)}
    seconds["total"] = sum(seconds.values())
    config = json.loads((out / "config.json").read_text())
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]
    train = [m for m in metrics if "loss" in m]
    dev = [m for m in metrics if "dev_loss" in m]
    greedy = json.loads(Path(f"{out}.eval.greedy.json").read_text())
    beam = json.loads(Path(f"{out}.eval.beam4_avg5.json").read_text())
    s = scale_on(scale, device)
    device = _device_text(config, torch.cuda.get_device_name(0) if config["device"] != "cpu" else None)
    record = {
        "name": name, "scale": scale, "variant": variant, "row": VARIANTS[variant].row, "seed": seed,
        "paper_change": VARIANTS[variant].paper, "paper": PAPER[variant], "settings": settings(scale, variant),
        "commands": {"train": display(t_args, "train"), "eval_greedy": display(g_args, "evaluate"),
                     "eval_beam4_avg5": display(b_args, "evaluate")},
        "provenance": {"commit": config.get("code", {}).get("commit") or os.environ.get("COMMIT"), "modified": config.get("code", {}).get("modified"),
                       **({"uncommitted": changes} if changes else {}),
                       "device": device, "torch": config["torch"], "python": platform.python_version(),
                       "date": started, "wall_seconds": {k: round(v, 1) for k, v in seconds.items()}},
        "parameters": count_parameters(config["model"]),
        "train_config": config["train"], "model_config": config["model"],
        "data": {k: config["data"]["meta"].get(k) for k in ("spec", "vocab_size", "train_pairs_used", "sizes")},
        "target_tokens_per_step": round(statistics.mean(m["tgt_tokens_per_s"] / m["steps_per_s"] for m in train), 1),
        "epochs": train[-1]["epoch"],
        "train_curve": [{"step": m["step"], **{k: float(f"{m[k]:.5g}") for k in ("loss", "nll", "lr")}} for m in train],
        "dev_curve": [{"step": m["step"], "dev_nll": round(m["dev_nll"], 4), "dev_ppl": round(m["dev_ppl"], 3)}
                      for m in dev],
        "dev_ppl": dev[-1]["dev_ppl"], "dev_nll": dev[-1]["dev_nll"],
        "greedy": _score(greedy), "beam4_avg5": _score(beam),
    }
    results.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if not keep_checkpoints:
        shutil.rmtree(out / "checkpoints", ignore_errors=True)
    print(f"wrote {dest}: dev ppl {record['dev_ppl']:.2f}, greedy BLEU {record['greedy']['bleu']:.2f}, "
          f"beam 4 + avg BLEU {record['beam4_avg5']['bleu']:.2f}, {seconds['total']:.0f} s")
    return dest


def _moved(command: str, run_dir: Path) -> str:
    "COMMAND with the run directory shown as runs/recipe_choice/NAME, as a reader would type it."
    return command.replace(str(run_dir), f"runs/recipe_choice/{run_dir.name}")


def _device_text(config: dict, gpu: str | None = None) -> str:
    "How a record names the device of a run (its config.json): the CPU and its threads, or the GPU by name."
    if config["device"] == "cpu":
        return f"cpu ({_cpu_name()}), {config['threads']} thread" + ("s" if config["threads"] > 1 else "")
    return f"{config['device']} ({gpu})" if gpu else config["device"]


def recipe_candidate(run_dir: str | Path) -> dict:
    """One candidate recipe for the miniature, from a run directory that `annotated-transformer train` wrote
    (config.json, metrics.jsonl), its greedy score (RUN.greedy.json, written by `evaluate --json`) and its training
    time (RUN.train_seconds, the seconds `/usr/bin/time -f %e` printed), or from a record of `run` (a .json file):
    chapter 25's "How the recipe was chosen"."""
    run_dir = Path(run_dir)
    if run_dir.suffix == ".json":  # a record of `run` (an earlier miniature, from the repository's history)
        r = json.loads(run_dir.read_text())
        c = r["train_config"]
        return {"name": r["name"], "warmup": c["warmup"], "steps": c["steps"], "max_tokens": c["max_tokens"],
                "seed": r["seed"], "command": r["commands"]["train"], "eval_command": r["commands"]["eval_greedy"],
                "provenance": {k: r["provenance"][k] for k in ("commit", "device", "torch", "date")},
                "train_seconds": r["provenance"]["wall_seconds"]["train"],
                "dev_curve": r["dev_curve"], "greedy": r["greedy"]}
    config = json.loads((run_dir / "config.json").read_text())
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    greedy_file, seconds = Path(f"{run_dir}.greedy.json"), Path(f"{run_dir}.train_seconds")
    greedy = json.loads(greedy_file.read_text()) if greedy_file.exists() else None
    t = config["train"]
    return {"name": run_dir.name, "warmup": t["warmup"], "steps": t["steps"], "max_tokens": t["max_tokens"],
            "seed": t["seed"], "command": _moved(display(config["command"][2:], "train"), run_dir),
            "eval_command": _moved(greedy["command"], run_dir) if greedy else None,
            "provenance": {"commit": config["code"]["commit"], "device": _device_text(config),
                           "torch": config["torch"], "date": config["date"]},
            "train_seconds": float(seconds.read_text()) if seconds.exists() else None,
            "dev_curve": [{"step": m["step"], "dev_ppl": round(m["dev_ppl"], 3)} for m in metrics if "dev_ppl" in m],
            "greedy": _score(greedy) if greedy else None}


# ------------------------------------------------------------------------------------------------ collecting
ROW_ORDER = ["base", "A_h1", "A_h4", "A_h16", "A_h32", "B_dk16", "B_dk32", "C_N2", "C_N4", "C_N8", "C_d256",
             "C_d1024", "C_ff1024", "C_ff4096", "D_p0", "D_p2", "D_ls0", "D_ls2", "E_learned", "E_relative",
             "F_prenorm", "F_rope", "big"]
assert ROW_ORDER == list(VARIANTS)


def _bench(module: str):
    "A module of bench/ (not a package): its folder goes on sys.path, once."
    if str(Path(__file__).resolve().parent) not in sys.path:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
    return importlib.import_module(module)


def _uncommitted():
    "bench/provenance.py's `uncommitted`: what differs from the commit in the package and bench/, now."
    return _bench("provenance").uncommitted()


def _excluded() -> set[str]:
    "The records bench/provenance_audit.py excludes (made from changed code that the run executes)."
    return _bench("provenance_audit").excluded()


def load_records(results: Path = RESULTS, scale: str | None = None) -> list[dict]:
    """The recorded runs in RESULTS (of one scale, or all), in the table's order, then by seed; the records that
    bench/provenance_audit.py excludes are left out."""
    gone = {Path(REPO / e).resolve() for e in _excluded()}
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(Path(results).glob("*.json"))
               if p.resolve() not in gone]
    records = [r for r in records if scale is None or r["scale"] == scale]
    return sorted(records, key=lambda r: (r["scale"], ROW_ORDER.index(r["variant"]), r["seed"]))


def _mean_sd(values: list[float]) -> tuple[float, float]:
    return (statistics.mean(values), statistics.stdev(values) if len(values) > 1 else float("nan"))


def table(records: list[dict]) -> list[dict]:
    """One line per variant (the table's order, every variant of Table 3 even if not run): the paper's numbers,
    the seeds run, and the mean and sample standard deviation over seeds of dev perplexity, greedy BLEU,
    beam 4 + average BLEU and wall time, and the parameters counted."""
    lines = []
    scales = {r["scale"] for r in records}
    same = duplicates(scales.pop()) if len(scales) == 1 and next(iter({r["scale"] for r in records})) in SCALES else {}
    for name in ROW_ORDER:
        runs = [r for r in records if r["variant"] == name]
        v = VARIANTS[name]
        not_run = v.reason or ("" if runs else f"the same model as {same[name]} at this scale" if name in same else "not run")
        line = {"variant": name, "row": v.row, "change": v.paper, "paper": PAPER[name], "seeds": [r["seed"] for r in runs],
                "not_run": not_run}
        if runs:
            line["parameters"] = runs[0]["parameters"]
            line["settings"] = runs[0]["settings"]
            for key, get in (("dev_ppl", lambda r: r["dev_ppl"]), ("bleu_greedy", lambda r: r["greedy"]["bleu"]),
                             ("bleu_beam", lambda r: r["beam4_avg5"]["bleu"]),
                             ("minutes", lambda r: r["provenance"]["wall_seconds"]["total"] / 60)):
                values = [get(r) for r in runs]
                line[key] = _mean_sd(values)
                line[key + "_runs"] = values
        lines.append(line)
    return lines


def _fmt(ms, digits=1):
    if ms is None:
        return "—"
    m, s = ms
    return f"{m:.{digits}f}" + ("" if math.isnan(s) else f" ± {s:.{digits}f}")


def format_table(lines: list[dict]) -> str:
    "The table as text: the paper's numbers next to the miniature's (mean ± standard deviation over seeds)."
    head = (f"{'':4} {'paper: change':30} {'ppl':>5} {'BLEU':>5} {'M':>4} │ {'ours':16} {'seeds':6} {'params':>9} "
            f"{'dev ppl':>11} {'BLEU greedy':>11} {'BLEU beam':>11} {'minutes':>9}")
    out = [head, "─" * len(head)]
    base = next((line["settings"] for line in lines if line["variant"] == "base" and "settings" in line), {})
    short = {"d_model": "d_model", "d_ff": "d_ff", "label_smoothing": "eps_ls", "dropout": "P_drop", "positional": ""}
    for line in lines:
        p = line["paper"]
        paper_ppl = f"{p['ppl']:5.2f}" if p["ppl"] is not None else f"{'-':>5}"  # row F is not in the paper
        paper_bleu = f"{p['bleu']:5.1f}" if p["bleu"] is not None else f"{'-':>5}"
        left = (f"{line['row'] or 'base':4} {line['change'][:30]:30} {paper_ppl} {paper_bleu} "
                f"{p['params'] if p['params'] else '':>4} │ ")
        if "dev_ppl" in line:
            ours = ", ".join(f"{short.get(k, k)} {v}".strip() for k, v in line["settings"].items()
                             if base and v != base.get(k)) or (", ".join(f"{short.get(k, k)} {v}" for k, v in line["settings"].items()
                                                                if k in ("N", "d_model")) if line["variant"] == "base" else "")
            right = (f"{ours[:16]:16} {','.join(map(str, line['seeds'])):6} {line['parameters']:9,d} {_fmt(line['dev_ppl'], 1):>11} "
                     f"{_fmt(line['bleu_greedy'], 2):>11} {_fmt(line['bleu_beam'], 2):>11} {_fmt(line['minutes'], 1):>9}")
        else:
            right = "not run" + (": quoted for reference" if line["row"] == "big" else
                                 f" ({line['not_run']})" if line["not_run"] != "not run" else "")
        out.append(left + right)
    return "\n".join(out)


# the paper's direction of each change against its base: "better", "worse" or "same" (within these margins)
SAME_PPL, SAME_BLEU = 0.01, 0.2  # relative perplexity difference; BLEU points


NOT_IN_PAPER = "not in paper"  # what paper_direction says of row F


def paper_direction(variant: str, metric: str) -> str:
    "How the paper's VARIANT compares with its base on METRIC ('ppl' or 'bleu'): better, worse or same."
    a, b = PAPER[variant][metric], PAPER["base"][metric]
    if a is None:
        return NOT_IN_PAPER
    if metric == "ppl":
        if abs(a - b) / b <= SAME_PPL:
            return "same"
        return "better" if a < b else "worse"
    if abs(a - b) <= SAME_BLEU:
        return "same"
    return "better" if a > b else "worse"


def _stats():
    "bench/stats.py, the experiments' statistics helper."
    return _bench("stats")


# the three numbers of a run that the verdicts compare: (name, value of a record, lower is better)
METRICS = (("ppl", lambda r: r["dev_ppl"], True), ("bleu", lambda r: r["greedy"]["bleu"], False),
           ("bleu_beam", lambda r: r["beam4_avg5"]["bleu"], False))


def margin(metric: str, base_mean: float) -> float:
    "The paper's resolution on METRIC, in our units: 1 % of the base model's perplexity, or 0.2 BLEU."
    return SAME_PPL * base_mean if metric == "ppl" else SAME_BLEU


ANALYSES = ("block", "row")


def trends(records: list[dict], analysis: str = "block") -> list[dict]:
    """For every variant run with the base model, on dev perplexity, greedy BLEU and BLEU of beam 4 over averaged
    checkpoints: the paper's direction, the difference variant minus base with two 95 % intervals, and the verdicts
    (bench/stats.py: reproduces, contradicts, inconclusive or same; 'suggestive' after the family's adjustment).

    - 'interval' (the verdict's): the randomized-block model of the whole table (`stats.block`): value = variant +
      seed + error, one error variance for every row, seed as block (a variant and the base model of the same seed
      share the order of the batches and, where the shapes agree, the initial weights). A row with every seed of
      the base gets the mean of its paired differences; a row with one seed is judged through the same fit.
    - 'row_interval': the row's own seeds alone, paired by seed, on n - 1 degrees of freedom (a row of one seed:
      one more base run, `stats.one_run`). A check on the pooled one, not used for the verdicts.
    - 'raw_verdict': the verdict of the 95 % interval alone; 'p' its p-value (`stats.verdict_p`); 'verdict' after
      Holm's adjustment over the family (one metric, all rows of the table): a decided verdict that does not
      survive is 'suggestive'.
    With ANALYSIS "row" the verdicts use each row's own interval instead: the choice for a table whose rows have
    one seed each, where the block model's single variance would rest on the few rows with more and could not be
    checked. 'diff' and 'se' are those of 'interval'."""
    if analysis not in ANALYSES:
        raise ValueError(f"analysis must be one of {ANALYSES}, got {analysis!r}")
    S = _stats()
    base = {r["seed"]: r for r in records if r["variant"] == "base"}
    if len(base) < 2:
        return []
    rows = {name: {r["seed"]: r for r in records if r["variant"] == name} for name in ROW_ORDER[1:]}
    rows = {name: runs for name, runs in rows.items() if runs}
    out = [{"variant": name, "row": VARIANTS[name].row, "change": VARIANTS[name].paper} for name in rows]
    for metric, get, lower in METRICS:
        table = {"base": {s: get(r) for s, r in base.items()},
                 **{name: {s: get(r) for s, r in runs.items()} for name, runs in rows.items()}}
        fitted = S.block(table, "base") if analysis == "block" else {}
        b = table["base"]
        m = margin(metric, statistics.mean(b.values()))
        for line in out:
            name = line["variant"]
            v = table[name]
            paper = paper_direction(name, "ppl" if metric == "ppl" else "bleu")
            row_iv = S.paired(b, v) if len(set(b) & set(v)) >= 2 else (
                S.one_run(list(b.values()), next(iter(v.values()))) if len(v) == 1 else None)
            iv = fitted[name] if analysis == "block" else row_iv
            if iv is None:  # several seeds, none shared with the base: not a comparison this table makes
                raise ValueError(f"{name}: its seeds share none with the base's, and no block model was asked for")
            line[metric] = {"paper": paper, "margin": m, "diff": iv.mean, "se": iv.se, "interval": iv,
                            "raw_verdict": S.verdict(iv, paper, m, lower), "p": S.verdict_p(iv, paper, m, lower),
                            "row_interval": row_iv,
                            "row_verdict": S.verdict(row_iv, paper, m, lower) if row_iv else "unpaired seeds"}
        adjusted = S.adjusted_verdicts([line[metric]["raw_verdict"] for line in out], [line[metric]["p"] for line in out])
        for line, word, p_adj in zip(out, adjusted, S.holm([line[metric]["p"] for line in out])):
            line[metric].update(verdict=word, p_holm=p_adj)
    return out


def spread_checks(records: list[dict]) -> dict:
    """The block model's one assumption that the seeds can check: that every row's differences from the base
    spread alike. For each metric, over the rows paired with the base on two or more seeds: Bartlett's test of
    equal variances of their per-seed differences (scipy), and the F test of the pooled variance of the rows that
    reshape or add weights (B, C, E: their initial draws differ from the base's) against the others (A, D, F)."""
    from scipy import stats as scipy_stats
    S = _stats()
    base = {r["seed"]: r for r in records if r["variant"] == "base"}
    out = {}
    for metric, get, _ in METRICS:
        b = {s: get(r) for s, r in base.items()}
        diffs = {}
        for name in ROW_ORDER[1:]:
            v = {r["seed"]: get(r) for r in records if r["variant"] == name}
            if len(set(v) & set(b)) >= 2:
                diffs[name] = S.differences(b, v)
        groups = {g: {n: d for n, d in diffs.items() if VARIANTS[n].row in rows} for g, rows in
                  (("reshaped", "BCE"), ("same shapes", "ADF"))}
        if all(groups.values()):
            (v1, df1), (v2, df2) = (S.pooled_variance(groups[g]) for g in ("reshaped", "same shapes"))
            f = v1 / v2 if v2 > 0 else math.inf
            p_f = float(min(1.0, 2 * min(scipy_stats.f.cdf(f, df1, df2), scipy_stats.f.sf(f, df1, df2))))
        else:  # one of the two groups has no row to compare
            f = p_f = math.nan
            df1 = df2 = 0
        out[metric] = {"rows": len(diffs), **S.equal_spreads(diffs),
                       "reshaped_over_same": f, "reshaped_df": df1, "same_df": df2, "f_p": p_f}
    return out


def format_trends(lines: list[dict]) -> str:
    """The verdicts as text: dev perplexity and BLEU of beam 4 over averaged checkpoints, each difference (variant
    minus base) with its 95 % interval from the block model and the verdict after Holm's adjustment; '*' marks a
    verdict that the row's own seeds alone would not give."""
    head = (f"{'variant':10}│ {'ppl: paper':>12} {'Δ [95 % interval]':>22} {'verdict':>13} │ "
            f"{'BLEU: paper':>12} {'Δ [95 % interval]':>22} {'verdict':>13}")
    out = [head, "─" * len(head)]
    for line in lines:
        cells = []
        for metric, digits in (("ppl", 1), ("bleu_beam", 2)):
            c = line[metric]
            mark = "*" if c["row_verdict"] != c["raw_verdict"] else " "
            cells.append(f"{c['paper']:>12} {c['interval'].text(digits):>22} {c['verdict']:>12}{mark}")
        out.append(f"{line['variant']:10}│ {cells[0]} │ {cells[1]}")
    return "\n".join(out)


def plan_accounting(plan: Path, results: Path = RESULTS, scale: str = "mini") -> dict:
    """Every line of a queue's PLAN against its log (the .log beside it) and the records in RESULTS: how many runs
    were planned, started (and how often), cut or not started at a call of the queue (with the log's reason), and
    recorded in the end (a record file is the proof). Notes written into the log by hand are kept verbatim."""
    planned = [tuple(line.split()) for line in Path(plan).read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    log = Path(plan).with_suffix(".log")
    events = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    starts, cut, waited, notes = {}, [], [], []
    for line in events:
        text = line[20:] if line[:4].isdigit() else line
        m = (re.match(r"(start) (\S+) seed (\d+)$", text)
             or re.match(r"(.*?recorded|not started.*?): (\S+) seed (\d+)$", text))
        if not m:
            notes.append(line)
            continue
        what, key = m.group(1), (m.group(2), m.group(3))
        if what == "start":
            starts[key] = starts.get(key, 0) + 1
        elif what.endswith("not recorded"):
            cut.append((key, what.split(",")[0].strip()))
        elif what.startswith("not started"):
            waited.append(key)
    recorded = [key for key in planned if (Path(results) / f"{run_name(scale, key[0], int(key[1]))}.json").exists()]
    return {"plan": Path(plan).name, "log": log.exists(), "planned": len(planned), "recorded": len(recorded),
            "missing": [k for k in planned if k not in recorded], "started": sum(k in starts for k in planned),
            "started_again": sorted(k for k, n in starts.items() if n > 1), "cut": cut,
            "waited": sorted(set(waited)), "notes": notes}


# ------------------------------------------------------------------------------------------------ command line
def queue_log(args, text: str) -> None:
    "One line of the queue's log (the plan's name with .log; committed beside the plan): when, and what happened."
    line = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}"
    print(line, flush=True)
    with open(args.log or args.plan.with_suffix(".log"), "a", encoding="utf-8") as f:
        f.write(line + "\n")


def queue_parallel(args) -> None:
    """`queue --workers N --deadline S --stop-file F`: the plan's unrecorded lines, N runs at a time, each `run` in its
    own process; once F exists, the runs going finish and nothing new starts."""
    lines = [line.split() for line in args.plan.read_text().splitlines() if line.strip() and not line.startswith("#")]
    todo = [(v, int(seed)) for v, seed in lines
            if not (args.results / f"{run_name(args.scale, v, int(seed))}.json").exists() or args.overwrite]
    extra = [x for flag, value in (("--device", args.device), ("--split-dir", args.split_dir)) if value
             for x in (flag, str(value))]
    extra += (["--keep-checkpoints"] if args.keep_checkpoints else []) + (["--overwrite"] if args.overwrite else [])
    start, running = time.time(), {}
    args.runs.mkdir(parents=True, exist_ok=True)
    while todo or running:
        late = args.deadline is not None and time.time() - start > args.deadline
        stopped = args.stop_file is not None and args.stop_file.exists()  # runs going finish; nothing new starts
        while todo and not late and not stopped and len(running) < args.workers:
            variant, seed = todo.pop(0)
            cmd = [sys.executable, __file__, "run", "--scale", args.scale, "--variant", variant, "--seed", str(seed),
                   "--runs", str(args.runs), "--results", str(args.results), *extra]
            log = open(args.runs / f"{run_name(args.scale, variant, seed)}.queue.log", "w")
            running[(variant, seed)] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                                         start_new_session=True), log)
            queue_log(args, f"start {variant} seed {seed}")
        for key, (proc, log) in list(running.items()):
            if proc.poll() is not None or late:
                if proc.poll() is None:
                    os.killpg(proc.pid, 9)
                    proc.wait()
                log.close()
                del running[key]
                status = "stopped at the deadline" if late and proc.returncode == -9 else f"exit {proc.returncode}"
                recorded = (args.results / f"{run_name(args.scale, *key)}.json").exists()
                queue_log(args, f"{status}{', recorded' if recorded else ', not recorded'}: {key[0]} seed {key[1]}")
        if late or (stopped and not running):
            for variant, seed in todo:
                queue_log(args, f"not started ({'deadline' if late else f'{args.stop_file} exists'}): {variant} seed {seed}")
            break
        time.sleep(2)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="train, score and record runs")
    r.add_argument("--scale", choices=list(SCALES), default="mini")
    r.add_argument("--variant", choices=list(VARIANTS), nargs="+", required=True)
    r.add_argument("--seed", type=int, nargs="+", default=[0])
    q = sub.add_parser("queue", help="run the lines 'VARIANT SEED' of a plan file in order, re-reading it after "
                                     "each run, skipping those recorded")
    q.add_argument("--scale", choices=list(SCALES), default="mini")
    q.add_argument("--plan", type=Path, required=True)
    q.add_argument("--log", type=Path, help="append a line for every start, finish, failure and cut here "
                                            "(default: the plan file with the suffix .log)")
    q.add_argument("--stop-file", type=Path, help="stop before the next run when this file exists")
    q.add_argument("--workers", type=int, default=1, help="runs at once (each its own process; on a GPU they share it)")
    q.add_argument("--deadline", type=float, help="seconds after which nothing new starts and runs still going are "
                                                    "stopped (their logs stay; nothing is recorded for them)")
    for s in (r, q):
        s.add_argument("--device", help="run the scale's recipe on this device instead (cpu, cuda)")
        s.add_argument("--split-dir", type=Path, help="read the reference split from the files "
                                                      "`annotated-transformer reference-split --out DIR` wrote")
        s.add_argument("--runs", type=Path, default=RUNS, help="where the run directories go (default: runs/table3)")
        s.add_argument("--results", type=Path, default=RESULTS)
        s.add_argument("--keep-checkpoints", action="store_true")
        s.add_argument("--overwrite", action="store_true")
    c = sub.add_parser("recipe-choice", help="collect candidate recipes of the miniature (run directories) into one JSON")
    c.add_argument("run_dirs", type=Path, nargs="+")
    c.add_argument("--out", type=Path, required=True)
    sub.add_parser("list", help="the rows of Table 3 and each scale's settings for them")
    t = sub.add_parser("table", help="the table and the trends built from the records")
    t.add_argument("--results", type=Path, default=RESULTS)
    t.add_argument("--scale", choices=list(SCALES), default="mini")
    args = p.parse_args(argv)
    if args.command == "run":
        for variant in args.variant:
            for seed in args.seed:
                run(args.scale, variant, seed, args.runs, args.results, args.keep_checkpoints, args.overwrite,
                    args.device, args.split_dir)
    elif args.command == "queue" and (args.workers > 1 or args.deadline):
        queue_parallel(args)
    elif args.command == "queue":
        done = set()
        while True:
            if args.stop_file and args.stop_file.exists():
                queue_log(args, f"{args.stop_file} exists: stopped")
                break
            todo = [line.split() for line in args.plan.read_text().splitlines() if line.strip() and not line.startswith("#")]
            todo = [(v, int(s)) for v, s in todo if (v, int(s)) not in done
                    and not (args.results / f"{run_name(args.scale, v, int(s))}.json").exists()]
            if not todo:
                break
            variant, seed = todo[0]
            done.add((variant, seed))
            queue_log(args, f"start {variant} seed {seed}")
            try:
                run(args.scale, variant, seed, args.runs, args.results, args.keep_checkpoints, args.overwrite,
                    args.device, args.split_dir)
                queue_log(args, f"recorded: {variant} seed {seed}")
            except RuntimeError as e:
                queue_log(args, f"failed, not recorded: {variant} seed {seed}: {e}")
    elif args.command == "recipe-choice":
        found = [recipe_candidate(d) for d in args.run_dirs]
        args.out.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.out}: {len(found)} runs")
    elif args.command == "list":
        for s in SCALES.values():
            dup = duplicates(s.name)
            print(f"{s.name}: {s.what}\n  annotated-transformer train {s.recipe}")
            for name, v in VARIANTS.items():
                what = v.reason or " ".join(f"{k}={val}" for k, val in settings(s.name, name).items()
                                            if name == "base" or val != s.model.get(k))
                print(f"  {name:10} {v.paper[:40]:40} {what}" + (f"  (= {dup[name]})" if name in dup else ""))
    else:
        records = load_records(args.results, args.scale)
        print(format_table(table(records)))
        print()
        print(format_trends(trends(records)))


if __name__ == "__main__":
    main()

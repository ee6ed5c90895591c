"""The tables and figures of chapters 22 and 24's recorded runs, drawn from the results files.

Chapters 22 (Translating for real) and 24 (Five languages, two programs) show each result with one call to this module; the per-run records, their
commands and their provenance stay in the files it reads:

* results/reference_split.json: the reference split, the package and the independent loop
  (written by bench/collect_reference_split.py);
* results/bible_deen.json and results/tatoeba_zhen.json: runs on the book's own splits
  (bench/collect_translation_results.py);
* bench/results/decoding_settings_deen_s0.json: decoding settings on the dev split (bench/decoding_settings.py);
* results/multilingual/: five languages, both programs, one file per run (bench/multilingual.py), with where the
  models stop (bench/stop_analysis.py) and how often the references repeat themselves (_reference_repetition.json).

Every comparison of the five-language runs comes with its 95 % interval and test from bench/stats.py: Welch's
interval for two programs, paired by seed for a variant on the same seeds, an exact permutation test beside it, a
change in % with Fieller's interval of the ratio of the means, and for the spread over seeds an F test and a
permutation test (`gap`, `spread` and the functions that print them). The comparisons of a family (the five pairs,
per measure; the ablations) are adjusted together with Holm's method (`holm_family`); every run file is accounted
for, with the runs the deadlines stopped (`multilingual_accounting`).

bench/ is not a package: the chapter loads this file by its path (and this file bench/stats.py by its path). Nothing
here trains or decodes.

Commands are shown as a reader runs them today (`display_command`): the reference split by its corpus spec
`reference:NAME`, its files in data/reference-split/ (`annotated-transformer reference-split` writes them, byte
for byte the files the runs read), the Tatoeba pairs that come with the package as `tatoeba:`, and today's option
names. The results files keep every command exactly as it was run.
"""
from __future__ import annotations

import functools
import html
import importlib.util
import json
import math
import re
import shlex
import statistics
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results"


def load(name: str) -> dict:
    "results/NAME.json, or bench/results/NAME.json."
    for folder in (RESULTS, REPO / "bench" / "results"):
        path = folder / f"{name}.json"
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
    raise FileNotFoundError(f"no results file {name}.json in results/ or bench/results/")


# ------------------------------------------------------------------------------------------------ commands
_SPLIT_DIR = r"[^\s;\"']*?reference-split"  # wherever the split's files were: ../shared/data/..., /work/shared/...
_OPTION_NAMES = {"--layers": "--N", "--heads": "--h"}  # options renamed since (TrainConfig's field names)
_TATOEBA_DEFAULTS = ("join_cjk=true", "src_lang=zh", "tgt_lang=en")  # what spec=tatoeba: sets by itself


def display_command(command: str | list[str]) -> str:
    "A recorded command as a reader runs it today (see the module's docstring); the results files keep the original."
    text = " ".join(command) if isinstance(command, list) else command
    # a tsv: triple of one reference split's files -> the split by name
    text = re.sub(rf"tsv:{_SPLIT_DIR}/(?P<n>[\w-]+)\.train\.tsv;{_SPLIT_DIR}/(?P=n)\.dev\.tsv;"
                  rf"{_SPLIT_DIR}/(?P=n)\.test\.tsv", r"reference:\g<n>", text)
    text = re.sub(rf"{_SPLIT_DIR}/", "data/reference-split/", text)  # single files: the ones the command writes
    if re.search(r"spec=tsv:\S*cmn-eng\.txt", text):  # the Tatoeba pairs that now come with the package
        text = re.sub(r"spec=tsv:\S*cmn-eng\.txt", "spec=tatoeba:", text)
        for option in _TATOEBA_DEFAULTS:
            text = text.replace(f" --data-option {option}", "")
    text = re.sub(r"/work/main/", "", text)  # absolute paths inside the checkout
    for old, new in _OPTION_NAMES.items():
        text = re.sub(rf"(?<=\s){old}(?=\s)", new, text)
    if text.startswith("reference_loop.py"):
        text = "python bench/" + text
    if text.startswith("-c "):  # the package's train command, started through `python -c`
        text = "annotated-transformer train " + text[3:]
    return text


def _options_text(options: dict) -> str:
    return " ".join(f"--data-option {k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items())


def recipe_differences(args: str, train: dict) -> dict:
    """Where the training settings of `annotated-transformer train ARGS --seed S` differ from a recorded run's
    (`train`: its settings as recorded, S its seed), data options compared as `display_command` shows them and
    the logging interval left out: {setting: (ARGS, recorded)}. Empty: the command reproduces the run."""
    from annotated_transformer.train_command import build_parser, resolve_config
    from annotated_transformer.train_config import TrainConfig
    mine = resolve_config(build_parser().parse_args(shlex.split(args) + ["--seed", str(train["seed"])]))[0].to_dict()
    ran = TrainConfig.from_dict(train, source="a results file", warn=False).to_dict()  # a file: no warning
    for config in (mine, ran):
        config.pop("log_every")
        text = display_command(_options_text(config["data_options"]))
        config["data_options"] = dict(o.split("=", 1) for o in text.split("--data-option ")[1:] if o.strip())
        config["data_options"] = {k: v.strip() for k, v in config["data_options"].items()}
    return {k: (mine[k], ran[k]) for k in mine if mine[k] != ran[k]}


# ------------------------------------------------------------------------------------------------ numbers
def mean_sd(values: list[float]) -> tuple[float, float]:
    "Mean and sample standard deviation (0 for a single value)."
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def dev_curve(run: dict) -> dict[int, float]:
    "{update: dev perplexity} of a run of results/reference_split.json."
    return {c["step"]: c["dev_ppl"] for c in run["dev_curve"]}


def _length_ratio(bleu_text: str) -> float:
    return float(re.search(r"ratio = ([\d.]+)", bleu_text).group(1))


def _seeds(runs: list[dict]) -> list[int]:
    return [int(re.search(r"_s(\d+)$", r.get("name") or r["run"]).group(1)) for r in runs]


def _rows(runs: list[dict], program: str) -> list[dict]:
    "One row per run: seed, dev perplexity, greedy BLEU/chrF/length ratio, beam 4 + average of 5 BLEU (None for the loop)."
    rows = []
    for seed, r in zip(_seeds(runs), runs):
        if "evaluations" in r:  # the package: two evaluations per run
            g, b = r["evaluations"]["greedy"], r["evaluations"].get("beam4_avg5")
            rows.append(dict(program=program, seed=seed, ppl=r["dev_ppl"], bleu=g["bleu"]["score"],
                             chrf=g["chrf"]["score"], ratio=_length_ratio(g["bleu"]["text"]),
                             beam=b["bleu"]["score"] if b else None))
        else:  # the loop: greedy decoding only
            rows.append(dict(program=program, seed=seed, ppl=r["dev_ppl"], bleu=r["bleu"], chrf=r["chrf"],
                             ratio=_length_ratio(r["bleu_text"]), beam=None))
    return rows


def _signatures(runs: list[dict]) -> list[str]:
    found = []
    for r in runs:
        evaluations = r["evaluations"].values() if "evaluations" in r else [
            {"bleu": {"signature": r["bleu_signature"]}, "chrf": {"signature": r["chrf_signature"]}}]
        for e in evaluations:
            for metric, label in (("bleu", "BLEU"), ("chrf", "chrF")):
                line = f"{label} signature: {e[metric]['signature']}"
                if line not in found:
                    found.append(line)
    return found


def scores_table(groups: list[tuple[str, list[dict]]]) -> None:
    """Per run: dev perplexity, greedy BLEU, chrF and length ratio, BLEU of beam search (k = 4, alpha = 0.6) over
    the average of the last 5 checkpoints and its gain over greedy; then the mean and standard deviation over seeds."""
    f = lambda x, w=6: f"{x:{w}.2f}" if x is not None else f"{'-':>{w}}"
    print(f"{'program':14} {'seed':>4}  {'dev ppl':>7}  {'BLEU greedy':>11} {'chrF':>6} {'ratio':>6}  "
          f"{'BLEU beam+avg':>13} {'gain':>6}")
    all_runs = []
    for program, runs in groups:
        rows = _rows(runs, program)
        all_runs += runs
        for r in rows:
            gain = r["beam"] - r["bleu"] if r["beam"] is not None else None
            print(f"{program:14} {r['seed']:>4}  {f(r['ppl'], 7)}  {f(r['bleu'], 11)} {f(r['chrf'])} "
                  f"{f(r['ratio'])}  {f(r['beam'], 13)} {f(gain)}")
        if len(rows) > 1:
            stats = {k: mean_sd([r[k] for r in rows]) for k in ("ppl", "bleu", "chrf")}
            beams = [r["beam"] for r in rows if r["beam"] is not None]
            beam = f"{mean_sd(beams)[0]:13.2f}" if len(beams) == len(rows) else f"{'-':>13}"
            print(f"{'  mean':14} {'':>4}  {stats['ppl'][0]:7.2f}  {stats['bleu'][0]:11.2f} {stats['chrf'][0]:6.2f} "
                  f"{'':>6}  {beam}")
            print(f"{'  std. dev.':14} {'':>4}  {stats['ppl'][1]:7.2f}  {stats['bleu'][1]:11.2f} "
                  f"{stats['chrf'][1]:6.2f}")
    print("\n".join(_signatures(all_runs)))


def reference_scores(record: dict | None = None) -> None:
    "German -> English on the reference split: the independent loop and the package, per seed (test split)."
    record = record or load("reference_split")
    scores_table([("reference loop", record["reference_loop"]), ("package", record["ours"])])


def zhen_scores(record: dict | None = None) -> None:
    "Chinese -> English on the reference split: the package, per seed (test split)."
    record = record or load("reference_split")
    scores_table([("package", record["ours_zhen"])])


def plot_reference_curves(record: dict | None = None) -> None:
    "Dev perplexity against updates: the mean over seeds of each program, with a band from the lowest to the highest."
    record = record or load("reference_split")
    fig, ax = plt.subplots(figsize=(6, 2.9))
    for runs, style, label in ((record["ours"], dict(color="C0", marker="o", ls="-"), "package"),
                               (record["reference_loop"], dict(color="C1", marker="s", ls="--"), "reference loop")):
        curves = [dev_curve(r) for r in runs]
        steps = sorted(set.intersection(*(set(c) for c in curves)))
        values = np.array([[c[s] for s in steps] for c in curves])
        ax.fill_between(steps, values.min(0), values.max(0), color=style["color"], alpha=0.2, lw=0)
        ax.plot(steps, values.mean(0), ms=4, label=f"{label} ({len(runs)} seeds)", **style)
    ax.set(xlabel="update", ylabel="dev perplexity", yscale="log")
    ticks = [t for t in (10, 15, 20, 30, 40, 60, 100, 150, 200) if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
    ax.set_yticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()


# ------------------------------------------------------------------------------------------------ ablations
_PROXY_ROWS = {  # the proxy runs of results/reference_split.json's "ablation": program, embedding tables, budget
    "px_old": ("package", "Xavier", "longer side"),
    "px_initonly": ("package", "N(0, 1/d_model)", "longer side"),
    "px_ours": ("package", "N(0, 1/d_model)", "target side"),
    "px_ref": ("reference loop", "N(0, 1/d_model)", "target side"),
}


def proxy_ablation(record: dict | None = None) -> None:
    """The small proxy (2+2 layers, d_model 128, 400 updates of 2,000 target tokens): how the embedding tables are
    initialized, which side the token budget counts, target tokens per update and dev perplexity."""
    record = record or load("reference_split")
    rows = {r["run"]: r for r in record["ablation"]}
    print(f"{'program':15} {'embedding tables':17} {'budget counts':14} {'tokens/update':>13} {'dev ppl':>8}")
    for run, (program, tables, budget) in _PROXY_ROWS.items():
        r = rows[run]
        print(f"{program:15} {tables:17} {budget:14} {r['target_tokens_per_step']:13,.0f} {r['dev_ppl']:8.2f}")


_PATCHES = {  # the differences bench/ablate_model.py patches in, named for readers
    "zero_attn_bias": "attention biases start at 0",
    "final_norm": "a final LayerNorm after each stack",
    "no_generator_bias": "no bias before the softmax",
    "torch_ce": "PyTorch's label smoothing",
    "loop_tokenizer": "the loop's tokenizer",
    "loop_rebatch": "batches cut anew every epoch",
}


def _at(runs: list[dict], step: int) -> str:
    "The dev perplexities of `runs` after `step` updates: each of one or two runs, the range of more."
    values = [v for r in runs if (v := dev_curve(r).get(step)) is not None]
    if len(values) > 2:
        return f"{min(values):.2f}-{max(values):.2f}"
    return ", ".join(f"{v:.2f}" for v in values) or "-"


def full_size_ablation(record: dict | None = None) -> None:
    """The full recipe with one difference from the other program at a time: dev perplexity after 500 and 1,000
    updates (a dash: the run stopped at 500). Patched runs of the package are seed 0, paired with its unchanged run."""
    record = record or load("reference_split")
    by_variant: dict[str, list[dict]] = {}
    for r in record["full_size_ablation"]:
        by_variant.setdefault(r["variant"], []).append(r)
    of_loop = {v for v, runs in by_variant.items() if "reference_loop.py" in runs[0]["command"]}
    order = [*_PATCHES, "all", "arch"]  # single differences first, then all of them, then nn.Transformer's layers
    rank = lambda v: order.index("arch" if "arch_torch" in v else "all" if "+" in v else v)
    ours = sorted(set(by_variant) - of_loop, key=rank)
    unchanged = record["ours"]
    rows = [("package, unchanged", unchanged[:1]), ("  the same, other seeds", unchanged[1:])]
    for variant in ours:
        parts = variant.split("+")
        label = ("all four above + PyTorch's label smoothing" if {"zero_attn_bias", "final_norm"} <= set(parts)
                 else "nn.Transformer + smoothing + loop's tokenizer" if "arch_torch" in parts
                 else " + ".join(_PATCHES[p] for p in parts))
        rows.append((f"  {label}", by_variant[variant]))
    rows += [("  source up to 2x the budget (not 4x)", record["ours_source_allowance_2"]),
             ("  batches cut once (--no-rebatch)", record["ours_cut_once"]),
             ("reference loop, unchanged", record["reference_loop"])]
    rows += [(f"  {_PATCHES[v]}", by_variant[v]) for v in sorted(of_loop)]
    print(f"{'program and difference':47} {'seed':>4}  {'at 500':>12}  {'at 1,000':>12}")
    for label, runs in rows:
        seeds = _seeds(runs)
        seeds = f"{seeds[0]}-{seeds[-1]}" if len(seeds) > 2 else ", ".join(map(str, seeds))
        print(f"{label:47} {seeds:>4}  {_at(runs, 500):>12}  {_at(runs, 1000):>12}")


def decoding_settings(study: dict | None = None) -> None:
    "Greedy decoding and beam search (k = 4, alpha = 0.6 and 1.0), with the last checkpoint or the average of 5."
    study = study or load("decoding_settings_deen_s0")
    print(f"{study['split']} split, {study['sentences']} sentences")
    print(f"{'checkpoints':>11}  {'decoding':22} {'BLEU':>6} {'chrF':>6} {'BP':>6} {'ratio':>6}")
    for r in study["rows"]:
        d = r["decoding"]
        how = "greedy" if d["method"] == "greedy" else f"beam {d['beam_size']}, α = {d['length_penalty']}"
        which = "last" if r["avg"] == 1 else f"avg of {r['avg']}"
        print(f"{which:>11}  {how:22} {r['bleu']:6.2f} {r['chrf']:6.2f} {r['bp']:6.3f} {r['ratio']:6.3f}")
    print("BLEU signature:", study["bleu_signature"])


# ------------------------------------------------------------------------------------------------ reproducing
def _minutes(seconds: list[float]) -> str:
    return ", ".join(f"{s / 60:.0f}" for s in seconds)


def _range(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}" if len(values) > 1 else f"{values[0]:.2f}"


def run_times(record: dict | None = None, book_runs: tuple[str, ...] = ("bible_deen", "tatoeba_zhen")) -> None:
    """Per recorded run: its training time on one CPU thread (the time in training steps; the loop's own timer),
    how long evaluating took, and the spread of dev perplexity and greedy BLEU across its seeds."""
    record = record or load("reference_split")
    print(f"{'runs':22} {'seeds':>5}  {'training (min)':>14}  {'eval (s)':>8}  {'dev ppl':>11}  {'BLEU greedy':>11}")
    groups = [("de-en, loop", record["reference_loop"]), ("de-en, package", record["ours"]),
              ("zh-en, package", record["ours_zhen"])]
    for label, runs in groups:
        rows = _rows(runs, label)
        seconds = [r.get("train_seconds") or r["seconds_in_training_steps"] for r in runs]
        evals = [e["seconds"] for r in runs for e in r.get("evaluations", {}).values()]
        evaluation = f"{min(evals):.0f}-{max(evals):.0f}" if evals else "-"
        seeds = _seeds(runs)
        print(f"{label:22} {f'{seeds[0]}-{seeds[-1]}':>5}  {_minutes(seconds):>14}  {evaluation:>8}  "
              f"{_range([r['ppl'] for r in rows]):>11}  {_range([r['bleu'] for r in rows]):>11}")
    for name in book_runs:
        run = load(name)
        p = run["provenance"]
        evals = [e["seconds"] for e in run["evaluations"]]
        greedy = next(e for e in run["evaluations"] if e["decoding"]["method"] == "greedy")
        label = {"bible_deen": "Bible de-en, package", "tatoeba_zhen": "Tatoeba zh-en, package"}.get(name, name)
        print(f"{label:22} {run['train_config']['seed']:>5}  {_minutes([p['seconds_in_training_steps']]):>14}  "
              f"{f'{min(evals):.0f}-{max(evals):.0f}':>8}  {run['curves']['dev'][-1]['dev_ppl']:>11.2f}  "
              f"{greedy['bleu']['score']:>11.2f}")
    devices = sorted({r["device"].replace("thread(s)", "thread") for _, runs in groups for r in runs})
    print(f"device: {'; '.join(devices)}")


def _planned_steps(command: str | list[str]) -> int:
    args = shlex.split(command) if isinstance(command, str) else command
    return int(args[args.index("--steps") + 1])


def _run_row(r: dict) -> dict:
    """Seed, updates reached and planned of a training run in any of this chapter's records (None where the record
    does not keep it)."""
    if "steps_done" in r:  # the full-size ablation
        return {"seed": r["seed"], "reached": r["steps_done"], "planned": r["steps_planned"]}
    if "train_config" in r:  # the book's own splits
        return {"seed": r["train_config"]["seed"], "reached": r["curves"]["dev"][-1]["step"],
                "planned": r["train_config"]["steps"]}
    if "train_command" in r:  # the run the attention was measured on: its last checkpoint
        return {"seed": _planned_seed(r["train_command"]), "planned": _planned_steps(r["train_command"]),
                "reached": int(re.search(r"step_(\d+)\.pt", r["checkpoint"]).group(1))}
    command = r["provenance"]["command"] if "provenance" in r else r["command"]
    if "dev_curve" in r:  # the reference split's runs of the recipe
        return {"seed": _seeds([r])[0], "reached": r["dev_curve"][-1]["step"], "planned": _planned_steps(command)}
    return {"seed": _planned_seed(command), "reached": None, "planned": _planned_steps(command)}  # the proxy


def _planned_seed(command: str | list[str]) -> int | None:
    args = shlex.split(command) if isinstance(command, str) else command
    return int(args[args.index("--seed") + 1]) if "--seed" in args else None


def chapter_runs(record: dict | None = None) -> dict:
    """Every training run whose numbers chapter 22 gives, by the record that holds it: {record: [(group, runs, where
    the chapter uses them)]}."""
    record = record or load("reference_split")
    loop_anew = [r for r in record["full_size_ablation"] if "reference_loop.py" in r["command"]]
    patched = [r for r in record["full_size_ablation"] if r not in loop_anew]
    return {
        "results/reference_split.json": [
            ("German, the loop", record["reference_loop"], "comparison of the programs"),
            ("German, the package", record["ours"], "comparison; beam search, averaging"),
            ("German, package, source up to 2x the budget", record["ours_source_allowance_2"],
             "ablation; decoding study (seed 0)"),
            ("German, package, batches cut once", record["ours_cut_once"], "full-size ablation"),
            ("German, package, one difference patched in", patched, "full-size ablation"),
            ("German, loop, batches cut anew", loop_anew, "full-size ablation"),
            ("German, proxy (2+2 layers, d_model 128)", record["ablation"], "proxy ablation"),
            ("Chinese, the package", record["ours_zhen"], "Chinese to English")],
        "results/bible_deen.json": [("German, Bible split by chapters", [load("bible_deen")],
                                     "the book's own splits")],
        "results/tatoeba_zhen.json": [("Chinese, Tatoeba", [load("tatoeba_zhen")], "the book's own splits")],
        "results/attention_heads.json": [("German, no inner dropout", [load("attention_heads")],
                                          "the heads; the attention view")]}


def run_accounting(record: dict | None = None) -> None:
    """Chapter 22's training runs, by record: how many, their seeds, the updates they reached, how many stopped
    before the updates they were to train for, and where the chapter uses them."""
    groups = chapter_runs(record)
    print(f"{'record and runs':46} {'runs':>4}  {'seeds':5} {'updates':>10}  {'stopped':>7}  used for")
    total = stopped = 0
    for name, rows in groups.items():
        print(name)
        for label, runs, used in rows:
            info = [_run_row(r) for r in runs]
            seeds = sorted({i["seed"] for i in info if i["seed"] is not None})
            reached = sorted({i["reached"] if i["reached"] is not None else i["planned"] for i in info})
            early = sum(i["reached"] is not None and i["reached"] < i["planned"] for i in info)
            marks = "*" if any(i["reached"] is None for i in info) else ""
            total, stopped = total + len(runs), stopped + early
            print(f"  {label:44} {len(runs):>4}  {_seed_list(seeds) if seeds else '-':5} "
                  f"{', '.join(f'{x:,}' for x in reached) + marks:>10}  {early:>7}  {used}")
    print(f"{total} runs, each shown in a table or figure above; {stopped} stopped before the updates they were to "
          f"train for.\n*: planned; the proxy's records keep the last dev perplexity, not the update it came at.")


class Details:
    "A collapsed box: HTML <details> in Jupyter and on the website, plain text elsewhere."

    def __init__(self, summary: str, text: str, wrap: bool = False):
        self.summary, self.text, self.wrap = summary, text, wrap  # wrap: long lines wrap instead of scrolling

    def _repr_html_(self) -> str:
        style = "white-space: pre-wrap" if self.wrap else "overflow-x: auto; white-space: pre"
        return (f'<details class="results-details"><summary>{html.escape(self.summary)}</summary>'
                f'<pre style="{style}">{html.escape(self.text)}</pre></details>')

    def __repr__(self) -> str:
        return f"{self.summary}\n{self.text}"


_NOTE = ("Commands as a reader runs them today: the reference split by its corpus spec (reference:NAME), or its "
         "files in\ndata/reference-split/, which `annotated-transformer reference-split` writes identical, byte for "
         "byte, to the\nfiles the runs read; the Tatoeba pairs that come with the package as tatoeba:; today's option "
         "names.\nThe results files keep every command as it was run, with its commit, device and date.")


def provenance(record: dict | None = None, book_runs: tuple[str, ...] = ("bible_deen", "tatoeba_zhen")) -> Details:
    "Command, commit, device and date of every recorded run of the chapter, in a collapsed box."
    record = record or load("reference_split")
    lines = [_NOTE, "", "Reference split (results/reference_split.json)"]
    for r in record["reference_loop"]:
        p = r["provenance"]
        lines += [f"\n{r['name']}: {display_command(p['command'])}",
                  f"  commit {p['commit']}; {r['device']}; torch {p['torch']}; {p['date']}; "
                  f"{r['train_seconds'] / 60:.0f} min of training"]
        lines += [f"  note: {p['note']}"] if p.get("note") else []
    for section in ("ours", "ours_zhen", "ours_source_allowance_2", "ours_cut_once"):
        for r in record.get(section, []):
            lines += [f"\n{r['name']} ({section}): {display_command(r['command'])}",
                      f"  commit {r.get('commit') or 'not recorded'}; {r['device']}; torch {r['torch']}; "
                      f"started {r['date']}; {r['seconds_in_training_steps'] / 60:.0f} min in training steps"]
            lines += [f"  note: {r[k]}" for k in ("note", "differs") if r.get(k)]
            lines += [f"  {display_command(e['command'])}  ({e['seconds']:.0f} s)" for e in r["evaluations"].values()]
    for r in record.get("full_size_ablation", []):
        lines += [f"\n{r['run']} (full_size_ablation): {display_command(r['command'])}",
                  f"  commit {r['commit']}; {r['device']}; {r['date']}; {r['steps_done']} of {r['steps_planned']} "
                  f"updates" + (f"; {r['note']}" if r.get("note") else "")]
    for r in record.get("ablation", []):
        lines += [f"\n{r['run']} (ablation): {display_command(r['command'])}", f"  code {r['code']}; {r['date']}"]
    study = load("decoding_settings_deen_s0")
    lines += ["", "Decoding settings (bench/results/decoding_settings_deen_s0.json)",
              f"{display_command(study['command'])}\n  {study['device']}; torch {study['torch']}; {study['date']}"]
    lines += ["", "The book's own splits (results/bible_deen.json, results/tatoeba_zhen.json)"]
    for name in book_runs:
        run = load(name)
        p = run["provenance"]
        lines += [f"\n{name}: {display_command(p['command'])}",
                  f"  commit {p.get('commit')}; {p['device']}, {p['threads']} thread; torch {p['torch']}; started "
                  f"{p.get('start_utc')}; {p['seconds_in_training_steps'] / 60:.0f} min in training steps"]
        lines += [f"  {display_command(e['command'])}  ({e['seconds']:.0f} s)" for e in run["evaluations"]]
    return Details("How these numbers were made", "\n".join(lines))


# ------------------------------------------------------------------------------------------------ the book's splits
def book_scores(runs: list[dict]) -> None:
    "Per run and decoding: dev perplexity, test BLEU and chrF, BLEU's brevity penalty and length ratio."
    print(f"{'run':26} {'dev ppl':>7}  {'decoding':16} {'BLEU':>6} {'chrF':>6} {'BP':>5} {'ratio':>5}")
    signatures = []
    for run in runs:
        dev = run["curves"]["dev"][-1]
        for e in run["evaluations"]:
            m = re.search(r"BP = ([\d.]+) ratio = ([\d.]+)", e["bleu"]["text"])
            how = "greedy" if e["decoding"]["method"] == "greedy" else f"beam {e['decoding']['beam_size']} + avg {e['avg']}"
            print(f"{run['label']:26} {dev['dev_ppl']:7.2f}  {how:16} {e['bleu']['score']:6.2f} "
                  f"{e['chrf']['score']:6.2f} {float(m.group(1)):5.2f} {float(m.group(2)):5.2f}")
            signatures += [s for s in (f"BLEU signature: {e['bleu']['signature']}",
                                       f"chrF signature: {e['chrf']['signature']}") if s not in signatures]
    print("\n".join(signatures))


def samples(run: dict) -> Details:
    "Source, reference and each decoding's translation of the sample sentences, in a collapsed box."
    evaluations = {("greedy" if e["decoding"]["method"] == "greedy" else "beam+avg"): {s["index"]: s for s in e["samples"]}
                   for e in run["evaluations"]}
    first = next(iter(evaluations.values()))
    lines = []
    for index in first:
        lines += [f"source:    {first[index]['source']}", f"reference: {first[index]['reference']}"]
        lines += [f"{how + ':':11} {s[index]['hypothesis']}" for how, s in evaluations.items()]
        lines.append("")
    return Details(f"Sample translations, {run['label']}", "\n".join(lines).rstrip(), wrap=True)


# Chinese labels need a font with Chinese characters: matplotlib falls back to the first one installed, if any
# (tools/install.sh installs WenQuanYi Micro Hei on Debian)
CJK_FONTS = ["WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Microsoft YaHei",
             "PingFang SC", "SimHei", "Arial Unicode MS"]


def plot_cross_attention(runs: list[dict]) -> None:
    """The recorded encoder-decoder attention of one test sentence per run, side by side: the weights of the last
    layer, mean over the heads, one scale from 0 to 1 (rows: target pieces as queries; columns: source pieces)."""
    from matplotlib import font_manager
    for run in runs:
        att = run["attention"]
        print(f"{att['source']}  ->  {att['translation']}  (reference: {att['reference']})")
    installed = {f.name for f in font_manager.fontManager.ttflist}
    family = ["DejaVu Sans"] + [f for f in CJK_FONTS if f in installed][:1]
    with plt.rc_context({"font.family": family}):
        fig, axes = plt.subplots(1, len(runs), figsize=(4.6 * len(runs), 3.5))
        for ax, run in zip(np.atleast_1d(axes), runs):
            att = run["attention"]
            src, tgt = att["src_tokens"], att["tgt_tokens"]
            image = ax.imshow(np.array(att["cross"]), cmap="viridis", vmin=0, vmax=1, aspect="auto")
            ax.set_xticks(range(len(src)), src, rotation=90, fontsize=8)
            ax.set_yticks(range(len(tgt)), tgt, fontsize=8)
            ax.set_xlabel("source piece (key)", fontsize=8)
        np.atleast_1d(axes)[0].set_ylabel("translation piece (query)", fontsize=8)
        fig.tight_layout()
        fig.colorbar(image, ax=axes, fraction=0.03, pad=0.02, label="attention weight")
        plt.show()


# ------------------------------------------------------------------------------------------------ every language
PAIR_ORDER = ("de-en", "fr-en", "it-en", "ru-en", "zh-en")
PAIR_NAMES = {"de-en": "German", "fr-en": "French", "it-en": "Italian", "ru-en": "Russian", "zh-en": "Chinese"}


def load_multilingual(folder: str | Path = RESULTS / "multilingual") -> list[dict]:
    "The runs of bench/multilingual.py whose training reached its last update (dev perplexity at 1,000)."
    runs = []
    for path in sorted(Path(folder).glob("*.json")):
        if path.name.startswith("_"):
            continue
        r = json.loads(path.read_text(encoding="utf-8"))
        if r.get("dev_curve") and r["dev_curve"][-1]["step"] == r["steps"]:
            runs.append(r)
    return runs


TIERS = {  # tier of bench/multilingual.py's plan: (what it added, added after earlier results had been seen)
    1: ("seed 0 of both programs on every pair", False),
    2: ("seed 1 of both on every pair", False),
    3: ("ablations on Italian and Russian; their third seeds", False),
    4: ("the ablations' third seeds", False),
    5: ("German, where the package trailed: two more seeds of both, three ablations", True),
    6: ("one more seed of both on the four Bible pairs", True),
    7: ("where the models stop: three more seeds of both on Russian and Chinese", True),
    8: ("Chinese: the ablations, two more seeds of both", True),
    9: ("three more seeds of both on Russian and Chinese", True),
    10: ("Russian: five more seeds of both and of the package made like the loop", True),
    11: ("Russian: tier 10's seeds of both, trained for 2,000 updates", True),
}


def _planned_evaluations(run: dict) -> set[str]:
    "The test evaluations a run of bench/multilingual.py was to record: the loop scores greedy decoding itself."
    if run["variant"].startswith("loop"):
        return {"greedy"}
    return {True: {"greedy", "fixed", "tuned"}, "greedy": {"greedy"}}.get(run["evaluate"], set())


def multilingual_accounting(folder: str | Path = RESULTS / "multilingual") -> dict:
    """Every run of the five-language benchmark, from the files bench/multilingual.py wrote: {'runs': one row per
    run file (name, tier, status, 'trained': reached its last update, 'used': kept by `load_multilingual`,
    'planned' and 'recorded' test evaluations), 'not_started': the runs each call's _summary_call*.json lists as
    never started, 'calls': {call: the runs it finished}, 'planned': {tier: runs in bench/multilingual.py's plan}}. A run still going at a call's deadline was stopped and
    recorded as such: in training, it is left out of every table; in evaluation, it keeps what it finished."""
    folder = Path(folder)
    runs = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("_"):
            continue
        r = json.loads(path.read_text(encoding="utf-8"))
        trained = bool(r.get("dev_curve")) and r["dev_curve"][-1]["step"] == r["steps"]
        runs.append({"name": r["name"], "tier": r["tier"], "status": r["status"], "trained": trained,
                     "used": trained, "planned": _planned_evaluations(r),
                     "recorded": set(r.get("evaluations", {}))})
    calls, not_started = {}, []
    for path in sorted(folder.glob("_summary_call*.json"), key=lambda p: int(re.search(r"(\d+)", p.name).group(1))):
        summary = json.loads(path.read_text(encoding="utf-8"))
        calls[int(re.search(r"(\d+)", path.name).group(1))] = summary["finished"]
        not_started += summary["not_started"]
    planned = {}
    for r in _plan():
        planned[r["tier"]] = planned.get(r["tier"], 0) + 1
    return {"runs": runs, "not_started": not_started, "calls": calls, "planned": planned}


def multilingual_runs(folder: str | Path = RESULTS / "multilingual") -> None:
    """Every run of the plan, by tier: how many were planned, never started, written to a file, stopped at a call's
    deadline in training (left out) or in evaluation (test scores lost), trained to the end and used, and whether
    the tier was added after earlier results had been seen."""
    a = multilingual_accounting(folder)
    tier_in_plan = {r["name"]: r["tier"] for r in _plan()}
    print(f"{'':33}stopped at the deadline")
    print(f"{'tier':>4} {'planned':>7} {'never started':>13} {'files':>5}  {'in training':>11} {'in evaluation':>13} "
          f"{'used':>4}  {'late':>4}  what the tier added")
    def row(label, rows, planned, never, late=""):
        train = sum("deadline (train)" in r["status"] for r in rows)
        evaluation = sum("deadline (evaluate)" in r["status"] for r in rows)
        return (f"{label:>4} {planned:>7} {never:>13} {len(rows):>5}  {train:>11} {evaluation:>13} "
                f"{sum(r['used'] for r in rows):>4}  {late:>4}")
    for tier, (what, late) in TIERS.items():
        rows = [r for r in a["runs"] if r["tier"] == tier]
        never = sum(tier_in_plan[name] == tier for name in a["not_started"])
        print(row(str(tier), rows, a["planned"][tier], never, "yes" if late else "no") + f"  {what}")
    print(row("all", a["runs"], sum(a["planned"].values()), len(a["not_started"])))
    print("late: the tier was added after earlier results had been seen. Never started (the first call's deadline came\n"
          f"first): {', '.join(a['not_started'])}.")
    stopped = [r["name"] for r in a["runs"] if not r["trained"]]
    print(f"Stopped in training, left out of every table: {', '.join(stopped)}.")
    lost = [r for r in a["runs"] if r["trained"] and r["planned"] - r["recorded"]]
    print("Stopped in evaluation, test scores lost (tuned: the dev-tuned decoding; fixed: beam 4 + average of 5): "
          + "; ".join(f"{r['name']} ({', '.join(sorted(r['planned'] - r['recorded']))})" for r in lost) + ".")
    unplanned = [r["name"] for r in a["runs"] if r["trained"] and not r["planned"]]
    print(f"Trained to the end, no test evaluation planned ({len(unplanned)}): {', '.join(unplanned)}.")


def multilingual_history(path: str | Path = RESULTS / "multilingual" / "_history.json") -> dict:
    """What git's history says of the commits the five-language records name (`bench/multilingual.py history`):
    prints, call by call, the tiers and runs, the commit and how long before the call it was made, the files the
    runs execute that changed since the call before, and those changed by the commits of the hour after the call.
    Returns the record."""
    rec = json.loads(Path(path).read_text(encoding="utf-8"))
    def files(label: str, names: list[str]) -> None:
        text = ", ".join(f.removeprefix("annotated_transformer/") for f in names) or "none"
        print(textwrap.fill(text, 110, initial_indent=f"  {label:35} ", subsequent_indent=" " * 38))
    tiers = lambda t: f"tier {t[0]}" if len(t) == 1 else f"tiers {t[0]}-{t[-1]}"
    for c in rec["calls"]:
        print(f"call {c['call']} ({tiers(c['tiers'])}, {c['runs']} runs): commit {c['commit']}, "
              f"{'in' if c['in_history'] else 'NOT in'} the book's history, made {c['seconds_from_commit_to_start']} s "
              f"before the call started")
        if c["call"] > 1:
            files("changed since the call before:", c["changed_since_previous_call"])
        files("changed in the hour after the call:", c["changed_in_the_hour_after"])
    print(textwrap.fill(f"Files: those the runs execute (the package's modules, {', '.join(rec['executed'][1:])}); "
                        f"from {Path(path).name}, written by `{rec['command']}`.", 110))
    return rec


@functools.lru_cache(maxsize=None)
def _plan_module():
    spec = importlib.util.spec_from_file_location("multilingual", Path(__file__).resolve().parent / "multilingual.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plan() -> list[dict]:
    "bench/multilingual.py's plan: every run, with its tier, in the order they start."
    return _plan_module().plan()


def _greedy(run: dict) -> tuple[float, float, float] | None:
    "Greedy test BLEU, brevity penalty and length ratio of a run (the loop's own decoding, or `evaluate --greedy`)."
    g = run.get("evaluations", {}).get("greedy")
    if g is None:
        return None
    if "bleu_text" in g:  # the loop
        bp, ratio = re.search(r"BP = ([\d.]+) ratio = ([\d.]+)", g["bleu_text"]).groups()
        return g["bleu"], float(bp), float(ratio)
    return g["bleu"]["score"], g["length"]["bp"], g["length"]["ratio"]


def _bleu(run: dict, how: str) -> float | None:
    e = run.get("evaluations", {}).get(how)
    return None if e is None else e["bleu"]["score"]


def multilingual_summary(runs: list[dict] | None = None) -> dict:
    """Per pair and variant: the seeds, dev perplexities (the last, and the curve), greedy (BLEU, BP, ratio), fixed
    and tuned BLEU, the decoding `evaluate --tune` chose, and what bench/stop_analysis.py measured; the means over
    seeds."""
    runs = load_multilingual() if runs is None else runs
    out: dict = {}
    for r in sorted(runs, key=lambda r: r["seed"]):
        variant = r["variant"] if r["steps"] == 1000 else f"{r['variant']}_{r['steps']}steps"  # kept apart
        cell = out.setdefault(r["pair"], {}).setdefault(variant, {"seeds": [], "ppl": [], "greedy": {},
                                                                        "fixed": {}, "tuned": {}, "chosen": {},
                                                                        "stops": {}, "curves": {}})
        cell["seeds"].append(r["seed"])
        cell["ppl"].append(r["dev_curve"][-1]["dev_ppl"])
        cell["curves"][r["seed"]] = dev_curve(r)
        if (g := _greedy(r)) is not None:
            cell["greedy"][r["seed"]] = g
        for how in ("fixed", "tuned"):
            if (b := _bleu(r, how)) is not None:
                cell[how][r["seed"]] = b
        if (t := r.get("evaluations", {}).get("tuned")) is not None:
            cell["chosen"][r["seed"]] = t["tuned_on_dev"]["chosen"]
        if "stops" in r:
            cell["stops"][r["seed"]] = r["stops"]
    for pair in out.values():
        for cell in pair.values():
            cell["ppl_mean"], cell["ppl_sd"] = mean_sd(cell["ppl"])
            if cell["greedy"]:
                cell["ratio_mean"], cell["ratio_sd"] = mean_sd([g[2] for g in cell["greedy"].values()])
                cell["bleu_mean"], cell["bleu_sd"] = mean_sd([g[0] for g in cell["greedy"].values()])
                cell["bp_mean"] = statistics.mean(g[1] for g in cell["greedy"].values())
    return out


def _per_seed(values: list[float], digits: int = 2) -> str:
    return ", ".join(f"{x:.{digits}f}" for x in values)


def multilingual_perplexity(summary: dict | None = None) -> None:
    "Both programs on every pair: dev perplexity after 1,000 updates per seed, the mean, the package against the loop."
    s = multilingual_summary() if summary is None else summary
    width = max(len(_per_seed(s[p][prog]["ppl"])) for p in PAIR_ORDER for prog in ("loop", "package"))
    print(f"{'pair':9} {'program':8} {'seeds':>5}  {'dev ppl per seed':{width}} {'mean':>6} {'vs loop':>8}")
    for pair in PAIR_ORDER:
        loop = s[pair]["loop"]["ppl_mean"]
        for program in ("loop", "package"):
            c = s[pair][program]
            gap = "" if program == "loop" else f"{(c['ppl_mean'] / loop - 1):+.1%}"
            print(f"{PAIR_NAMES[pair] if program == 'loop' else '':9} {program:8} {len(c['seeds']):>5}  "
                  f"{_per_seed(c['ppl']):{width}} {c['ppl_mean']:6.2f} {gap:>8}")


def multilingual_length(summary: dict | None = None) -> None:
    """Greedy decoding of the last checkpoint: test BLEU (mean and standard deviation over seeds), its brevity
    penalty (mean), and the output's length ratio per seed, with its mean and standard deviation and the mean's
    t-based 95 % interval."""
    s = multilingual_summary() if summary is None else summary
    width = max(len(_per_seed([g[2] for g in s[p][prog]["greedy"].values()]))
                for p in PAIR_ORDER for prog in ("loop", "package"))
    print(f"{'pair':9} {'program':8} {'seeds':>5} {'BLEU':>11} {'BP':>5}  {'length ratio per seed':{width}} "
          f"{'mean ± sd':>11}  {'mean [95 %]':>16}")
    for pair in PAIR_ORDER:
        for program in ("loop", "package"):
            c = s[pair][program]
            ratios = _per_seed([c["greedy"][k][2] for k in sorted(c["greedy"])])
            mean, low, high = mean_interval(measure_values(c, "ratio"))
            print(f"{PAIR_NAMES[pair] if program == 'loop' else '':9} {program:8} {len(c['greedy']):>5} "
                  f"{c['bleu_mean']:5.1f} ± {c['bleu_sd']:3.1f} {c['bp_mean']:5.2f}  {ratios:{width}} "
                  f"{c['ratio_mean']:5.2f} ± {c['ratio_sd']:3.2f}  {mean:.2f} [{low:.2f}, {high:.2f}]")


# ------------------------------------------------------------------------------------------------ intervals
# Every comparison of the five-language runs with its 95 % interval, from bench/stats.py (loaded by its path: bench/
# is not a package). Two programs' runs are independent samples (Welch); a variant's runs on the seeds of the
# unchanged program's are paired by seed where the chapter says so.
def _stats():
    "bench/stats.py, the experiments' statistics helper: bench/ is not a package, so its folder goes on sys.path."
    import sys
    if str(Path(__file__).resolve().parent) not in sys.path:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
    import stats
    return stats


MEASURES = {  # measure: (what it is, lower is better: True, False, or None where neither way is better)
    "ppl": ("dev perplexity after 1,000 updates", True),
    "bleu": ("greedy test BLEU", False),
    "ratio": ("greedy length ratio (test)", None),
}


def measure_values(cell: dict, measure: str) -> list[float]:
    "A summary cell's values of MEASURE ('ppl', 'bleu' or 'ratio'), in the order of the seeds."
    if measure == "ppl":
        return [p for _, p in sorted(zip(cell["seeds"], cell["ppl"]))]
    column = {"bleu": 0, "ratio": 2}[measure]
    return [cell["greedy"][k][column] for k in sorted(cell["greedy"])]


EXACT_LIMIT = 200_000  # the most splits an exact permutation test goes through (ten runs against ten: 184,756)


@functools.lru_cache(maxsize=None)
def _exact_p(base: tuple[float, ...], other: tuple[float, ...]) -> float | None:
    if math.comb(len(base) + len(other), len(base)) > EXACT_LIMIT:
        return None
    return _stats().permutation_p(list(base), list(other), paired_samples=False)


def _direction(interval, lower_is_better: bool | None) -> str:
    "'better', 'worse' (or 'longer', 'shorter') where the interval excludes zero, else 'inconclusive'."
    if lower_is_better is None:
        return "inconclusive" if not interval.excludes_zero() else ("longer" if interval.low > 0 else "shorter")
    return _stats().verdict(interval, "not in paper", 0.0, lower_is_better)


def gap(base: list[float], other: list[float], lower_is_better: bool | None = True) -> dict:
    """OTHER minus BASE, two independent sets of runs: Welch's 95 % interval of the difference (for a single OTHER
    run, the interval of one more BASE run, `one_run`); `pct`, the change in % of BASE's mean, mean(OTHER) /
    mean(BASE) - 1 with Fieller's 95 % interval (`stats.ratio`: it counts the uncertainty of BASE's mean too, so it
    is not symmetric; an end is None where the interval is unbounded); the t test's p; the exact permutation
    test's p over every split of the runs (None for a single run, or more than EXACT_LIMIT splits); and the verdict:
    'better' or 'worse' where the interval of the difference excludes zero (for a length ratio 'longer' or
    'shorter'), otherwise 'inconclusive', never agreement. `excluded`: the largest deficit of OTHER that Fieller's
    interval leaves, in %: a deficit larger than that is excluded (0: OTHER is better; inf: the interval is
    unbounded and excludes nothing)."""
    S = _stats()
    interval = S.welch(base, other) if len(other) >= 2 else S.one_run(base, other[0])
    ratio = S.ratio(base, other)
    pct = ratio.pct()
    exact = _exact_p(tuple(base), tuple(other)) if len(other) >= 2 else None
    worst = pct[2] if lower_is_better else None if pct[1] is None else -pct[1]
    excluded = None if lower_is_better is None else math.inf if worst is None else max(0.0, worst)
    return {"n": (len(base), len(other)), "means": (statistics.mean(base), statistics.mean(other)),
            "interval": interval, "ratio": ratio, "pct": pct, "p": interval.p, "exact_p": exact,
            "verdict": _direction(interval, lower_is_better), "excluded": excluded}


def family_p(g: dict) -> tuple[float, str]:
    """The p-value of `gap` G that its family's Holm adjustment uses, and the test's name: the exact permutation
    test's (every split of the runs) where it ran, otherwise the t test's ('welch' where there are too many
    splits to go through, 'one run' for a single run). The rule is fixed for every family of the chapter."""
    return (g["exact_p"], "exact") if g["exact_p"] is not None else (g["p"], g["interval"].kind)


def holm_family(gaps: dict) -> dict:
    """A family of `gap`s ({key: gap}) adjusted together: {key: {'p': the family's p-value (`family_p`), 'test',
    'holm': Holm's adjusted p (`stats.holm`), 'verdict': the gap's verdict where Holm keeps it (adjusted p <= 0.05),
    'suggestive' where the interval decided it but Holm does not keep it, else 'inconclusive'}}. With m tests and
    no true difference, about m x 0.05 verdicts would be false unadjusted; Holm keeps the chance of any false one
    at 5 %."""
    tests = holm_tests({k: (family_p(g)[0], g["verdict"]) for k, g in gaps.items()})
    return {k: {"p": f["p"], "test": family_p(gaps[k])[1], "holm": f["holm"], "verdict": f["verdict"]}
            for k, f in tests.items()}


def holm_tests(tests: dict) -> dict:
    """A family of tests {key: (p, verdict)} adjusted together: {key: {'p', 'holm': Holm's adjusted p, 'verdict':
    the verdict where Holm keeps it (adjusted p <= 0.05), 'suggestive' where it was decided ('inconclusive' is the
    one word that is not) but Holm does not keep it, else 'inconclusive'}}."""
    S = _stats()
    keys = list(tests)
    ps = [float(tests[k][0]) for k in keys]
    words = [tests[k][1] for k in keys]
    # stats.adjusted_verdicts knows 'better' and 'worse'; any other decided word ('longer', 'steadier', 'down') is
    # decided just the same
    kept = S.adjusted_verdicts(["inconclusive" if w == "inconclusive" else "better" for w in words], ps)
    return {k: {"p": p, "holm": h, "verdict": "suggestive" if w2 == "suggestive" else w}
            for k, p, h, w, w2 in zip(keys, ps, S.holm(ps), words, kept)}


def multilingual_gaps(summary: dict | None = None, measure: str = "ppl") -> dict:
    "{pair: `gap` of the package minus the loop} in MEASURE ('ppl', 'bleu' or 'ratio')."
    s = multilingual_summary() if summary is None else summary
    lower = MEASURES[measure][1]
    return {pair: gap(measure_values(s[pair]["loop"], measure), measure_values(s[pair]["package"], measure), lower)
            for pair in PAIR_ORDER}


def _p_text(p: float | None) -> str:
    if p is None:
        return "-"
    if p < 0.0001:
        return "<0.0001"
    return f"{p:.4f}" if p < 0.001 else f"{p:.3f}" if p < 0.1 else f"{p:.2f}"


def _pct_text(pct: tuple[float, float | None, float | None], digits: int = 1) -> str:
    "'+1.2 % [-3.9, +6.4]'; an unbounded end of Fieller's interval is '-inf' or '+inf'; no '-0.0'."
    f = lambda x, inf: inf if x is None else _stats().signed(x, digits)
    return f"{f(pct[0], '')} % [{f(pct[1], '-inf')}, {f(pct[2], '+inf')}]"


def _n_text(n: tuple[int, int]) -> str:
    "'14 / 14', '5 / 3': the runs on each side, 7 characters."
    return f"{n[0]:>3} / {n[1]:<2}"


def _verdict_text(verdict: str, who: str = "package") -> str:
    return verdict if verdict in ("inconclusive", "suggestive") else f"{who} {verdict}"


def multilingual_comparison(summary: dict | None = None, measures: tuple[str, ...] = ("ppl", "bleu", "ratio")) -> None:
    """The package minus the loop on every pair, for each of MEASURES: the two means, the difference with Welch's 95 %
    interval, the change in % of the loop's mean with Fieller's 95 % interval, the t test's p, the exact permutation
    test's p, Holm's adjusted p over the five pairs (one family per measure, `holm_family`), and the verdict."""
    s = multilingual_summary() if summary is None else summary
    print("Package minus loop: Welch's 95 % interval of the difference of the means; in % of the loop's mean:\n"
          "Fieller's 95 % interval of the ratio of the means (it counts the uncertainty of the loop's mean too).\n"
          "exact p: permutation test over every split of the runs into two groups of their sizes (-: more than\n"
          "200,000 splits). Holm p: each measure's five pairs are one family, adjusted with Holm's method; the\n"
          "family uses the exact p, Welch's p where there is none. Verdict: better or worse only where the interval\n"
          "excludes zero and Holm p <= 0.05; suggestive where the interval excludes zero but Holm p > 0.05;\n"
          "otherwise inconclusive. With five tests and no true difference, 5 x 0.05 = 0.25 false verdicts are\n"
          "expected unadjusted. Every pair has seeds added after earlier results had been seen: the p-values are\n"
          "nominal. Fieller's end on the package's worse side bounds its deficit: a larger one is excluded.")
    for measure in measures:
        name, lower = MEASURES[measure]
        better = "1 is the references' length" if lower is None else f"{'lower' if lower else 'higher'} is better"
        print(f"\n{name} ({better})")
        print(f"{'pair':9} {'seeds':^7} {'loop':>6} {'package':>7}  {'difference [95 %]':21} "
              f"{'in % of loop [95 %]':23} {'Welch p':>7} {'exact p':>7} {'Holm p':>7}  verdict")
        gaps = multilingual_gaps(s, measure)
        family = holm_family(gaps)
        for pair, g in gaps.items():
            iv, f = g["interval"], family[pair]
            print(f"{PAIR_NAMES[pair]:9} {_n_text(g['n'])} {g['means'][0]:6.2f} {g['means'][1]:7.2f}  "
                  f"{iv.text(2):21} {_pct_text(g['pct']):23} {_p_text(g['p']):>7} {_p_text(g['exact_p']):>7} "
                  f"{_p_text(f['holm']):>7}  {_verdict_text(f['verdict'])}")


def spread_permutation_p(a: list[float], b: list[float], draws: int = 20_000, seed: int = 0) -> float:
    """Two-sided p-value of the ratio of the two standard deviations (the larger over the smaller) under random
    relabellings of the values, each centred on its own sample's mean first so that only the spreads differ: DRAWS
    relabellings from numpy's generator with SEED. Approximate (the centring costs a little exchangeability), but it
    does not assume normal values, as the F test does."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    pooled = np.concatenate([a - a.mean(), b - b.mean()])
    ratio = lambda x, y: np.maximum(x.std(axis=-1, ddof=1) / y.std(axis=-1, ddof=1),
                                    y.std(axis=-1, ddof=1) / x.std(axis=-1, ddof=1))
    observed = float(ratio(a - a.mean(), b - b.mean()))
    shuffled = np.random.default_rng(seed).permuted(np.tile(pooled, (draws, 1)), axis=1)
    stats_ = ratio(shuffled[:, :len(a)], shuffled[:, len(a):])
    return float(np.mean(stats_ >= observed * (1 - 1e-12)))


def spread(base: list[float], other: list[float], draws: int = 20_000) -> dict:
    """Is one set of runs steadier than the other? The two standard deviations, their ratio BASE / OTHER, the F
    test's p (`variance_ratio`) and the permutation test's (`spread_permutation_p`). Verdict: 'steadier' (OTHER's
    spread the narrower) or 'less steady' only where both tests give p < 0.05, otherwise 'inconclusive'."""
    sd_base, sd_other = statistics.stdev(base), statistics.stdev(other)
    f_p = _stats().variance_ratio(base, other)[1]
    perm_p = spread_permutation_p(base, other, draws)
    verdict = "inconclusive" if max(f_p, perm_p) >= 0.05 else "steadier" if sd_other < sd_base else "less steady"
    return {"n": (len(base), len(other)), "sd": (sd_base, sd_other), "sd_ratio": sd_base / sd_other, "f_p": f_p,
            "perm_p": perm_p, "verdict": verdict}


def multilingual_spreads(summary: dict | None = None, measure: str = "ppl") -> dict:
    "{pair: `spread` of the loop's runs against the package's} in MEASURE."
    s = multilingual_summary() if summary is None else summary
    return {pair: spread(measure_values(s[pair]["loop"], measure), measure_values(s[pair]["package"], measure))
            for pair in PAIR_ORDER}


def spread_family(spreads: dict) -> dict:
    """The five pairs' `spread`s in one measure as one family, adjusted with Holm (`holm_tests`). A spread's verdict
    needs both tests, so its p-value is the larger of the F test's and the permutation test's (the test that rejects
    only where both do); 5 x 0.05 = 0.25 false verdicts would be expected unadjusted."""
    return holm_tests({k: (max(sp["f_p"], sp["perm_p"]), sp["verdict"]) for k, sp in spreads.items()})


def multilingual_steadiness(summary: dict | None = None, measures: tuple[str, ...] = ("ppl", "ratio")) -> None:
    """Which program is the steadier over its seeds, per pair and measure: the standard deviations, their ratio
    (loop / package), the F test and the permutation test of equal spread, and the verdict."""
    s = multilingual_summary() if summary is None else summary
    print("Spread over seeds. F p: F test of equal variances (assumes normal values). perm. p: 20,000 random\n"
          "relabellings of the values centred on their program's mean. Holm p: each measure's five pairs are one\n"
          "family (5 x 0.05 = 0.25 false verdicts expected unadjusted), adjusted with Holm's method on the larger of\n"
          "the two p. Verdict: a program is the steadier only where both p < 0.05 and Holm p <= 0.05; suggestive\n"
          "where both p < 0.05 but Holm p > 0.05; otherwise inconclusive.")
    print(f"\n{'pair':9} {'measure':13} {'seeds':^7} {'sd loop':>8} {'sd package':>10} {'loop/package':>12} "
          f"{'F p':>6} {'perm. p':>7} {'Holm p':>7}  verdict")
    spreads = {measure: multilingual_spreads(s, measure) for measure in measures}
    families = {measure: spread_family(spreads[measure]) for measure in measures}
    for pair in PAIR_ORDER:
        for k, measure in enumerate(measures):
            sp, f = spreads[measure][pair], families[measure][pair]
            verdict = _verdict_text(f["verdict"]).replace("package less steady", "loop steadier")
            label = {"ppl": "dev ppl", "ratio": "length ratio", "bleu": "BLEU"}[measure]
            print(f"{PAIR_NAMES[pair] if k == 0 else '':9} {label:13} {_n_text(sp['n'])} "
                  f"{sp['sd'][0]:8.2f} {sp['sd'][1]:10.2f} {sp['sd_ratio']:12.2f} {_p_text(sp['f_p']):>6} "
                  f"{_p_text(sp['perm_p']):>7} {_p_text(f['holm']):>7}  {verdict}")


def mean_interval(values: list[float]) -> tuple[float, float, float]:
    "The mean of VALUES with its t-based 95 % interval (n - 1 degrees of freedom): (mean, low, high)."
    mean = statistics.mean(values)
    half = _stats().t_quantile(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def reference_repetition(path: str | Path = RESULTS / "multilingual" / "_reference_repetition.json") -> dict:
    "{dev split file: share of its references that repeat a word 4-gram} (bench/stop_analysis.py --references)."
    return {name: f["repeating"] for name, f in json.loads(Path(path).read_text(encoding="utf-8"))["files"].items()}


STOP_PAIRS = ("ru-en", "zh-en")  # where bench/stop_analysis.py read the models


def multilingual_stops(summary: dict | None = None) -> None:
    """Where the models stop, per seed (bench/stop_analysis.py on the dev split): greedy length ratio on test and
    dev, and on dev without the outputs that repeat themselves; the shares of dev outputs that repeat a word
    4-gram, run past 1.5 times their reference or stop before half of it; teacher-forced, P(EOS) where the
    reference ends and inside it (after , ; : and after any other piece), and the share of sentences in which EOS
    is the most likely piece somewhere inside."""
    s = multilingual_summary() if summary is None else summary
    pct = lambda x: f"{100 * x:5.1f}"
    print(f"{'pair':8} {'program':8} {'seed':>4} {'test':>5} {'dev':>5} {'no rep':>6}  {'rep %':>5} {'>1.5 %':>6} "
          f"{'<½ %':>5}  {'P(EOS) end':>10} {'inside %':>8} {'after ,;: %':>11} {'other %':>7} {'early %':>7}")
    for pair in STOP_PAIRS:
        for program in ("loop", "package"):
            c = s[pair][program]
            for k, seed in enumerate(sorted(c["stops"])):
                st, g = c["stops"][seed], c["stops"][seed]["greedy_dev"]
                plain = g.get("length_ratio_without_repeating")
                rep = lambda key: pct(g[key]) if key in g else f"{'-':>5}"
                label = PAIR_NAMES[pair] if program == "loop" and k == 0 else ""
                print(f"{label:8} {program if k == 0 else '':8} {seed:>4} {c['greedy'][seed][2]:5.2f} "
                      f"{g['length_ratio']:5.2f} {'-' if plain is None else f'{plain:.2f}':>6}  "
                      f"{rep('repeating'):>5} {rep('over_one_and_a_half'):>6} {pct(g['under_half'])}  "
                      f"{st['p_eos_at_end']:10.2f} {100 * st['p_eos_inside']:8.2f} "
                      f"{100 * st['p_eos_after_clause_end']:11.2f} {100 * st['p_eos_after_other']:7.2f} "
                      f"{pct(st['sentences_with_early_eos_top']):>7}")
    refs = reference_repetition()
    print(f"The references themselves repeat a word 4-gram in {100 * refs['bible-ru-en.dev.tsv']:.1f} % of the "
          f"Russian pair's dev sentences and {100 * refs['cmn-eng.dev.tsv']:.1f} % of the Chinese pair's.")


def multilingual_commands(runs: list[dict] | None = None) -> Details:
    """The training command of every row of the ablation table (one seed shown, SEED for the others) and of the
    analysis, with the commits, device and dates of its runs, in a collapsed box."""
    runs = load_multilingual() if runs is None else runs
    lines = ["Each command as bench/multilingual.py ran it (under bench/tf32.py; OUT: the run's folder); the file of",
             "each run in results/multilingual/ keeps its command, commit, device and date."]
    def add(title: str, group: list[dict]) -> None:
        first = group[0]
        command = re.sub(rf"--seed {first['seed']}\b", "--seed SEED", display_command(first["command"]))
        command = "python " + re.sub(r"--out \S+", "--out OUT", command)
        lines.extend([f"\n{title}: seeds {', '.join(str(r['seed']) for r in group)}", f"  {command}",
                      f"  commits {', '.join(sorted({r['commit'] for r in group}))}; {first['gpu']}; "
                      f"{min(r['date'] for r in group)[:10]}"])
    group_of = lambda pair, variant, steps: sorted(
        (r for r in runs if (r["pair"], r["variant"], r["steps"]) == (pair, variant, steps)), key=lambda r: r["seed"])
    for pair in PAIR_ORDER:
        if not {r["variant"] for r in runs if r["pair"] == pair} - {"loop", "package"}:
            continue  # no ablation on this pair
        for variant, label in _VARIANT_LABELS.items():
            if group := group_of(pair, variant, 1000):
                add(f"{PAIR_NAMES[pair]}, {label.strip()}", group)
    for pair in PAIR_ORDER:  # the runs trained for longer (the same command, another --steps)
        for steps in sorted({r["steps"] for r in runs if r["pair"] == pair} - {1000}):
            for variant in ("loop", "package"):
                if group := group_of(pair, variant, steps):
                    add(f"{PAIR_NAMES[pair]}, {variant}, {steps:,} updates", group)
    lines += ["\nWhere the models stop: python bench/stop_analysis.py --package OUT --out OUT/stops.json --device cuda",
              "  python bench/tf32.py --default-cuda bench/stop_analysis.py --loop OUT --dev DEV.tsv --out OUT/stops.json "
              "--device cuda",
              "  a package run trained by bench/ablate_model.py PATCHES: add --ablate PATCHES"]
    return Details("The commands of the ablation rows", "\n".join(lines))


def plot_stops_by_position(summary: dict | None = None) -> None:
    """P(EOS) inside the reference by quarter of its length, one line per seed (Russian, Chinese), and the Russian
    dev perplexity curves per seed: where in a sentence the models are tempted to stop, and how the seeds train."""
    s = multilingual_summary() if summary is None else summary
    colors = {"loop": "tab:gray", "package": "tab:blue"}
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    for ax, pair in zip(axes, STOP_PAIRS):
        for program, color in colors.items():
            for k, st in enumerate(s[pair][program]["stops"].values()):
                ax.plot([1, 2, 3, 4], [100 * q for q in st["p_eos_inside_by_quarter"]], color=color, alpha=0.6,
                        marker=".", label=program if k == 0 else None)
        ax.set_xticks([1, 2, 3, 4], ["1st", "2nd", "3rd", "4th"])
        ax.set_xlabel("quarter of the reference", fontsize=9)
        ax.set_title(f"{PAIR_NAMES[pair]}: P(EOS) inside (%)", fontsize=10)
    axes[0].legend(fontsize=8)
    for program, color in colors.items():
        for curve in s["ru-en"][program]["curves"].values():
            late = {step: ppl for step, ppl in curve.items() if step >= 500}  # before: all alike
            axes[2].plot(list(late), list(late.values()), color=color, alpha=0.5, marker=".")
    axes[2].set_xlabel("update", fontsize=9)
    axes[2].set_title("Russian: dev perplexity per seed", fontsize=10)
    fig.tight_layout()
    plt.show()


def plot_repetition(summary: dict | None = None) -> None:
    "Dev length ratio against the share of outputs that repeat themselves, per seed; hollow: without those outputs."
    s = multilingual_summary() if summary is None else summary
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for ax, pair in zip(axes, STOP_PAIRS):
        for program, color in (("loop", "tab:gray"), ("package", "tab:blue")):
            points = [(g["repeating"], g["length_ratio"], g["length_ratio_without_repeating"])
                      for g in (st["greedy_dev"] for st in s[pair][program]["stops"].values()) if "repeating" in g]
            x, y, plain = (np.array(v) for v in zip(*points))
            ax.scatter(100 * x, y, color=color, label=f"{program}, all outputs")
            ax.scatter(100 * x, plain, facecolors="none", edgecolors=color, label=f"{program}, without repeating")
        ax.axhspan(0.95, 1.10, color="tab:green", alpha=0.1, lw=0, label="0.95 to 1.10")
        ax.set_title(PAIR_NAMES[pair], fontsize=10)
        ax.set_xlabel("dev outputs that repeat a 4-gram (%)", fontsize=9)
    axes[0].set_ylabel("greedy length ratio (dev)", fontsize=9)
    axes[1].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    plt.show()


REPETITION_GROUPS = (  # (variant in the summary, updates, program): the runs whose repeating outputs were counted
    ("loop", "1,000", "loop"),
    ("package", "", "package"),
    ("package_torch_like", "", "package, made like the loop"),
    ("loop_2000steps", "2,000", "loop"),
    ("package_2000steps", "", "package"),
)


def _seed_list(seeds: list[int]) -> str:
    "7, 8, 9, 10 -> '7-10'; other lists as they are."
    seeds = sorted(seeds)
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def repetition_groups(summary: dict | None = None, pair: str = "ru-en") -> dict:
    """{variant: the runs whose dev outputs were counted for repetition (seed -> stop analysis), with their dev
    perplexity, test BLEU and length ratio}; the numbers of `multilingual_repetition` and of the chapter's claims."""
    s = multilingual_summary() if summary is None else summary
    out = {}
    for variant, _, _ in REPETITION_GROUPS:
        c = s[pair][variant]
        seeds = sorted(k for k, st in c["stops"].items() if "repeating" in st["greedy_dev"])
        dev = {k: c["stops"][k]["greedy_dev"] for k in seeds}
        out[variant] = {"seeds": seeds, "ppl": [c["curves"][k][max(c["curves"][k])] for k in seeds],
                        "bleu": [c["greedy"][k][0] for k in seeds], "ratio": [c["greedy"][k][2] for k in seeds],
                        "repeating": [dev[k]["repeating"] for k in seeds],
                        "over": [dev[k]["over_one_and_a_half"] for k in seeds],
                        "plain": [dev[k]["length_ratio_without_repeating"] for k in seeds]}
    return out


def repetition_gaps(summary: dict | None = None, pair: str = "ru-en") -> dict:
    """The differences behind `multilingual_repetition`, each with its 95 % interval (shares of repeating dev outputs
    in percentage points): 'package - loop': the share at 1,000 updates, a `gap` (Welch, exact permutation p);
    'like - package': the package made like the loop minus the package, and '2000 - 1000': {program: ...} twice the
    updates minus 1,000, both paired by seed: {'repeating', 'ratio' (test length ratio), 'bleu': {'interval',
    'exact_p' (every sign flip: at least 2/2^n)}}; 'ratio at 2000': {program: `mean_interval` of the test length
    ratio}."""
    S = _stats()
    g = repetition_groups(summary, pair)
    scale = {"repeating": 100, "ratio": 1, "bleu": 1}
    by_seed = lambda v, key: {k: scale[key] * x for k, x in zip(g[v]["seeds"], g[v][key])}

    def paired(base: str, other: str, keys: tuple[str, ...]) -> dict:
        return {key: {"interval": S.paired(by_seed(base, key), by_seed(other, key)),
                      "exact_p": S.permutation_p(by_seed(base, key), by_seed(other, key), paired_samples=True)}
                for key in keys}
    return {"package - loop": gap([100 * x for x in g["loop"]["repeating"]],
                                  [100 * x for x in g["package"]["repeating"]], True),
            "like - package": paired("package", "package_torch_like", ("repeating", "ratio")),
            "2000 - 1000": {prog: paired(prog, f"{prog}_2000steps", ("repeating", "ratio", "bleu"))
                            for prog in ("loop", "package")},
            "ratio at 2000": {prog: mean_interval(g[f"{prog}_2000steps"]["ratio"]) for prog in ("loop", "package")}}


def repetition_family(gaps: dict | None = None) -> dict:
    """The nine differences of `repetition_gaps` as one family, adjusted with Holm (`holm_tests`): {(comparison,
    program, measure): {'p', 'holm', 'verdict': 'up', 'down', 'suggestive' or 'inconclusive'}}. The test is the t
    test of each interval (Welch's for the package minus the loop, paired otherwise): with five seeds an exact
    sign-flip test cannot go below 2/2^5 = 0.0625 and could decide nothing. 9 x 0.05 = 0.45 false verdicts would be
    expected unadjusted."""
    d = repetition_gaps() if gaps is None else gaps
    rows = {("package - loop", "", "repeating"): d["package - loop"]["interval"]}
    rows.update({("like - package", "package", key): c["interval"] for key, c in d["like - package"].items()})
    rows.update({("2000 - 1000", prog, key): c["interval"] for prog, changes in d["2000 - 1000"].items()
                 for key, c in changes.items()})
    word = lambda iv: "inconclusive" if not iv.excludes_zero() else "up" if iv.low > 0 else "down"
    return holm_tests({k: (iv.p, word(iv)) for k, iv in rows.items()})


_KEY_NAMES = {"repeating": "repeat", "ratio": "length ratio", "bleu": "BLEU"}


def multilingual_repetition(summary: dict | None = None) -> None:
    """Russian, greedy decoding of the last checkpoint, for each group of runs whose repeating outputs were counted:
    dev perplexity and test BLEU (means), the test length ratio (mean ± sd), and on the dev split the share of outputs
    that repeat a word 4-gram (mean and range), that run past 1.5 times their reference (mean), and the length ratio
    without the repeating outputs (range)."""
    groups = repetition_groups(summary)
    print(f"{'Russian':7} {'updates':>7}  {'program':28} {'seeds':>5} {'dev ppl':>7} {'BLEU':>5} {'length ratio':>12}  "
          f"{'repeat %':>11} {'>1.5 %':>6} {'no repeats':>10}")
    for variant, updates, program in REPETITION_GROUPS:
        g = groups[variant]
        ratio, sd = mean_sd(g["ratio"])
        rep = f"{100 * statistics.mean(g['repeating']):.0f} ({100 * min(g['repeating']):.0f}-{100 * max(g['repeating']):.0f})"
        print(f"{'':7} {updates:>7}  {program:28} {_seed_list(g['seeds']):>5} {statistics.mean(g['ppl']):7.2f} "
              f"{statistics.mean(g['bleu']):5.1f} {ratio:6.2f} ± {sd:3.2f}  {rep:>11} "
              f"{100 * statistics.mean(g['over']):6.0f} {min(g['plain']):4.2f}-{max(g['plain']):4.2f}")
    d = repetition_gaps(summary)
    family = repetition_family(d)
    print("\nDifferences with 95 % intervals (repeat: percentage points). p: t test; exact: every relabelling, or\n"
          "every sign flip of the paired differences (five seeds: at least 0.0625). Paired: seed by seed, 10-14.\n"
          f"Holm p: the {len(family)} differences are one family, adjusted with Holm's method on the t test's p (the\n"
          f"exact test could decide none of the paired ones); {len(family)} x 0.05 = {0.05 * len(family):.2f} false "
          "verdicts expected unadjusted.\nVerdict: up or down where the interval excludes zero and Holm p <= 0.05, "
          "suggestive where only the\ninterval does, else inconclusive.")
    g = d["package - loop"]
    rows = [("package minus loop, Welch, seeds 7-14", ("package - loop", "", "repeating"), g["interval"],
             g["exact_p"])]
    rows += [("made like the loop minus package, paired" if k == 0 else "", ("like - package", "package", key),
              c["interval"], c["exact_p"]) for k, (key, c) in enumerate(d["like - package"].items())]
    for prog, changes in d["2000 - 1000"].items():
        rows += [(f"{prog}, 2,000 minus 1,000 updates, paired" if k == 0 else "", ("2000 - 1000", prog, key),
                  c["interval"], c["exact_p"]) for k, (key, c) in enumerate(changes.items())]
    print(f"{'Russian, 1,000 updates unless said':43} {'measure':12} {'difference [95 %]':>22} {'p':>7} "
          f"{'exact':>6} {'Holm p':>7}  verdict")
    for label, key, iv, exact in rows:
        f = family[key]
        print(f"{label:43} {_KEY_NAMES[key[2]]:12} {iv.text(2 if key[2] == 'ratio' else 1):>22} {_p_text(iv.p):>7} "
              f"{_p_text(exact):>6} {_p_text(f['holm']):>7}  {f['verdict']}")
    print("mean length ratio at 2,000 updates [95 %]: "
          + ", ".join(f"{prog} {m:.2f} [{low:.2f}, {high:.2f}]" for prog, (m, low, high) in d["ratio at 2000"].items()))


def multilingual_decoding(summary: dict | None = None) -> None:
    """The package's test BLEU per seed: greedy; beam 4 with alpha 0.6 over the average of the last 5 checkpoints;
    and the setting that `evaluate --tune` chose on the dev split, where recorded."""
    s = multilingual_summary() if summary is None else summary
    print(f"{'pair':9} {'seed':>4}  {'greedy':>7} {'α 0.6':>7} {'tuned':>7}  chosen on dev")
    for pair in PAIR_ORDER:
        c = s[pair]["package"]
        for seed in sorted(c["fixed"]):
            ch, tuned = c["chosen"].get(seed), c["tuned"].get(seed)
            chosen = "" if ch is None else ("greedy" if ch["decoding"]["method"] == "greedy" else
                                            f"beam, α {ch['decoding']['length_penalty']}") + f", average of {ch['avg']}"
            tuned = f"{tuned:7.2f}" if tuned is not None else f"{'-':>7}"
            print(f"{PAIR_NAMES[pair]:9} {seed:>4}  {c['greedy'][seed][0]:7.2f} {c['fixed'][seed]:7.2f} {tuned}  {chosen}")
    gains = decoding_gains(s)
    family = decoding_family(gains)
    print("Paired run by run over the pairs (95 % interval; exact p: every sign flip of the differences). Holm p: the\n"
          "two gains are one family (2 x 0.05 = 0.10 false verdicts expected unadjusted), adjusted with Holm's method\n"
          "on the exact p; better only where the interval excludes zero and Holm p <= 0.05, suggestive where only the\n"
          "interval does.")
    for name, d in gains.items():
        f = family[name]
        print(f"  {name}: {d['interval'].text(2)} BLEU over {d['interval'].n} runs, exact p = "
              f"{_p_text(d['exact_p'])}, Holm p = {_p_text(f['holm'])}: {f['verdict']}")


def decoding_gains(summary: dict | None = None) -> dict:
    """The package's test BLEU, paired run by run over every pair: {name: {'interval': paired 95 % interval,
    'exact_p': exact sign-flip p}} for beam 4 with alpha 0.6 over the average of 5 minus greedy (every run with
    both) and the dev-tuned setting minus the fixed one (the runs where it was measured)."""
    s = multilingual_summary() if summary is None else summary
    S = _stats()
    runs = [(pair, seed) for pair in PAIR_ORDER for seed in sorted(s[pair]["package"]["fixed"])]
    c = lambda pair: s[pair]["package"]
    greedy = {run: c(run[0])["greedy"][run[1]][0] for run in runs}
    fixed = {run: c(run[0])["fixed"][run[1]] for run in runs}
    tuned = {run: c(run[0])["tuned"][run[1]] for run in runs if run[1] in c(run[0])["tuned"]}
    out = {}
    for name, base, other in (("alpha 0.6 + average minus greedy", greedy, fixed),
                              ("dev-tuned minus alpha 0.6", {r: fixed[r] for r in tuned}, tuned)):
        a, b = [base[r] for r in other], [other[r] for r in other]
        out[name] = {"interval": S.paired(a, b), "exact_p": S.permutation_p(a, b, paired_samples=True)}
    return out


def decoding_family(gains: dict | None = None) -> dict:
    """The two gains of `decoding_gains` as one family, adjusted with Holm on the exact sign-flip p (`holm_tests`):
    {name: {'p', 'holm', 'verdict': 'better', 'worse', 'suggestive' or 'inconclusive'}}."""
    g = decoding_gains() if gains is None else gains
    word = lambda iv: "inconclusive" if not iv.excludes_zero() else "better" if iv.low > 0 else "worse"
    return holm_tests({name: (d["exact_p"], word(d["interval"])) for name, d in g.items()})


_VARIANT_LABELS = {
    "package": "package, unchanged",
    "package_cut_once": "  batches cut once (--no-rebatch)",
    "package_loop_tokenizer": "  the loop's tokenizer",
    "package_torch_like": "  model and loss like the loop's",
    "loop": "loop, unchanged",
    "loop_rebatch": "  batches cut anew every epoch",
}


def ablation_gaps(summary: dict | None = None, measure: str = "ppl") -> dict:
    """{(pair, variant): `gap` of the variant minus its unchanged program (the package for package_*, the loop for
    loop_*)} in MEASURE, for every variant with runs in it (decoded runs, for 'bleu' and 'ratio'). A variant of a
    single run is judged against the spread of one more unchanged run (`one_run`)."""
    s = multilingual_summary() if summary is None else summary
    out = {}
    for pair in PAIR_ORDER:
        for variant in _VARIANT_LABELS:
            if variant in ("loop", "package") or variant not in s[pair]:
                continue
            base = "loop" if variant.startswith("loop") else "package"
            values, other = measure_values(s[pair][base], measure), measure_values(s[pair][variant], measure)
            if len(values) >= 2 and other:
                out[(pair, variant)] = gap(values, other, MEASURES[measure][1])
    return out


def multilingual_ablation(summary: dict | None = None) -> None:
    """Each variant on the pairs where ablations ran: dev perplexity after 1,000 updates (mean ± sd over seeds), the
    variant minus its unchanged program in % of the unchanged mean with Fieller's 95 % interval, the exact p, Holm's
    adjusted p over every ablation (one family), the verdict, and, where its runs were decoded, the mean greedy
    length ratio on test; below, the length ratio's difference (a family of its own)."""
    s = multilingual_summary() if summary is None else summary
    gaps = ablation_gaps(s)
    family = holm_family(gaps)
    print(f"{'pair and variant':36} {'seeds':>5}  {'dev ppl':>13}  {'vs unchanged [95 %]':23} {'exact p':>7} "
          f"{'Holm p':>7}  {'verdict':12} {'length ratio':>12}")
    for pair in PAIR_ORDER:
        if not set(s[pair]) - {"loop", "package"}:
            continue
        print(PAIR_NAMES[pair])
        for variant, label in _VARIANT_LABELS.items():
            if (c := s[pair].get(variant)) is not None:
                ratio = f"{c['ratio_mean']:.2f} ({len(c['greedy'])})" if c["greedy"] else "-"
                g, f = gaps.get((pair, variant)), family.get((pair, variant))
                versus = "" if g is None else _pct_text(g["pct"]) + ("*" if g["n"][1] == 1 else "")
                exact = "" if g is None else _p_text(g["exact_p"])
                holm = "" if f is None else _p_text(f["holm"])
                print(f"  {label:34} {len(c['seeds']):>5}  {c['ppl_mean']:6.2f} ± {c['ppl_sd']:4.2f}  {versus:23} "
                      f"{exact:>7} {holm:>7}  {'' if f is None else f['verdict']:12} {ratio:>12}")
    print(f"vs unchanged: the variant minus the unchanged program (package or loop), in % of the unchanged mean with\n"
          f"Fieller's 95 % interval; *: a single run, judged against the spread of one more unchanged run. exact p:\n"
          f"permutation test over every split of the runs. Holm p: the {len(gaps)} comparisons are one family (exact p; the\n"
          f"t test's for the single run); {len(gaps)} x 0.05 = {0.05 * len(gaps):.2f} false verdicts expected unadjusted. Verdict:\n"
          f"better or worse where Welch's interval excludes zero and Holm p <= 0.05, suggestive where only the\n"
          f"interval does, else inconclusive. Seeds were added after earlier results had been seen: nominal p-values.")
    ratios = {key: g for key, g in ablation_gaps(s, "ratio").items() if g["n"][1] >= 2}
    if ratios:
        ratio_family = holm_family(ratios)
        print(f"Length ratio, the variant minus the unchanged program (Welch's 95 % interval; Holm over these "
              f"{len(ratios)}):")
        for (pair, variant), g in ratios.items():
            f = ratio_family[(pair, variant)]
            print(f"  {PAIR_NAMES[pair]}, {_VARIANT_LABELS[variant].strip()}: {g['interval'].text(2)}, "
                  f"Holm p = {_p_text(f['holm'])}, {f['verdict']}")

"""The multilingual benchmark of chapter 24: the package and the independent loop, side by side, on five pairs.

    python bench/multilingual.py run --data data/reference-split --work /tmp/ml --out results/multilingual \\
        --device cuda --workers 14 --deadline 500 [--tier 3] [--steps 1000] [--only NAME ...]
    python bench/multilingual.py plan            # the runs, in the order they start
    python bench/multilingual.py table results/multilingual

`run` trains every planned run that fits before --deadline seconds, several at a time (--workers processes, one CPU
thread each; on a GPU they share it), and writes one JSON per finished run to --out: the command, the dev
perplexity curve, and for the package the test scores of three ways to decode (greedy with the last checkpoint; beam
4, alpha 0.6 over the average of the last 5; the setting `evaluate --tune` chose on the dev split), each with
BLEU's brevity penalty and length ratio. The loop scores greedy decoding itself. Both programs run under
bench/tf32.py: float32 weights, TF32 matrix products on a GPU, no autocast. The data are the files that
`annotated-transformer reference-split --out DIR` writes; the loop never imports the package.

Runs start in order of their tier (1: seed 0 of both programs on every pair; 2: seed 1; 3 and 4: ablations and
third seeds on Italian and Russian; 5: German, two more seeds of both and three ablations), so a deadline that cuts
the plan short cuts its least important part; 6: one more seed of both on the four Bible pairs, the package's with
all three evaluations; 7: three more seeds of both on Russian and Chinese, and the package with the loop's tokenizer
on Chinese, each read by bench/stop_analysis.py (where do the models stop?); 8: on Chinese, the ablations of tier 3
with greedy evaluation, and two more seeds of both; 9: three more seeds of both on Russian and Chinese, analysed
with the repetition counts that bench/stop_analysis.py gained after tier 8; 10: on Russian, five more seeds of both
and of the package made like the loop (`package_torch_like`), all analysed: do the package's outputs repeat more
than the loop's, and is it the model and the loss? 11: the seeds of tier 10, both programs, trained for twice the
updates (nothing in either schedule depends on the total, so their first half repeats tier 10's runs as closely as
a GPU repeats a run: chapter 24 measures how closely). A run still going at the deadline is stopped and recorded
as such (with whatever it finished: a dev curve, some of its evaluations). The ablation with the loop's tokenizer
trains it once per pair with the loop's own `train_spm` into DATA/../loop-spm/.
results/multilingual/ holds the runs of five GPU sessions: `--deadline 465` (tiers 1-4), `--deadline 235 --tiers 5`,
`--deadline 470 --tiers 6`, and `--workers 15` with `--deadline 390 --tiers 7`, `--deadline 330 --tiers 8` and
`--deadline 260 --tiers 9`, then `--deadline 320 --tiers 10` and `--deadline 470 --tiers 11`; their
_summary_call*.json files list what each call finished.

Every record and summary names the code it ran: `commit` (--commit, else git's), and from bench/provenance.py
`git_commit`, `worktree_dirty`, `commit_from` (git, or on a copy without .git the record tools/gpu_wheels.sh wrote)
and `uncommitted` (the files of the package and bench/ that differed from the commit, and a hash of the diff; None
when none did). The records in results/multilingual/ were written before the runner kept the last four: they name
their commit only. `python bench/multilingual.py history results/multilingual` writes what git's history says of
those commits to _history.json (chapter 24 prints it).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load_provenance():
    """bench/provenance.py, loaded by its path, so that importing this module (chapter 24's report does) leaves
    sys.path alone."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("_bench_provenance", HERE / "provenance.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_provenance = _load_provenance()

PAIRS = {  # name in the book -> reference split (chapter 14)
    "de-en": "bible-de-en", "fr-en": "bible-fr-en", "it-en": "bible-it-en", "ru-en": "bible-ru-en", "zh-en": "cmn-eng"}
RECIPE = ("--data-option vocab_size=8000 --N 3 --d-model 256 --h 4 --d-ff 1024 --share-embeddings --inner-dropout "
          "--label-smoothing 0.1 --warmup 1000 --max-tokens 4000")  # the book's recipe (chapter 22), as recorded
ABLATIONS = {  # variant -> (program, extra arguments, what it changes)
    "package": ("package", "", "annotated-transformer train as it is"),
    "loop": ("loop", "", "bench/reference_loop.py as it is"),
    "package_cut_once": ("package", "--no-rebatch", "the package's batches cut once and reordered every epoch, as "
                         "the loop's"),
    "loop_rebatch": ("loop", "--rebatch", "the loop's batches cut anew every epoch, as the package's"),
    "package_loop_tokenizer": ("package", "--data-option tokenizer={loop_spm}", "the package with the loop's "
                               "sentencepiece model (nmt_nfkc normalization, no byte fallback; trained by "
                               "reference_loop.train_spm on the same training split, kept in DATA/../loop-spm)"),
    "package_torch_like": ("package", "ABLATE=zero_attn_bias+final_norm+no_generator_bias+torch_ce",
                           "the package's model and loss made like the loop's: zero attention biases, a final "
                           "LayerNorm after each stack, no output bias, eps/V smoothing on every class"),
}


def plan(steps: int = 1000) -> list[dict]:
    "Every run, in the order they start."
    runs = []
    def add(tier, variant, pair, seed, evaluate=False, analyse=False, longer=1):
        name = f"{variant}_{pair}_s{seed}" + (f"_{longer * steps}steps" if longer != 1 else "")
        runs.append({"name": name, "tier": tier, "variant": variant, "pair": pair,
                     "seed": seed, "steps": longer * steps, "evaluate": evaluate, "analyse": analyse})
    for seed, tier in ((0, 1), (1, 2)):
        for pair in PAIRS:
            add(tier, "loop", pair, seed)
            add(tier, "package", pair, seed, evaluate=True)
    for pair in ("it-en", "ru-en"):  # the ablations, on two of the new pairs, three seeds each
        for seed in (0, 1, 2):
            if seed == 2:
                add(3, "loop", pair, seed)
                add(3, "package", pair, seed, evaluate=True)
            for variant in ("package_cut_once", "loop_rebatch", "package_torch_like"):
                add(3 if seed < 2 else 4, variant, pair, seed)
    for seed in (2, 3):  # German-English, where the package trails: more seeds of both, then each ablation
        add(5, "loop", "de-en", seed)
        add(5, "package", "de-en", seed)
    for seed in (0, 1):
        for variant in ("package_loop_tokenizer", "package_torch_like", "package_cut_once"):
            add(5, variant, "de-en", seed)
    for pair, seed in (("fr-en", 2), ("it-en", 3), ("ru-en", 3), ("de-en", 4)):  # one more seed of both where
        add(6, "package", pair, seed, evaluate=True)                          # no package run had been dev-tuned
        add(6, "loop", pair, seed)
    for pair, seeds in (("ru-en", (4, 5, 6)), ("zh-en", (2, 3, 4))):  # when the models stop: three more seeds of
        for seed in seeds:                                             # both, each read by bench/stop_analysis.py
            add(7, "package", pair, seed, evaluate="greedy", analyse=True)
            add(7, "loop", pair, seed, analyse=True)
    for seed in (0, 1, 2):  # is the package's short Chinese-English output its tokenizer's?
        add(7, "package_loop_tokenizer", "zh-en", seed, evaluate="greedy", analyse=True)
    for seed in (0, 1, 2):  # ... or its model and loss, or its batches? (and the loop with the package's batches)
        for variant in ("package_torch_like", "package_cut_once", "loop_rebatch"):
            add(8, variant, "zh-en", seed, evaluate="greedy" if variant.startswith("package") else False)
    for seed in (5, 6):  # two more seeds of both programs on Chinese-English
        add(8, "package", "zh-en", seed, evaluate="greedy", analyse=True)
        add(8, "loop", "zh-en", seed, analyse=True)
    for pair in ("ru-en", "zh-en"):  # three more seeds of both, analysed for outputs that repeat themselves too;
        for seed in (7, 8, 9):       # planned before they ran, and counted in every mean whatever they show
            add(9, "package", pair, seed, evaluate="greedy", analyse=True)
            add(9, "loop", pair, seed, analyse=True)
    for seed in range(10, 15):  # Russian: does the package repeat itself more than the loop, and is it the model and
        add(10, "package", "ru-en", seed, evaluate="greedy", analyse=True)  # loss? Five more seeds of both and of
        add(10, "loop", "ru-en", seed, analyse=True)                        # the package made like the loop; planned
    for seed in range(10, 15):                                              # before they ran, counted whatever they show
        add(10, "package_torch_like", "ru-en", seed, evaluate="greedy", analyse=True)
    for seed in range(10, 15):  # ... and do they stop repeating with more training? The seeds of tier 10, trained
        add(11, "package", "ru-en", seed, evaluate="greedy", analyse=True, longer=2)  # twice as long (neither
        add(11, "loop", "ru-en", seed, analyse=True, longer=2)      # learning-rate schedule looks at the total)
    return sorted(runs, key=lambda run: run["tier"])  # stable: within a tier, the order above


def loop_tokenizer(data: Path, split: str) -> Path:
    "The loop's sentencepiece model for `split` (DATA/../loop-spm/loop_SPLIT.model), trained by the loop's own code if missing."
    path = data.parent / "loop-spm" / f"loop_{split}.model"
    if not path.is_file():
        import importlib.util
        spec = importlib.util.spec_from_file_location("reference_loop", HERE / "reference_loop.py")
        loop = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loop)
        texts = [s for pair in loop.read_tsv(data / f"{split}.train.tsv") for s in pair]
        han = sum(1 for t in texts[:2000] for c in t if "\u4e00" <= c <= "\u9fff")  # as the loop's main() decides
        coverage = 0.9995 if han > 0.01 * sum(len(t) for t in texts[:2000]) else 1.0
        path.parent.mkdir(parents=True, exist_ok=True)
        loop.train_spm(texts, 8000, coverage, path)
    return path


def _tf32(device: str, loop: bool) -> list[str]:
    "The start of a command run under bench/tf32.py; the loop, which names no device, gets CUDA as its default."
    return [sys.executable, str(HERE / "tf32.py"), *(["--default-cuda"] if loop and device == "cuda" else [])]


def _patches(variant: str) -> str | None:
    "The bench/ablate_model.py patches of a package variant (e.g. 'zero_attn_bias+torch_ce'), or None."
    extra = ABLATIONS[variant][1]
    return extra.split("=", 1)[1] if extra.startswith("ABLATE=") else None


def command(run: dict, data: Path, work: Path, device: str, every: int = 25) -> tuple[list[str], dict]:
    "The training command of `run` and the environment it needs."
    program, extra, _ = ABLATIONS[run["variant"]]
    split = PAIRS[run["pair"]]
    files = {s: str(data / f"{split}.{s}.tsv") for s in ("train", "dev", "test")}
    out = str(work / run["name"])
    if "{loop_spm}" in extra:
        extra = extra.replace("{loop_spm}", str(loop_tokenizer(data, split)))
    if program == "loop":
        cmd = [*_tf32(device, loop=True), str(HERE / "reference_loop.py"), "--train", files["train"],
               "--dev", files["dev"], "--test", files["test"], "--out", out, "--steps", str(run["steps"]), "--seed", str(run["seed"]),
               "--eval-every", "250", "--threads", "1", *(["--save-model"] if run.get("analyse") else []),
               *extra.split()]
        return cmd, {}
    if (patches := _patches(run["variant"])) is not None:
        head, extra = [str(HERE / "ablate_model.py"), patches, "train"], ""
    else:
        head = ["-m", "annotated_transformer.train_command"]
    spec = "spec=tsv:" + ";".join(files[s] for s in ("train", "dev", "test"))
    averages = run["evaluate"] is True  # the fixed and the tuned evaluation average the last 5 checkpoints
    keep = ["--checkpoint-every", str(every), "--keep-last", "5"] if averages else ["--checkpoint-every", "0"]
    cmd = [*_tf32(device, loop=False), *head, "--data", "corpus", "--data-option", spec,
           *RECIPE.split(), "--steps", str(run["steps"]), "--seed", str(run["seed"]), "--eval-every", "250",
           *keep, "--threads", "1", "--device", device, "--amp", "off", "--no-progress", "--out", out, *extra.split()]
    return cmd, {}


def evaluations(run: dict, work: Path, device: str, data: Path) -> list[list[str]]:
    """What runs after training: for the package, greedy `evaluate` (and unless evaluate="greedy", the paper's fixed
    beam + average, and dev-tuned); then, for runs to analyse, bench/stop_analysis.py on the dev split."""
    out = str(work / run["name"])
    cmds, patches = [], _patches(run["variant"])  # a patched model is read back with the same patches
    if ABLATIONS[run["variant"]][0] == "package" and run["evaluate"]:
        head = [str(HERE / "ablate_model.py"), patches] if patches else ["-m", "annotated_transformer.cli"]
        base = [sys.executable, *head, "evaluate", "--model", out, "--device", device,
                "--threads", "1", "--samples", "3"]
        cmds.append(base + ["--greedy", "--avg", "1", "--json", f"{out}/eval_greedy.json"])
        if run["evaluate"] is True:
            cmds += [base + ["--beam", "4", "--alpha", "0.6", "--avg", "5", "--json", f"{out}/eval_fixed.json"],
                     base + ["--tune", "--json", f"{out}/eval_tuned.json"]]
    if run.get("analyse"):
        loop = ABLATIONS[run["variant"]][0] == "loop"  # the loop's greedy makes its tensors on the default device
        model = ["--loop", out, "--dev", str(data / f"{PAIRS[run['pair']]}.dev.tsv")] if loop else ["--package", out]
        if patches:  # (only package variants have patches)
            model += ["--ablate", patches]
        cmds.append([*_tf32(device, loop), str(HERE / "stop_analysis.py"), *model, "--out", f"{out}/stops.json",
                     "--device", device])
    return cmds


def collect(run: dict, work: Path) -> dict:
    "What a finished run recorded: dev curve, test scores, seconds."
    folder = work / run["name"]
    rec = {"dev_curve": [], "evaluations": {}}
    if (folder / "stops.json").is_file():
        rec["stops"] = json.loads((folder / "stops.json").read_text(encoding="utf-8"))
    if ABLATIONS[run["variant"]][0] == "loop":
        result = json.loads((folder / "result.json").read_text(encoding="utf-8"))
        rec["dev_curve"] = [{"step": r["step"], "dev_ppl": r["dev_ppl"]} for r in result["curve"] if "dev_ppl" in r]
        rec["train_seconds"] = result["train_seconds"]
        rec["target_tokens_per_step"] = result["target_tokens_per_step"]
        if "bleu" in result:
            rec["evaluations"]["greedy"] = {"bleu": result["bleu"], "bleu_text": result["bleu_text"],
                                            "chrf": result["chrf"], "samples": result["samples"][:3]}
        return rec
    records = [json.loads(line) for line in (folder / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    rec["dev_curve"] = [{"step": r["step"], "dev_ppl": r["dev_ppl"]} for r in records if "dev_ppl" in r]
    train = [r for r in records if "tokens_per_s" in r or "tgt_tokens" in r]
    rec["train_records"] = train[-3:]
    for how in ("greedy", "fixed", "tuned"):
        path = folder / f"eval_{how}.json"
        if path.is_file():
            e = json.loads(path.read_text(encoding="utf-8"))
            rec["evaluations"][how] = {k: e.get(k) for k in ("decoding", "avg", "bleu", "chrf", "length", "seconds",
                                                             "command", "samples", "tuned_on_dev")}
    return rec


def code_state() -> dict:
    """The state of the code a call runs, as the other runners record it (bench/provenance.py): `git_commit`,
    `worktree_dirty` and `commit_from` from `git_state` (git; on a copy without .git, the record
    tools/gpu_wheels.sh wrote, and whether the source files still match it), and `uncommitted`: the files of the
    package and bench/ that differ from the commit, with a hash of the diff (None when none do; 'unknown' files
    where git cannot be asked and the copy is not known to be clean)."""
    state = _provenance.git_state()
    if state["commit_from"] == "git":
        changes = _provenance.uncommitted()
    elif state["worktree_dirty"] is False:
        changes = None
    else:
        changes = {"files": [f"unknown: {state['commit_from']}"], "diff_sha256": None}
    return {**state, "uncommitted": changes}


# what the runs execute: the package, the loop, the wrapper, the ablation patches, the stop analysis
EXECUTED = ("annotated_transformer/", "bench/reference_loop.py", "bench/tf32.py", "bench/ablate_model.py",
            "bench/stop_analysis.py")


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(HERE.parent), *args], capture_output=True, text=True, check=True,
                          timeout=60).stdout.strip()


def _executed(files) -> list[str]:
    "The files among FILES that the runs execute (the package's .py files but its nbdev index, and EXECUTED)."
    return sorted({f for f in files if f.endswith(".py") and f.startswith(EXECUTED) and not f.endswith("_modidx.py")})


def history(folder: Path) -> dict:
    """What git's history says of the commits that FOLDER's records name, call by call (a `_summary_call*.json`
    each): the commit, whether it is in the history of HEAD, its date, the call's start (a record's date less the
    seconds from the call's start to the run's end) and end, the executed files that differ from the previous call's
    commit, and those changed by the commits of HEAD's history made from the call's start to an hour after its end
    (what a working tree may have held during the call: the work of the time is what those commits went on to
    commit). For records that do not say whether their working tree differed from their commit."""
    folder = Path(folder)
    records = {}
    for path in folder.glob("*.json"):
        if not path.name.startswith("_"):
            r = json.loads(path.read_text(encoding="utf-8"))
            records[r["name"]] = r
    parse = lambda text: datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    calls, previous = [], None
    summaries = sorted(folder.glob("_summary_call*.json"), key=lambda p: int(re.search(r"(\d+)", p.name).group(1)))
    for path in summaries:
        summary = json.loads(path.read_text(encoding="utf-8"))
        runs = [records[name] for name in summary["finished"]]
        commit = summary["commit"]
        assert {r["commit"] for r in runs} == {commit}, f"{path.name}: runs of other commits"
        start = min(parse(r["date"]) - datetime.timedelta(seconds=r["started"] + r["seconds"]) for r in runs)
        end = max(parse(r["date"]) for r in runs)
        later = _git("log", "HEAD", "--format=%h", f"--since={start.isoformat()}",
                     f"--until={(end + datetime.timedelta(hours=1)).isoformat()}").split()
        in_hour = set()
        for c in later:
            in_hour |= set(_git("show", "--name-only", "--format=", c).split())
        committed = parse(_git("log", "-1", "--format=%cI", commit))
        calls.append({
            "call": int(re.search(r"(\d+)", path.name).group(1)), "commit": commit,
            "tiers": sorted({r["tier"] for r in runs}), "runs": len(runs),
            "in_history": subprocess.run(["git", "-C", str(HERE.parent), "merge-base", "--is-ancestor", commit,
                                          "HEAD"]).returncode == 0,
            "committed": committed.isoformat(), "started": start.isoformat(timespec="seconds"),
            "ended": end.isoformat(), "seconds_from_commit_to_start": round((start - committed).total_seconds()),
            "changed_since_previous_call": _executed(_git("diff", "--name-only", previous, commit).split())
            if previous else [],
            "commits_in_the_hour_after": later, "changed_in_the_hour_after": _executed(in_hour)})
        previous = commit
    return {"command": f"python bench/multilingual.py history {folder.as_posix()}",
            "head": _git("rev-parse", "--short", "HEAD"),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "executed": list(EXECUTED), "calls": calls}


def run_all(args) -> int:
    work, out, data = Path(args.work), Path(args.out), Path(args.data)
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    todo = [r for r in plan(args.steps) if (r["tier"] in args.tiers if args.tiers else r["tier"] <= args.tier)
            and (not args.only or r["name"] in args.only)]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    start, running, done = time.time(), {}, []
    code = code_state()  # taken before the first run starts: the code every run of this call imports
    provenance = {"commit": args.commit or code["git_commit"] or "unknown", **code,
                  "device": args.device_name or args.device, "machine": platform.node(),
                  "python": sys.version.split()[0]}
    try:
        import torch
        provenance["torch"] = torch.__version__
        if args.device == "cuda":
            provenance["gpu"] = torch.cuda.get_device_name(0)
    except Exception as e:  # noqa: BLE001 -- provenance only
        provenance["torch"] = f"unknown ({e})"

    def launch(run):
        cmd, extra_env = command(run, data, work, args.device, args.checkpoint_every)
        log = open(work / f"{run['name']}.log", "w")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env={**env, **extra_env},
                                start_new_session=True)
        run.update(command=" ".join(cmd[1:]), started=time.time() - start, stage="train", queue=[])
        run["queue"] = evaluations(run, work, args.device, data)
        running[run["name"]] = (run, proc, log)
        print(f"[{time.time() - start:6.0f} s] start {run['name']}", flush=True)

    def finish(run, status):
        rec = {**{k: v for k, v in run.items() if k not in ("queue", "stage")}, "status": status,
               "seconds": time.time() - start - run["started"], **provenance,
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "what": ABLATIONS[run["variant"]][2]}
        try:
            rec.update(collect(run, work))
        except (OSError, ValueError, KeyError) as e:
            rec["collect_error"] = f"{type(e).__name__}: {e}"
        log = work / f"{run['name']}.log"
        rec["log_tail"] = log.read_text(errors="replace")[-3000:] if log.is_file() else ""
        (out / f"{run['name']}.json").write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        ckpt = work / run["name"] / "checkpoints"
        if ckpt.is_dir():
            shutil.rmtree(ckpt, ignore_errors=True)  # 5 x 90 MB a run: the disk is not endless
        (work / run["name"] / "model.pt").unlink(missing_ok=True)  # the loop's, for the analysis
        done.append(run["name"])
        print(f"[{time.time() - start:6.0f} s] {status} {run['name']}", flush=True)

    while todo or running:
        if time.time() - start > args.deadline:
            break
        while todo and len(running) < args.workers:
            launch(todo.pop(0))
        time.sleep(2)
        for name, (run, proc, log) in list(running.items()):
            code = proc.poll()
            if code is None:
                continue
            log.close()
            if code != 0:
                del running[name]
                finish(run, f"failed ({run['stage']}, exit {code})")
            elif run["queue"]:
                cmd = run["queue"].pop(0)
                run["stage"] = "evaluate"
                log = open(work / f"{name}.log", "a")
                running[name] = (run, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                                       start_new_session=True), log)
            else:
                del running[name]
                finish(run, "done")
    for name, (run, proc, log) in running.items():
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.close()
        finish(run, f"stopped at the deadline ({run['stage']})")
    for run in todo:
        print(f"not started: {run['name']}")
    (out / "_summary.json").write_text(json.dumps({"finished": done, "not_started": [r["name"] for r in todo],
                                                   "seconds": time.time() - start, **provenance}, indent=1) + "\n")
    return 0


def table(folder: Path) -> None:
    "Print dev perplexity and test scores of every recorded run, grouped by pair."
    recs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json")) if not p.name.startswith("_")]
    for r in sorted(recs, key=lambda r: (r["pair"], r["variant"], r["seed"])):
        ppl = r["dev_curve"][-1]["dev_ppl"] if r.get("dev_curve") else float("nan")
        ev = r.get("evaluations", {})
        scores = "  ".join(f"{k} {v['bleu'] if isinstance(v['bleu'], float) else v['bleu']['score']:.2f}"
                           for k, v in ev.items())
        print(f"{r['pair']:6} {r['variant']:20} s{r['seed']}  {r['status'][:20]:20} ppl {ppl:7.2f}  {scores}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("--data", required=True)
    r.add_argument("--work", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--device", default="cuda")
    r.add_argument("--device-name", default=None, help="how to name the device in the records")
    r.add_argument("--workers", type=int, default=14)
    r.add_argument("--deadline", type=float, default=500, help="seconds after which nothing new starts and "
                   "runs still going are stopped")
    r.add_argument("--tier", type=int, default=4, help="run the tiers up to this one")
    r.add_argument("--tiers", type=int, nargs="*", help="run these tiers only")
    r.add_argument("--steps", type=int, default=1000)
    r.add_argument("--only", nargs="*", default=None)
    r.add_argument("--checkpoint-every", type=int, default=25, help="for the package runs that are evaluated "
                   "(the last 5 are kept, for averaging)")
    r.add_argument("--commit", default=os.environ.get("COMMIT"), help="the commit to name in the records (else "
                   "git's); the state of the working tree is recorded beside it")
    sub.add_parser("plan")
    h = sub.add_parser("history", help="write FOLDER/_history.json: what git says of the records' commits")
    h.add_argument("folder", type=Path)
    t = sub.add_parser("table")
    t.add_argument("folder", type=Path)
    args = p.parse_args(argv)
    if args.what == "plan":
        for run in plan():
            after = {True: "(+ 3 evaluations)", "greedy": "(+ greedy evaluation)"}.get(run["evaluate"], "")
            print(run["tier"], run["name"], after, "(+ stop analysis)" if run["analyse"] else "")
        return 0
    if args.what == "table":
        table(args.folder)
        return 0
    if args.what == "history":
        rec = history(args.folder)
        (args.folder / "_history.json").write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.folder / '_history.json'}: {len(rec['calls'])} calls")
        return 0
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())

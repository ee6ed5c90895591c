"""Tests for the command line: `annotated-transformer` (annotated_transformer.cli) and its `train` command
(annotated_transformer.train_command.train_main), end to end on CPU."""
import dataclasses
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from annotated_transformer import cli
from annotated_transformer.model import TransformerConfig
from annotated_transformer.trainer import Trainer
from annotated_transformer.train_config import TrainConfig
from annotated_transformer.checkpoint import load_model
from annotated_transformer.checkpoint import list_checkpoints, load_checkpoint
from conftest import subprocess_env

REPO = Path(__file__).resolve().parents[1]
TINY = ["--data", "copy", "--N", "1", "--d-model", "16", "--h", "2", "--d-ff", "32", "--warmup", "10",
        "--max-tokens", "120", "--data-option", "vocab=9", "--data-option", "max_length=6",
        "--data-option", "train_size=300", "--data-option", "dev_size=40", "--log-every", "1", "--eval-every", "0", "--device", "cpu", "--no-progress",
        "--threads", "1"]


env = subprocess_env  # (tests/conftest.py)


def metrics(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture(autouse=True)
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


# ---- dispatch ------------------------------------------------------------------------------------
def test_usage_and_unknown_command(capsys):
    assert cli.main(["--help"]) == 0
    assert "train" in capsys.readouterr().out
    assert cli.main([]) == 2
    assert cli.main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_commands_are_functions_and_the_version_is_the_installed_one(capsys):
    "The dispatcher imports each command's function (no module named in a string); --version asks the installation."
    assert all(callable(fn) for fn in cli.COMMANDS.values())
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"annotated-transformer {importlib.metadata.version('annotated-transformer')}"


def test_help_lists_every_option_with_its_default(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    for f in dataclasses.fields(TrainConfig):
        if f.name != "model":  # the model's own fields below
            flag = "--data-option" if f.name == "data_options" else "--" + f.name.replace("_", "-")
            assert flag in text, flag
    for f in dataclasses.fields(TransformerConfig):  # the model's flags are its fields, under their own names
        flag = "--" + f.name.replace("_", "-")
        assert (flag in text) == (f.name not in ("src_vocab", "tgt_vocab")), flag  # the data sets the vocabularies
    for old in ["--layers", "--heads", "--max-len"]:  # still read (recorded commands), no longer listed
        assert old not in text
    for flag in ["--config", "--out", "--resume", "--print-config", "--no-share-embeddings", "--compile"]:
        assert flag in text
    flat = " ".join(text.split())
    assert "(default: 25000)" in flat and "(default: 4000)" in flat and "(default: 0.98)" in flat


# ---- settings ------------------------------------------------------------------------------------
def test_config_file_then_flags(tmp_path, capsys):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"model": {"d_model": 256, "h": 4}, "steps": 7}))
    assert cli.main(["train", "--config", str(cfg), "--steps", "9", "--data-option", "lang=de",
                     "--data-option", "size=3", "--N", "2", "--print-config"]) == 0
    resolved = json.loads(capsys.readouterr().out)
    model = resolved["model"]
    assert (model["d_model"], model["h"], resolved["steps"], model["N"], model["d_ff"]) == (256, 4, 9, 2, 2048)
    assert resolved["data_options"] == {"lang": "de", "size": 3}


def test_flags_of_recorded_commands_are_refused_naming_todays(capsys):
    "--layers/--heads/--max-len, the model flags before TrainConfig held a TransformerConfig: refused since 0.3.0."
    for old, new in (("--layers", "--N"), ("--heads", "--h"), ("--max-len", "--max-positions")):
        with pytest.raises(SystemExit) as stop:
            cli.main(["train", old, "3", "--print-config"])
        assert stop.value.code == 2
        assert f"{old} was removed in annotated-transformer 0.3.0: write {new}" in capsys.readouterr().err
    assert cli.main(["train", "--N", "3", "--h", "4", "--max-positions", "512", "--d-model", "256", "--print-config"]) == 0
    config = json.loads(capsys.readouterr().out)
    assert config["model"]["N"] == 3 and config["model"]["max_positions"] == 512


@pytest.mark.parametrize("args,config,message", [
    ([], {"d_modle": 64}, r"unknown key 'd_modle' in .*c\.json; did you mean 'd_model'\?"),
    (["--d-model", "15"], None, "d_model=15 is not divisible by h=2"),
    (["--positional", "rotary"], None, "positional must be one of sinusoidal, learned, rope, relative, got 'rotary'"),
    (["--steps", "-3"], None, "steps=-3 must be >= 0"),
    ([], {"steps": 10.5}, "steps must be of type int"),
    (["--data", "nosuch"], None, "unknown data 'nosuch'"),
    (["--data", "annotated_transformer.loss:nothing_here"], None, "cannot load data builder"),
    (["--resume"], None, "no such checkpoint or run directory: .*run"),
    (["--config", "missing.json"], None, "config file missing.json does not exist"),
    # a file that is not UTF-8: the message names it (Python's own names only the byte)
    ([], b'{"steps": 2, "note": "\xff"}', r"config file .*c\.json is not UTF-8 text \(byte 0xff"),
])
def test_bad_settings_exit_2_with_a_clear_message(tmp_path, capsys, args, config, message):
    if config is not None:
        (tmp_path / "c.json").write_bytes(config if isinstance(config, bytes) else json.dumps(config).encode())
        args = args + ["--config", str(tmp_path / "c.json")]
    with pytest.raises(SystemExit) as e:
        cli.main(["train", *TINY, "--steps", "2", "--out", str(tmp_path / "run"), *args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "annotated-transformer train: error:" in err and "Traceback" not in err
    import re
    assert re.search(message, err), err


# ---- end to end ----------------------------------------------------------------------------------
def assert_code_provenance(code: dict) -> None:
    "config.json names the code that trained: in a git checkout of the package, its commit, as git itself says."
    package = Path(cli.__file__).resolve().parent
    assert code["path"] == str(package)
    head = subprocess.run(["git", "-C", str(package), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    tracked = subprocess.run(["git", "-C", str(package), "ls-files", "--", "."], capture_output=True, text=True)
    if head.returncode == 0 and tracked.stdout.strip():  # the tests run from a checkout (CI: a clean clone)
        assert code["commit"] == head.stdout.strip() and isinstance(code["modified"], bool)
    else:  # an installed copy: no commit to name, and none made up
        assert code["commit"] is None and code["modified"] is None


def test_train_end_to_end_then_resume_after_a_crash(tmp_path, monkeypatch):
    straight = tmp_path / "straight"
    assert cli.main(["train", *TINY, "--steps", "10", "--checkpoint-every", "3", "--keep-last", "2",
                     "--out", str(straight)]) == 0
    assert (straight / "config.json").exists()
    info = json.loads((straight / "config.json").read_text())
    assert info["model"]["N"] == 1 and info["data"]["train_pairs"] == 300 and info["train"]["steps"] == 10
    assert info["command"][:3] == ["annotated-transformer", "train", TINY[0]]  # the command as typed, subcommand too
    assert_code_provenance(info["code"])
    assert [p.name for p in list_checkpoints(straight)] == ["step_000009.pt", "step_000010.pt"]
    assert [r["step"] for r in metrics(straight)] == list(range(1, 11))
    model = load_model(straight, device="cpu")
    assert not model.training and model.config.d_model == 16

    # the same run, killed during step 8 (after the checkpoint of step 6), then resumed
    crashed = tmp_path / "crashed"
    real_step = Trainer.train_step

    def dies_at_step_8(self, batches):
        if self.step == 7:
            raise KeyboardInterrupt("killed")
        return real_step(self, batches)

    monkeypatch.setattr(Trainer, "train_step", dies_at_step_8)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["train", *TINY, "--steps", "10", "--checkpoint-every", "3", "--out", str(crashed)])
    monkeypatch.undo()
    assert [r["step"] for r in metrics(crashed)] == list(range(1, 8))
    assert list_checkpoints(crashed)[-1].name == "step_000006.pt"
    assert cli.main(["train", "--resume", "--out", str(crashed), "--steps", "10", "--no-progress"]) == 0
    assert [r["step"] for r in metrics(crashed)] == list(range(1, 11))  # steps 7.. logged once, after the resume
    assert [r["loss"] for r in metrics(crashed)] == [r["loss"] for r in metrics(straight)]
    a, b = load_checkpoint(list_checkpoints(straight)[-1]), load_checkpoint(list_checkpoints(crashed)[-1])
    assert a["step"] == b["step"] == 10
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k

    # extend the finished run; a setting that changes the computation may not change on resume
    assert cli.main(["train", "--resume", "--out", str(straight), "--steps", "12", "--no-progress"]) == 0
    assert metrics(straight)[-1]["step"] == 12
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--resume", "--out", str(straight), "--steps", "14", "--d-model", "32"])
    assert e.value.code == 2


def test_module_entry_points(tmp_path):
    run = subprocess.run([sys.executable, "-m", "annotated_transformer.cli", "train", "--help"], env=env(),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "--max-tokens" in run.stdout
    run = subprocess.run([sys.executable, "-m", "annotated_transformer.train_command", *TINY, "--steps", "2",
                          "--out", str(tmp_path / "m")], env=env(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "done: step 2" in run.stdout
    assert "exact copies of the 40 held-out sequences (greedy decoding): " in run.stdout  # the copy task says


def test_torchrun_two_processes_matches_one(tmp_path):
    "DDP through the real command: 2 gloo processes vs 1 process, same global batches, float32 tolerance."
    args = [*TINY, "--steps", "3", "--dropout", "0"]
    one = subprocess.run([sys.executable, "-m", "annotated_transformer.train_command", *args, "--out", str(tmp_path / "one")],
                         env=env(), capture_output=True, text=True, timeout=180)
    assert one.returncode == 0, one.stderr
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                          "-m", "annotated_transformer.train_command", *args, "--out", str(tmp_path / "two")],
                         env=env(), capture_output=True, text=True, timeout=180)
    assert two.returncode == 0, two.stderr[-3000:]
    assert json.loads((tmp_path / "two" / "config.json").read_text())["world_size"] == 2
    l1, l2 = [r["loss"] for r in metrics(tmp_path / "one")], [r["loss"] for r in metrics(tmp_path / "two")]
    assert len(l1) == len(l2) == 3
    assert l1 == pytest.approx(l2, rel=1e-5)
    w1 = load_checkpoint(list_checkpoints(tmp_path / "one")[-1])["model"]
    w2 = load_checkpoint(list_checkpoints(tmp_path / "two")[-1])["model"]
    for k in w1:
        if k.endswith("w_k.bias"):
            # The key bias adds q·b_k to every score of a query, which softmax ignores: its gradient is 0 in exact
            # arithmetic, so Adam (which divides by the gradient's RMS) turns float32 rounding noise into steps
            # of size lr, different in the two runs. (The float64 DDP test in test_training.py compares all.)
            continue
        torch.testing.assert_close(w1[k], w2[k], rtol=1e-4, atol=1e-5)

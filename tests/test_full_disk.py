"""A full disk inside `torch.save`, on a real one: a small tmpfs that fills up in the middle of a checkpoint.

PyTorch's zip writer does not pass the `OSError` of a failed write on: it raises a `RuntimeError` of its own
("unexpected pos ..."). The run must still say what tests/test_run_safety.py's patched writer gets: one line
`cannot write FILE: No space left on device`, the old file left as it was, and (from `annotated-transformer
train`) exit status 1 naming the newest complete checkpoint. Mounting needs root with CAP_SYS_ADMIN on Linux;
elsewhere these tests are skipped and say why."""
import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from annotated_transformer.checkpoint import (RunWriteError, atomic_torch_save, checkpoint_path,
                                              list_checkpoints, load_checkpoint)
from annotated_transformer.cli import main as cli
from test_cli import TINY

PAGE = 4096


@pytest.fixture
def small_disk(tmp_path):
    "mount(n_bytes) -> a fresh folder on a tmpfs of that size; every tmpfs is unmounted at the end."
    if not sys.platform.startswith("linux"):
        pytest.skip("a tmpfs needs Linux")
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (with CAP_SYS_ADMIN)")
    if not (shutil.which("mount") and shutil.which("umount")):
        pytest.skip("no mount/umount command here")
    mounted = []

    def mount(n_bytes: int) -> Path:
        where = tmp_path / f"disk{len(mounted)}"
        where.mkdir()
        size = -(-int(n_bytes) // PAGE) * PAGE
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (no CAP_SYS_ADMIN?): {done.stderr.strip()}")
        mounted.append(where)
        return where

    try:
        yield mount
    finally:
        for where in reversed(mounted):
            if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_full_disk_inside_torch_save_is_one_line_and_keeps_the_old_file(small_disk):
    disk = small_disk(256 * 1024)
    path = disk / "ckpt.pt"
    atomic_torch_save({"step": torch.tensor(1), "w": torch.ones(10)}, path)
    good = path.read_bytes()
    big = {"step": torch.tensor(2), "w": torch.randn(256 * 1024)}  # 1 MiB of float32: 4x the disk
    with pytest.raises(RunWriteError) as caught:
        atomic_torch_save(big, path)
    assert str(caught.value) == f"cannot write {path}: No space left on device"
    assert caught.value.errno == errno.ENOSPC and isinstance(caught.value, OSError)
    assert os.listdir(disk) == ["ckpt.pt"]  # the temporary file is gone ...
    assert path.read_bytes() == good  # ... and the good checkpoint is the one in place
    assert torch.load(path, weights_only=True)["step"] == 1
    # the room came back: a checkpoint that fits is written after the failure
    atomic_torch_save({"step": torch.tensor(3)}, path)
    assert torch.load(path, weights_only=True)["step"] == 3


def test_a_pickling_error_is_not_called_a_failed_write(small_disk):
    "Only write failures become RunWriteError; an object torch.save cannot pickle is a bug, said as it is."
    disk = small_disk(256 * 1024)
    with pytest.raises(Exception) as caught:
        atomic_torch_save({"f": lambda: 0}, disk / "ckpt.pt")
    assert not isinstance(caught.value, RunWriteError)
    assert os.listdir(disk) == []


def test_the_train_command_on_a_full_disk_exits_1_naming_the_newest_checkpoint(small_disk, tmp_path, capsys):
    tiny = [*TINY, "--checkpoint-every", "2"]  # checkpoints of about 140 kB (Adam's state, the generators)
    sizes = tmp_path / "sizes"
    assert cli(["train", *tiny, "--steps", "2", "--out", str(sizes)]) == 0
    size = checkpoint_path(sizes, 2).stat().st_size
    # room for the run's small files and one checkpoint and a half: the second fills the disk half way through
    out = small_disk(1.5 * size + 64 * 1024) / "run"
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        cli(["train", *tiny, "--steps", "6", "--out", str(out)])
    assert stopped.value.code == 1
    newest = checkpoint_path(out, 2)
    assert capsys.readouterr().err.splitlines() == [
        f"annotated-transformer train: error: cannot write {checkpoint_path(out, 4)}: No space left on device; "
        f"the newest complete checkpoint is {newest} (step 2): once that is fixed, continue with: "
        f"annotated-transformer train --resume --out {out}"]
    assert list_checkpoints(out) == [newest] and load_checkpoint(newest)["step"] == 2
    assert not list(out.rglob("*.tmp"))

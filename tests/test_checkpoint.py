"""Tests for annotated_transformer.checkpoint (chapter 07c): safe loading, atomic writes. The trainer's use of
checkpoints (resuming exactly, pruning, run directories) is tested in test_training.py and test_run_safety.py."""
import pytest
import torch

from annotated_transformer.checkpoint import atomic_torch_save, load_checkpoint, save_checkpoint
from annotated_transformer.training import load_model


class _Payload:
    "Unpickling this calls open(path, 'w'): it creates a file."
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_unsafe_checkpoint_is_refused(tmp_path):
    marker = tmp_path / "pwned.txt"
    bad = tmp_path / "bad.pt"
    torch.save({"format": "annotated-transformer-checkpoint", "model": {}, "x": _Payload(str(marker))}, bad)
    with pytest.raises(ValueError, match=r"^refused: .*bad\.pt contains code \(loading it would call (io|builtins)\.open"):
        load_checkpoint(bad)
    with pytest.raises(ValueError, match=r"^refused: .*bad\.pt contains code"):
        load_model(bad)
    assert not marker.exists()
    # the payload is real: an unrestricted load runs it (this is what weights_only=True prevents)
    torch.load(bad, weights_only=False)
    assert marker.exists()


def test_not_a_checkpoint(tmp_path):
    torch.save({"weights": torch.zeros(2)}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not an annotated-transformer checkpoint"):
        load_checkpoint(tmp_path / "other.pt")


def test_atomic_save_leaves_no_partial_file(tmp_path, monkeypatch):
    model = torch.nn.Linear(4, 3)
    path = tmp_path / "ckpt.pt"
    save_checkpoint(path, model, step=1)
    good = path.read_bytes()

    def broken_save(obj, f, *args, **kwargs):
        f.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, model, step=2)
    with pytest.raises(OSError, match="disk full"):
        atomic_torch_save({"a": 1}, tmp_path / "new.pt")
    monkeypatch.undo()
    assert path.read_bytes() == good  # the old checkpoint is intact
    assert load_checkpoint(path)["step"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]  # no temporary or partial files

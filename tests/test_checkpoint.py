"""Tests for annotated_transformer.checkpoint (chapter 20): safe loading, atomic writes and appends, the run lock,
stop signals, sizes. The trainer's use of checkpoints (resuming exactly, pruning, run directories) is tested in
test_training.py and test_run_safety.py, and so is the train command's use of the lock, the signals and the memory
measurement."""
import errno
import os
import signal
import time

import pytest
import torch

from annotated_transformer.runs import exit_status, format_size, LOCK_FILE, parse_size, RunLock, RunLocked, Stopped, StopSignals
from annotated_transformer.checkpoint import append_line, atomic_torch_save, atomic_write_bytes, load_checkpoint, RunWriteError, save_checkpoint
from annotated_transformer.checkpoint import load_model


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


def test_append_line_writes_a_whole_line_or_nothing(tmp_path, monkeypatch):
    path = tmp_path / "metrics.jsonl"
    append_line(path, '{"step": 1}')
    real_write = os.write

    def half_then_full(fd, data):  # a disk that takes 3 bytes, then is full
        real_write(fd, bytes(data[:3]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(RunWriteError, match=r"cannot write .*metrics\.jsonl: No space left on device$"):
        append_line(path, '{"step": 2}')
    monkeypatch.undo()
    assert path.read_text() == '{"step": 1}\n'
    with pytest.raises(RunWriteError, match="No such file or directory"):
        atomic_write_bytes(b"{}", tmp_path / "gone" / "config.json")


def test_run_lock_is_exclusive_names_its_holder_and_is_released(tmp_path):
    with RunLock(tmp_path):
        with pytest.raises(RunLocked, match=rf"{tmp_path} is in use: another process \(PID {os.getpid()}\)"):
            RunLock(tmp_path)
    assert (tmp_path / LOCK_FILE).read_text() == ""
    RunLock(tmp_path).release()


def test_stop_signals_defer_and_restore(monkeypatch):
    before = signal.getsignal(signal.SIGTERM)
    with StopSignals() as stop:
        stop.deferring = True
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)  # a second signal changes nothing
        assert stop() == signal.SIGTERM and exit_status(stop()) == 143
    assert signal.getsignal(signal.SIGTERM) == before
    with pytest.raises(Stopped):
        with StopSignals():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)


def test_sizes_read_and_written():
    assert parse_size("8G") == 8 * 10**9 and parse_size("1.5GiB") == 3 * 2**29 and parse_size(" 100 kb ") == 10**5
    assert format_size(16.4e9) == "16.4 GB" and format_size(850e6) == "850 MB"
    for bad in ("", "G", "8 GB of it", "-1G"):
        with pytest.raises(ValueError, match="is not a size"):
            parse_size(bad)


def test_a_checkpoint_that_does_not_fit_names_the_keys_and_their_shapes(tmp_path):
    "One line that names the first key whose shape differs (both shapes), is missing, or is not the model's."
    from annotated_transformer.model import make_model
    from annotated_transformer.train_config import model_config_dict
    torch.manual_seed(0)
    wide, two_layers = make_model(11, 11, N=1, d_model=32, d_ff=64, h=4), make_model(11, 11, N=2, d_model=16, d_ff=64, h=4)
    path = save_checkpoint(tmp_path / "wide.pt", wide)
    with pytest.raises(ValueError) as info:
        load_checkpoint(path, make_model(11, 11, N=1, d_model=16, d_ff=64, h=4))
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path} does not fit this model: size mismatch for ")
    assert "encoder.layers.0.self_attn.w_q.weight: (32, 32) in the checkpoint, (16, 16) in the model (and " in message
    with pytest.raises(ValueError, match=r"does not fit this model: missing from the checkpoint: "
                                         r"encoder\.layers\.1\.self_attn\.w_q\.weight \(16, 16\) \(and \d+ more\)$"):
        load_checkpoint(save_checkpoint(tmp_path / "one.pt", make_model(11, 11, N=1, d_model=16, d_ff=64, h=4)),
                        two_layers)
    with pytest.raises(ValueError, match=r"does not fit this model: not in the model: "
                                         r"encoder\.layers\.1\.self_attn\.w_q\.weight \(16, 16\) \(and \d+ more\)$"):
        load_checkpoint(save_checkpoint(tmp_path / "two.pt", two_layers),
                        make_model(11, 11, N=1, d_model=16, d_ff=64, h=4))
    # load_model: weights that do not fit the model_config saved beside them
    save_checkpoint(tmp_path / "run" / "checkpoints" / "step_000001.pt", wide, step=1,
                    model_config=model_config_dict(two_layers))
    with pytest.raises(ValueError, match=r"its weights do not fit its model_config: size mismatch for "
                                         r"encoder\.layers\.0\.self_attn\.w_q\.weight: \(32, 32\) in the checkpoint, \(16, 16\) in the model"):
        load_model(tmp_path / "run")

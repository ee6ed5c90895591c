"""The copy task of chapter 10: its pairs and its data builder (training on it is tested in test_training.py)."""
from types import SimpleNamespace

import pytest

from annotated_transformer.copytask import copy_task_pairs
from annotated_transformer.train_config import TrainConfig
from annotated_transformer.sampler import copy_data, get_data_builder


def test_copy_task_pairs():
    pairs = copy_task_pairs(100, 11, 10, seed=0)
    assert all(s == t and 1 <= len(s) <= 10 and all(3 <= x < 11 for x in s) for s, t in pairs)
    assert copy_task_pairs(100, 11, 10, seed=0) == pairs
    other = copy_task_pairs(50, 11, 10, seed=1, exclude=pairs)
    assert not {tuple(s) for s, _ in other} & {tuple(s) for s, _ in pairs}
    with pytest.raises(ValueError, match="no symbols"):
        copy_task_pairs(1, 3, 5)


def test_copy_data_is_the_registered_copy_builder_and_keeps_dev_unseen():
    assert get_data_builder("copy") is copy_data
    options = {"train_size": 200, "dev_size": 30, "vocab": 9, "max_length": 5}
    cfg = TrainConfig(data_options=options, seed=3)
    data = copy_data(cfg)
    assert (len(data.train), len(data.dev), data.src_vocab, data.tgt_vocab) == (200, 30, 9, 9)
    assert not {tuple(s) for s, _ in data.dev} & {tuple(s) for s, _ in data.train}
    assert copy_data(SimpleNamespace(data_options=options, seed=3)).train == data.train
    assert max(len(s) for s, _ in data.train) == 5

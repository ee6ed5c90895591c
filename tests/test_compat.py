"""Files and commands of earlier releases (appendix 09d), end to end: a checkpoint and a run configuration saved before
`inner_dropout` existed keep the dropout they trained with; a partial configuration gets today's (the paper's)
default; the old data option and the old flags are read under their new names."""
import json
import random

import pytest
import torch

from annotated_transformer.checkpoint import load_model, save_checkpoint
from annotated_transformer.model import TransformerConfig, make_model, model_config_dict
from annotated_transformer.subwords import corpus_data
from annotated_transformer.train_command import resolve_config, build_parser
from annotated_transformer.train_config import TrainConfig

FIRST_RELEASE_MODEL = {"src_vocab": 20, "tgt_vocab": 20, "N": 1, "d_model": 16, "d_ff": 32, "h": 2, "dropout": 0.1,
                       "share_embeddings": True, "norm_first": False, "max_len": 64}


def _dropout_ps(model) -> dict[str, float]:
    "p of every nn.Dropout in the first encoder layer's attention and feed-forward sublayers."
    layer = model.encoder.layers[0]
    return {"attention weights": layer.self_attn.dropout.p, "feed-forward hidden": layer.feed_forward.dropout.p}


def test_a_checkpoint_saved_before_the_switch_keeps_its_inner_dropout(tmp_path):
    torch.manual_seed(0)
    model = make_model(20, 20, N=1, d_model=16, d_ff=32, h=2, inner_dropout=True)
    save_checkpoint(tmp_path / "old.pt", model, model_config=FIRST_RELEASE_MODEL, step=3)
    old = load_model([tmp_path / "old.pt"])
    assert old.config.inner_dropout is True and old.config.max_positions == 64
    assert _dropout_ps(old) == {"attention weights": 0.1, "feed-forward hidden": 0.1}
    save_checkpoint(tmp_path / "new.pt", model, model_config=model_config_dict(make_model(20, 20, N=1, d_model=16,
                                                                                            d_ff=32, h=2)))
    new = load_model([tmp_path / "new.pt"])  # saved today, default settings: the paper's dropouts only
    assert new.config.inner_dropout is False
    assert _dropout_ps(new) == {"attention weights": 0.0, "feed-forward hidden": 0.0}


def test_run_configs_saved_before_the_switch_and_partial_ones(tmp_path):
    saved_model = {k: v for k, v in FIRST_RELEASE_MODEL.items() if k not in ("src_vocab", "tgt_vocab")}
    assert TrainConfig.from_dict({"model": saved_model, "steps": 5}).model.inner_dropout is True
    flat = {"layers": 2, "heads": 4, "d_model": 64, "d_ff": 128, "dropout": 0.1, "share_embeddings": True,
            "norm_first": False, "max_len": 256, "steps": 5}  # before TrainConfig held the model
    assert TrainConfig.from_dict(flat).model.inner_dropout is True
    partial = tmp_path / "mine.json"
    partial.write_text(json.dumps({"model": {"N": 2, "dropout": 0.2}, "steps": 5}))
    cfg = TrainConfig.from_dict(json.loads(partial.read_text()))
    assert cfg.model.inner_dropout is False and cfg.model.dropout == 0.2
    assert TrainConfig().model == TransformerConfig() and TransformerConfig().inner_dropout is False


def test_the_flag_switches_it(tmp_path):
    args = build_parser().parse_args(["--inner-dropout", "--out", str(tmp_path / "r")])
    assert resolve_config(args)[0].model.inner_dropout is True
    args = build_parser().parse_args(["--out", str(tmp_path / "r")])
    assert resolve_config(args)[0].model.inner_dropout is False


def test_the_old_data_option_name_is_read(tmp_path):
    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 8))) for _ in range(300)]
    rows = [" ".join(rng.choices(words, k=rng.randint(1, 6))) + "\t" + " ".join(rng.choices(words, k=3))
            for _ in range(2000)]
    data = tmp_path / "pairs.tsv"
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    options = {"spec": f"tsv:{data}", "vocab_size": 400, "dev_frac": 0.1}
    cfg = TrainConfig(data="corpus", data_options={**options, "max_len": 6}, threads=1)
    new = TrainConfig(data="corpus", data_options={**options, "max_subwords": 6}, threads=1)
    old_name, new_name = corpus_data(cfg), corpus_data(new)
    assert old_name.train == new_name.train and 0 < len(old_name.train) < 1800  # pairs over 6 subwords left out
    clash = TrainConfig(data="corpus", data_options={**options, "max_len": 3, "max_subwords": 4}, threads=1)
    with pytest.raises(ValueError, match="max_len=3 and max_subwords=4 in --data-option disagree"):
        corpus_data(clash)

"""Files and commands of earlier releases (appendix E), end to end: a checkpoint and a run configuration saved before
`inner_dropout` existed keep the dropout they trained with; a partial configuration gets today's (the paper's)
default; the old data option and the old flags are read under their new names from files. An old name typed today
(in code, as a flag or a data option on the command line) is refused since 0.3.0, in one line naming the old and the
new spelling; an old name read from a file (a checkpoint, a config.json, a --config file) is read without a word."""
import json
import random
import warnings

import pytest
import torch

from annotated_transformer import cli
from annotated_transformer.checkpoint import load_model, save_checkpoint
from annotated_transformer.compat import (COPY_KEYS, FLAT_MODEL_KEYS, OLD_MODEL_FLAGS, RENAMED_DATA_OPTIONS,
                                          RENAMED_MODEL_KEYS)
from annotated_transformer.model import TransformerConfig, make_model
from annotated_transformer.train_config import model_config_dict
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
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # an old file loads without a word
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
    flat = {"layers": 2, "heads": 4, "d_model": 64, "d_ff": 128, "dropout": 0.1, "share_embeddings": True,
            "norm_first": False, "max_len": 256, "steps": 5}  # before TrainConfig held the model
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # read from a file: no warning
        assert TrainConfig.from_dict({"model": saved_model, "steps": 5}, warn=False).model.inner_dropout is True
        assert TrainConfig.from_dict(flat, warn=False).model.inner_dropout is True
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


# ---- old names typed today: refused since 0.3.0, naming both spellings ------------------------------------------
TYPED_IN_CODE = [  # (dict given to TrainConfig.from_dict, the error it raises)
    ({"layers": 2}, r"TrainConfig key 'layers' was removed in annotated-transformer 0\.3\.0: write model\.N \(TrainConfig\(model=TransformerConfig"),
    ({"heads": 4}, r"TrainConfig key 'heads' was removed in annotated-transformer 0\.3\.0: write model\.h"),
    ({"max_len": 64}, r"TrainConfig key 'max_len' was removed in annotated-transformer 0\.3\.0: write model\.max_positions"),
    ({"d_model": 64}, r"TrainConfig key 'd_model' was removed in annotated-transformer 0\.3\.0: write model\.d_model"),
    ({"d_ff": 64}, r"TrainConfig key 'd_ff' was removed in annotated-transformer 0\.3\.0: write model\.d_ff"),
    ({"dropout": 0.2}, r"TrainConfig key 'dropout' was removed in annotated-transformer 0\.3\.0: write model\.dropout"),
    ({"share_embeddings": False}, r"TrainConfig key 'share_embeddings' was removed in annotated-transformer 0\.3\.0: write model\.share_embeddings"),
    ({"norm_first": True}, r"TrainConfig key 'norm_first' was removed in annotated-transformer 0\.3\.0: write model\.norm_first"),
    ({"model": {"max_len": 64}}, r"the model setting 'max_len' was removed in annotated-transformer 0\.3\.0: write 'max_positions'"),
    ({"copy_vocab": 9}, r"TrainConfig key 'copy_vocab' was removed in annotated-transformer 0\.3\.0: write data_options=\{'vocab': \.\.\.\}"),
    ({"copy_len": 5}, r"TrainConfig key 'copy_len' was removed in annotated-transformer 0\.3\.0: write data_options=\{'max_length'"),
    ({"copy_train_size": 50}, r"TrainConfig key 'copy_train_size' was removed in annotated-transformer 0\.3\.0: write data_options=\{'train_size'"),
    ({"copy_dev_size": 5}, r"TrainConfig key 'copy_dev_size' was removed in annotated-transformer 0\.3\.0: write data_options=\{'dev_size'"),
    ({"data": "corpus", "data_options": {"max_len": 6}},
     r"the data option 'max_len' was removed in annotated-transformer 0\.3\.0: write 'max_subwords'"),
]


def test_every_old_name_has_a_typed_case():
    typed = " ".join(json.dumps(values) for values, _ in TYPED_IN_CODE)
    for old in [*FLAT_MODEL_KEYS, *COPY_KEYS, *RENAMED_MODEL_KEYS, *RENAMED_DATA_OPTIONS]:
        assert f'"{old}"' in typed, old


@pytest.mark.parametrize("values,message", TYPED_IN_CODE, ids=[m.split(" was ")[0] for _, m in TYPED_IN_CODE])
def test_an_old_name_typed_in_code_is_refused_with_both_names(values, message):
    with pytest.raises(ValueError, match=message) as caught:
        TrainConfig.from_dict(values)
    assert "(files saved by earlier releases still load)" in str(caught.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # read as from a file: the old name, without a word
        TrainConfig.from_dict(values, warn=False)


def test_old_names_read_from_a_file_mean_what_they_meant():
    cfg = TrainConfig.from_dict({"layers": 2, "heads": 4, "max_len": 64, "copy_vocab": 9}, warn=False)
    assert (cfg.model.N, cfg.model.h, cfg.model.max_positions, cfg.data_options) == (2, 4, 64, {"vocab": 9})
    corpus = TrainConfig.from_dict({"data": "corpus", "data_options": {"max_len": 6, "spec": "tatoeba"}}, warn=False)
    assert corpus.data_options == {"max_subwords": 6, "spec": "tatoeba"}


@pytest.mark.parametrize("flag,new,value", [("--layers", "--N", "2"), ("--heads", "--h", "4"),
                                            ("--max-len", "--max-positions", "64")])
def test_an_old_flag_is_refused_with_both_names(tmp_path, flag, new, value):
    assert OLD_MODEL_FLAGS[flag].replace("_", "-") == new.removeprefix("--")
    args = build_parser().parse_args([flag, value, "--out", str(tmp_path / "r")])
    with pytest.raises(ValueError, match=rf"{flag} was removed in annotated-transformer 0\.3\.0: write {new} "):
        resolve_config(args)
    cfg = resolve_config(build_parser().parse_args([new, value, "--out", str(tmp_path / "r")]))[0]
    assert getattr(cfg.model, OLD_MODEL_FLAGS[flag]) == int(value)


def test_an_old_data_option_on_the_command_line_is_refused(tmp_path):
    args = build_parser().parse_args(["--data", "corpus", "--data-option", "spec=tatoeba", "--data-option", "max_len=6",
                                      "--out", str(tmp_path / "r")])
    with pytest.raises(ValueError, match=r"the data option 'max_len' was removed in annotated-transformer 0\.3\.0: "
                                         r"write 'max_subwords'"):
        resolve_config(args)


def test_the_command_says_it_in_one_line_and_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["train", "--layers", "2", "--heads", "4", "--print-config", "--out", str(tmp_path / "r")])
    lines = capsys.readouterr().err.splitlines()
    assert stop.value.code == 2 and lines == [
        "annotated-transformer train: error: --layers was removed in annotated-transformer 0.3.0: write --N "
        "(files saved by earlier releases still load)"], lines
    assert cli.main(["train", "--N", "2", "--h", "4", "--print-config", "--out", str(tmp_path / "r")]) == 0
    assert capsys.readouterr().err == ""


# ---- old names read from files: never a warning ------------------------------------------------------------------
FIRST_RELEASE_RUN = {"layers": 1, "heads": 2, "d_model": 16, "d_ff": 32, "dropout": 0.1, "share_embeddings": True,
                     "norm_first": False, "max_len": 64, "copy_vocab": 9, "copy_len": 5, "copy_train_size": 40,
                     "copy_dev_size": 5, "steps": 3}


def test_resuming_a_checkpoint_of_an_earlier_release_says_nothing(tmp_path):
    torch.manual_seed(0)
    model = make_model(20, 20, N=1, d_model=16, d_ff=32, h=2, inner_dropout=True)
    ckpt = save_checkpoint(tmp_path / "step_000003.pt", model, model_config=FIRST_RELEASE_MODEL,
                           train_config=FIRST_RELEASE_RUN, step=3)
    args = build_parser().parse_args(["--resume", str(ckpt), "--out", str(tmp_path / "more"), "--steps", "6"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        cfg, resume_from = resolve_config(args)
        old = load_model(ckpt)
    assert resume_from == ckpt and (cfg.model.N, cfg.model.h, cfg.model.max_positions, cfg.steps) == (1, 2, 64, 6)
    assert cfg.data_options == {"vocab": 9, "max_length": 5, "train_size": 40, "dev_size": 5}
    assert cfg.model.inner_dropout is True and old.config.inner_dropout is True


def test_a_config_file_of_an_earlier_release_says_nothing(tmp_path, capsys):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({**FIRST_RELEASE_RUN, "data": "corpus", "data_options": {"spec": "tatoeba",
                                                                                       "max_len": 6}}))
    for key in COPY_KEYS:  # a corpus run's file: its unused copy settings are dropped
        assert key in json.loads(old.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        cfg = resolve_config(build_parser().parse_args(["--config", str(old), "--out", str(tmp_path / "r")]))[0]
        assert cli.main(["train", "--config", str(old), "--print-config", "--out", str(tmp_path / "r")]) == 0
    assert capsys.readouterr().err == ""
    assert (cfg.model.N, cfg.model.max_positions, cfg.data_options) == (1, 64, {"spec": "tatoeba", "max_subwords": 6})


def test_a_run_config_json_of_an_earlier_release_says_nothing(tmp_path):
    "A run that stopped before its first checkpoint starts again from the settings its config.json recorded."
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"train": FIRST_RELEASE_RUN}))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        cfg, resume_from = resolve_config(build_parser().parse_args(["--resume", "--out", str(run)]))
    assert resume_from is None and (cfg.model.N, cfg.model.h, cfg.steps) == (1, 2, 3)

"""EncoderDecoder.save_pretrained / from_pretrained (chapter 07): a folder of config.json and model.safetensors, read
back bit for bit without pickle; weights that do not fit are refused in one line naming the key and both shapes."""
import json
import warnings

import pytest
import torch

from annotated_transformer.model import (PRETRAINED_FORMATS, EncoderDecoder, make_model, read_pretrained_config,
                                         weights_misfit)
from annotated_transformer.train_config import build_model


def tiny(**kw) -> EncoderDecoder:
    torch.manual_seed(0)
    return make_model(11, 11, **{"N": 1, "d_model": 16, "d_ff": 32, "h": 2, "dropout": 0.0, **kw})


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_round_trip_is_bit_identical(tmp_path, dtype):
    model = tiny().to(dtype)
    folder = model.save_pretrained(tmp_path / "m")
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors"]
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["format"] == PRETRAINED_FORMATS[0] and config["dtype"] == str(dtype).removeprefix("torch.")
    loaded = EncoderDecoder.from_pretrained(folder)
    assert type(loaded) is EncoderDecoder and not loaded.training and loaded.config == model.config
    a, b = model.state_dict(), loaded.state_dict()
    assert a.keys() == b.keys() and all(b[k].dtype == dtype and torch.equal(a[k], b[k]) for k in a)
    # the three tied matrices (§3.4), stored once, are one tensor again
    assert loaded.generator.proj.weight is loaded.tgt_embed[0].lut.weight is loaded.src_embed[0].lut.weight
    src = torch.tensor([[3, 4, 5, 2]])
    with torch.no_grad():
        model.eval()
        assert torch.equal(model(src, src, None), loaded(src, src, None))


def test_never_unpickles(tmp_path, monkeypatch):
    folder = tiny().save_pretrained(tmp_path / "m")

    def no_pickle(*args, **kwargs):
        raise AssertionError("from_pretrained called torch.load")
    monkeypatch.setattr(torch, "load", no_pickle)
    EncoderDecoder.from_pretrained(folder)


def test_weights_that_do_not_fit_name_the_key_and_both_shapes(tmp_path):
    folder = tiny().save_pretrained(tmp_path / "m")
    tiny(d_ff=64).save_pretrained(tmp_path / "wide")
    (folder / "model.safetensors").write_bytes((tmp_path / "wide" / "model.safetensors").read_bytes())
    with pytest.raises(ValueError) as e:
        EncoderDecoder.from_pretrained(folder)
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"{folder / 'model.safetensors'}: cannot load it")
    assert "size mismatch for encoder.layers.0.feed_forward.w_1.weight: (64, 16) in model.safetensors, " \
           "(32, 16) in the model (and 5 more)" in message
    # more layers in the config than in the file: the first missing key, with its shape
    config = json.loads((tmp_path / "wide" / "config.json").read_text())
    config["model_config"]["N"] = 2
    (tmp_path / "wide" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"missing from model\.safetensors: encoder\.layers\.1\.\S+ \(\d+(, \d+)?\)"):
        EncoderDecoder.from_pretrained(tmp_path / "wide")


def test_one_line_errors_that_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such folder"):
        EncoderDecoder.from_pretrained(tmp_path / "nowhere")
    folder = tiny().save_pretrained(tmp_path / "m")
    (folder / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(ValueError, match="model.safetensors: cannot load it .*damaged or not a safetensors file"):
        EncoderDecoder.from_pretrained(folder)
    (folder / "model.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="model.safetensors missing; a folder written by save_pretrained"):
        EncoderDecoder.from_pretrained(folder)
    folder = tiny().save_pretrained(tmp_path / "n")
    (folder / "config.json").write_bytes(b'{"format": "\xff"}')
    with pytest.raises(ValueError, match=r"n/config\.json is damaged: 'utf-8' codec"):
        EncoderDecoder.from_pretrained(folder)
    (folder / "config.json").write_text('{"model_config": {}}')
    with pytest.raises(ValueError, match="was not written by save_pretrained"):
        read_pretrained_config(folder)
    config = {"format": PRETRAINED_FORMATS[0], "model_config": {**tiny().config.to_dict(), "d_fff": 3}}
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"unknown key 'd_fff' in .*config\.json; did you mean 'd_ff'\?"):
        EncoderDecoder.from_pretrained(folder)


def test_another_arch_is_refused_with_the_loader_that_reads_it(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch_model = build_model({**tiny().config.to_dict(), "arch": "torch"})
    from annotated_transformer.model import write_pretrained
    from annotated_transformer.train_config import model_config_dict
    folder = write_pretrained(torch_model, tmp_path / "t", model_config_dict(torch_model))
    with pytest.raises(ValueError, match="describes an --arch torch model, not an EncoderDecoder: load it with "
                                         "Translator.from_pretrained"):
        EncoderDecoder.from_pretrained(folder)


def test_weights_misfit_is_none_when_it_fits():
    model = tiny()
    assert weights_misfit(model, model.state_dict()) is None
    assert weights_misfit(model, {}, where="x.bin").startswith("missing from x.bin: ")

"""Tests for annotated_transformer.torch_compare (the appendix): nn.Transformer behind our API, copied into our model
with the same function and the same training step, and the FLOPs estimate."""
from pathlib import Path
import pytest
import torch

from annotated_transformer.model import make_model
from annotated_transformer.torch_compare import TorchTransformer, torch_to_ours, training_flops
from annotated_transformer.batching import make_batch


def test_torch_to_ours_computes_the_same_function():
    torch.manual_seed(0)
    theirs = TorchTransformer(40, 40, N=2, d_model=32, d_ff=64, h=4, dropout=0.0, share_embeddings=True).double()
    with torch.no_grad():
        for p in theirs.parameters():  # move the norms and biases away from their initial 1s and 0s
            p.add_(0.1 * torch.randn_like(p))
    theirs.eval()
    ours = torch_to_ours(theirs)
    b = make_batch([([5, 6, 7, 9, 11], [8, 9]), ([5], [8, 9, 10, 11, 12])])
    real = b.tgt_out != 0
    a = theirs.generator(theirs(b.src, b.tgt_in, b.src_mask, b.tgt_mask))[real]
    o = ours.generator(ours(b.src, b.tgt_in, b.src_mask, b.tgt_mask))[real]
    torch.testing.assert_close(a, o, rtol=0, atol=1e-12)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())


def test_same_weights_same_training_step():
    "With the same weights (and no dropout), our model and nn.Transformer compute the same loss and gradients."
    from annotated_transformer.loss import LabelSmoothingLoss
    from annotated_transformer.trainer import Seq2SeqLoss
    torch.manual_seed(1)
    theirs = TorchTransformer(40, 40, N=2, d_model=32, d_ff=64, h=4, dropout=0.0, share_embeddings=True).double()
    ours = torch_to_ours(theirs).train()
    theirs.train()
    b = make_batch([([5, 6, 7, 9, 11], [8, 9]), ([5], [8, 9, 10, 11, 12]), ([7, 7, 8], [20, 21, 22])])
    crit = LabelSmoothingLoss(40, 0, 0.1, reduction="sum")
    losses = []
    for model in (theirs, ours):
        loss, _ = Seq2SeqLoss(model, crit)(b.src, b.tgt_in, b.tgt_out, b.src_mask, b.tgt_mask)
        loss.backward()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(losses[1], rel=1e-12)
    d = 32
    enc0, dec0, dec1 = (theirs.transformer.encoder.layers[0], theirs.transformer.decoder.layers[0],
                        theirs.transformer.decoder.layers[1])
    pairs = [  # (our parameter, the gradient of the same weights in nn.Transformer's layout)
        (ours.src_embed[0].lut.weight, theirs.src_embed[0].lut.weight.grad),  # shared: embeddings and generator
        (ours.generator.proj.bias, theirs.generator.proj.bias.grad),
        (ours.encoder.layers[0].self_attn.w_k.weight, enc0.self_attn.in_proj_weight.grad[d:2 * d]),
        (ours.decoder.layers[1].src_attn.w_v.bias, dec1.multihead_attn.in_proj_bias.grad[2 * d:]),
        (ours.decoder.layers[1].feed_forward.w_1.weight, dec1.linear1.weight.grad),
        (ours.decoder.layers[0].sublayer[2].norm.weight, dec0.norm3.weight.grad)]
    for mine, grad in pairs:
        torch.testing.assert_close(mine.grad, grad, rtol=1e-9, atol=1e-12)


def test_training_flops_counts_the_weight_matrices():
    mc = dict(src_vocab=50, tgt_vocab=60, N=2, d_model=16, d_ff=32, h=2, share_embeddings=False)
    model = make_model(**mc)
    matrices = sum(p.numel() for name, p in model.named_parameters() if p.dim() == 2 and "lut" not in name)
    # no attention term when the lengths are 0: then FLOPs = 6 × (weights × tokens) with S = T
    assert training_flops(mc, 10, 10, 0, 0) == 6 * matrices * 10
    assert training_flops(mc, 10, 10, 5, 7) > training_flops(mc, 10, 10, 0, 0)


@pytest.mark.parametrize("share, lengths", [(False, [(19, 11)] * 8), (True, [(3, 2), (7, 4), (19, 10), (12, 7)]),
                                            (False, [(5, 30), (9, 14)])])
def test_training_flops_equals_pytorchs_flop_counter(share, lengths):
    "FlopCounterMode (PyTorch's) counts exactly what training_flops estimates, given the padded shapes."
    from annotated_transformer.torch_compare import counted_step_flops
    from annotated_transformer.loss import LabelSmoothingLoss
    torch.manual_seed(0)
    mc = dict(src_vocab=300, tgt_vocab=300, N=2, d_model=32, d_ff=96, h=4, dropout=0.0, share_embeddings=share)
    model = make_model(**mc)
    b = make_batch([([5] * s, [6] * t) for s, t in lengths])
    B, S, T = b.src.size(0), b.src.size(1), b.tgt_in.size(1)
    counted = counted_step_flops(model, b, LabelSmoothingLoss(300, 0, 0.1, reduction="sum"))
    assert counted == training_flops(mc, B * S, B * T, S, T)
    assert all(p.grad is None for p in model.parameters())  # the count leaves no gradients behind


def _output_spreads(inner_dropout: bool) -> tuple[float, float]:
    "Variance of nn.Transformer's outputs and of ours (the same weights) over 400 dropout masks in training mode."
    torch.manual_seed(0)
    theirs = TorchTransformer(60, 60, N=2, d_model=32, d_ff=64, h=4, dropout=0.1, share_embeddings=True,
                              inner_dropout=inner_dropout).double()
    ours = torch_to_ours(theirs)
    b = make_batch([([5, 6, 7, 9, 11, 12], [8, 9]), ([5, 40], [8, 9, 10, 11, 12]), ([7, 7, 8], [20, 21, 22])])
    real = b.tgt_in != 0

    def spread(model):
        model.train()
        with torch.no_grad():
            outs = torch.stack([model(b.src, b.tgt_in, b.src_mask, b.tgt_mask) for _ in range(400)])
        return outs.var(0)[real].mean().item()

    return spread(theirs), spread(ours)


@pytest.mark.parametrize("inner_dropout", [False, True])
def test_same_dropout_as_nn_transformer(inner_dropout):
    """In training mode our layers drop out where nn.Transformer's do: over many dropout masks, their outputs spread
    alike, with the paper's dropouts only (the default) and with the attention and feed-forward ones too."""
    v_theirs, v_ours = _output_spreads(inner_dropout)
    assert v_theirs > 0.05  # dropout is on
    assert v_ours == pytest.approx(v_theirs, rel=0.05), (v_ours, v_theirs)


def test_inner_dropout_adds_dropout_inside_the_sublayers():
    "The switch adds the two inner dropouts: with it on, the outputs spread more over dropout masks."
    assert _output_spreads(True)[1] > 1.1 * _output_spreads(False)[1]


def _perturbed(*models):
    with torch.no_grad():
        for m in models:
            for p in m.parameters():  # move the norms and biases away from their initial 1s and 0s
                p.add_(0.1 * torch.randn_like(p))
            m.eval()


@pytest.mark.parametrize("norm_first", [False, True])
def test_raw_nn_transformer_into_ours_and_back(norm_first):
    "A raw nn.Transformer's stacks copied into ours (its final norms kept), and ours copied back: float64, ~1e-15."
    from annotated_transformer.masking import causal_mask
    from annotated_transformer.torch_compare import ours_to_torch
    torch.manual_seed(1)
    raw = torch.nn.Transformer(32, 4, 2, 2, 64, dropout=0.0, batch_first=True, norm_first=norm_first).double()
    ours = make_model(40, 40, N=2, d_model=32, d_ff=64, h=4, dropout=0.0, norm_first=norm_first).double()
    _perturbed(raw, ours)
    assert torch_to_ours(raw, into=ours) is ours
    b = make_batch([([5, 6, 7, 9, 11], [8, 9]), ([5], [8, 9, 10, 11, 12])])
    real = b.tgt_out != 0
    x, y = ours.src_embed(b.src), ours.tgt_embed(b.tgt_in)
    masks = dict(tgt_mask=~causal_mask(y.size(1))[0], src_key_padding_mask=b.src == 0,
                 memory_key_padding_mask=b.src == 0)
    mine = ours(b.src, b.tgt_in, b.src_mask, b.tgt_mask)
    torch.testing.assert_close(raw(x, y, **masks)[real], mine[real], rtol=0, atol=1e-10)
    back = ours_to_torch(ours)
    torch.testing.assert_close(back(b.src, b.tgt_in, b.src_mask, b.tgt_mask)[real], mine[real], rtol=0, atol=1e-10)
    raw_back = ours_to_torch(ours, raw=True)
    assert isinstance(raw_back, torch.nn.Transformer)
    torch.testing.assert_close(raw_back(x, y, **masks)[real], mine[real], rtol=0, atol=1e-10)


@pytest.mark.parametrize("norm_first", [False, True])
def test_torch_to_ours_and_back_is_the_identity(norm_first):
    from annotated_transformer.torch_compare import ours_to_torch
    torch.manual_seed(2)
    theirs = TorchTransformer(40, 40, N=2, d_model=32, d_ff=64, h=4, dropout=0.0, norm_first=norm_first).double()
    _perturbed(theirs)
    ours = torch_to_ours(theirs)
    b = make_batch([([5, 6, 7, 9, 11], [8, 9]), ([5], [8, 9, 10, 11, 12])])
    real = b.tgt_out != 0
    torch.testing.assert_close(theirs(b.src, b.tgt_in, b.src_mask, b.tgt_mask)[real],
                               ours(b.src, b.tgt_in, b.src_mask, b.tgt_mask)[real], rtol=0, atol=1e-10)
    again = ours_to_torch(ours).state_dict()
    assert again.keys() == theirs.state_dict().keys()
    assert all(torch.equal(v, again[k]) for k, v in theirs.state_dict().items())


def test_raw_converter_refuses_what_ours_cannot_hold():
    torch.manual_seed(0)
    ours = make_model(40, 40, N=2, d_model=32, d_ff=64, h=4)
    with pytest.raises(ValueError, match="pass into=make_model"):
        torch_to_ours(torch.nn.Transformer(32, 4, 2, 2, 64, batch_first=True))
    with pytest.raises(ValueError, match="'d_ff': 128"):
        torch_to_ours(torch.nn.Transformer(32, 4, 2, 2, 128, batch_first=True), into=ours)
    with pytest.raises(ValueError, match="uses ReLU"):
        torch_to_ours(torch.nn.Transformer(32, 4, 2, 2, 64, activation="gelu", batch_first=True), into=ours)
    with pytest.raises(ValueError, match="into= is for a raw nn.Transformer"):
        torch_to_ours(TorchTransformer(40, 40, N=2, d_model=32, d_ff=64, h=4), into=ours)


def _raw(**settings):
    "A small float64 nn.Transformer (the sizes of `_small_ours`) with its weights moved off their initial values."
    torch.manual_seed(3)
    raw = torch.nn.Transformer(32, 4, 2, 2, 64, **{"dropout": 0.0, "batch_first": True, **settings}).double()
    _perturbed(raw)
    return raw


def _small_ours(**settings):
    torch.manual_seed(4)
    ours = make_model(40, 40, N=2, d_model=32, d_ff=64, h=4, **{"dropout": 0.0, **settings}).double()
    _perturbed(ours)
    return ours


def _log_probs(ours, raw, batch_first=True):
    "Log-probabilities at the real target positions: ours, and the raw nn.Transformer's stacks between our ends."
    from annotated_transformer.masking import causal_mask
    b = make_batch([([5, 6, 7, 9, 11], [8, 9]), ([5], [8, 9, 10, 11, 12])])
    real = b.tgt_out != 0
    x, y = ours.src_embed(b.src), ours.tgt_embed(b.tgt_in)
    flip = (lambda t: t) if batch_first else (lambda t: t.transpose(0, 1))
    states = flip(raw(flip(x), flip(y), tgt_mask=~causal_mask(y.size(1))[0], src_key_padding_mask=b.src == 0,
                      memory_key_padding_mask=b.src == 0))
    return ours.generator(states)[real], ours.generator(ours(b.src, b.tgt_in, b.src_mask, b.tgt_mask))[real]


@pytest.mark.parametrize("settings, into, match", [
    (dict(layer_norm_eps=1e-6), {}, r"^layer_norm_eps=1e-06: our LayerNorms use eps=1e-05"),
    (dict(activation="gelu"), {}, r"^activation='gelu': our feed-forward network uses ReLU"),
    (dict(activation=torch.nn.functional.silu), {}, r"^activation='silu'"),
    (dict(bias=False), {}, r"^bias=False: our layers have biases"),
    (dict(dropout=0.1), dict(dropout=0.1), r"^dropout=0.1 on the attention weights .*\(inner_dropout=False\)"),
    (dict(dropout=0.1), dict(dropout=0.1, inner_dropout=True, dtype=torch.float32), r"^dtype=torch.float64: our model holds torch.float32"),
    (dict(dropout=0.2), dict(dropout=0.1, inner_dropout=True), r"^dropout=0.2: our model drops 0.1 of each sublayer's output"),
    (dict(custom_encoder=torch.nn.Identity()), {}, r"^custom_encoder/custom_decoder: ours copies stacks of"),
])
@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_raw_converter_refuses_each_setting_it_cannot_carry(settings, into, match):
    """Issue 61: nn.Transformer(layer_norm_eps=1e-6) was accepted without a word (log-probabilities off by 8e-7, eps
    1e-6 and 1e-5 mixed). Each setting our model cannot hold now fails in one line that names it and its value."""
    dtype = into.pop("dtype", torch.float64)
    ours = _small_ours(**into).to(dtype)
    with pytest.raises(ValueError, match=match):
        torch_to_ours(_raw(**settings), into=ours)


def test_raw_converter_checks_every_layer():
    "A setting changed in one layer of one stack (here the last decoder layer's third LayerNorm) is refused too."
    raw = _raw()
    raw.decoder.layers[1].norm3.eps = 1e-6
    with pytest.raises(ValueError, match=r"^layer_norm_eps=\(1e-05, 1e-05, 1e-06\)"):
        torch_to_ours(raw, into=_small_ours())
    raw = _raw()
    raw.encoder.layers[1].linear2.bias = None
    with pytest.raises(ValueError, match=r"^bias=False"):
        torch_to_ours(raw, into=_small_ours())


@pytest.mark.parametrize("settings, into", [
    (dict(activation=torch.nn.ReLU()), {}),                               # the module, not the string
    (dict(batch_first=False), {}),                                        # no weight depends on it
    (dict(dropout=0.1, norm_first=True), dict(dropout=0.1, inner_dropout=True, norm_first=True)),
    (dict(layer_norm_eps=1e-5), {}),                                      # ours, said out loud
])
def test_raw_converter_carries_the_settings_it_accepts(settings, into):
    "What the converter accepts it copies: the same log-probabilities in float64, to 1e-12."
    raw, ours = _raw(**settings), _small_ours(**into)
    assert torch_to_ours(raw, into=ours) is ours
    with torch.no_grad():
        theirs, mine = _log_probs(ours, raw, settings.get("batch_first", True))
    torch.testing.assert_close(theirs, mine, rtol=0, atol=1e-12)


@pytest.mark.parametrize("positional", ["rope", "relative"])
def test_the_torch_architecture_refuses_positions_inside_attention(positional):
    "nn.MultiheadAttention has no place for rotary or relative positions: refused in one line, not built without them."
    from annotated_transformer.model import TransformerConfig
    from annotated_transformer.train_config import build_model
    with pytest.raises(ValueError, match=f"positional='{positional}'.*--arch ours"):
        build_model(TransformerConfig(src_vocab=11, tgt_vocab=11, N=1, d_model=32, d_ff=64, h=4,
                                      positional=positional), arch="torch")


# ---- Harvard's notebook -------------------------------------------------------------------------------------------
def _harvard_fixture():
    from safetensors.torch import load_file
    fixture = load_file(str(Path(__file__).parent / "fixtures" / "harvard_small.safetensors"))
    state = {k[len("state."):]: v for k, v in fixture.items() if k.startswith("state.")}
    return fixture, state


def test_harvard_to_ours_matches_the_outputs_of_harvards_code():
    "Weights and log-probabilities made by Harvard's make_model (tools/harvard_fixture.py): ours equal to 1e-12."
    from annotated_transformer.torch_compare import HarvardLayerNorm, harvard_to_ours
    fixture, state = _harvard_fixture()
    model = harvard_to_ours(state, h=4)
    with torch.no_grad():
        out = model.generator(model(*(fixture[f"input.{k}"] for k in ("src", "tgt", "src_mask", "tgt_mask"))))
    assert out.dtype == torch.float64 and (out - fixture["output.log_probs"]).abs().max() < 1e-12
    norms = [m for m in model.modules() if isinstance(m, HarvardLayerNorm)]
    assert len(norms) == 2 * 2 + 3 * 2 + 2 and not any(isinstance(m, torch.nn.LayerNorm) for m in model.modules())
    assert model.src_embed[0].lut.weight is not model.tgt_embed[0].lut.weight  # separate tables


def test_harvard_layer_norm_is_harvards_formula():
    from annotated_transformer.torch_compare import HarvardLayerNorm
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    norm = HarvardLayerNorm(8).double()
    with torch.no_grad():
        norm.weight.normal_(), norm.bias.normal_()
    by_hand = norm.weight * (x - x.mean(-1, keepdim=True)) / (x.std(-1, unbiased=True, keepdim=True) + 1e-6) + norm.bias
    torch.testing.assert_close(norm(x), by_hand, rtol=0, atol=1e-14)


def test_harvard_to_ours_names_what_does_not_fit():
    from annotated_transformer.torch_compare import harvard_to_ours
    _, state = _harvard_fixture()
    with pytest.raises(KeyError, match="lacks 2 of our weights, first 'decoder.layers.1.feed_forward.w_2.bias'"):
        harvard_to_ours({k: v for k, v in state.items() if "decoder.layers.1.feed_forward.w_2" not in k}, h=4)
    bad = dict(state, **{"generator.proj.weight": torch.zeros(5, 32, dtype=torch.float64)})
    with pytest.raises(ValueError, match=r"'generator.proj.weight' has shape \(5, 32\), ours .* \(13, 32\)"):
        harvard_to_ours(bad, h=4)
    with pytest.raises(KeyError, match="no 'src_embed.0.lut.weight'"):
        harvard_to_ours({}, h=4)
    extra = dict(state, **{"encoder.layers.0.spare.weight": torch.zeros(2)})
    with pytest.raises(KeyError, match="has no place in our model"):
        harvard_to_ours(extra, h=4)


def test_a_converted_harvard_model_refuses_save_pretrained(tmp_path):
    "from_pretrained would rebuild PyTorch's LayerNorm where Harvard's was: saving it that way is refused."
    from annotated_transformer.torch_compare import harvard_to_ours
    _, state = _harvard_fixture()
    model = harvard_to_ours(state, h=4)
    with pytest.raises(ValueError, match="holds HarvardLayerNorm, which no TransformerConfig setting builds"):
        model.save_pretrained(tmp_path / "harvard")
    assert not (tmp_path / "harvard" / "model.safetensors").exists()

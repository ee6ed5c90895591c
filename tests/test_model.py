"""Tests for annotated_transformer.model (chapter 07, nbs/07_model.ipynb).

- equivalence with PyTorch's nn.TransformerEncoder / nn.TransformerDecoder with copied weights (float64),
  post-norm (the paper) and pre-norm (with the final LayerNorm);
- properties the masks promise: no information from later target tokens, source padding changes nothing,
  fully padded rows stay finite; dropout only in training mode;
- Table 3 parameter counts (built on the meta device); weight sharing; error messages.
"""
import contextlib
import dataclasses

import pytest
import torch
from torch import nn

from annotated_transformer.masking import causal_mask, padding_mask, target_mask
from annotated_transformer.model import count_parameters, Decoder, Embeddings, Encoder, EncoderDecoder, Generator, make_model, make_model_from_config, POSITIONAL_ENCODINGS, transformer_parameter_count, TransformerConfig
from annotated_transformer.checks import check_token_ids
from annotated_transformer.multihead import keep_attention_weights

PAD = 0
SMALL = dict(N=2, d_model=32, d_ff=64, h=4)


def small_model(vocab=17, tgt_vocab=None, dropout=0.0, dtype=torch.float64, seed=0, **kw):
    torch.manual_seed(seed)
    model = make_model(vocab, tgt_vocab or vocab, **{**SMALL, "dropout": dropout, **kw})
    return model.to(dtype).eval()


def random_batch(gen, batch, S, T, vocab):
    "Right-padded source and target batches; every row keeps at least one real token."
    src = torch.randint(1, vocab, (batch, S), generator=gen)
    tgt = torch.randint(1, vocab, (batch, T), generator=gen)
    for b in range(batch):
        src[b, int(torch.randint(1, S + 1, (1,), generator=gen)):] = PAD
        tgt[b, int(torch.randint(1, T + 1, (1,), generator=gen)):] = PAD
    return src, tgt


def masks(src, tgt):
    return padding_mask(src, PAD), target_mask(tgt, PAD)


# ---------------------------------------------------------------------------------------------------------------
# Equivalence with torch.nn.TransformerEncoder / TransformerDecoder
# ---------------------------------------------------------------------------------------------------------------

def _copy_mha(ours, theirs):
    theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
    theirs.out_proj.weight.copy_(ours.w_o.weight)
    theirs.out_proj.bias.copy_(ours.w_o.bias)


def _copy(ours, theirs):  # nn.Linear or nn.LayerNorm
    theirs.weight.copy_(ours.weight)
    theirs.bias.copy_(ours.bias)


def _randomize_norms(model, gen):
    "LayerNorms start as the identity (gain 1, bias 0); random ones make a wrongly wired norm visible."
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.copy_(1 + 0.3 * torch.randn(m.weight.shape, generator=gen, dtype=m.weight.dtype))
                m.bias.copy_(0.3 * torch.randn(m.bias.shape, generator=gen, dtype=m.bias.dtype))


def torch_reference(model):
    "nn.TransformerEncoder/Decoder with `model`'s weights; final norms only for pre-norm (the paper has none)."
    cfg = model.config
    kw = dict(d_model=cfg.d_model, nhead=cfg.h, dim_feedforward=cfg.d_ff, dropout=0.0, activation="relu",
              layer_norm_eps=1e-5, batch_first=True, norm_first=cfg.norm_first, dtype=torch.float64)
    final = (lambda: nn.LayerNorm(cfg.d_model, eps=1e-5, dtype=torch.float64)) if cfg.norm_first else (lambda: None)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(**kw), cfg.N, norm=final(), enable_nested_tensor=False)
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(**kw), cfg.N, norm=final())
    with torch.no_grad():
        for ours, theirs in zip(model.encoder.layers, enc.layers, strict=True):
            _copy_mha(ours.self_attn, theirs.self_attn)
            _copy(ours.feed_forward.w_1, theirs.linear1)
            _copy(ours.feed_forward.w_2, theirs.linear2)
            _copy(ours.sublayer[0].norm, theirs.norm1)
            _copy(ours.sublayer[1].norm, theirs.norm2)
        for ours, theirs in zip(model.decoder.layers, dec.layers, strict=True):
            _copy_mha(ours.self_attn, theirs.self_attn)
            _copy_mha(ours.src_attn, theirs.multihead_attn)
            _copy(ours.feed_forward.w_1, theirs.linear1)
            _copy(ours.feed_forward.w_2, theirs.linear2)
            _copy(ours.sublayer[0].norm, theirs.norm1)
            _copy(ours.sublayer[1].norm, theirs.norm2)
            _copy(ours.sublayer[2].norm, theirs.norm3)
        if cfg.norm_first:
            _copy(model.encoder.norm, enc.norm)
            _copy(model.decoder.norm, dec.norm)
    return enc.eval(), dec.eval()


def max_diffs_vs_torch(norm_first, seed=0):
    "Max abs differences (encoder memory, decoder output) between our model and PyTorch's, float64."
    gen = torch.Generator().manual_seed(seed)
    model = small_model(norm_first=norm_first, seed=seed)
    _randomize_norms(model, gen)
    enc, dec = torch_reference(model)
    src, tgt = random_batch(gen, 4, 9, 7, 17)
    src_mask, tgt_mask = masks(src, tgt)
    T = tgt.size(1)
    with torch.no_grad():
        x_src, x_tgt = model.src_embed(src), model.tgt_embed(tgt)  # eval mode: no dropout
        memory = model.encoder(x_src, src_mask)
        out = model.decoder(x_tgt, memory, src_mask, tgt_mask)
        # PyTorch's bool masks mean the opposite of ours: True = may NOT attend.
        ref_memory = enc(x_src, src_key_padding_mask=(src == PAD))
        ref_out = dec(x_tgt, ref_memory, tgt_mask=~causal_mask(T)[0], tgt_key_padding_mask=(tgt == PAD),
                      memory_key_padding_mask=(src == PAD))
        torch.testing.assert_close(model(src, tgt, src_mask, tgt_mask), out, atol=0, rtol=0)
    # Right padding with at least one real token per row means no query row is fully masked: padding queries still
    # see the real tokens before them. (For a fully masked row PyTorch's softmax over all -inf would give NaN where
    # ours gives zeros; test_padded_rows_stay_finite covers that case for our model.) So every row is compared,
    # padding rows included.
    return (memory - ref_memory).abs().max().item(), (out - ref_out).abs().max().item()


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_matches_torch_transformer(norm_first):
    for seed in range(3):
        d_memory, d_out = max_diffs_vs_torch(norm_first, seed)
        assert d_memory < 1e-10, d_memory
        assert d_out < 1e-10, d_out


def test_post_norm_differs_from_nn_transformer_final_norm():
    "nn.Transformer's extra final LayerNorm (with non-trivial affine parameters) is a different function."
    gen = torch.Generator().manual_seed(1)
    model = small_model()
    _randomize_norms(model, gen)
    enc, _ = torch_reference(model)
    extra = nn.LayerNorm(32, dtype=torch.float64)
    with torch.no_grad():
        _copy(model.encoder.layers[-1].sublayer[1].norm, extra)  # any non-identity affine part will do
    src, _ = random_batch(gen, 2, 6, 4, 17)
    with torch.no_grad():
        x = model.src_embed(src)
        ours = model.encoder(x, padding_mask(src, PAD))
        assert not torch.allclose(ours, extra(enc(x, src_key_padding_mask=(src == PAD))))
    assert isinstance(model.encoder.norm, nn.Identity) and isinstance(model.decoder.norm, nn.Identity)
    pre = small_model(norm_first=True)
    assert isinstance(pre.encoder.norm, nn.LayerNorm) and isinstance(pre.decoder.norm, nn.LayerNorm)


def test_fused_and_explicit_attention_agree_on_full_model():
    gen = torch.Generator().manual_seed(2)
    model = small_model()
    src, tgt = random_batch(gen, 3, 8, 6, 17)
    src_mask, tgt_mask = masks(src, tgt)
    with torch.no_grad():
        fused = model(src, tgt, src_mask, tgt_mask)
        with keep_attention_weights(model):
            explicit = model(src, tgt, src_mask, tgt_mask)
            w = model.decoder.layers[1].src_attn.attn
    torch.testing.assert_close(fused, explicit, atol=1e-12, rtol=0)
    assert w.shape == (3, 4, 6, 8)
    assert (w * ~src_mask.unsqueeze(1)).abs().max() == 0  # no weight on source padding


# ---------------------------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------------------------

def test_no_information_from_later_target_tokens():
    model = small_model()
    gen = torch.Generator().manual_seed(3)
    for _ in range(25):
        B, S, T = (int(torch.randint(lo, hi, (1,), generator=gen)) for lo, hi in ((1, 4), (1, 9), (2, 9)))
        src, tgt = random_batch(gen, B, S, T, 17)
        t = int(torch.randint(0, T - 1, (1,), generator=gen))
        tgt2 = tgt.clone()
        tgt2[:, t + 1:] = torch.randint(0, 17, (B, T - t - 1), generator=gen)  # padding may appear or vanish
        with torch.no_grad():
            out = model(src, tgt, *masks(src, tgt))
            out2 = model(src, tgt2, *masks(src, tgt2))
        torch.testing.assert_close(out[:, : t + 1], out2[:, : t + 1], atol=1e-12, rtol=0)
        assert not torch.allclose(out[:, t + 1:], out2[:, t + 1:])  # the test can fail: later rows do change



@pytest.mark.parametrize("arch", ["ours", "torch"])
def test_a_missing_tgt_mask_means_the_causal_mask(arch):
    "tgt_mask=None (or left out): the decoder is causal. Only an explicit all-True mask lets it see the future."
    from annotated_transformer.train_config import build_model
    from annotated_transformer.torch_compare import TorchTransformer  # (which registers arch "torch")
    torch.manual_seed(0)
    model = build_model(TransformerConfig(17, 17, dropout=0.0, **SMALL), arch).double().eval()
    assert isinstance(model, TorchTransformer) == (arch == "torch")
    gen = torch.Generator().manual_seed(7)
    src = torch.randint(3, 17, (2, 6), generator=gen)
    tgt = torch.randint(3, 17, (2, 7), generator=gen)
    src_mask = padding_mask(src, PAD)
    everywhere = torch.ones(1, 7, 7, dtype=torch.bool)
    with torch.no_grad():
        out = model(src, tgt, src_mask)
        torch.testing.assert_close(model(src, tgt, src_mask, None), out, atol=0, rtol=0)
        torch.testing.assert_close(out, model(src, tgt, src_mask, causal_mask(7)), atol=1e-12, rtol=0)
        memory = model.encode(src, src_mask)
        torch.testing.assert_close(model.decode(memory, src_mask, tgt), out, atol=0, rtol=0)
        for t in range(1, 7):  # change target token t: no decoder output before t changes
            changed = tgt.clone()
            changed[:, t] = torch.where(tgt[:, t] == 3, 4, 3)
            torch.testing.assert_close(model(src, changed, src_mask)[:, :t], out[:, :t], atol=1e-12, rtol=0)
            assert not torch.allclose(model(src, changed, src_mask)[:, t:], out[:, t:])
            seeing = model(src, changed, src_mask, everywhere)[:, :t]
            assert not torch.allclose(seeing, model(src, tgt, src_mask, everywhere)[:, :t])


@pytest.mark.parametrize("positional", ["sinusoidal", "rope", "relative"])
@pytest.mark.parametrize("keep", [False, True])
def test_the_decoder_and_its_layers_read_no_tgt_mask_as_causal(positional, keep):
    """Issue 61: `model.decoder(...)` and `DecoderLayer` with tgt_mask=None used to attend to every position (a later
    token changed earlier outputs by 0.56-0.72), while EncoderDecoder.decode was causal. One rule now: None = causal."""
    model = small_model(positional=positional)
    gen = torch.Generator().manual_seed(11)
    src, tgt = random_batch(gen, 3, 6, 8, 17)
    src_mask = padding_mask(src, PAD)
    causal, everywhere = causal_mask(8), torch.ones(1, 8, 8, dtype=torch.bool)
    with torch.no_grad(), (keep_attention_weights(model) if keep else contextlib.nullcontext()):
        memory, y = model.encode(src, src_mask), model.tgt_embed(tgt)
        changed = y.clone()
        changed[:, 5:] = torch.randn(3, 3, y.size(-1), generator=gen, dtype=y.dtype)  # positions 5-7 change
        layer = model.decoder.layers[0]
        for run in (lambda x, *m: model.decoder(x, memory, src_mask, *m),
                    lambda x, *m: layer(x, memory, src_mask, *m)):
            out = run(y)
            torch.testing.assert_close(run(y, None), out, atol=0, rtol=0)
            torch.testing.assert_close(out, run(y, causal), atol=1e-12, rtol=0)
            torch.testing.assert_close(run(changed)[:, :5], out[:, :5], atol=1e-12, rtol=0)
            assert not torch.allclose(run(changed, everywhere)[:, :5], run(y, everywhere)[:, :5])
        torch.testing.assert_close(model.decoder(y, memory, src_mask), model.decode(memory, src_mask, tgt),
                                   atol=0, rtol=0)


def test_an_ambiguous_2d_mask_is_refused_with_its_name():
    "A (batch, tgt_len) padding mask of a batch of 2 targets of 2 tokens would pass as (queries, keys): refused."
    model = small_model()
    src, tgt = torch.tensor([[5, 6, 7], [5, 6, 0]]), torch.tensor([[1, 4], [1, 0]])
    with pytest.raises(ValueError, match=r"^tgt_mask: a 2-D mask of shape \(2, 2\) is ambiguous with a batch of 2"):
        model(src, tgt, padding_mask(src, PAD), tgt != PAD)
    with pytest.raises(ValueError, match=r"^src_mask: a 2-D mask of shape \(2, 3\) is ambiguous"):
        model.decode(torch.zeros(2, 3, 32, dtype=torch.float64), src != PAD, tgt)

def test_appending_source_padding_changes_nothing():
    model = small_model()
    gen = torch.Generator().manual_seed(4)
    for _ in range(25):
        B, S, T, extra = (int(torch.randint(lo, hi, (1,), generator=gen)) for lo, hi in ((1, 4), (1, 9), (1, 8), (1, 6)))
        src, tgt = random_batch(gen, B, S, T, 17)
        src2 = torch.cat([src, torch.full((B, extra), PAD)], dim=1)
        with torch.no_grad():
            mem, mem2 = model.encode(src, padding_mask(src, PAD)), model.encode(src2, padding_mask(src2, PAD))
            out = model(src, tgt, *masks(src, tgt))
            out2 = model(src2, tgt, *masks(src2, tgt))
        torch.testing.assert_close(mem2[:, :S], mem, atol=1e-10, rtol=0)
        torch.testing.assert_close(out2, out, atol=1e-10, rtol=0)


@pytest.mark.parametrize("explicit", [False, True], ids=["fused", "explicit"])
def test_padded_rows_stay_finite(explicit):
    model = small_model(dtype=torch.float32)
    src = torch.tensor([[5, 6, 7, 0], [0, 0, 0, 0], [3, 0, 0, 0]])  # row 1: padding only
    tgt = torch.tensor([[1, 2, 0], [1, 0, 0], [0, 0, 0]])  # row 2: padding only (every query fully masked)
    src_mask, tgt_mask = masks(src, tgt)
    assert not tgt_mask[2].any() and not src_mask[1].any()
    with torch.no_grad(), (keep_attention_weights(model) if explicit else torch.enable_grad()):
        out = model(src, tgt, src_mask, tgt_mask)
        logp = model.generator(out)
    assert torch.isfinite(out).all() and torch.isfinite(logp).all()


def test_eval_is_deterministic_and_train_uses_dropout():
    torch.manual_seed(5)
    model = make_model(17, 17, **SMALL, dropout=0.1)
    src, tgt = random_batch(torch.Generator().manual_seed(5), 2, 6, 5, 17)
    m = masks(src, tgt)
    model.eval()
    with torch.no_grad():
        assert torch.equal(model(src, tgt, *m), model(src, tgt, *m))
    model.train()
    with torch.no_grad():
        assert not torch.allclose(model(src, tgt, *m), model(src, tgt, *m))


# ---------------------------------------------------------------------------------------------------------------
# Table 3 parameter counts
# ---------------------------------------------------------------------------------------------------------------

PAPER_BASE = TransformerConfig(37000, 37000, share_embeddings=True)  # shared BPE vocabulary of ~37000 (§5.1)
TABLE3 = [  # (changes to the base model, params x 10^6 in Table 3)
    ({}, 65),
    ({"N": 2}, 36),
    ({"N": 4}, 50),
    ({"N": 8}, 80),
    ({"d_model": 256}, 28),  # d_k = 32
    ({"d_model": 1024}, 168),  # d_k = 128
    ({"d_ff": 1024}, 53),
    ({"d_ff": 4096}, 90),
    ({"d_model": 1024, "d_ff": 4096, "h": 16, "dropout": 0.3}, 213),  # big
]


def meta_count(cfg):
    with torch.device("meta"):
        model = make_model_from_config(cfg)
    assert next(model.parameters()).is_meta  # nothing was allocated
    return count_parameters(model)


@pytest.mark.parametrize("changes,paper", TABLE3, ids=[str(c) or "base" for c, _ in TABLE3])
def test_table3_parameter_counts(changes, paper):
    cfg = dataclasses.replace(PAPER_BASE, **changes)
    n = meta_count(cfg)
    assert n == transformer_parameter_count(cfg)
    assert abs(n / 1e6 - paper) / paper < 0.07, (n, paper)


def test_table3_rows_a_same_count_as_base():
    base = meta_count(PAPER_BASE)
    assert base == 63_119_496
    for h in (1, 4, 16, 32):
        assert meta_count(dataclasses.replace(PAPER_BASE, h=h)) == base


@pytest.mark.parametrize("cfg", [
    TransformerConfig(101, 103, N=2, d_model=32, d_ff=48, h=4),
    TransformerConfig(101, 101, N=3, d_model=24, d_ff=40, h=2, share_embeddings=True, norm_first=True),
])
def test_count_formula_matches_real_and_meta_modules(cfg):
    real = make_model_from_config(cfg)
    n_real = sum(p.numel() for p in real.parameters())
    assert n_real == count_parameters(real) == meta_count(cfg) == transformer_parameter_count(cfg)


# ---------------------------------------------------------------------------------------------------------------
# Weight sharing (§3.4)
# ---------------------------------------------------------------------------------------------------------------

def test_shared_weights_are_one_parameter():
    model = small_model(share_embeddings=True)
    E = model.tgt_embed[0].lut.weight
    assert model.src_embed[0].lut.weight is E and model.generator.proj.weight is E
    untied = small_model(share_embeddings=False)
    assert count_parameters(untied) - count_parameters(model) == 2 * 17 * 32
    assert sum(p is E for p in model.parameters()) == 1
    model.to(torch.float32)  # the tie survives dtype conversion
    assert model.src_embed[0].lut.weight is model.generator.proj.weight


def test_shared_weight_gets_gradient_from_all_three_uses():
    "The tied gradient equals the sum of the three separate gradients of an untied copy with equal values."
    tied = small_model(share_embeddings=True)
    untied = small_model(share_embeddings=False)
    untied.load_state_dict(tied.state_dict())  # the tied state dict lists the matrix under all three names
    src, tgt = random_batch(torch.Generator().manual_seed(6), 3, 7, 6, 17)
    for model in (tied, untied):
        model.zero_grad()
        logp = model.generator(model(src, tgt, *masks(src, tgt)))
        logp[..., 3].sum().backward()
    parts = [untied.src_embed[0].lut.weight.grad, untied.tgt_embed[0].lut.weight.grad,
             untied.generator.proj.weight.grad]
    assert all(g is not None and g.abs().max() > 0 for g in parts)
    torch.testing.assert_close(tied.tgt_embed[0].lut.weight.grad, sum(parts), atol=1e-12, rtol=0)


def test_the_default_ties_as_the_paper_does_and_what_it_can_with_two_vocabularies():
    "§3.4 by default: the base model with its one shared matrix is 63.1M; two vocabularies tie the target's two."
    with torch.device("meta"):
        base = make_model(37000, 37000)
    assert 63e6 < count_parameters(base) < 65e6 and count_parameters(base) == 63_119_496
    assert base.src_embed[0].lut.weight is base.tgt_embed[0].lut.weight is base.generator.proj.weight
    with pytest.warns(UserWarning, match=r"the source vocabulary \(100\) differs from the target's \(120\), so only "
                                         r"the target embedding and the pre-softmax projection share a matrix"):
        two = make_model(100, 120, N=1, d_model=16, d_ff=32, h=2)
    assert two.generator.proj.weight is two.tgt_embed[0].lut.weight
    assert two.src_embed[0].lut.weight is not two.tgt_embed[0].lut.weight
    assert count_parameters(two) == transformer_parameter_count(two.config)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to say when nothing is tied, or everything
        untied = make_model(100, 120, N=1, d_model=16, d_ff=32, h=2, share_embeddings=False)
        make_model(100, 100, N=1, d_model=16, d_ff=32, h=2)
    assert count_parameters(untied) - count_parameters(two) == 120 * 16 and untied.config.tied == ()


# ---------------------------------------------------------------------------------------------------------------
# API and configuration
# ---------------------------------------------------------------------------------------------------------------

def test_api_shapes_and_config():
    model = small_model(vocab=13, tgt_vocab=11)
    assert isinstance(model, EncoderDecoder)
    assert isinstance(model.encoder, Encoder) and isinstance(model.decoder, Decoder)
    assert model.config == TransformerConfig(13, 11, dropout=0.0, **SMALL)
    assert model.config.head_dims == (8, 8)
    src, tgt = random_batch(torch.Generator().manual_seed(7), 2, 5, 4, 11)
    src_mask, tgt_mask = masks(src, tgt)
    with torch.no_grad():
        memory = model.encode(src, src_mask)
        out = model.decode(memory, src_mask, tgt, tgt_mask)
        assert memory.shape == (2, 5, 32) and out.shape == (2, 4, 32)
        torch.testing.assert_close(model(src, tgt, src_mask, tgt_mask), out, atol=0, rtol=0)
        logp = model.generator(out)
    assert logp.shape == (2, 4, 11)
    torch.testing.assert_close(logp.exp().sum(-1), torch.ones(2, 4, dtype=torch.float64))


def test_make_model_from_config_matches_make_model():
    cfg = TransformerConfig(19, 19, dropout=0.0, **SMALL)
    torch.manual_seed(0)
    a = make_model_from_config(cfg)
    torch.manual_seed(0)
    b = make_model(19, 19, dropout=0.0, **SMALL)
    assert a.config == b.config
    for (na, pa), (nb, pb) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert na == nb and torch.equal(pa, pb)


def test_defaults_are_the_base_model():
    cfg = TransformerConfig(100, 100)
    assert (cfg.N, cfg.d_model, cfg.d_ff, cfg.h, cfg.dropout, cfg.max_positions) == (6, 512, 2048, 8, 0.1, 5000)
    assert (cfg.share_embeddings, cfg.norm_first) == (True, False)  # §3.4 ties the weights; post-norm


def test_xavier_initialisation():
    model = make_model(50, 60, **SMALL)
    qkv = (".w_q.weight", ".w_k.weight", ".w_v.weight")
    checked = 0
    for name, p in model.named_parameters():
        if p.dim() > 1 and ".lut." not in name and not name.startswith("generator."):  # tables: see below
            fan_out, fan_in = p.shape
            if name.endswith(qkv):  # the three input projections count as one (3 d_model, d_model) matrix
                fan_out *= 3
            bound = (6 / (fan_in + fan_out)) ** 0.5
            assert p.abs().max() <= bound, name
            assert p.abs().max() > 0.8 * bound, name  # a uniform sample fills its range
            checked += name.endswith(qkv)
    assert checked == 3 * 3 * SMALL["N"]  # encoder self, decoder self and cross attention in every layer
    for m in model.modules():
        if isinstance(m, nn.LayerNorm):
            assert torch.equal(m.weight, torch.ones_like(m.weight)) and torch.equal(m.bias, torch.zeros_like(m.bias))


def test_qkv_initialised_like_nn_multihead_attention():
    # nn.MultiheadAttention Xavier-initializes its packed (3d, d) in_proj_weight: each of W_Q, W_K, W_V is a third of it
    d = 256
    ours = make_model(10, 10, N=1, d_model=d, d_ff=64, h=4).encoder.layers[0].self_attn
    theirs = nn.MultiheadAttention(d, 4).in_proj_weight
    for w_ours, w_theirs in zip((ours.w_q.weight, ours.w_k.weight, ours.w_v.weight), theirs.chunk(3)):
        assert abs(w_ours.std() / w_theirs.std() - 1) < 0.02
    assert abs(ours.w_o.weight.std() / ours.w_q.weight.std() - 2 ** 0.5) < 0.03  # W_O stays a square Xavier matrix


@pytest.mark.parametrize("share", [True, False])
def test_first_layer_input_has_unit_variance_at_initialisation(share):
    "Embedding tables start N(0, 1/d_model): times sqrt(d_model) the token signal has unit variance (§3.4)."
    d, V = 256, 8000
    torch.manual_seed(0)
    model = make_model(V, V, N=1, d_model=d, d_ff=64, h=4, dropout=0.0, share_embeddings=share)
    ids = torch.randint(4, V, (16, 64))
    for embed in (model.src_embed, model.tgt_embed):
        tokens = embed[0](ids)
        assert abs(tokens.var().item() - 1.0) < 0.05  # Xavier on the (V, d) table gave 2d/(V+d) = 0.062
        x = embed(ids)  # + positions, whose entries have mean square 1/2
        assert abs(x.pow(2).mean().item() - 1.5) < 0.1
    E = model.tgt_embed[0].lut.weight
    assert abs(E.std().item() - d ** -0.5) < 0.02 * d ** -0.5
    if share:  # the same matrix is the pre-softmax projection: logits h . E_w of unit size for unit-size h
        assert model.generator.proj.weight is E
        h = torch.randn(1000, d)
        assert abs((h @ E.T).std().item() - 1.0) < 0.05
    else:  # an untied projection stays a Xavier (V, d) matrix
        w = model.generator.proj.weight
        assert w.abs().max() <= (6 / (V + d)) ** 0.5


def test_generator_log_probabilities_stay_finite_when_confident():
    "log_softmax, not log(softmax): a confident prediction keeps every log-probability finite (label smoothing uses all)."
    generator = Generator(4, 6)
    with torch.no_grad():
        generator.proj.weight.zero_()
        generator.proj.bias.copy_(torch.tensor([0.0, 0.0, 0.0, 200.0, 0.0, 0.0]))  # softmax underflows to 0
    logp = generator(torch.zeros(1, 1, 4))
    assert torch.isfinite(logp).all()
    torch.testing.assert_close(logp[0, 0], torch.tensor([-200.0, -200.0, -200.0, 0.0, -200.0, -200.0]))


def test_embeddings_scale_by_sqrt_d_model():
    emb = Embeddings(10, 16)
    ids = torch.tensor([[1, 2, 9]])
    torch.testing.assert_close(emb(ids), emb.lut.weight[ids] * 4.0)
    assert emb(ids.int()).shape == (1, 3, 16)  # int32 ids are accepted too


# ---------------------------------------------------------------------------------------------------------------
# Errors that name the problem
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(d_model=500), ValueError, r"d_model=500 is not divisible by h=8"),
    (dict(N=0), ValueError, r"N must be >= 1, got 0"),
    (dict(d_ff=-1), ValueError, r"d_ff must be >= 1, got -1"),
    (dict(max_positions=0), ValueError, r"max_positions must be >= 1"),
    (dict(positional="rotary"), ValueError, r"positional must be one of sinusoidal, learned"),
    (dict(init="zeros"), ValueError, r"init must be one of default, harvard"),
    (dict(dropout=1.0), ValueError, r"dropout must be in \[0, 1\), got 1.0"),
    (dict(dropout=-0.1), ValueError, r"dropout must be in \[0, 1\)"),
    (dict(d_model=512.0), TypeError, r"d_model must be an int"),
    (dict(norm_first="yes"), TypeError, r"norm_first must be True or False"),
])
def test_config_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        TransformerConfig(100, 100, **kwargs)
    with pytest.raises(exc, match=match):
        make_model(100, 100, **kwargs)


def test_input_errors():
    model = small_model(max_positions=10)
    src = torch.tensor([[1, 2, 3, 0]])
    tgt = torch.tensor([[1, 4, 5]])
    src_mask, tgt_mask = masks(src, tgt)
    with pytest.raises(TypeError, match=r"src_mask: .*bool"):
        model(src, tgt, src_mask.float(), tgt_mask)
    with pytest.raises(TypeError, match=r"tgt_mask: .*bool"):
        model(src, tgt, src_mask, tgt_mask.long())
    with pytest.raises(ValueError, match=r"tgt_mask: "):
        model(src, tgt, src_mask, tgt_mask[:, :2, :2])  # the mask of a shorter target
    with pytest.raises(ValueError, match=r"src_mask: "):
        model(src, tgt, padding_mask(torch.ones(1, 6, dtype=torch.long), PAD), tgt_mask)
    with pytest.raises(ValueError, match=r"token id 17 is outside the vocabulary of size 17 \(valid ids are 0\.\.16\)"):
        model(src, torch.tensor([[1, 17, 5]]), src_mask, tgt_mask)
    with pytest.raises(ValueError, match=r"token id -1 is outside the vocabulary of size 17"):
        model.encode(src - 1, None)
    with pytest.raises(TypeError, match=r"src must hold integer token ids .*torch.float32"):
        model(src.float(), tgt, src_mask, tgt_mask)
    with pytest.raises(ValueError, match=r"tgt must have shape \(batch, seq\), got \(3,\)"):
        model(src, tgt[0], src_mask, tgt_mask)
    with pytest.raises(ValueError, match=r"src is empty"):
        model.encode(src[:, :0], None)
    with pytest.raises(ValueError, match=r"memory must have shape"):
        model.decode(torch.zeros(2, 4, 32, dtype=torch.float64), src_mask, tgt, tgt_mask)
    long_src = torch.ones(1, 11, dtype=torch.long)  # the positional table has 10 rows
    with pytest.raises(ValueError, match=r"11") as info:
        model.encode(long_src, None)
    assert "10" in str(info.value)
    with pytest.raises(TypeError, match=r"must hold integer token ids"):
        check_token_ids(torch.tensor([0.5]), vocab=10)


@pytest.mark.parametrize("positional", sorted(POSITIONAL_ENCODINGS))
@pytest.mark.parametrize("share", [False, True])
def test_count_formula_matches_every_positional_kind(positional, share):
    "Learned positions are parameters too: 2 x max_positions x d_model of them (a table for each side)."
    cfg = TransformerConfig(1000, 1000, N=2, d_model=64, d_ff=128, h=4, positional=positional, share_embeddings=share)
    real = make_model_from_config(cfg)
    assert sum(p.numel() for p in real.parameters()) == transformer_parameter_count(cfg)


def test_row_b_narrower_keys_build_count_and_decode_with_the_cache():
    "d_k = 16 and 32 at the paper's size are Table 3's 58M and 60M within 7 %; a small one decodes the same with the cache."
    from annotated_transformer.decoding import greedy_decode
    for d_k, paper in ((16, 58e6), (32, 60e6)):
        with torch.device("meta"):
            model = make_model(37000, 37000, d_k=d_k)
        assert count_parameters(model) == transformer_parameter_count(model.config)
        assert abs(count_parameters(model) - paper) / paper < 0.07
    small = small_model(vocab=19, d_k=3, share_embeddings=False)
    with torch.no_grad():
        small.generator.proj.weight.mul_(30)  # large enough logits that the untrained model says different things
    src = torch.randint(3, 19, (3, 6), generator=torch.Generator().manual_seed(0))
    mask = (src != 0).unsqueeze(1)
    cached = greedy_decode(small, src, mask, max_new_tokens=8, use_cache=True)
    assert len(set(cached.flatten().tolist())) > 2
    assert torch.equal(cached, greedy_decode(small, src, mask, max_new_tokens=8, use_cache=False))


@pytest.mark.parametrize("positional", ["sinusoidal", "rope", "relative"])
@pytest.mark.parametrize("keep", [False, True])
def test_decode_without_tgt_mask_equals_the_causal_mask(positional, keep):
    "tgt_mask=None goes to the kernels as is_causal: the same states as chapter 03's causal_mask, on every path."
    model = small_model(positional=positional)
    gen = torch.Generator().manual_seed(5)
    src, tgt = random_batch(gen, 3, 6, 8, 17)
    src_mask = padding_mask(src, PAD)
    with torch.no_grad(), (keep_attention_weights(model) if keep else contextlib.nullcontext()):
        memory = model.encode(src, src_mask)
        implicit = model.decode(memory, src_mask, tgt)
        explicit = model.decode(memory, src_mask, tgt, causal_mask(tgt.size(1)))
    torch.testing.assert_close(implicit, explicit, atol=1e-12, rtol=0)


def test_real_positions_need_only_the_causal_mask():
    "Target padding comes after every real token: with the causal mask alone (the trainer's), real positions keep their states."
    model = small_model()
    gen = torch.Generator().manual_seed(6)
    src, tgt = random_batch(gen, 4, 7, 9, 17)
    src_mask, tgt_mask = masks(src, tgt)
    with torch.no_grad():
        padded = model(src, tgt, src_mask, tgt_mask)
        causal = model(src, tgt, src_mask, None)
    real = tgt != PAD
    assert (~real).any()  # the test can fail: some positions are padding
    torch.testing.assert_close(causal[real], padded[real], atol=1e-12, rtol=0)

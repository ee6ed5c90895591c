"""Tests for annotated_transformer.multihead: equivalence with nn.MultiheadAttention (copied weights, float64),
the two attention paths, masks, dropout, keep_attention_weights, errors."""
import pytest
import torch
from torch import nn

from annotated_transformer.decoding import KVCache  # chapter 11: the cache comes with decoding
from annotated_transformer.multihead import MultiHeadAttention, keep_attention_weights

DT = torch.float64
TOL = dict(atol=1e-10, rtol=1e-10)


def pair(d_model=32, h=4, bias=True, seed=0):
    "An nn.MultiheadAttention and our MultiHeadAttention with the same weights, float64, eval mode, no dropout."
    torch.manual_seed(seed)
    ref = nn.MultiheadAttention(d_model, h, batch_first=True, dropout=0.0, bias=bias, dtype=DT).eval()
    if bias:  # PyTorch initializes its biases to zero; make them non-zero so that copying them is tested
        with torch.no_grad():
            ref.in_proj_bias.normal_()
            ref.out_proj.bias.normal_()
    ours = MultiHeadAttention(h, d_model, dropout=0.0, bias=bias).to(DT).eval()
    w_q, w_k, w_v = ref.in_proj_weight.detach().chunk(3)
    with torch.no_grad():
        for lin, w in [(ours.w_q, w_q), (ours.w_k, w_k), (ours.w_v, w_v), (ours.w_o, ref.out_proj.weight)]:
            lin.weight.copy_(w)
        if bias:
            b_q, b_k, b_v = ref.in_proj_bias.detach().chunk(3)
            for lin, b in [(ours.w_q, b_q), (ours.w_k, b_k), (ours.w_v, b_v), (ours.w_o, ref.out_proj.bias)]:
                lin.bias.copy_(b)
    return ref, ours


def run_ours(ours, q, k, v, mask, keep):
    ours.keep_weights = keep
    out = ours(q, k, v, mask)
    ours.keep_weights = False
    return out, ours.attn


def padding(lengths, total):
    "Our padding mask (batch, 1, total): True at real tokens."
    return (torch.arange(total)[None, :] < torch.tensor(lengths)[:, None])[:, None, :]


def inputs(batch=3, n=5, m=7, d_model=32, seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, n, d_model, generator=g, dtype=DT)
    mem = torch.randn(batch, m, d_model, generator=g, dtype=DT)
    return x, mem


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("keep", [False, True])
def test_self_attention_matches_torch(bias, keep):
    ref, ours = pair(bias=bias)
    x, _ = inputs()
    expected, expected_w = ref(x, x, x, need_weights=True, average_attn_weights=True)
    out, attn = run_ours(ours, x, x, x, None, keep)
    torch.testing.assert_close(out, expected, **TOL)
    if keep:
        torch.testing.assert_close(attn.mean(1), expected_w, **TOL)


@pytest.mark.parametrize("keep", [False, True])
def test_cross_attention_with_key_padding_matches_torch(keep):
    ref, ours = pair()
    x, mem = inputs(n=5, m=7)
    mask = padding([7, 4, 1], 7)                           # ours: True = may attend
    expected, expected_w = ref(x, mem, mem, key_padding_mask=~mask[:, 0], need_weights=True)   # torch: True = ignore
    out, attn = run_ours(ours, x, mem, mem, mask, keep)
    torch.testing.assert_close(out, expected, **TOL)
    if keep:
        torch.testing.assert_close(attn.mean(1), expected_w, **TOL)
        assert torch.all(attn[1, :, :, 4:] == 0) and torch.all(attn[2, :, :, 1:] == 0)


@pytest.mark.parametrize("keep", [False, True])
def test_causal_and_padding_masks_match_torch(keep):
    ref, ours = pair(seed=2)
    x, _ = inputs(n=6, seed=3)
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    # a 2-D causal mask alone
    expected, w_exp = ref(x, x, x, attn_mask=~causal, need_weights=True)
    out, attn = run_ours(ours, x, x, x, causal, keep)
    torch.testing.assert_close(out, expected, **TOL)
    if keep:
        torch.testing.assert_close(attn.mean(1), w_exp, **TOL)
        assert torch.all(attn.triu(1) == 0)
    # a 3-D target mask (padding & causal), as the decoder builds it
    pad = padding([6, 5, 3], 6)
    tgt_mask = pad & causal[None]                          # (batch, 6, 6)
    expected, w_exp = ref(x, x, x, attn_mask=~causal, key_padding_mask=~pad[:, 0], need_weights=True)
    out, attn = run_ours(ours, x, x, x, tgt_mask, keep)
    torch.testing.assert_close(out, expected, **TOL)
    if keep:
        torch.testing.assert_close(attn.mean(1), w_exp, **TOL)


def test_per_head_weights_and_per_head_masks_match_torch():
    ref, ours = pair(h=4, seed=4)
    x, mem = inputs(n=5, m=6, seed=5)
    g = torch.Generator().manual_seed(6)
    mask = torch.rand(3, 4, 5, 6, generator=g) < 0.6       # a different mask per batch element and head
    mask[..., 0] = True                                    # every query keeps one key (torch gives NaN otherwise)
    expected, w_exp = ref(x, mem, mem, attn_mask=~mask.reshape(12, 5, 6), need_weights=True,
                          average_attn_weights=False)
    for keep in (False, True):
        out, attn = run_ours(ours, x, mem, mem, mask, keep)
        torch.testing.assert_close(out, expected, **TOL)
    torch.testing.assert_close(attn, w_exp, **TOL)


@pytest.mark.parametrize("seed", range(10))
def test_explicit_and_fused_paths_agree(seed):
    g = torch.Generator().manual_seed(seed)
    h = [1, 2, 4, 8][seed % 4]
    ours = MultiHeadAttention(h, 16, dropout=0.3).to(DT).eval()
    x = torch.randn(2, 4, 16, generator=g, dtype=DT)
    mem = torch.randn(2, 6, 16, generator=g, dtype=DT)
    shape = [(2, 1, 6), (2, 4, 6), (4, 6), (2, h, 4, 6), (2, 1, 4, 6), (6,)][seed % 6]
    mask = torch.rand(shape, generator=g) < 0.6
    fused = ours(mem[:, :4], mem, mem, mask)
    with keep_attention_weights(ours):
        explicit = ours(mem[:, :4], mem, mem, mask)
    torch.testing.assert_close(fused, explicit, **TOL)
    torch.testing.assert_close(ours(x, mem, mem), run_ours(ours, x, mem, mem, None, True)[0], **TOL)


def test_3d_and_2d_masks_mean_the_same_as_4d():
    ours = MultiHeadAttention(4, 16, dropout=0.0).to(DT).eval()
    x = torch.randn(2, 5, 16, dtype=DT)
    g = torch.Generator().manual_seed(0)
    m3 = torch.rand(2, 5, 5, generator=g) < 0.6
    m2 = torch.rand(5, 5, generator=g) < 0.6
    torch.testing.assert_close(ours(x, x, x, m3), ours(x, x, x, m3[:, None].expand(2, 4, 5, 5)), **TOL)
    torch.testing.assert_close(ours(x, x, x, m2), ours(x, x, x, m2.expand(2, 4, 5, 5)), **TOL)
    pad = padding([5, 3], 5)                               # (batch, 1, k)
    torch.testing.assert_close(ours(x, x, x, pad), ours(x, x, x, pad.expand(2, 5, 5)), **TOL)


def test_3d_mask_gets_a_head_dim_even_when_batch_equals_h():
    "With batch == h a 3-D mask would broadcast silently against the heads; it must be per batch element."
    ours = MultiHeadAttention(2, 8, dropout=0.0).to(DT).eval()
    x = torch.randn(2, 3, 8, dtype=DT)
    pad = padding([3, 1], 3)                               # (2, 1, 3): the second sequence has 1 real token
    out = ours(x, x, x, pad)
    torch.testing.assert_close(out[1], ours(x[1:, :], x[1:, :1], x[1:, :1])[0], **TOL)
    torch.testing.assert_close(out[0], ours(x[:1], x[:1], x[:1])[0], **TOL)


@pytest.mark.parametrize("keep", [False, True])
def test_fully_padded_sequence_is_finite(keep):
    ours = MultiHeadAttention(4, 16, dropout=0.0).to(DT)
    x = torch.randn(2, 5, 16, dtype=DT, requires_grad=True)
    mask = padding([5, 0], 5)                              # sequence 1 is all padding
    out, attn = run_ours(ours, x, x, x, mask, keep)
    assert torch.isfinite(out).all()
    # no allowed key: the heads output zeros, so the layer outputs W^O's bias
    torch.testing.assert_close(out[1], ours.w_o.bias.detach().expand(5, 16), **TOL)
    out.sum().backward()
    assert torch.isfinite(x.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in ours.parameters())
    if keep:
        assert torch.all(attn[1] == 0)


def test_gradients_of_both_paths_agree():
    ours = MultiHeadAttention(4, 16, dropout=0.0).to(DT)
    x = torch.randn(2, 5, 16, dtype=DT)
    mask = padding([5, 0], 5) & torch.ones(5, 5, dtype=torch.bool).tril()
    grads = []
    for keep in (False, True):
        ours.zero_grad()
        run_ours(ours, x, x, x, mask, keep)[0].pow(2).sum().backward()
        grads.append([p.grad.clone() for p in ours.parameters()])
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, **TOL)


def test_dropout_train_and_eval():
    torch.manual_seed(0)
    ours = MultiHeadAttention(4, 16, dropout=0.5).to(DT)
    clean = MultiHeadAttention(4, 16, dropout=0.0).to(DT)
    clean.load_state_dict(ours.state_dict())
    x = torch.randn(2, 5, 16, dtype=DT)
    ours.eval(), clean.eval()
    for keep in (False, True):                             # eval: no dropout on either path
        torch.testing.assert_close(run_ours(ours, x, x, x, None, keep)[0], clean(x, x, x), **TOL)
    ours.train()
    for keep in (False, True):                             # train: both paths drop attention weights
        a, b = run_ours(ours, x, x, x, None, keep)[0], run_ours(ours, x, x, x, None, keep)[0]
        assert not torch.allclose(a, b) and not torch.allclose(a, clean(x, x, x))
    _, attn = run_ours(ours, x, x, x, None, True)
    assert (attn == 0).any() and ((attn == 0) | (attn > 0)).all()
    ours.dropout_p = 0.0                                   # dropout_p is the one knob for both paths
    assert ours.dropout.p == 0.0
    torch.testing.assert_close(ours(x, x, x), clean(x, x, x), **TOL)


def test_attributes_and_parameter_count():
    m = MultiHeadAttention(8, 512)
    assert (m.h, m.d_k, m.dropout_p, m.keep_weights, m.attn) == (8, 64, 0.1, False, None)
    for lin in (m.w_q, m.w_k, m.w_v, m.w_o):
        assert isinstance(lin, nn.Linear) and lin.weight.shape == (512, 512)
    assert sum(p.numel() for p in m.parameters()) == 4 * 512**2 + 4 * 512
    assert sum(p.numel() for p in MultiHeadAttention(1, 512).parameters()) == 4 * 512**2 + 4 * 512
    assert all(lin.bias is None for lin in (MultiHeadAttention(8, 64, bias=False).w_q,))


def test_attn_is_none_on_fused_path():
    m = MultiHeadAttention(2, 8).eval()
    x = torch.randn(1, 3, 8)
    with keep_attention_weights(m):
        m(x, x, x)
    assert m.attn is not None and not m.attn.requires_grad
    m(x, x, x)
    assert m.attn is None


# ---- keep_attention_weights --------------------------------------------------------------------------

def test_keep_attention_weights_restores_flags():
    model = nn.Sequential(nn.Linear(8, 8), nn.ModuleList([MultiHeadAttention(2, 8), MultiHeadAttention(4, 8)]))
    inner = model[1]
    inner[1].keep_weights = True                            # a flag that was already on stays on
    with keep_attention_weights(model) as m:
        assert m is model
        assert inner[0].keep_weights and inner[1].keep_weights
    assert (inner[0].keep_weights, inner[1].keep_weights) == (False, True)
    with pytest.raises(RuntimeError, match="boom"):
        with keep_attention_weights(model):
            raise RuntimeError("boom")
    assert (inner[0].keep_weights, inner[1].keep_weights) == (False, True)
    single = MultiHeadAttention(2, 8)                      # the module itself counts
    with keep_attention_weights(single):
        assert single.keep_weights
    assert not single.keep_weights


def test_keep_attention_weights_collects_all_layers():
    layers = nn.ModuleList([MultiHeadAttention(2, 8, dropout=0.0) for _ in range(3)]).eval()
    x = torch.randn(2, 4, 8)
    with keep_attention_weights(layers):
        for layer in layers:
            x = layer(x, x, x)
    for layer in layers:
        assert layer.attn.shape == (2, 2, 4, 4)
        torch.testing.assert_close(layer.attn.sum(-1), torch.ones(2, 2, 4))


# ---- errors -------------------------------------------------------------------------------------------

def test_error_d_model_not_divisible():
    with pytest.raises(ValueError, match=r"^d_model=500 is not divisible by h=8$"):
        MultiHeadAttention(8, 500)
    with pytest.raises(ValueError, match=r"h=0"):
        MultiHeadAttention(0, 512)


def test_error_input_width():
    m = MultiHeadAttention(8, 512)
    x = torch.randn(2, 3, 512)
    with pytest.raises(ValueError, match=r"query has last dimension 256, expected d_model=512"):
        m(torch.randn(2, 3, 256), x, x)
    with pytest.raises(ValueError, match=r"key has last dimension 500, expected d_model=512"):
        m(x, torch.randn(2, 3, 500), x)
    with pytest.raises(ValueError, match=r"value has last dimension 64, expected d_model=512"):
        m(x, x, torch.randn(2, 3, 64))
    with pytest.raises(ValueError, match=r"query must be 3-D \(batch, seq, d_model\), got shape \(3, 512\)"):
        m(x[0], x, x)
    with pytest.raises(ValueError, match=r"same batch size, got 2, 1 and 1"):
        m(x, x[:1], x[:1])
    with pytest.raises(ValueError, match=r"key and value must have the same length, got 3 and 2"):
        m(x, x, x[:, :2])


def test_error_masks():
    m = MultiHeadAttention(8, 64)
    x, mem = torch.randn(2, 3, 64), torch.randn(2, 5, 64)
    with pytest.raises(TypeError, match=r"^mask must be a bool tensor \(True = may attend\), got torch\.float32$"):
        m(x, mem, mem, torch.ones(2, 1, 5))
    with pytest.raises(TypeError, match=r"got torch\.int64"):
        m(x, mem, mem, torch.ones(2, 1, 5, dtype=torch.long))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 1, 4\) does not broadcast .* \(2, 3, 5\)"):
        m(x, mem, mem, torch.ones(2, 1, 4, dtype=torch.bool))   # 3-D: named in the caller's terms
    with pytest.raises(ValueError, match=r"mask of shape \(3, 3\) does not broadcast .* \(2, 8, 3, 5\)"):
        m(x, mem, mem, torch.ones(3, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 4, 3, 5\) does not broadcast"):
        m(x, mem, mem, torch.ones(2, 4, 3, 5, dtype=torch.bool))  # 4 heads' worth of masks for 8 heads


def test_a_2d_mask_that_could_be_key_padding_is_refused():
    "batch == n_queries: a (batch, n_keys) padding mask and an (n_queries, n_keys) mask look alike. Refused."
    ours = MultiHeadAttention(4, 16, dropout=0.0).to(DT).eval()
    x = torch.randn(3, 3, 16, dtype=DT)
    pad = padding([3, 2, 1], 3)                            # (3, 1, 3): the right shape
    for mask in (pad[:, 0], torch.ones(3, 3, dtype=torch.bool)):
        with pytest.raises(ValueError) as info:
            ours(x, x, x, mask)
        message = str(info.value)
        assert "\n" not in message and message.startswith("a 2-D mask of shape (3, 3) is ambiguous with a batch of 3")
        assert "key-padding mask as (batch, 1, n_keys) = (3, 1, 3)" in message
        assert "(1, n_queries, n_keys) = (1, 3, 3)" in message
    mem = torch.randn(3, 5, 16, dtype=DT)                  # cross-attention: 3 queries, 5 keys, batch 3
    with pytest.raises(ValueError, match=r"\(3, 5\) is ambiguous .* = \(3, 1, 5\) .* = \(1, 3, 5\)"):
        ours(x, mem, mem, padding([5, 4, 2], 5)[:, 0])
    # the unambiguous spellings of both meanings still work, and mean what they say
    torch.testing.assert_close(ours(x, x, x, pad), ours(x, x, x, pad.expand(3, 3, 3)), **TOL)
    causal = torch.ones(3, 3, dtype=torch.bool).tril()
    torch.testing.assert_close(ours(x, x, x, causal[None]), ours(x, x, x, causal.expand(3, 3, 3)), **TOL)
    torch.testing.assert_close(ours(x[:, :2], x, x, causal[:2]), ours(x[:, :2], x, x, causal[None, :2]), **TOL)
    one = x[:1]                                            # a batch of 1: nothing to confuse
    torch.testing.assert_close(ours(one, one, one, pad[:1, 0]), ours(one, one, one, pad[:1]), **TOL)


@pytest.mark.parametrize("p, exc, match", [
    (1.0, ValueError, r"^dropout must be in \[0, 1\), got 1\.0$"),
    (-0.1, ValueError, r"^dropout must be in \[0, 1\), got -0\.1$"),
    (True, TypeError, r"^dropout must be a float in \[0, 1\), got bool True$"),
    ("0.1", TypeError, r"^dropout must be a float in \[0, 1\), got str '0\.1'$"),
])
def test_dropout_probability_is_checked(p, exc, match):
    "As the sublayers do: 0 <= p < 1, a number; in the constructor and in the dropout_p setter."
    with pytest.raises(exc, match=match):
        MultiHeadAttention(4, 32, dropout=p)
    m = MultiHeadAttention(4, 32, dropout=0.25)
    with pytest.raises(exc, match=match.replace("dropout", "dropout_p", 1)):
        m.dropout_p = p
    assert m.dropout_p == m.dropout.p == 0.25              # unchanged
    m.dropout_p = 0
    assert m.dropout.p == 0.0


# ---- the decoding cache: position by position with KVCache = PyTorch's module over the whole sequence -------
@pytest.mark.parametrize("chunks", [[1] * 8, [3, 1, 4], [8], [2, 2, 2, 2]])
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("capacity", [0, 1, 8])
def test_cached_steps_match_torch_over_the_whole_sequence(chunks, keep, capacity):
    "Causal self-attention and cross-attention fed a few positions at a time, against nn.MultiheadAttention."
    ref, ours = pair(seed=3)
    x, mem = inputs(batch=2, n=8, m=6, seed=4)
    lengths = [6, 4]  # a padded source
    causal = torch.ones(8, 8, dtype=torch.bool).tril()
    want_self, _ = ref(x, x, x, attn_mask=~causal, need_weights=False)
    want_cross, _ = ref(x, mem, mem, key_padding_mask=~padding(lengths, 6)[:, 0], need_weights=False)
    self_cache, cross_cache = KVCache(capacity=capacity), KVCache(fixed=True)
    got_self, got_cross, start = [], [], 0
    ours.keep_weights = keep
    for n in chunks:
        part = x[:, start:start + n]
        # (1, n, keys): a 2-D slice of n == batch rows would be ambiguous, and refused
        got_self.append(ours(part, part, part, causal[None, start:start + n, :start + n], cache=self_cache))
        got_cross.append(ours(part, mem, mem, padding(lengths, 6), cache=cross_cache))
        start += n
    ours.keep_weights = False
    torch.testing.assert_close(torch.cat(got_self, 1), want_self, **TOL)
    torch.testing.assert_close(torch.cat(got_cross, 1), want_cross, **TOL)
    assert self_cache.length == 8 and cross_cache.length == 6
    assert self_cache._k.size(2) >= 8 and (capacity < 8 or self_cache._k.size(2) == 8)


def test_decoding_leaves_the_class_as_chapter_03_wrote_it():
    # the cache brings its own projection (KVCache.heads); no module replaces MultiHeadAttention's methods
    for name in ["heads", "queries", "keys_values", "forward"]:
        assert getattr(MultiHeadAttention, name).__module__ == "annotated_transformer.multihead", name
    assert KVCache.heads.__module__ == "annotated_transformer.decoding"


def test_cache_writes_in_place_and_reorders_rows():
    cache = KVCache(capacity=4)
    k = torch.arange(2 * 1 * 3 * 2, dtype=DT).view(2, 1, 3, 2)
    cache.update(k[:, :, :2], -k[:, :, :2])
    buffer = cache._k
    keys, values = cache.update(k[:, :, 2:], -k[:, :, 2:])
    assert cache._k is buffer  # room for 4: the third position went into the same buffer, no new tensor
    assert torch.equal(keys, k) and torch.equal(values, -k) and keys.data_ptr() == buffer.data_ptr()
    cache.reorder(torch.tensor([1, 0]))
    assert torch.equal(cache.keys, k.flip(0)) and cache._k is buffer  # same rows: rewritten in place
    cache.reorder(torch.tensor([1, 1, 0]))  # beam search may copy a row
    assert torch.equal(cache.keys, k[[0, 0, 1]]) and torch.equal(cache.values, -k[[0, 0, 1]])
    empty = KVCache()
    empty.reorder(torch.tensor([0]))  # nothing to reorder yet
    assert empty.length == 0


def test_narrower_keys_match_a_head_by_head_computation():
    "Table 3 row (B): d_k smaller than d_model / h for queries and keys; values keep d_v = d_model / h."
    import math
    torch.manual_seed(0)
    h, d_model, d_k, d_v = 4, 32, 3, 8
    m = MultiHeadAttention(h=h, d_model=d_model, dropout=0.0, d_k=d_k).double().eval()
    x, memory = torch.randn(2, 5, d_model, dtype=torch.float64), torch.randn(2, 7, d_model, dtype=torch.float64)
    heads = []
    for i in range(h):
        qk_rows, v_rows = slice(i * d_k, (i + 1) * d_k), slice(i * d_v, (i + 1) * d_v)
        q = x @ m.w_q.weight[qk_rows].T + m.w_q.bias[qk_rows]
        k = memory @ m.w_k.weight[qk_rows].T + m.w_k.bias[qk_rows]
        v = memory @ m.w_v.weight[v_rows].T + m.w_v.bias[v_rows]
        heads.append(torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-1) @ v)
    expected = torch.cat(heads, dim=-1) @ m.w_o.weight.T + m.w_o.bias
    torch.testing.assert_close(m(x, memory, memory), expected, atol=1e-12, rtol=0)
    m.keep_weights = True  # the explicit path agrees too
    torch.testing.assert_close(m(x, memory, memory), expected, atol=1e-12, rtol=0)
    with pytest.raises(ValueError, match="d_k must be a positive integer or None, got 0"):
        MultiHeadAttention(h=4, d_model=32, d_k=0)


@pytest.mark.parametrize("keep", [False, True])
def test_is_causal_equals_the_causal_mask_also_after_cached_keys(keep):
    "is_causal on both paths; with a cache, n new queries follow m - n cached keys: query i sees keys <= m - n + i."
    _, ours = pair()
    x, _ = inputs(batch=2, n=7)
    ours.keep_weights = keep
    try:
        full = ours(x, x, x, torch.ones(7, 7, dtype=torch.bool).tril()[None])
        torch.testing.assert_close(ours(x, x, x, is_causal=True), full, atol=1e-12, rtol=0)
        cache = KVCache()
        first = ours(x[:, :3], x[:, :3], x[:, :3], cache=cache, is_causal=True)  # prefill 3 positions
        rest = ours(x[:, 3:], x[:, 3:], x[:, 3:], cache=cache, is_causal=True)  # then 4 more at once
    finally:
        ours.keep_weights = False
    torch.testing.assert_close(torch.cat([first, rest], 1), full, atol=1e-12, rtol=0)

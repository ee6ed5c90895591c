"""Tests for annotated_transformer.attention: equivalence with PyTorch's fused kernel, masking rules, errors."""
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from annotated_transformer.attention import attention, check_mask, fused_attention

DT = torch.float64
TOL = dict(atol=1e-12, rtol=1e-10)


def random_case(seed: int, fully_masked: bool = True):
    """Random query/key/value (float64) with 0-2 leading dims and a random bool mask whose shape is a
    broadcastable version of the scores' shape (some dims dropped on the left, some set to 1)."""
    g = torch.Generator().manual_seed(seed)
    r = lambda lo, hi: int(torch.randint(lo, hi + 1, (1,), generator=g))
    batch = tuple(r(1, 3) for _ in range(r(0, 2)))
    n, m, d_k, d_v = r(1, 6), r(1, 7), r(1, 9), r(1, 5)
    q = torch.randn(*batch, n, d_k, generator=g, dtype=DT)
    k = torch.randn(*batch, m, d_k, generator=g, dtype=DT)
    v = torch.randn(*batch, m, d_v, generator=g, dtype=DT)
    scores_shape = (*batch, n, m)
    if seed % 5 == 0:
        return q, k, v, None
    keep = r(2, len(scores_shape))                       # keep the last `keep` dims (at least query, key)
    mshape = [s if torch.rand(1, generator=g) < 0.6 else 1 for s in scores_shape[-keep:]]
    mask = torch.rand(*mshape, generator=g) < 0.7
    if mask.dim() == 2 and batch and batch[0] == mask.size(0) > 1:
        mask = mask.unsqueeze(0)  # a 2-D (n, m) mask with batch n is refused: give it its axes
    if fully_masked and mshape[-2] > 1 and seed % 3 == 0:
        mask[..., 0, :] = False                            # query 0 may attend nowhere
    return q, k, v, mask


def allowed_rows(mask, scores_shape):
    "(..., n, 1) bool: True where the query row has at least one allowed key."
    if mask is None:
        return torch.ones(*scores_shape[:-1], 1, dtype=torch.bool)
    return mask.expand(scores_shape).any(-1, keepdim=True)


SEEDS = range(60)


@pytest.mark.parametrize("seed", SEEDS)
def test_attention_matches_sdpa(seed):
    q, k, v, mask = random_case(seed)
    out, w = attention(q, k, v, mask)
    scores_shape = w.shape
    ok = allowed_rows(mask, scores_shape)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    # rows with an allowed key: identical to PyTorch; fully masked rows: zero weights and zero output
    torch.testing.assert_close(out * ok, ref * ok, **TOL)
    assert torch.isfinite(out).all() and torch.isfinite(w).all()
    assert torch.all(out.masked_select(~ok) == 0) and torch.all(w.masked_select(~ok) == 0)
    torch.testing.assert_close(out, w @ v, **TOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_fused_matches_explicit(seed):
    q, k, v, mask = random_case(seed)
    torch.testing.assert_close(fused_attention(q, k, v, mask), attention(q, k, v, mask)[0], **TOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_weights_are_a_masked_softmax(seed):
    "Independent reference, one query at a time: weights = exp(s_j) / sum over allowed j, zero elsewhere."
    q, k, v, mask = random_case(seed)
    _, w = attention(q, k, v, mask)
    scores = torch.einsum("...nd,...md->...nm", q, k) / math.sqrt(q.size(-1))
    allowed = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand(scores.shape)
    s, a, w_ = scores.reshape(-1, scores.size(-1)), allowed.reshape(-1, scores.size(-1)), w.reshape(-1, w.size(-1))
    for row in range(s.size(0)):
        expected = torch.zeros(s.size(1), dtype=DT)
        if a[row].any():
            e = torch.exp(s[row][a[row]] - s[row][a[row]].max())
            expected[a[row]] = e / e.sum()
            assert math.isclose(w_[row].sum().item(), 1.0, abs_tol=1e-12)   # rows with an allowed key sum to 1
        torch.testing.assert_close(w_[row], expected, **TOL)


def test_broadcast_masks_equal_expanded_masks():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 4, 5, generator=g, dtype=DT) for _ in range(3))
    for shape in [(2, 1, 1, 4), (1, 3, 4, 4), (4, 4), (2, 1, 4, 1), (4, 1), (1, 4), (4,), (1,), ()]:
        mask = torch.rand(shape, generator=g) < 0.6
        expanded = mask.expand(2, 3, 4, 4).clone()
        torch.testing.assert_close(attention(q, k, v, mask)[0], attention(q, k, v, expanded)[0], **TOL)
        torch.testing.assert_close(fused_attention(q, k, v, mask), attention(q, k, v, expanded)[0], **TOL)


def test_no_mask_equals_all_true_mask():
    q, k, v = torch.randn(2, 3, 4, dtype=DT), torch.randn(2, 5, 4, dtype=DT), torch.randn(2, 5, 6, dtype=DT)
    everything = torch.ones(3, 5, dtype=torch.bool)
    torch.testing.assert_close(attention(q, k, v, everything)[0], attention(q, k, v)[0], **TOL)


def test_masked_values_do_not_leak():
    "Changing the values (or keys) at masked positions changes nothing."
    g = torch.Generator().manual_seed(2)
    q, k, v = torch.randn(2, 3, 4, generator=g), torch.randn(2, 6, 4, generator=g), torch.randn(2, 6, 5, generator=g)
    mask = torch.ones(2, 1, 6, dtype=torch.bool)
    mask[0, 0, 4:] = False
    k2, v2 = k.clone(), v.clone()
    k2[0, 4:] += 100.0
    v2[0, 4:] = float("1e6")
    for fn in (lambda *a: attention(*a)[0], fused_attention):
        torch.testing.assert_close(fn(q, k, v, mask), fn(q, k2, v2, mask))


def test_fully_masked_rows_are_zero_and_gradients_finite():
    q = torch.randn(2, 3, 4, dtype=DT, requires_grad=True)
    k = torch.randn(2, 5, 4, dtype=DT, requires_grad=True)
    v = torch.randn(2, 5, 6, dtype=DT, requires_grad=True)
    mask = torch.rand(2, 3, 5, generator=torch.Generator().manual_seed(3)) < 0.7
    mask[:, :, 0] = True
    mask[0, 1] = False                                    # a fully masked query row
    mask[1] = False                                       # a fully masked sequence
    grads = []
    for fn in (lambda *a: attention(*a)[0], fused_attention):
        out = fn(q, k, v, mask)
        assert torch.isfinite(out).all()
        assert torch.all(out[0, 1] == 0) and torch.all(out[1] == 0)
        (out * torch.arange(out.numel(), dtype=DT).reshape(out.shape).cos()).sum().backward()
        grads.append([t.grad.clone() for t in (q, k, v)])
        for t in (q, k, v):
            assert torch.isfinite(t.grad).all()
            t.grad = None
    assert torch.all(grads[0][0][0, 1] == 0) and torch.all(grads[0][0][1] == 0)   # no signal to masked queries
    for a, b in zip(*grads):                              # explicit and fused gradients agree
        torch.testing.assert_close(a, b, **TOL)


def test_gradcheck_with_masks():
    q = torch.randn(2, 3, 4, dtype=DT, requires_grad=True)
    k = torch.randn(2, 4, 4, dtype=DT, requires_grad=True)
    v = torch.randn(2, 4, 2, dtype=DT, requires_grad=True)
    mask = torch.ones(2, 3, 4, dtype=torch.bool).tril()
    mask[1, 2] = False
    assert torch.autograd.gradcheck(lambda q, k, v: attention(q, k, v, mask)[0], (q, k, v))
    assert torch.autograd.gradcheck(lambda q, k, v: fused_attention(q, k, v, mask), (q, k, v))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_low_precision_fully_masked_rows(dtype):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 8).to(dtype) * 4 for _ in range(3))
    mask = torch.ones(2, 3, 3, dtype=torch.bool).tril()
    mask[0, 2] = False
    out, w = attention(q, k, v, mask)
    assert out.dtype == dtype and torch.isfinite(out).all() and torch.isfinite(w).all()
    assert torch.all(out[0, 2] == 0) and torch.all(w[0, 2] == 0) and torch.all(w.triu(1) == 0)
    fused = fused_attention(q, k, v, mask)
    assert torch.isfinite(fused).all() and torch.all(fused[0, 2] == 0)
    # Both paths against float64 attention on the same (rounded) inputs. The explicit path rounds the
    # scores and the softmax to `dtype` step by step, the fused kernel accumulates in float32, so in
    # bfloat16 (8 mantissa bits) the explicit path is the less precise one: over 300 seeds its worst
    # error was 5.2% of max|v| (fused: 0.34%); float16: 0.57% (0.04%).
    ref, _ = attention(q.double(), k.double(), v.double(), mask)
    scale = v.double().abs().max()
    tol = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 8e-2}[dtype]
    assert (out.double() - ref).abs().max() <= tol * scale
    assert (fused.double() - ref).abs().max() <= tol * scale


def test_scale_is_sqrt_d_k():
    "Doubling d_k with duplicated features doubles q·k; the 1/sqrt(d_k) must turn it into sqrt(2) times the score."
    q, k, v = torch.randn(3, 4, dtype=DT), torch.randn(5, 4, dtype=DT), torch.randn(5, 2, dtype=DT)
    _, w = attention(q, k, v)
    _, w2 = attention(torch.cat([q, q], -1), torch.cat([k, k], -1), v)
    torch.testing.assert_close(w2, (math.sqrt(2) * (q @ k.T) / 2).softmax(-1), **TOL)
    torch.testing.assert_close(w, (q @ k.T / 2).softmax(-1), **TOL)


def test_dropout_on_weights():
    torch.manual_seed(0)
    q, k, v = torch.randn(4, 6, 8, dtype=DT), torch.randn(4, 7, 8, dtype=DT), torch.randn(4, 7, 3, dtype=DT)
    mask = torch.ones(4, 6, 7, dtype=torch.bool).tril()
    mask[0, 0] = False
    _, clean = attention(q, k, v, mask)
    drop = nn.Dropout(0.5)
    out, w = attention(q, k, v, mask, dropout=drop)
    dropped = w == 0
    assert dropped[clean > 0].any()                               # some weights were dropped ...
    torch.testing.assert_close(w[~dropped], 2 * clean[~dropped])  # ... the rest scaled by 1/(1-p)
    torch.testing.assert_close(out, w @ v)                        # the returned weights are the ones used
    assert torch.all(out[0, 0] == 0)
    drop.eval()                                                   # eval: dropout is the identity
    torch.testing.assert_close(attention(q, k, v, mask, dropout=drop)[1], clean, **TOL)
    fused = fused_attention(q, k, v, mask, dropout_p=0.5)          # fused dropout keeps the zero rows
    assert torch.isfinite(fused).all() and torch.all(fused[0, 0] == 0)
    assert not torch.allclose(fused, attention(q, k, v, mask)[0])


def test_dropout_p_zero_is_deterministic():
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    torch.testing.assert_close(fused_attention(q, k, v, dropout_p=0.0), fused_attention(q, k, v), rtol=0, atol=0)


def test_shapes_and_leading_dims():
    q, k, v = torch.randn(2, 8, 3, 4), torch.randn(2, 8, 5, 4), torch.randn(2, 8, 5, 6)
    out, w = attention(q, k, v)
    assert out.shape == (2, 8, 3, 6) and w.shape == (2, 8, 3, 5)
    assert fused_attention(q, k, v).shape == (2, 8, 3, 6)
    out, w = attention(q[0, 0], k[0, 0], v[0, 0])                  # no leading dims
    assert out.shape == (3, 6) and w.shape == (3, 5)


# ---- errors -----------------------------------------------------------------------------------------

def test_check_mask_accepts_broadcastable_bool_masks():
    for shape in [(2, 8, 3, 5), (2, 1, 1, 5), (3, 5), (1, 5), (5,), (8, 1, 1)]:
        check_mask(torch.ones(shape, dtype=torch.bool), (2, 8, 3, 5))
    check_mask(torch.ones(2, 1, 5, dtype=torch.bool), torch.Size([2, 3, 5]))


@pytest.mark.parametrize("bad", [torch.ones(2, 3, 5), torch.ones(2, 3, 5, dtype=torch.int64),
                                 torch.ones(2, 3, 5, dtype=torch.uint8)])
def test_check_mask_dtype(bad):
    with pytest.raises(TypeError, match=rf"mask must be a bool tensor \(True = may attend\), got {bad.dtype}$"):
        check_mask(bad, (2, 3, 5))


def test_check_mask_float_message_exact():
    with pytest.raises(TypeError) as e:
        check_mask(torch.ones(2, 3, 5), (2, 3, 5))
    assert str(e.value) == "mask must be a bool tensor (True = may attend), got torch.float32"


def test_check_mask_not_a_tensor():
    with pytest.raises(TypeError, match=r"mask must be a bool tensor \(True = may attend\), got list"):
        check_mask([[True]], (1, 1))


@pytest.mark.parametrize("shape", [(2, 3, 4), (3, 3, 5), (2, 2, 3, 5), (5, 3)])
def test_check_mask_shape(shape):
    with pytest.raises(ValueError, match=rf"mask of shape {re_shape(shape)} does not broadcast .* \(2, 3, 5\)"):
        check_mask(torch.ones(shape, dtype=torch.bool), (2, 3, 5))


def re_shape(shape):
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


@pytest.mark.parametrize("fn", [attention, fused_attention])
def test_errors_in_both_paths(fn):
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    with pytest.raises(ValueError, match=r"d_k=4 \(query\) and d_k=8 \(key\)"):
        fn(q, torch.randn(2, 5, 8), v)
    with pytest.raises(ValueError, match=r"same sequence length, got 5 keys and 7 values"):
        fn(q, k, torch.randn(2, 7, 6))
    with pytest.raises(TypeError, match=r"got torch\.float32"):
        fn(q, k, v, torch.ones(2, 1, 5))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 1, 4\) does not broadcast .* \(2, 3, 5\)"):
        fn(q, k, v, torch.ones(2, 1, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"query must have at least 2 dimensions"):
        fn(torch.randn(4), k, v)


@pytest.mark.parametrize("fn", [attention, fused_attention])
def test_a_2d_mask_with_the_batch_size_is_refused(fn):
    """Issue 61: a (B, T) key-padding mask with B == T used to be read as (T_q, T_k), a wrong result without a word.
    Both paths now refuse it, as MultiHeadAttention does, naming the shapes that say what is meant."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(4, 4, 8, generator=g, dtype=DT) for _ in range(3))
    pad = torch.ones(4, 4, dtype=torch.bool)
    pad[1, 2:] = pad[3, 1:] = False                       # sentences 1 and 3 end in padding
    with pytest.raises(ValueError, match=r"2-D mask of shape \(4, 4\) is ambiguous with a batch of 4: "
                                         r"pass a key-padding mask as \(batch, 1, n_keys\) = \(4, 1, 4\)"):
        fn(q, k, v, pad)
    heads = q[:, None].expand(4, 2, 4, 8)                # (batch, heads, ...): the message gives 4-D shapes
    with pytest.raises(ValueError, match=r"\(batch, 1, 1, n_keys\) = \(4, 1, 1, 4\)"):
        fn(heads, heads, heads, pad)
    # the shapes the message asks for give the right results: key padding, and (n_queries, n_keys)
    out = fn(q, k, v, pad[:, None])
    out = out[0] if fn is attention else out
    for i, n_real in enumerate(pad.sum(-1).tolist()):  # each sentence alone, without its padding keys
        torch.testing.assert_close(out[i], attention(q[i], k[i, :n_real], v[i, :n_real])[0], **TOL)
    tril = torch.ones(4, 4, dtype=torch.bool).tril()
    explicit = fn(q, k, v, tril[None])
    torch.testing.assert_close(explicit[0] if fn is attention else explicit,
                               attention(q, k, v, tril.expand(4, 4, 4))[0], **TOL)
    # 2-D stays (n_queries, n_keys) where it cannot be read two ways: batch 1, or n_queries != batch
    fn(q[:1], k[:1], v[:1], tril)
    fn(q[:, :3], k, v, tril[:3])


@pytest.mark.parametrize("seed", range(6))
def test_is_causal_means_the_causal_mask(seed):
    "is_causal=True (no mask tensor, the kernel's own rule) equals the explicit causal mask, with a padding mask too."
    g = torch.Generator().manual_seed(seed)
    b, h, n, d = (int(torch.randint(lo, hi, (1,), generator=g)) for lo, hi in ((1, 4), (1, 4), (1, 9), (2, 9)))
    q, k, v = (torch.randn(b, h, n, d, generator=g, dtype=DT) for _ in range(3))
    tril = torch.ones(1, 1, n, n, dtype=torch.bool).tril()
    keep = torch.rand(b, 1, 1, n, generator=g) < 0.7  # padding keys; some rows may lose every key
    for mask, explicit in ((None, tril), (keep, keep & tril)):
        out = fused_attention(q, k, v, mask, is_causal=True)
        torch.testing.assert_close(out, attention(q, k, v, explicit)[0], atol=1e-12, rtol=0)
        torch.testing.assert_close(out, fused_attention(q, k, v, explicit), atol=1e-12, rtol=0)


def test_is_causal_needs_as_many_queries_as_keys():
    q, k = torch.randn(1, 3, 4), torch.randn(1, 5, 4)
    with pytest.raises(ValueError, match="is_causal needs as many queries as keys, got 3 queries and 5 keys"):
        fused_attention(q, k, k, is_causal=True)

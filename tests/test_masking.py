"""annotated_transformer.masking: shapes, equivalence with PyTorch's mask conventions, no NaN, errors."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from annotated_transformer.masking import causal_mask, padding_mask, target_mask

PAD = 0


def right_padded_batch(gen: torch.Generator, batch: int, seq: int, vocab: int = 20) -> torch.Tensor:
    "Random token ids in 1..vocab-1, each row right-padded with PAD to `seq` (real length >= 1)."
    tokens = torch.randint(1, vocab, (batch, seq), generator=gen)
    lengths = torch.randint(1, seq + 1, (batch,), generator=gen)
    tokens[torch.arange(seq)[None, :] >= lengths[:, None]] = PAD
    return tokens


def naive_masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    "The plain recipe: forbidden -> -inf, softmax (NaN on a row with no allowed key)."
    return scores.masked_fill(~mask, float("-inf")).softmax(-1)


# ---------------------------------------------------------------- shapes and dtypes

def test_padding_mask_shape_dtype_values():
    tokens = torch.tensor([[5, 6, 7, PAD], [8, PAD, PAD, PAD]])
    m = padding_mask(tokens, PAD)
    assert m.shape == (2, 1, 4) and m.dtype == torch.bool
    assert m.tolist() == [[[True, True, True, False]], [[True, False, False, False]]]


def test_padding_mask_other_pad_id_and_integer_types():
    tokens = torch.tensor([[3, 1, 1]], dtype=torch.int32)
    expected = [[[True, False, False]]]
    assert padding_mask(tokens, 1).tolist() == expected
    assert padding_mask(tokens, np.int64(1)).tolist() == expected  # numpy ints are ints
    assert padding_mask(tokens.long(), 1).tolist() == expected
    # one rule for token ids everywhere (appendix A): long or int32, the types nn.Embedding takes
    with pytest.raises(TypeError, match="got torch.uint8"):
        padding_mask(tokens.to(torch.uint8), 1)


def test_padding_mask_matches_pytorch_key_padding_mask():
    gen = torch.Generator().manual_seed(1)
    tokens = right_padded_batch(gen, 5, 9)
    key_padding_mask = tokens == PAD  # PyTorch: True = ignore
    assert torch.equal(padding_mask(tokens, PAD), ~key_padding_mask.unsqueeze(1))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16])
def test_causal_mask_is_tril_and_matches_pytorch(n):
    m = causal_mask(n)
    assert m.shape == (1, n, n) and m.dtype == torch.bool
    assert torch.equal(m[0], torch.tril(torch.ones(n, n, dtype=torch.bool)))
    # PyTorch's float mask: -inf exactly where a query may not look (above the diagonal), 0 elsewhere
    torch_mask = nn.Transformer.generate_square_subsequent_mask(n)
    assert torch.equal(m[0], ~(torch_mask == float("-inf")))
    assert torch.equal(~m[0], torch_mask == float("-inf"))


def test_causal_mask_device_argument():
    assert causal_mask(3, device="cpu").device.type == "cpu"
    assert causal_mask(3, device=torch.device("cpu")).device.type == "cpu"


def test_causal_mask_accepts_numpy_int():
    assert causal_mask(np.int64(4)).shape == (1, 4, 4)


def test_target_mask_is_padding_and_causal_on_random_batches():
    gen = torch.Generator().manual_seed(0)
    for _ in range(50):
        batch, seq = torch.randint(1, 6, (2,), generator=gen).tolist()
        tgt = right_padded_batch(gen, batch, seq)
        m = target_mask(tgt, PAD)
        assert m.shape == (batch, seq, seq) and m.dtype == torch.bool
        assert torch.equal(m, padding_mask(tgt, PAD) & causal_mask(seq))
        # element by element: allowed iff key j <= query i and token j is not padding
        for b in range(batch):
            for i in range(seq):
                for j in range(seq):
                    assert bool(m[b, i, j]) == (j <= i and int(tgt[b, j]) != PAD)


def test_target_mask_follows_device_of_tgt():
    assert target_mask(torch.tensor([[1, 2, PAD]]), PAD).device == torch.device("cpu")


# ---------------------------------------------------------------- meaning: the same as PyTorch's masks

def test_bool_masks_mean_the_same_as_pytorch_float_masks_in_sdpa():
    "Our bool masks (True = attend) in F.scaled_dot_product_attention == PyTorch's additive float masks."
    gen = torch.Generator().manual_seed(2)
    batch, h, seq, d_k = 4, 2, 7, 8
    tgt = right_padded_batch(gen, batch, seq)
    q, k, v = torch.randn(3, batch, h, seq, d_k, generator=gen, dtype=torch.float64).unbind(0)
    ours = F.scaled_dot_product_attention(q, k, v, attn_mask=target_mask(tgt, PAD).unsqueeze(1))
    additive = nn.Transformer.generate_square_subsequent_mask(seq, dtype=torch.float64)  # (seq, seq)
    additive = additive + torch.zeros(batch, 1, 1, seq, dtype=torch.float64).masked_fill(
        (tgt == PAD)[:, None, None, :], float("-inf"))
    theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=additive)
    torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-12)


def test_mask_zero_pattern_matches_nn_multiheadattention():
    "nn.MultiheadAttention with key_padding_mask + causal attn_mask puts zero weight exactly where ours is False."
    torch.manual_seed(3)
    batch, seq, d = 3, 6, 8
    tgt = torch.tensor([[1, 2, 3, 4, 5, 6], [1, 2, 3, PAD, PAD, PAD], [1, 2, 3, 4, 5, PAD]])
    mha = nn.MultiheadAttention(d, 2, batch_first=True, dtype=torch.float64).eval()
    x = torch.randn(batch, seq, d, dtype=torch.float64)
    key_padding_mask = torch.zeros(batch, seq, dtype=torch.float64).masked_fill(tgt == PAD, float("-inf"))
    _, w = mha(x, x, x, key_padding_mask=key_padding_mask,  # float, like attn_mask (mixing is deprecated)
               attn_mask=nn.Transformer.generate_square_subsequent_mask(seq, dtype=torch.float64),
               need_weights=True, average_attn_weights=False)  # (batch, h, seq, seq)
    allowed = target_mask(tgt, PAD).unsqueeze(1).expand_as(w)
    assert (w[~allowed] == 0).all()
    assert (w[allowed] > 0).all()


def test_future_tokens_do_not_change_earlier_outputs():
    "With target_mask, changing token t changes no output at positions < t."
    torch.manual_seed(4)
    seq, d = 8, 16
    emb = nn.Embedding(30, d)
    tgt = torch.randint(1, 30, (1, seq))
    tgt[0, 6:] = PAD

    def run(tokens):
        x = emb(tokens)
        w = naive_masked_softmax(x @ x.transpose(-2, -1) / math.sqrt(d), target_mask(tokens, PAD))
        return w @ x

    with torch.no_grad():
        base = run(tgt)
        for t in range(seq):
            changed = tgt.clone()
            changed[0, t] = (changed[0, t] % 29) + 1  # a different non-pad token
            torch.testing.assert_close(run(changed)[:, :t], base[:, :t], rtol=0, atol=0)


def test_padding_does_not_change_real_outputs():
    "Encoder self-attention with padding_mask: extra padding leaves the real tokens' outputs unchanged."
    torch.manual_seed(5)
    d = 16
    emb = nn.Embedding(30, d)
    sentence = torch.tensor([[4, 9, 2]])

    def run(tokens):
        x = emb(tokens)
        w = naive_masked_softmax(x @ x.transpose(-2, -1) / math.sqrt(d), padding_mask(tokens, PAD))
        return w @ x

    with torch.no_grad():
        alone = run(sentence)
        for n_pad in (1, 4, 17):
            padded = torch.cat([sentence, torch.full((1, n_pad), PAD)], dim=1)
            torch.testing.assert_close(run(padded)[:, :3], alone)


# ---------------------------------------------------------------- no NaN with right-padded batches

@pytest.mark.parametrize("seed", range(5))
def test_masked_softmax_with_our_masks_never_nan_on_right_padded_batches(seed):
    gen = torch.Generator().manual_seed(seed)
    batch, h, src_len, tgt_len = 6, 4, 9, 7
    src = right_padded_batch(gen, batch, src_len)
    tgt = right_padded_batch(gen, batch, tgt_len)
    src_mask, tgt_mask = padding_mask(src, PAD), target_mask(tgt, PAD)
    cases = [  # (scores shape, mask with a head axis)
        ((batch, h, src_len, src_len), src_mask.unsqueeze(1)),  # encoder self-attention
        ((batch, h, tgt_len, tgt_len), tgt_mask.unsqueeze(1)),  # decoder self-attention
        ((batch, h, tgt_len, src_len), src_mask.unsqueeze(1)),  # encoder-decoder attention
    ]
    for shape, mask in cases:
        scores = torch.randn(shape, generator=gen) * 10
        w = naive_masked_softmax(scores, mask)
        assert torch.isfinite(w).all()
        assert (w.masked_select(~mask.expand(shape)) == 0).all()  # forbidden keys: exactly zero weight
        torch.testing.assert_close(w.sum(-1), torch.ones(shape[:-1]))
        # and gradients stay finite too
        s = scores.clone().requires_grad_()
        naive_masked_softmax(s, mask).pow(2).sum().backward()
        assert torch.isfinite(s.grad).all()


def test_every_row_has_an_allowed_key_for_right_padding():
    gen = torch.Generator().manual_seed(6)
    for _ in range(20):
        tokens = right_padded_batch(gen, 4, 10)
        assert padding_mask(tokens, PAD).any(-1).all()
        assert target_mask(tokens, PAD).any(-1).all()


def test_left_padding_does_produce_empty_rows():
    "The case the attention function must handle: left padding gives query rows with no allowed key."
    m = target_mask(torch.tensor([[PAD, PAD, 1, 5]]), PAD)
    assert (~m.any(-1)).tolist() == [[True, True, False, False]]
    assert torch.isnan(naive_masked_softmax(torch.zeros(1, 4, 4), m)[0, :2]).all()


# ---------------------------------------------------------------- errors

def test_errors_tokens():
    with pytest.raises(TypeError, match="tokens must be a tensor of token ids, got list"):
        padding_mask([[1, 2, 0]], PAD)
    with pytest.raises(TypeError, match=r"tokens must hold integer token ids \(torch.long or torch.int32\), got torch.float32"):
        padding_mask(torch.zeros(2, 3), PAD)
    with pytest.raises(TypeError, match="got torch.bool"):
        padding_mask(torch.ones(2, 3, dtype=torch.bool), PAD)
    with pytest.raises(ValueError, match=r"tokens must have shape \(batch, seq\), got \(5,\)"):
        padding_mask(torch.arange(5), PAD)
    with pytest.raises(ValueError, match=r"got \(1, 2, 3\)"):
        padding_mask(torch.zeros(1, 2, 3, dtype=torch.long), PAD)
    with pytest.raises(ValueError, match="tokens is empty"):
        padding_mask(torch.zeros(2, 0, dtype=torch.long), PAD)


def test_errors_tgt():
    with pytest.raises(TypeError, match=r"tgt must hold integer token ids \(torch.long or torch.int32\), got torch.float64"):
        target_mask(torch.zeros(2, 3, dtype=torch.float64), PAD)
    with pytest.raises(ValueError, match=r"tgt must have shape \(batch, seq\), got \(3,\)"):
        target_mask(torch.arange(3), PAD)
    with pytest.raises(ValueError, match=r"tgt is empty \(shape \(2, 0\)\)"):
        target_mask(torch.zeros(2, 0, dtype=torch.long), PAD)


@pytest.mark.parametrize("bad, name", [(0.0, "float"), (True, "bool"), ("0", "str"), (None, "NoneType")])
def test_errors_pad(bad, name):
    tokens = torch.tensor([[1, 2, 0]])
    with pytest.raises(TypeError, match=rf"pad \(the padding token id\) must be an int, got {name}"):
        padding_mask(tokens, bad)
    with pytest.raises(TypeError, match=rf"pad \(the padding token id\) must be an int, got {name}"):
        target_mask(tokens, bad)


def test_errors_causal_size():
    for bad in (0, -3):
        with pytest.raises(ValueError, match=f"size must be >= 1, got {bad}"):
            causal_mask(bad)
    with pytest.raises(TypeError, match="size must be an int, got float"):
        causal_mask(3.0)
    with pytest.raises(TypeError, match="size must be an int, got bool"):
        causal_mask(True)

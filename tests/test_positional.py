"""annotated_transformer.positional: the §3.5 formula, its properties, the modules, errors."""
import math

import numpy as np
import pytest
import torch
from torch import nn

from annotated_transformer.positional import (LearnedPositionalEncoding, PositionalEncoding,
                                              sinusoidal_encoding)


def formula(max_positions: int, d_model: int) -> np.ndarray:
    "§3.5 written out: PE(pos,2i) = sin(pos/10000^(2i/d)), PE(pos,2i+1) = cos(pos/10000^(2i/d)); float64 loops."
    pe = np.zeros((max_positions, d_model))
    for pos in range(max_positions):
        for i in range(d_model // 2):
            pe[pos, 2 * i] = math.sin(pos / 10000 ** (2 * i / d_model))
            pe[pos, 2 * i + 1] = math.cos(pos / 10000 ** (2 * i / d_model))
    return pe


def shift_matrix(k: int, d_model: int) -> torch.Tensor:
    "Block-diagonal [[cos wk, sin wk], [-sin wk, cos wk]] for w_i = 10000^(-2i/d), float64."
    blocks = []
    for i in range(d_model // 2):
        a = k / 10000 ** (2 * i / d_model)
        blocks.append(torch.tensor([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]], dtype=torch.float64))
    return torch.block_diag(*blocks)


# ---------------------------------------------------------------- sinusoidal_encoding

@pytest.mark.parametrize("max_positions, d_model", [(1, 2), (7, 2), (50, 4), (64, 16), (200, 32), (101, 6)])
def test_sinusoidal_encoding_equals_formula_float64(max_positions, d_model):
    pe = sinusoidal_encoding(max_positions, d_model, dtype=torch.float64)
    assert pe.shape == (max_positions, d_model) and pe.dtype == torch.float64
    np.testing.assert_allclose(pe.numpy(), formula(max_positions, d_model), rtol=0, atol=1e-12)


def test_sinusoidal_encoding_default_float32_is_rounded_float64():
    pe32 = sinusoidal_encoding(300, 64)
    assert pe32.dtype == torch.float32
    assert torch.equal(pe32, sinusoidal_encoding(300, 64, dtype=torch.float64).float())
    np.testing.assert_allclose(pe32.double().numpy(), formula(300, 64), rtol=0, atol=6e-8)


def test_sinusoidal_encoding_large_table_accuracy():
    "At the paper's sizes the float32 table is within float32 rounding of the exact formula."
    pe = sinusoidal_encoding(5000, 512)
    pos = torch.tensor([0, 1, 1234, 4999])
    for p in pos.tolist():
        for i in (0, 1, 37, 255):
            a = p / 10000 ** (2 * i / 512)
            assert abs(pe[p, 2 * i].item() - math.sin(a)) <= 6e-8
            assert abs(pe[p, 2 * i + 1].item() - math.cos(a)) <= 6e-8


def test_sinusoidal_encoding_other_dtypes():
    assert sinusoidal_encoding(10, 8, dtype=torch.bfloat16).dtype == torch.bfloat16
    assert sinusoidal_encoding(10, 8, dtype=torch.float16).dtype == torch.float16


def test_longer_table_extends_shorter_one():
    assert torch.equal(sinusoidal_encoding(2000, 32)[:100], sinusoidal_encoding(100, 32))


@pytest.mark.parametrize("k", [1, 2, 17, 250, -1, -40])
def test_rotation_property(k):
    "PE(pos + k) = M_k PE(pos) for every pos, with M_k independent of pos."
    d, n = 32, 600
    pe = sinusoidal_encoding(n, d, dtype=torch.float64)
    M = shift_matrix(k, d)
    if k >= 0:
        src, dst = pe[: n - k], pe[k:]
    else:
        src, dst = pe[-k:], pe[: n + k]
    torch.testing.assert_close(src @ M.T, dst, rtol=0, atol=1e-12)
    torch.testing.assert_close(M @ M.T, torch.eye(d, dtype=torch.float64), rtol=0, atol=1e-12)


def test_dot_product_depends_only_on_offset():
    d = 64
    pe = sinusoidal_encoding(400, d, dtype=torch.float64)
    sim = pe @ pe.T
    for k in (0, 1, 9, 120, 399):
        expected = sum(math.cos(k / 10000 ** (2 * i / d)) for i in range(d // 2))
        diag = torch.diagonal(sim, offset=k)
        torch.testing.assert_close(diag, torch.full_like(diag, expected), rtol=0, atol=1e-10)
        torch.testing.assert_close(torch.diagonal(sim, offset=-k), diag, rtol=0, atol=1e-10)


# ---------------------------------------------------------------- PositionalEncoding

def test_positional_encoding_eval_adds_exactly_pe():
    torch.manual_seed(0)
    m = PositionalEncoding(16, dropout=0.1, max_positions=40).eval()
    x = torch.randn(3, 11, 16)
    assert torch.equal(m(x), x + sinusoidal_encoding(40, 16)[:11])
    assert m.pe.shape == (1, 40, 16) and m.pe.dtype == torch.float32


def test_positional_encoding_offset():
    torch.manual_seed(0)
    m = PositionalEncoding(8, max_positions=20).eval()
    x = torch.randn(2, 10, 8)
    full = m(x)
    for t in range(10):
        assert torch.equal(m(x[:, t : t + 1], offset=t), full[:, t : t + 1])
    assert torch.equal(m(torch.zeros(1, 3, 8), offset=17)[0], sinusoidal_encoding(20, 8)[17:20])


def test_positional_encoding_dropout_in_train_mode():
    torch.manual_seed(0)
    m = PositionalEncoding(16, dropout=0.5, max_positions=100).train()
    x = torch.randn(32, 100, 16)
    y = m(x)
    clean = x + m.pe
    zero = y == 0
    assert 0.45 < zero.float().mean() < 0.55
    torch.testing.assert_close(y[~zero], clean[~zero] * 2)
    assert torch.equal(PositionalEncoding(16, dropout=0.0, max_positions=100).train()(x), clean)


def test_positional_encoding_default_dropout_is_paper_value():
    assert PositionalEncoding(8).dropout.p == 0.1
    assert PositionalEncoding(8).max_positions == 5000


def test_positional_encoding_state_dict_has_no_pe_and_loads_across_max_positions():
    m = PositionalEncoding(16, max_positions=64)
    assert "pe" not in m.state_dict()
    assert len(m.state_dict()) == 0
    bigger = PositionalEncoding(16, max_positions=1000)
    bigger.load_state_dict(m.state_dict())  # strict: nothing missing, nothing unexpected
    assert bigger.eval()(torch.zeros(1, 500, 16)).shape == (1, 500, 16)
    assert "pe" in dict(m.named_buffers())


def test_positional_encoding_keeps_input_dtype_and_moves_with_module():
    m = PositionalEncoding(8, max_positions=10).eval()
    assert m(torch.zeros(1, 4, 8, dtype=torch.bfloat16)).dtype == torch.bfloat16
    m64 = m.double()
    assert m64.pe.dtype == torch.float64
    assert m64(torch.zeros(1, 4, 8, dtype=torch.float64)).dtype == torch.float64


def test_positional_encoding_gradient_flows_to_input():
    m = PositionalEncoding(8, max_positions=10).eval()
    x = torch.randn(2, 5, 8, requires_grad=True)
    m(x).sum().backward()
    torch.testing.assert_close(x.grad, torch.ones_like(x))
    assert not m.pe.requires_grad


def test_positional_encoding_too_long_sequence():
    m = PositionalEncoding(512)
    with pytest.raises(ValueError, match=r"^sequence length 6000 exceeds the positional table's max_positions=5000$"):
        m(torch.zeros(1, 6000, 512))
    m(torch.zeros(1, 5000, 512))  # exactly max_positions is fine
    small = PositionalEncoding(4, max_positions=10)
    with pytest.raises(ValueError, match=r"positions 8\.\.11 \(offset 8 \+ sequence length 4\) exceed the "
                                         r"positional table's max_positions=10"):
        small(torch.zeros(1, 4, 4), offset=8)


def test_positional_encoding_input_errors():
    m = PositionalEncoding(8, max_positions=10)
    with pytest.raises(ValueError, match="x has last dimension 7, expected d_model=8"):
        m(torch.zeros(2, 3, 7))
    with pytest.raises(ValueError, match=r"x must be \(batch, seq, d_model\), got shape \(3, 8\)"):
        m(torch.zeros(3, 8))
    with pytest.raises(TypeError, match="x must be a floating-point tensor .* got torch.int64"):
        m(torch.zeros(2, 3, 8, dtype=torch.long))
    with pytest.raises(TypeError, match="x must be a torch.Tensor, got list"):
        m([[0.0] * 8])
    with pytest.raises(ValueError, match="offset must be >= 0, got -1"):
        m(torch.zeros(1, 3, 8), offset=-1)
    with pytest.raises(TypeError, match="offset must be an int, got float"):
        m(torch.zeros(1, 3, 8), offset=1.0)


def test_sinusoidal_errors():
    with pytest.raises(ValueError, match="^d_model must be even for sinusoidal encoding, got 5$"):
        sinusoidal_encoding(10, 5)
    with pytest.raises(ValueError, match="^d_model must be even for sinusoidal encoding, got 5$"):
        PositionalEncoding(5)
    with pytest.raises(ValueError, match="max_positions must be >= 1, got 0"):
        sinusoidal_encoding(0, 8)
    with pytest.raises(ValueError, match="max_positions must be >= 1, got -2"):
        PositionalEncoding(8, max_positions=-2)
    with pytest.raises(ValueError, match="d_model must be >= 1, got 0"):
        sinusoidal_encoding(4, 0)
    with pytest.raises(TypeError, match="d_model must be an int, got float"):
        sinusoidal_encoding(4, 8.0)
    with pytest.raises(TypeError, match="max_positions must be an int, got bool"):
        sinusoidal_encoding(True, 8)
    with pytest.raises(TypeError, match="dtype must be a floating-point torch.dtype, got torch.int64"):
        sinusoidal_encoding(4, 8, dtype=torch.int64)


# ---------------------------------------------------------------- LearnedPositionalEncoding

def test_learned_shape_parameters_and_values():
    torch.manual_seed(0)
    m = LearnedPositionalEncoding(12, dropout=0.1, max_positions=30).eval()
    assert isinstance(m.embedding, nn.Embedding)
    assert m.embedding.weight.shape == (30, 12)
    assert sum(p.numel() for p in m.parameters()) == 30 * 12
    x = torch.randn(4, 9, 12)
    y = m(x)
    assert y.shape == (4, 9, 12)
    torch.testing.assert_close(y, x + m.embedding.weight[:9], rtol=0, atol=0)
    torch.testing.assert_close(m(x[:, 3:5], offset=3), y[:, 3:5], rtol=0, atol=0)
    assert "embedding.weight" in m.state_dict()


def test_learned_odd_d_model_allowed_and_gradient_only_to_used_rows():
    m = LearnedPositionalEncoding(5, dropout=0.0, max_positions=10)
    m(torch.zeros(2, 4, 5)).sum().backward()
    g = m.embedding.weight.grad
    assert (g[:4] == 2).all() and (g[4:] == 0).all()  # 2 = batch size


def test_learned_errors():
    m = LearnedPositionalEncoding(8, max_positions=50)
    with pytest.raises(ValueError, match=r"^sequence length 51 exceeds the positional table's max_positions=50$"):
        m(torch.zeros(1, 51, 8))
    with pytest.raises(ValueError, match="x has last dimension 4, expected d_model=8"):
        m(torch.zeros(1, 5, 4))
    with pytest.raises(ValueError, match="max_positions must be >= 1, got 0"):
        LearnedPositionalEncoding(8, max_positions=0)
    with pytest.raises(ValueError, match="exceed the positional table's max_positions=50"):
        m(torch.zeros(1, 2, 8), offset=49)


def test_positional_encoding_is_built_in_the_default_dtype():
    "A model built under float64 gets the float64 table, not a float32 one cast up (as nn.Linear gets float64 weights)."
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        m = PositionalEncoding(16, dropout=0.0, max_positions=50)
    finally:
        torch.set_default_dtype(default)
    assert m.pe.dtype == torch.float64
    assert torch.equal(m.pe[0], sinusoidal_encoding(50, 16, dtype=torch.float64))
    assert PositionalEncoding(16, max_positions=50).pe.dtype == torch.float32

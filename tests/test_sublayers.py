"""Tests for annotated_transformer.sublayers: AddAndNorm and PositionwiseFeedForward.

The reference is PyTorch's own nn.TransformerEncoderLayer, whose feed-forward half is
    post-norm: norm2(x + dropout2(linear2(dropout(relu(linear1(x))))))
    pre-norm:  x + dropout2(linear2(dropout(relu(linear1(norm2(x))))))
With its weights copied into our modules, both must agree to float64 rounding.
"""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from annotated_transformer.sublayers import AddAndNorm, PositionwiseFeedForward

D_MODEL, NHEAD, D_FF = 16, 4, 48
TOL = dict(rtol=1e-12, atol=1e-12)


def torch_layer(norm_first: bool, seed: int = 0) -> nn.TransformerEncoderLayer:
    "A float64 TransformerEncoderLayer with dropout 0 and non-trivial LayerNorm gains/biases."
    torch.manual_seed(seed)
    layer = nn.TransformerEncoderLayer(D_MODEL, NHEAD, D_FF, dropout=0.0, batch_first=True,
                                       norm_first=norm_first, dtype=torch.float64)
    with torch.no_grad():  # LayerNorm starts at gamma=1, beta=0: randomize so copying them matters
        for norm in (layer.norm1, layer.norm2):
            norm.weight.normal_()
            norm.bias.normal_()
    return layer


def ours_from(layer: nn.TransformerEncoderLayer, norm: nn.LayerNorm, norm_first: bool):
    "AddAndNorm + PositionwiseFeedForward with the weights of `layer`'s feed-forward half and `norm`."
    add_norm = AddAndNorm(D_MODEL, dropout=0.0, norm_first=norm_first, eps=norm.eps).double()
    ff = PositionwiseFeedForward(D_MODEL, D_FF, dropout=0.0).double()
    ff.w_1.load_state_dict(layer.linear1.state_dict())
    ff.w_2.load_state_dict(layer.linear2.state_dict())
    add_norm.norm.load_state_dict(norm.state_dict())
    return add_norm, ff


def inputs(seed: int = 1, shape=(3, 7, D_MODEL)) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


# --- equivalence with nn.TransformerEncoderLayer -------------------------------------------------

def test_post_norm_feed_forward_half_matches_torch():
    layer = torch_layer(norm_first=False)
    add_norm, ff = ours_from(layer, layer.norm2, norm_first=False)
    x = inputs()
    # norm2(x + linear2(dropout(relu(linear1(x))))), built from the torch layer's own submodules
    expected = layer.norm2(x + layer.linear2(layer.dropout(layer.activation(layer.linear1(x)))))
    torch.testing.assert_close(add_norm(x, ff), expected, **TOL)
    # and via the layer's own feed-forward block (private in torch, so tolerate its absence)
    if hasattr(layer, "_ff_block"):
        torch.testing.assert_close(add_norm(x, ff), layer.norm2(x + layer._ff_block(x)), **TOL)


def test_pre_norm_feed_forward_half_matches_torch():
    layer = torch_layer(norm_first=True)
    add_norm, ff = ours_from(layer, layer.norm2, norm_first=True)
    x = inputs()
    expected = x + layer.linear2(layer.dropout(layer.activation(layer.linear1(layer.norm2(x)))))
    torch.testing.assert_close(add_norm(x, ff), expected, **TOL)
    if hasattr(layer, "_ff_block"):
        torch.testing.assert_close(add_norm(x, ff), x + layer._ff_block(layer.norm2(x)), **TOL)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("train", [False, True])
def test_whole_encoder_layer_matches_torch(norm_first, train):
    "Wired like Figure 1 (with torch's self-attention as the first sublayer), the whole layer agrees."
    layer = torch_layer(norm_first=norm_first)
    layer.train(train)  # eval may take torch's fused fast path; train (dropout 0) the Python path
    add_norm_1, _ = ours_from(layer, layer.norm1, norm_first)
    add_norm_2, ff = ours_from(layer, layer.norm2, norm_first)
    x = inputs()
    pad = torch.zeros(3, 7, dtype=torch.bool)
    pad[0, 5:] = True  # torch's key_padding_mask: True = padding (the opposite of our masks)

    def self_attn(h):
        return layer.self_attn(h, h, h, key_padding_mask=pad, need_weights=False)[0]

    with torch.no_grad():  # no_grad + eval is when torch may take its fast path
        ours = add_norm_2(add_norm_1(x, self_attn), ff)
        expected = layer(x, src_key_padding_mask=pad)
    torch.testing.assert_close(ours[1:], expected[1:], **TOL)
    torch.testing.assert_close(ours[0, :5], expected[0, :5], **TOL)  # fast path may zero padded rows


# --- AddAndNorm behaviour ---------------------------------------------------------------------------

@pytest.mark.parametrize("norm_first", [False, True])
def test_eval_mode_is_deterministic_and_exact(norm_first):
    torch.manual_seed(0)
    m = AddAndNorm(D_MODEL, dropout=0.5, norm_first=norm_first).eval()
    f = nn.Linear(D_MODEL, D_MODEL)
    x = torch.randn(2, 5, D_MODEL)
    y1, y2 = m(x, f), m(x, f)
    assert torch.equal(y1, y2)
    expected = x + f(m.norm(x)) if norm_first else m.norm(x + f(x))
    torch.testing.assert_close(y1, expected)


@pytest.mark.parametrize("norm_first", [False, True])
def test_train_mode_applies_dropout_to_the_sublayer_output(norm_first):
    torch.manual_seed(0)
    p = 0.4
    m = AddAndNorm(D_MODEL, dropout=p, norm_first=norm_first).train()
    f = nn.Linear(D_MODEL, D_MODEL)
    x = torch.randn(4, 9, D_MODEL)
    assert not torch.equal(m(x, f), m(x, f))  # a fresh dropout mask each call
    # Same random stream -> exactly the formula with F.dropout on the branch.
    torch.manual_seed(123)
    got = m(x, f)
    torch.manual_seed(123)
    if norm_first:
        expected = x + F.dropout(f(m.norm(x)), p, training=True)
    else:
        expected = m.norm(x + F.dropout(f(x), p, training=True))
    torch.testing.assert_close(got, expected)


def test_dropout_never_touches_the_residual_path():
    x = torch.randn(3, 6, D_MODEL)
    zero = torch.zeros_like
    pre = AddAndNorm(D_MODEL, dropout=0.9, norm_first=True).train()
    assert torch.equal(pre(x, zero), x)
    post = AddAndNorm(D_MODEL, dropout=0.9).train()
    assert torch.equal(post(x, zero), post.norm(x))
    # The dropped fraction of the branch is about p (and survivors are scaled by 1/(1-p)).
    ones = torch.ones(64, 64, D_MODEL)
    branch = pre(torch.zeros_like(ones), lambda h: ones)  # LayerNorm(0) = beta = 0, so output = branch
    kept = branch != 0
    assert abs(kept.float().mean().item() - 0.1) < 0.01
    torch.testing.assert_close(branch[kept], torch.full_like(branch[kept], 10.0))


def test_post_norm_output_is_normalized_per_token():
    m = AddAndNorm(D_MODEL, dropout=0.0)
    x = torch.randn(2, 5, D_MODEL, dtype=torch.float64) * 5 + 3
    y = m.double()(x, lambda h: 2 * h)
    torch.testing.assert_close(y.mean(-1), torch.zeros(2, 5, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(y.var(-1, unbiased=False), torch.ones(2, 5, dtype=torch.float64),
                               rtol=0, atol=1e-5)


def test_gradient_flows_through_the_identity_in_pre_norm():
    "x + F(LN(x)) with F = 0 is the identity: its Jacobian is exactly I."
    m = AddAndNorm(D_MODEL, dropout=0.0, norm_first=True).double()
    x = torch.randn(1, 1, D_MODEL, dtype=torch.float64)
    jac = torch.autograd.functional.jacobian(lambda h: m(h, lambda z: 0 * z), x).reshape(D_MODEL, D_MODEL)
    torch.testing.assert_close(jac, torch.eye(D_MODEL, dtype=torch.float64))


def test_api_attributes():
    m = AddAndNorm(32, dropout=0.2, norm_first=True, eps=1e-6)
    assert isinstance(m.norm, nn.LayerNorm)
    assert m.norm.normalized_shape == (32,) and m.norm.eps == 1e-6
    assert m.norm_first is True and m.dropout.p == 0.2
    assert AddAndNorm(32).norm_first is False and AddAndNorm(32).dropout.p == 0.1
    ff = PositionwiseFeedForward(32, 128)
    assert isinstance(ff.w_1, nn.Linear) and isinstance(ff.w_2, nn.Linear)
    assert ff.w_1.weight.shape == (128, 32) and ff.w_2.weight.shape == (32, 128)
    assert ff.dropout.p == 0.1


# --- LayerNorm and the feed-forward network ---------------------------------------------------------

def test_layer_norm_matches_its_formula():
    torch.manual_seed(0)
    m = AddAndNorm(D_MODEL, eps=1e-3).double()
    with torch.no_grad():
        m.norm.weight.normal_()
        m.norm.bias.normal_()
    x = inputs() * 4 + 2
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)  # biased variance: divide by d
    expected = m.norm.weight * (x - mu) / torch.sqrt(var + 1e-3) + m.norm.bias
    torch.testing.assert_close(m.norm(x), expected, **TOL)


def test_layer_norm_does_not_mix_tokens():
    "Each token is normalized by itself: changing one token leaves the others' outputs unchanged."
    m = AddAndNorm(D_MODEL, dropout=0.0)
    x = torch.randn(2, 6, D_MODEL)
    y = m(x, torch.tanh)
    x2 = x.clone()
    x2[1, 3] = 100 * torch.randn(D_MODEL)
    y2 = m(x2, torch.tanh)
    changed = (y2 != y).any(-1)
    assert changed[1, 3] and changed.sum() == 1


def test_feed_forward_is_equation_2():
    torch.manual_seed(0)
    ff = PositionwiseFeedForward(D_MODEL, D_FF, dropout=0.3).double().eval()  # eval: dropout off
    x = inputs()
    W1, b1, W2, b2 = ff.w_1.weight.T, ff.w_1.bias, ff.w_2.weight.T, ff.w_2.bias
    torch.testing.assert_close(ff(x), torch.clamp(x @ W1 + b1, min=0) @ W2 + b2, **TOL)


def test_feed_forward_dropout_is_on_the_hidden_layer_in_training():
    torch.manual_seed(0)
    p = 0.3
    ff = PositionwiseFeedForward(D_MODEL, D_FF, dropout=p).double().train()
    x = inputs()
    torch.manual_seed(7)
    got = ff(x)
    torch.manual_seed(7)
    expected = ff.w_2(F.dropout(torch.relu(ff.w_1(x)), p, training=True))
    torch.testing.assert_close(got, expected, **TOL)
    assert not torch.equal(ff(x), ff(x))


def test_feed_forward_equals_two_kernel_size_1_convolutions():
    torch.manual_seed(0)
    ff = PositionwiseFeedForward(D_MODEL, D_FF, dropout=0.0).double()
    conv1 = nn.Conv1d(D_MODEL, D_FF, kernel_size=1, dtype=torch.float64)
    conv2 = nn.Conv1d(D_FF, D_MODEL, kernel_size=1, dtype=torch.float64)
    with torch.no_grad():
        conv1.weight.copy_(ff.w_1.weight.unsqueeze(-1)); conv1.bias.copy_(ff.w_1.bias)
        conv2.weight.copy_(ff.w_2.weight.unsqueeze(-1)); conv2.bias.copy_(ff.w_2.bias)
    x = inputs()
    as_conv = conv2(torch.relu(conv1(x.transpose(1, 2)))).transpose(1, 2)
    torch.testing.assert_close(ff(x), as_conv, **TOL)


def test_feed_forward_is_position_wise():
    torch.manual_seed(0)
    ff = PositionwiseFeedForward(D_MODEL, D_FF, dropout=0.0).double()
    x = inputs()
    per_position = torch.stack([ff(x[:, t]) for t in range(x.shape[1])], dim=1)
    torch.testing.assert_close(ff(x), per_position, **TOL)
    perm = torch.randperm(x.shape[1])
    torch.testing.assert_close(ff(x[:, perm]), ff(x)[:, perm], **TOL)
    # any number of leading dimensions
    assert ff(x[0]).shape == (7, D_MODEL) and ff(x.unsqueeze(0)).shape == (1, 3, 7, D_MODEL)


@pytest.mark.parametrize("d_model,d_ff", [(512, 2048), (16, 48), (1, 1)])
def test_parameter_count(d_model, d_ff):
    n = sum(p.numel() for p in PositionwiseFeedForward(d_model, d_ff).parameters())
    assert n == 2 * d_model * d_ff + d_ff + d_model
    assert sum(p.numel() for p in AddAndNorm(d_model).parameters()) == 2 * d_model


# --- errors ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("norm_first", [False, True])
def test_sublayer_output_shape_mismatch(norm_first):
    m = AddAndNorm(D_MODEL, norm_first=norm_first)
    x = torch.randn(2, 5, D_MODEL)
    with pytest.raises(ValueError, match=r"sublayer output shape \(2, 5, 8\) does not match input shape \(2, 5, 16\)"):
        m(x, nn.Linear(D_MODEL, 8))
    with pytest.raises(ValueError, match=r"\(2, 1, 16\).*\(2, 5, 16\)"):  # broadcastable is not enough
        m(x, lambda h: h[:, :1])


def test_sublayer_must_return_a_tensor():
    attn = nn.MultiheadAttention(D_MODEL, 2, batch_first=True)
    with pytest.raises(TypeError, match="sublayer must return a Tensor, got tuple"):
        AddAndNorm(D_MODEL)(torch.randn(1, 3, D_MODEL), lambda h: attn(h, h, h))


@pytest.mark.parametrize("d_model", [0, -3])
def test_bad_d_model(d_model):
    with pytest.raises(ValueError, match=rf"d_model must be >= 1, got {d_model}"):
        AddAndNorm(d_model)
    with pytest.raises(ValueError, match=rf"d_model must be >= 1, got {d_model}"):
        PositionwiseFeedForward(d_model, 8)


@pytest.mark.parametrize("d_ff", [0, -1])
def test_bad_d_ff(d_ff):
    with pytest.raises(ValueError, match=rf"d_ff must be >= 1, got {d_ff}"):
        PositionwiseFeedForward(8, d_ff)


@pytest.mark.parametrize("dropout", [1.0, 1.5, -0.1])
def test_bad_dropout(dropout):
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\), got "):
        AddAndNorm(8, dropout=dropout)
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\), got "):
        PositionwiseFeedForward(8, 8, dropout=dropout)


@pytest.mark.parametrize("bad", [512.0, "512", True])
def test_non_integer_sizes(bad):
    with pytest.raises(TypeError, match="d_model must be an int"):
        AddAndNorm(bad)
    with pytest.raises(TypeError, match="d_ff must be an int"):
        PositionwiseFeedForward(8, bad)


def test_dropout_zero_is_allowed():
    assert AddAndNorm(8, dropout=0).dropout.p == 0
    assert PositionwiseFeedForward(8, 8, dropout=0.0).dropout.p == 0.0

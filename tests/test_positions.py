"""annotated_transformer.positions (chapter 26): RoPE and Shaw et al.'s relative positions as subclasses of chapter 04's
MultiHeadAttention, their place in make_model, and checkpoints of earlier releases."""
import math
from pathlib import Path

import pytest
import torch

import annotated_transformer
from annotated_transformer import model as model_module
from annotated_transformer import multihead, positional, positions
from annotated_transformer.attention import attention
from annotated_transformer.decoding import greedy_decode
from annotated_transformer.model import make_model
from annotated_transformer.multihead import MultiHeadAttention
from annotated_transformer.positions import (RelativeAttention, RelativeMultiHeadAttention, RotaryMultiHeadAttention,
                                             apply_rotary)

FIXTURE = Path(__file__).parent / "fixtures" / "positional_models.pt"


# ---- checkpoints and seeded models of the release before chapter 26 --------------------------------------------
@pytest.mark.parametrize("kind", ["sinusoidal", "learned", "rope", "relative"])
def test_models_of_the_earlier_release_load_and_match(kind):
    """tests/fixtures/positional_models.pt was written by the code before the move (MultiHeadAttention(rotate=...,
    relative=...)): make_model(7, 7, N=1, d_model=8, d_ff=16, h=2, positional=kind, max_positions=12) under seed 0,
    its state_dict, log-probabilities and greedy output. Today's code builds the same keys in the same order and the
    same numbers, computes the same outputs, and loads the old state_dict strictly."""
    saved = torch.load(FIXTURE, weights_only=True)[kind]
    torch.manual_seed(0)
    model = make_model(7, 7, N=1, d_model=8, d_ff=16, h=2, positional=kind, max_positions=12).eval()
    state = model.state_dict()
    assert list(state) == list(saved["state_dict"])
    assert all(torch.equal(state[k], saved["state_dict"][k]) for k in state)
    if kind == "relative":
        assert "encoder.layers.0.self_attn.relative.w_k" in state
    fresh = make_model(7, 7, N=1, d_model=8, d_ff=16, h=2, positional=kind, max_positions=12).eval()
    fresh.load_state_dict(saved["state_dict"], strict=True)
    src = torch.tensor([[1, 3, 4, 5, 6, 2], [1, 5, 3, 2, 0, 0]])
    tgt = torch.tensor([[1, 4, 3, 6], [1, 6, 5, 5]])
    src_mask = (src != 0)[:, None]
    with torch.no_grad():
        torch.testing.assert_close(fresh.generator(fresh(src, tgt, src_mask)), saved["log_probs"], atol=0, rtol=0)
    assert torch.equal(greedy_decode(fresh, src, src_mask, max_new_tokens=6), saved["greedy"])


def test_importing_positions_changes_no_earlier_class():
    "positions fills chapter 07's tables; it sets no attribute of a class of the earlier modules."
    for module in (multihead, positional, model_module):
        for cls in [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__]:
            for name, value in vars(cls).items():
                assert getattr(value, "__module__", module.__name__) != positions.__name__, (cls, name)
    assert set(model_module.POSITIONAL_ENCODINGS) == {"sinusoidal", "learned", "rope", "relative"}
    assert model_module.SELF_ATTENTIONS == {"rope": RotaryMultiHeadAttention, "relative": RelativeMultiHeadAttention}
    assert "rotate" not in vars(MultiHeadAttention(2, 8)) and not hasattr(MultiHeadAttention(2, 8), "relative")


def test_the_names_stay_importable_from_the_package():
    for name in ["RotaryPositions", "RelativePositions", "RelativeAttention", "apply_rotary", "relative_offsets",
                 "RotaryMultiHeadAttention", "RelativeMultiHeadAttention"]:
        assert getattr(annotated_transformer, name) is getattr(positions, name)


def test_rotary_attention_turns_queries_and_keys_only():
    "The subclass = the paper's heads with q and k turned by apply_rotary at their positions (start included)."
    torch.manual_seed(0)
    rope = RotaryMultiHeadAttention(4, 32, dropout=0.0).double().eval()
    plain = MultiHeadAttention(4, 32, dropout=0.0).double().eval()
    plain.load_state_dict(rope.state_dict())
    x = torch.randn(2, 6, 32, dtype=torch.float64)
    with torch.no_grad():
        q, k, v = plain.heads(x, x, x)
        turned_q, turned_k = apply_rotary(q, torch.arange(6)), apply_rotary(k, torch.arange(6))
        z, _ = attention(turned_q, turned_k, v, torch.ones(6, 6, dtype=torch.bool).tril())
        expected = plain.w_o(z.transpose(1, 2).reshape(2, 6, 32))
        torch.testing.assert_close(rope(x, x, x, is_causal=True), expected, atol=1e-12, rtol=0)
        torch.testing.assert_close(rope.queries(x[:, 4:], start=4), turned_q[:, :, 4:], atol=1e-12, rtol=0)


def test_relative_attention_is_the_papers_heads_with_shaws_core():
    "The subclass = the paper's projections around RelativeAttention; fused = False builds the causal mask."
    torch.manual_seed(1)
    rel = RelativeMultiHeadAttention(4, 32, dropout=0.0, clip=3).double().eval()
    x = torch.randn(2, 7, 32, dtype=torch.float64)
    causal = torch.ones(7, 7, dtype=torch.bool).tril()
    with torch.no_grad():
        q, k, v = rel.heads(x, x, x)
        z, weights = rel.relative(q, k, v, causal)
        expected = rel.w_o(z.transpose(1, 2).reshape(2, 7, 32))
        torch.testing.assert_close(rel(x, x, x, is_causal=True), expected, atol=1e-12, rtol=0)
        torch.testing.assert_close(rel(x, x, x, causal), expected, atol=1e-12, rtol=0)
        rel.keep_weights = True
        rel(x, x, x, causal)
        torch.testing.assert_close(rel.attn, weights, atol=1e-12, rtol=0)
    assert [n for n, _ in rel.named_parameters()][:2] == ["relative.w_k", "relative.w_v"]


# ---- rotary positions (RoPE, chapter 26; beyond the paper) ------------------------------------------------------
def _rope_by_complex_numbers(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    "Su et al.'s formulation, written independently: pair i as the complex number x_2i + i x_2i+1, times e^(i m theta_i)."
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    z = torch.complex(x[..., 0::2].double(), x[..., 1::2].double())
    turned = z * torch.polar(torch.ones_like(theta), positions.double()[:, None] * theta)
    return torch.stack([turned.real, turned.imag], dim=-1).flatten(-2).to(x.dtype)


def test_apply_rotary_equals_the_complex_rotation():
    from annotated_transformer.positions import apply_rotary
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 9, 16, generator=g, dtype=torch.float64)
    positions = torch.tensor([0, 1, 2, 5, 8, 13, 100, 1000, 4095])
    torch.testing.assert_close(apply_rotary(x, positions), _rope_by_complex_numbers(x, positions), atol=1e-12, rtol=0)


def test_rotary_scores_depend_on_the_distance_only():
    from annotated_transformer.positions import apply_rotary
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(8, generator=g, dtype=torch.float64), torch.randn(8, generator=g, dtype=torch.float64)
    score = lambda m, n: (apply_rotary(q[None], torch.tensor([m])) @ apply_rotary(k[None], torch.tensor([n])).T).item()
    assert score(3, 1) == pytest.approx(score(10, 8), abs=1e-12) == pytest.approx(score(1002, 1000), abs=1e-12)
    assert score(3, 1) != pytest.approx(score(3, 2), abs=1e-6)


def _rope_model(seed=0):
    from annotated_transformer.model import make_model
    torch.manual_seed(seed)
    model = make_model(23, 23, N=2, d_model=32, d_ff=64, h=4, positional="rope", dropout=0.0,
                       share_embeddings=False).double().eval()  # (tied, an untrained model repeats its last input)
    with torch.no_grad():  # an untrained model's logits are tiny and it says one token everywhere: make them larger
        model.generator.proj.weight.mul_(30)
    return model


def test_rope_model_turns_self_attention_only_and_adds_nothing():
    from annotated_transformer.model import count_parameters, transformer_parameter_count
    from annotated_transformer.positions import RotaryPositions
    model = _rope_model()
    assert isinstance(model.src_embed[1], RotaryPositions) and isinstance(model.tgt_embed[1], RotaryPositions)
    assert all(type(layer.self_attn) is RotaryMultiHeadAttention for layer in model.encoder.layers + model.decoder.layers)
    assert all(type(layer.src_attn) is MultiHeadAttention for layer in model.decoder.layers)  # the paper's
    assert count_parameters(model) == transformer_parameter_count(model.config)
    x = torch.randn(2, 5, 32, dtype=torch.float64)
    torch.testing.assert_close(model.src_embed[1](x), x)  # nothing added (dropout 0)


def _cache_equals_recomputation(model, steps: int, max_new: int, beam_new: int):
    "Stepped with the KV cache = the whole prefix recomputed, token by token; greedy and beam outputs the same."
    from annotated_transformer.decoding import IncrementalDecoder, beam_search, greedy_decode
    from annotated_transformer.masking import padding_mask
    g = torch.Generator().manual_seed(3)
    src = torch.randint(4, 23, (3, 8), generator=g)
    src[1, 5:] = 0
    mask = padding_mask(src, 0)
    memory = model.encode(src, mask)
    cached, fresh = IncrementalDecoder(model, memory, mask, True), IncrementalDecoder(model, memory, mask, False)
    tokens = torch.randint(4, 23, (3, steps), generator=g)
    for t in range(tokens.size(1)):
        torch.testing.assert_close(cached.step(tokens[:, t]), fresh.step(tokens[:, t]), atol=1e-10, rtol=0)
    greedy = greedy_decode(model, src, mask, max_new_tokens=max_new, use_cache=True)
    assert len(set(greedy.flatten().tolist())) > 3  # real, varied output: the test compares something
    assert torch.equal(greedy, greedy_decode(model, src, mask, max_new_tokens=max_new, use_cache=False))
    assert torch.equal(beam_search(model, src, mask, beam_size=3, max_new_tokens=beam_new, use_cache=True),
                       beam_search(model, src, mask, beam_size=3, max_new_tokens=beam_new, use_cache=False))


def test_rope_cached_decoding_equals_recomputation():
    "Step by step with the KV cache (new positions follow the cached ones) = the whole prefix recomputed."
    _cache_equals_recomputation(_rope_model(seed=2), steps=9, max_new=10, beam_new=10)


def test_rope_checkpoint_round_trip(tmp_path):
    from annotated_transformer.checkpoint import load_model
    from annotated_transformer.train_config import build_model, model_config_dict
    model = _rope_model(seed=4)
    rebuilt = build_model(model_config_dict(model))
    rebuilt.load_state_dict(model.state_dict())
    rebuilt = rebuilt.double().eval()
    src = torch.randint(4, 23, (2, 6))
    tgt = torch.randint(4, 23, (2, 5))
    from annotated_transformer.masking import padding_mask, target_mask
    a = model(src, tgt, padding_mask(src, 0), target_mask(tgt, 0))
    b = rebuilt(src, tgt, padding_mask(src, 0), target_mask(tgt, 0))
    torch.testing.assert_close(a, b, atol=0, rtol=0)
    assert rebuilt.config.positional == "rope" and type(rebuilt.encoder.layers[0].self_attn) is RotaryMultiHeadAttention


# ------------------------------------------------------------------ relative positions (Shaw et al., 2018)
def _shaw_by_loops(q, k, v, w_k, w_v, clip, mask=None):
    """The paper's equations, one (i, j) at a time, float64: e_ij = q_i (k_j + a^K_ij)^T / sqrt(d_k),
    alpha = softmax_j(e), z_i = sum_j alpha_ij (v_j + a^V_ij), a_ij = w_{clip(j - i, k)}; queries are the last n of
    the m positions. q (n, d_k), k (m, d_k), v (m, d_v); mask (n, m) bool or None."""
    n, m = q.size(0), k.size(0)
    z = torch.zeros(n, v.size(1), dtype=torch.float64)
    for i in range(n):
        pos_i = m - n + i
        e = []
        for j in range(m):
            r = max(-clip, min(clip, j - pos_i)) + clip
            e.append(float(q[i] @ (k[j] + w_k[r])) / math.sqrt(q.size(1)))
        allowed = [j for j in range(m) if mask is None or bool(mask[i, j])]
        top = max(e[j] for j in allowed)
        weights = {j: math.exp(e[j] - top) for j in allowed}
        total = sum(weights.values())
        for j in allowed:
            r = max(-clip, min(clip, j - pos_i)) + clip
            z[i] += weights[j] / total * (v[j] + w_v[r])
    return z


@pytest.mark.parametrize("n,m,clip,masked", [(6, 6, 2, False), (6, 6, 16, True), (1, 7, 3, False), (3, 9, 1, True)])
def test_relative_attention_equals_the_papers_equations(n, m, clip, masked):
    from annotated_transformer.positions import RelativeAttention
    torch.manual_seed(n * 100 + m + clip)
    rel = RelativeAttention(d_k=4, d_v=5, clip=clip).double()
    q, k, v = torch.randn(2, 3, n, 4), torch.randn(2, 3, m, 4), torch.randn(2, 3, m, 5)
    q, k, v = q.double(), k.double(), v.double()
    mask = torch.rand(n, m) > 0.3 if masked else None
    if mask is not None:
        mask[:, 0] = True  # every query keeps a key
    z, weights = rel(q, k, v, mask)
    assert z.shape == (2, 3, n, 5) and weights.shape == (2, 3, n, m)
    for b in range(2):
        for head in range(3):  # one pair of tables shared by every head
            expected = _shaw_by_loops(q[b, head], k[b, head], v[b, head], rel.w_k.detach(), rel.w_v.detach(),
                                      clip, mask)
            torch.testing.assert_close(z[b, head], expected, atol=1e-12, rtol=0)


def test_relative_offsets_clip_and_count_queries_from_the_end():
    from annotated_transformer.positions import relative_offsets
    assert relative_offsets(3, 3, 1).tolist() == [[1, 2, 2], [0, 1, 2], [0, 0, 1]]
    assert relative_offsets(1, 4, 16).tolist() == [[13, 14, 15, 16]]  # the query at 3: offsets -3..0


def test_relative_positions_see_order():
    "Without positions attention is permutation-equivariant; relative positions break that."
    torch.manual_seed(5)
    mha = RelativeMultiHeadAttention(2, 8, dropout=0.0, clip=2).double().eval()
    with torch.no_grad():
        mha.relative.w_k.mul_(5)  # make the offsets matter
    x = torch.randn(1, 7, 8, dtype=torch.float64)
    perm = torch.tensor([1, 0, 2, 3, 4, 5, 6])
    out = mha(x, x, x)
    assert (mha(x[:, perm], x[:, perm], x[:, perm])[:, perm] - out).abs().max() > 1e-3


def test_relative_tables_have_the_heads_widths():
    "The tables are made for the heads: d_k wide for the keys, d_v for the values (Table 3, row B: d_k < d_v)."
    mha = RelativeMultiHeadAttention(4, 32, d_k=4, clip=3)
    assert (mha.relative.w_k.shape, mha.relative.w_v.shape) == ((7, 4), (7, 8))
    with pytest.raises(ValueError, match="d_model=30 is not divisible by h=4"):
        RelativeMultiHeadAttention(4, 30)


def _relative_model(seed=0):
    from annotated_transformer.model import make_model
    torch.manual_seed(seed)
    model = make_model(23, 23, N=2, d_model=32, d_ff=64, h=4, positional="relative", dropout=0.0,
                       share_embeddings=False).double().eval()
    with torch.no_grad():  # as _rope_model: larger logits, so that greedy output varies
        model.generator.proj.weight.mul_(30)
    return model


def test_relative_model_adds_nothing_and_counts_its_tables():
    from annotated_transformer.model import count_parameters, transformer_parameter_count
    from annotated_transformer.positions import RelativePositions
    model = _relative_model()
    assert isinstance(model.src_embed[1], RelativePositions) and isinstance(model.tgt_embed[1], RelativePositions)
    assert all(type(layer.self_attn) is RelativeMultiHeadAttention
               for layer in model.encoder.layers + model.decoder.layers)
    assert all(type(layer.src_attn) is MultiHeadAttention for layer in model.decoder.layers)  # the paper's
    tables = {id(layer.self_attn.relative.w_k) for layer in model.encoder.layers + model.decoder.layers}
    assert len(tables) == 4  # each self-attention its own
    assert count_parameters(model) == transformer_parameter_count(model.config)
    assert model.encoder.layers[0].self_attn.relative.w_k.shape == (33, 8)  # k = 16, d_k = 32 / 4


def test_relative_decoder_is_causal():
    "Changing target token t changes no decoder output before t (the offsets see no future key)."
    from annotated_transformer.masking import padding_mask, target_mask
    model = _relative_model(seed=1)
    g = torch.Generator().manual_seed(0)
    src, tgt = torch.randint(4, 23, (2, 6), generator=g), torch.randint(4, 23, (2, 8), generator=g)
    out = model(src, tgt, padding_mask(src, 0), target_mask(tgt, 0))
    changed = tgt.clone()
    changed[:, 5] = (changed[:, 5] - 4 + 1) % 19 + 4
    out2 = model(src, changed, padding_mask(src, 0), target_mask(changed, 0))
    torch.testing.assert_close(out2[:, :5], out[:, :5], atol=1e-12, rtol=0)
    assert (out2[:, 5:] - out[:, 5:]).abs().max() > 1e-6


def test_relative_cached_decoding_equals_recomputation():
    "The query at step t attends keys 0..t with offsets j - t: the cache gives exactly the recomputed prefix."
    # 20 steps: past k = 16, clipped offsets too
    _cache_equals_recomputation(_relative_model(seed=2), steps=20, max_new=20, beam_new=12)


def test_relative_checkpoint_round_trip():
    from annotated_transformer.masking import padding_mask, target_mask
    from annotated_transformer.train_config import build_model, model_config_dict
    model = _relative_model(seed=4)
    rebuilt = build_model(model_config_dict(model))
    rebuilt.load_state_dict(model.state_dict())
    rebuilt = rebuilt.double().eval()
    src, tgt = torch.randint(4, 23, (2, 6)), torch.randint(4, 23, (2, 5))
    a = model(src, tgt, padding_mask(src, 0), target_mask(tgt, 0))
    b = rebuilt(src, tgt, padding_mask(src, 0), target_mask(tgt, 0))
    torch.testing.assert_close(a, b, atol=0, rtol=0)
    assert rebuilt.config.positional == "relative" and type(rebuilt.encoder.layers[0].self_attn) is RelativeMultiHeadAttention

"""Tests for annotated_transformer.decoding (chapter 21, nbs/21_decoding_at_scale.ipynb), and for the short
teaching versions of chapter 11 (nbs/11_decoding.ipynb), which must decode as the library does.

- the KV cache equals recomputing the prefix (tokens identical, log-probabilities to ~1e-12 in float64),
  post-norm and pre-norm, sinusoidal and learned positions, padded sources; and equals teacher forcing;
- greedy decoding: EOS per row, PAD afterwards, per-sentence length limits, scores, modes restored;
- beam search: k = 1 (α = 0) is greedy; cache = recompute; batching and early stopping change nothing;
  never worse than greedy on small models; optimal (and the full n-best list exact) against brute force;
- checkpoint averaging: no-op on copies, exact mean of two, tied weights, integer buffers, clear errors,
  unsafe pickles refused, the written file loads back; last_checkpoints orders by step.
"""
import copy
import itertools
import os

import pytest
import torch

from annotated_transformer.decoding import beam_search, beam_step, gnmt_length_penalty, greedy_decode, Hypothesis, IncrementalDecoder, new_cache
from annotated_transformer.checkpoint import average_checkpoints, last_checkpoints
from annotated_transformer.masking import causal_mask, padding_mask
from annotated_transformer.model import make_model
from annotated_transformer.positional import LearnedPositionalEncoding

PAD, BOS, EOS = 0, 1, 2


# (one torch thread per worker: tests/conftest.py)


def small_model(src_vocab=11, tgt_vocab=13, seed=0, dtype=torch.float64, **kw):
    torch.manual_seed(seed)
    # untied, as when the seeds below were chosen (two vocabularies: chapter 07's default would tie the target's two)
    kw = {"N": 2, "d_model": 32, "d_ff": 64, "h": 4, "share_embeddings": False, **kw}
    return make_model(src_vocab, tgt_vocab, **kw).to(dtype).eval()


def padded_sources(seed=0, batch=5, length=7, vocab=11):
    "Right-padded sources ending with EOS, of different lengths (the first row is full)."
    g = torch.Generator().manual_seed(seed)
    src = torch.full((batch, length), PAD)
    for b in range(batch):
        n = length - 1 if b == 0 else int(torch.randint(1, length, (1,), generator=g))
        src[b, :n] = torch.randint(3, vocab, (n,), generator=g)
        src[b, n] = EOS
    return src, padding_mask(src, PAD)


def no_eos(model):
    "A copy whose generator never picks EOS, so every decode runs to its length limit."
    m = copy.deepcopy(model)
    with torch.no_grad():
        m.generator.proj.bias[EOS] = -1e4
    return m


def teacher_forced_log_probs(model, src, mask, out):
    "(batch, L) log p of each token of `out` given the tokens before it (BOS first)."
    tgt_in = torch.cat([torch.full((out.size(0), 1), BOS), out[:, :-1]], dim=1)
    with torch.no_grad():
        lp = model.generator(model(src, tgt_in, mask, causal_mask(tgt_in.size(1))))
    return lp.gather(2, out.unsqueeze(2)).squeeze(2)


def after_end(out):
    "True at the positions after each row's first EOS (a random model may generate PAD as a token before it)."
    is_eos = (out == EOS).long()
    return (is_eos.cumsum(1) - is_eos) > 0


def length_of(row):
    return row.index(EOS) + 1 if EOS in row else len([x for x in row if x != PAD])


# ----------------------------------------------------------------------------- the KV cache

@pytest.mark.parametrize("norm_first", [False, True])
def test_layer_step_equals_layer_forward(norm_first):
    m = small_model(norm_first=norm_first)
    src, mask = padded_sources()
    memory = m.encode(src, mask)
    x = torch.randn(src.size(0), 9, 32, dtype=torch.float64)
    for layer in m.decoder.layers:
        full = layer(x, memory, mask, causal_mask(9))
        for capacity in (0, 3, 9):  # the self-attention buffer grows on the way, or has room from the start
            cache = new_cache(layer, capacity)
            steps = torch.cat([layer(x[:, t:t + 1], memory, mask, cache=cache) for t in range(9)], dim=1)
            torch.testing.assert_close(steps, full, rtol=0, atol=1e-12)
        # several positions at once (a prompt), then one at a time
        cache = new_cache(layer)
        first = layer(x[:, :4], memory, mask, causal_mask(4), cache=cache)
        rest = [layer(x[:, t:t + 1], memory, mask, cache=cache) for t in range(4, 9)]
        torch.testing.assert_close(torch.cat([first, *rest], dim=1), full, rtol=0, atol=1e-12)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("learned", [False, True])
def test_cache_equals_recompute_distributions(norm_first, learned):
    m = small_model(norm_first=norm_first, N=3)
    if learned:  # the cache must pass the position offset to the learned table too
        pe = LearnedPositionalEncoding(32, dropout=0.0, max_positions=64).double()
        m.tgt_embed[1] = pe
    src, mask = padded_sources(seed=1)
    memory = m.encode(src, mask)
    fast, slow = IncrementalDecoder(m, memory, mask), IncrementalDecoder(m, memory, mask, use_cache=False)
    g = torch.Generator().manual_seed(0)
    tokens = torch.full((src.size(0),), BOS)
    with torch.no_grad():
        for _ in range(15):
            torch.testing.assert_close(fast.step(tokens), slow.step(tokens), rtol=0, atol=1e-10)
            tokens = torch.randint(3, 13, (src.size(0),), generator=g)


@pytest.mark.parametrize("norm_first", [False, True])
def test_greedy_cache_equals_recompute_and_teacher_forcing(norm_first):
    m = small_model(norm_first=norm_first, seed=2)
    src, mask = padded_sources(seed=2)
    fast, fast_lp = greedy_decode(m, src, mask, max_new_tokens=20, return_scores=True)
    slow, slow_lp = greedy_decode(m, src, mask, max_new_tokens=20, use_cache=False, return_scores=True)
    assert torch.equal(fast, slow)
    torch.testing.assert_close(fast_lp, slow_lp, rtol=0, atol=1e-10)
    # the chosen tokens' log-probabilities are those of a teacher-forced forward pass
    tf = teacher_forced_log_probs(m, src, mask, fast).masked_fill(after_end(fast), 0.0)
    torch.testing.assert_close(fast_lp, tf, rtol=0, atol=1e-10)


def reference_greedy(model, src, mask, max_new_tokens):
    "The textbook loop, row by row: recompute the prefix, argmax, stop at EOS."
    outs = []
    for b in range(src.size(0)):
        memory = model.encode(src[b:b + 1], mask[b:b + 1])
        ys = [BOS]
        for _ in range(max_new_tokens):
            t = torch.tensor([ys])
            with torch.no_grad():
                lp = model.generator(model.decode(memory, mask[b:b + 1], t, causal_mask(len(ys)))[:, -1])
            lp[:, PAD] = float("-inf")  # PAD is never generated
            ys.append(int(lp.argmax(-1)))
            if ys[-1] == EOS:
                break
        outs.append(ys[1:])
    return outs


def test_greedy_equals_reference_loop():
    m = small_model(seed=3, tgt_vocab=6)
    with torch.no_grad():
        m.generator.proj.bias[EOS] += 1.5  # make EOS come at different steps
    src, mask = padded_sources(seed=3, batch=8)
    out = greedy_decode(m, src, mask, max_new_tokens=12)
    ref = reference_greedy(m, src, mask, 12)
    assert [r[:len(x)] for r, x in zip(out.tolist(), ref)] == ref


# (seed, boost of the EOS logit): 0.0 lets some rows run into the length limit, 1.0 ends them all, at different steps
# (found by trying seeds with the initialization of chapter 07; the assertions below check that it still holds)
@pytest.mark.parametrize("eos_boost", [0.0, 1.0])
def test_greedy_stops_each_row_at_eos_and_pads(eos_boost):
    m = small_model(seed=1, tgt_vocab=6)
    with torch.no_grad():
        m.generator.proj.bias[EOS] += eos_boost
    src, mask = padded_sources(seed=4, batch=8)
    out = greedy_decode(m, src, mask, max_new_tokens=30)
    rows = out.tolist()
    ends = [r.index(EOS) if EOS in r else None for r in rows]
    assert len({e for e in ends if e is not None}) >= 2, "the test needs rows that end at different steps"
    for r, e in zip(rows, ends):
        if e is None:
            assert len(r) == 30 and PAD not in r  # cut by the length limit
        else:
            assert PAD not in r[:e] and all(x == PAD for x in r[e + 1:])
    if all(e is not None for e in ends):
        assert out.size(1) == max(ends) + 1  # the loop ended as soon as every row had finished
    assert (None in ends) == (eos_boost == 0.0), "each case must test what its comment says"


def test_greedy_default_max_new_tokens_is_source_length_plus_50_per_sentence():
    m = no_eos(small_model(seed=5))
    src, mask = padded_sources(seed=5)
    out = greedy_decode(m, src, mask)
    n_src = mask.sum(dim=(1, 2)).tolist()
    assert len(set(n_src)) > 1 and out.size(1) == max(n_src) + 50
    for b in range(src.size(0)):  # each sentence alone: n_src + 50 tokens, the same as in the batch, then PAD
        alone = greedy_decode(m, src[b:b + 1], mask[b:b + 1])
        assert alone.size(1) == n_src[b] + 50
        assert torch.equal(alone[0], out[b, :alone.size(1)]) and (out[b, alone.size(1):] == PAD).all()


def test_greedy_restores_training_mode_and_is_deterministic():
    m = small_model(seed=6, dropout=0.3).train()
    m.encoder.layers[0].training = False  # an odd mix of modes must come back as it was
    modes = [x.training for x in m.modules()]
    src, mask = padded_sources(seed=6)
    a, b = greedy_decode(m, src, mask, max_new_tokens=10), greedy_decode(m, src, mask, max_new_tokens=10)
    assert torch.equal(a, b)
    assert [x.training for x in m.modules()] == modes


def test_single_token_outputs_and_shapes():
    m = small_model(seed=7)
    with torch.no_grad():
        m.generator.proj.bias[EOS] = 1e4  # EOS at once
    src, mask = padded_sources(seed=7)
    assert greedy_decode(m, src, mask).tolist() == [[EOS]] * src.size(0)
    assert beam_search(m, src, mask).tolist() == [[EOS]] * src.size(0)


def test_decoding_errors():
    m = small_model(seed=8)
    src, mask = padded_sources(seed=8)
    with pytest.raises(ValueError, match=r"src_mask must have shape \(batch, 1, src_len\)"):
        greedy_decode(m, src, mask.squeeze(1))
    with pytest.raises(ValueError, match="eos=13 is outside the target vocabulary of size 13"):
        greedy_decode(m, src, mask, eos=13)
    with pytest.raises(ValueError, match="max_new_tokens must be >= 1"):
        greedy_decode(m, src, mask, max_new_tokens=0)
    with pytest.raises(ValueError, match="exceeds the positional table's max_positions=5000"):
        beam_search(m, src, mask, max_new_tokens=6000)
    with pytest.raises(ValueError, match="beam_size must be >= 1"):
        beam_search(m, src, mask, beam_size=0)
    with pytest.raises(ValueError, match="length_penalty"):
        beam_search(m, src, mask, length_penalty=-0.5)
    with pytest.raises(ValueError, match="src must be a non-empty"):
        greedy_decode(m, src[0], mask)
    odd = copy.deepcopy(m)
    odd.tgt_embed = torch.nn.Sequential(odd.tgt_embed[0], torch.nn.Identity())
    with pytest.raises(TypeError, match="use_cache=False"):
        greedy_decode(odd, src, mask, max_new_tokens=3)
    greedy_decode(odd, src, mask, max_new_tokens=3, use_cache=False)  # the fallback works


# ----------------------------------------------------------------------------- beam search

@pytest.mark.parametrize("seed", range(4))
def test_beam_size_one_is_greedy(seed):
    m = small_model(seed=seed, tgt_vocab=7)
    with torch.no_grad():
        m.generator.proj.bias[EOS] += 1.0
    src, mask = padded_sources(seed=seed, batch=6)
    g, g_lp = greedy_decode(m, src, mask, max_new_tokens=15, return_scores=True)
    assert torch.equal(beam_search(m, src, mask, beam_size=1, length_penalty=0.0, max_new_tokens=15), g)
    # with α > 0 greedy's output still finishes first, and the answer scores at least as well
    _, hyps = beam_search(m, src, mask, beam_size=1, length_penalty=0.6, max_new_tokens=15, return_hypotheses=True)
    for b, row in enumerate(g.tolist()):
        n = length_of(row)
        g_score = g_lp[b].sum().item() / gnmt_length_penalty(n, 0.6)
        assert hyps[b][0].score >= g_score - 1e-12
        assert any(h.tokens == row[:n] for h in hyps[b])


@pytest.mark.parametrize("norm_first", [False, True])
def test_beam_cache_equals_recompute(norm_first):
    m = small_model(seed=9, norm_first=norm_first)
    src, mask = padded_sources(seed=9)
    a, ha = beam_search(m, src, mask, max_new_tokens=12, return_hypotheses=True)
    b, hb = beam_search(m, src, mask, max_new_tokens=12, use_cache=False, return_hypotheses=True)
    assert torch.equal(a, b)
    for x, y in zip(ha, hb):
        assert [h.tokens for h in x] == [h.tokens for h in y]
        assert max(abs(h.score - i.score) for h, i in zip(x, y)) < 1e-10


def test_beam_does_not_depend_on_the_batch():
    m = small_model(seed=10, tgt_vocab=9)
    with torch.no_grad():
        m.generator.proj.bias[EOS] += 1.0
    src, mask = padded_sources(seed=10, batch=6)
    out, hyps = beam_search(m, src, mask, beam_size=3, return_hypotheses=True)  # max_new_tokens: per sentence
    for b in range(src.size(0)):
        n = int(mask[b].sum())
        alone, [own] = beam_search(m, src[b:b + 1, :n], mask[b:b + 1, :, :n], beam_size=3,  # no padding at all
                                   return_hypotheses=True)
        assert torch.equal(alone[0], out[b, :alone.size(1)]) and (out[b, alone.size(1):] == PAD).all()
        # the same hypotheses with the same log-probabilities: every row of sentence b read sentence b's source
        # (a random model's tokens hardly depend on the source; its probabilities do)
        assert [h.tokens for h in hyps[b]] == [h.tokens for h in own]
        assert max(abs(h.log_prob - o.log_prob) for h, o in zip(hyps[b], own)) < 1e-9
    # reordering the batch only reorders the outputs
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    shuffled = beam_search(m, src[perm], mask[perm], beam_size=3)
    w = min(shuffled.size(1), out.size(1))
    assert torch.equal(shuffled[:, :w], out[perm][:, :w])


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_early_stopping_changes_nothing(alpha):
    m = small_model(seed=11, tgt_vocab=9)
    with torch.no_grad():
        m.generator.proj.bias[EOS] += 1.0
    src, mask = padded_sources(seed=11, batch=6)
    a, ha = beam_search(m, src, mask, length_penalty=alpha, max_new_tokens=25, return_hypotheses=True)
    b, hb = beam_search(m, src, mask, length_penalty=alpha, max_new_tokens=25, early_stopping=False, return_hypotheses=True)
    w = min(a.size(1), b.size(1))
    assert torch.equal(a[:, :w], b[:, :w]) and (a[:, w:] == PAD).all() and (b[:, w:] == PAD).all()
    assert [h[0].score for h in ha] == [h[0].score for h in hb]


def test_hypotheses_scores_are_consistent():
    m = small_model(seed=12, tgt_vocab=9)
    src, mask = padded_sources(seed=12)
    out, hyps = beam_search(m, src, mask, beam_size=4, max_new_tokens=10, return_hypotheses=True)
    for b, hs in enumerate(hyps):
        assert 1 <= len(hs) <= 4 and hs[0].tokens == [x for x in out[b].tolist()][:len(hs[0].tokens)]
        assert [h.score for h in hs] == sorted((h.score for h in hs), reverse=True)
        for h in hs:
            assert isinstance(h, Hypothesis)
            t = torch.tensor([h.tokens])
            lp = teacher_forced_log_probs(m, src[b:b + 1], mask[b:b + 1], t).sum().item()
            assert abs(lp - h.log_prob) < 1e-10
            assert abs(h.score - h.log_prob / gnmt_length_penalty(len(h.tokens), 0.6)) < 1e-12


def test_beam_length_limit():
    m = no_eos(small_model(seed=13))
    src, mask = padded_sources(seed=13)
    out, hyps = beam_search(m, src, mask, max_new_tokens=9, return_hypotheses=True)
    assert out.shape == (src.size(0), 9) and not (out == EOS).any()
    assert all(len(h.tokens) == 9 for hs in hyps for h in hs)


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_beam_is_at_least_as_good_as_greedy(alpha):
    "Not a theorem for k > 1, but it should hold on small models; 48 sentences of 8 random models."
    for seed in range(8):
        m = small_model(seed=100 + seed, src_vocab=9, tgt_vocab=6, N=1, d_model=16, d_ff=32, h=2)
        src, mask = padded_sources(seed=seed, batch=6, length=5, vocab=9)
        g, g_lp = greedy_decode(m, src, mask, max_new_tokens=6, return_scores=True)
        _, hyps = beam_search(m, src, mask, beam_size=4, length_penalty=alpha, max_new_tokens=6, return_hypotheses=True)
        for b, row in enumerate(g.tolist()):
            g_score = g_lp[b].sum().item() / gnmt_length_penalty(length_of(row), alpha)
            assert hyps[b][0].score >= g_score - 1e-12


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_beam_is_optimal_when_the_beam_holds_everything(alpha):
    """Vocabulary {PAD, BOS, EOS, 3, 4}, PAD never generated, at most 3 tokens: 1 + 3 + 9 sequences ending with EOS
    and 27 cut at the limit. A beam of 100 keeps every hypothesis, so beam search must return the brute-force
    optimum, and without early stopping its n-best list must be all 40 sequences in the brute-force order."""
    m = small_model(seed=14, src_vocab=9, tgt_vocab=5)
    src, mask = padded_sources(seed=14, batch=2, length=5, vocab=9)
    tokens = [BOS, 3, 4]  # PAD is never generated
    candidates = [[EOS]] + [[a, EOS] for a in tokens] + [[a, b, EOS] for a, b in itertools.product(tokens, repeat=2)]
    candidates += [list(c) for c in itertools.product(tokens, repeat=3)]
    assert len(candidates) == 40
    for b in range(2):
        scored = []
        for c in candidates:
            lp = teacher_forced_log_probs(m, src[b:b + 1], mask[b:b + 1], torch.tensor([c])).sum().item()
            scored.append((lp / gnmt_length_penalty(len(c), alpha), c))
        scored.sort(key=lambda x: -x[0])
        best, hyps = beam_search(m, src[b:b + 1], mask[b:b + 1], beam_size=100, length_penalty=alpha, max_new_tokens=3,
                                 return_hypotheses=True)
        assert best[0].tolist()[:len(scored[0][1])] == scored[0][1]
        assert abs(hyps[0][0].score - scored[0][0]) < 1e-10
        _, full = beam_search(m, src[b:b + 1], mask[b:b + 1], beam_size=100, length_penalty=alpha, max_new_tokens=3,
                              early_stopping=False, return_hypotheses=True)
        assert [h.tokens for h in full[0]] == [c for _, c in scored]
        assert max(abs(h.score - s) for h, (s, _) in zip(full[0], scored)) < 1e-10


def test_beam_step_toy():
    live = torch.tensor([[-0.5, -1.0]], dtype=torch.float64)
    lp = torch.tensor([[[-3.0, -3.0, -0.2, -1.9, -3.5], [-3.0, -3.0, -2.0, -0.1, -2.5]]]).log_softmax(-1)
    cand_lp, origin, token, finished, live_pos = beam_step(live, lp, eos=EOS)
    expected = sorted(((live[0, i] + lp[0, i, v].double()).item(), i, v) for i in range(2) for v in range(5))[::-1]
    assert cand_lp[0].tolist() == [e[0] for e in expected[:4]]
    assert list(zip(origin[0].tolist(), token[0].tolist())) == [(e[1], e[2]) for e in expected[:4]]
    assert finished[0].tolist() == [True, False, False, False]  # EOS at rank 3 (>= k) does not finish
    assert [token[0, p].item() for p in live_pos[0]] == [3, 3]


def test_gnmt_length_penalty():
    assert gnmt_length_penalty(1, 0.6) == 1.0
    assert gnmt_length_penalty(10, 0.0) == 1.0
    assert abs(gnmt_length_penalty(19, 0.6) - 4 ** 0.6) < 1e-15


# ----------------------------------------------------------------------------- checkpoint averaging

def checkpoint(model, step, **extra):
    return {"format": "annotated-transformer-checkpoint", "version": 1, "step": step,
            "model": model.state_dict(), "model_config": {"src_vocab": 11, "tgt_vocab": 13, "N": 1,
                                                           "d_model": 16, "d_ff": 32, "h": 2}, **extra}


def tiny(seed, dtype=torch.float32, **kw):
    torch.manual_seed(seed)
    return make_model(11, 13, N=1, d_model=16, d_ff=32, h=2, **kw).to(dtype)


def test_average_of_copies_is_a_no_op(tmp_path):
    m = tiny(0)
    torch.save(checkpoint(m, 10), tmp_path / "a.pt")
    avg = average_checkpoints([tmp_path / "a.pt"] * 5)
    assert avg.keys() == m.state_dict().keys()
    assert all(torch.equal(avg[k], v) and avg[k].dtype == v.dtype for k, v in m.state_dict().items())


def test_average_of_two_is_the_mean_float64(tmp_path):
    a, b = tiny(0, torch.float64), tiny(1, torch.float64)
    torch.save(checkpoint(a, 1), tmp_path / "a.pt")
    torch.save(checkpoint(b, 2), tmp_path / "b.pt")
    avg = average_checkpoints([tmp_path / "a.pt", tmp_path / "b.pt"])
    for k, v in a.state_dict().items():
        assert torch.equal(avg[k], (v + b.state_dict()[k]) / 2)


def test_average_float32_and_integer_buffers_from_last(tmp_path):
    a, b, c = (tiny(s).state_dict() for s in range(3))
    for i, sd in enumerate((a, b, c)):
        sd["counter"] = torch.tensor(10 * (i + 1))  # an integer buffer
        sd["flags"] = torch.tensor([i == 2, False])
        sd["half"] = torch.full((3,), float(i), dtype=torch.float16)
        torch.save({"model": sd}, tmp_path / f"{i}.pt")
    avg = average_checkpoints([tmp_path / f"{i}.pt" for i in range(3)])
    assert avg["counter"].item() == 30 and avg["flags"].tolist() == [True, False]
    assert avg["half"].dtype == torch.float16 and avg["half"].tolist() == [1.0, 1.0, 1.0]
    w = "encoder.layers.0.feed_forward.w_1.weight"
    assert avg[w].dtype == torch.float32
    torch.testing.assert_close(avg[w], ((a[w].double() + b[w].double() + c[w].double()) / 3).float(), rtol=0, atol=0)


def test_average_keeps_tied_weights(tmp_path):
    models = []
    for s in range(2):
        torch.manual_seed(s)
        models.append(make_model(13, 13, N=1, d_model=16, d_ff=32, h=2, share_embeddings=True))
    for i, m in enumerate(models):
        torch.save(checkpoint(m, i), tmp_path / f"{i}.pt")
    avg = average_checkpoints([tmp_path / "0.pt", tmp_path / "1.pt"], out_path=tmp_path / "avg.pt")
    keys = ["src_embed.0.lut.weight", "tgt_embed.0.lut.weight", "generator.proj.weight"]
    assert avg[keys[0]] is avg[keys[1]] is avg[keys[2]]
    mean = (models[0].generator.proj.weight.double() + models[1].generator.proj.weight.double()) / 2
    assert torch.equal(avg[keys[2]], mean.float())
    fresh = make_model(13, 13, N=1, d_model=16, d_ff=32, h=2, share_embeddings=True)
    fresh.load_state_dict(torch.load(tmp_path / "avg.pt", weights_only=True)["model"])
    assert fresh.generator.proj.weight is fresh.tgt_embed[0].lut.weight  # still tied
    assert torch.equal(fresh.src_embed[0].lut.weight, mean.float())


def test_average_when_a_tie_is_broken_in_a_later_checkpoint(tmp_path):
    torch.manual_seed(0)
    tied = make_model(13, 13, N=1, d_model=16, d_ff=32, h=2, share_embeddings=True).state_dict()
    untied = {k: v.clone() + i for i, (k, v) in enumerate(tied.items())}  # separate tensors, different values
    torch.save({"model": tied}, tmp_path / "0.pt")
    torch.save({"model": untied}, tmp_path / "1.pt")
    avg = average_checkpoints([tmp_path / "0.pt", tmp_path / "1.pt"])
    for k in tied:
        assert torch.equal(avg[k], ((tied[k].double() + untied[k].double()) / 2).float()), k


def test_average_errors(tmp_path):
    m = tiny(0)
    torch.save(checkpoint(m, 1), tmp_path / "a.pt")
    sd = m.state_dict()
    missing = {k: v for k, v in sd.items() if k != "generator.proj.bias"}
    torch.save({"model": missing}, tmp_path / "missing.pt")
    torch.save({"model": {**sd, "extra.weight": torch.zeros(2)}}, tmp_path / "extra.pt")
    torch.save({"model": {**sd, "generator.proj.bias": torch.zeros(5)}}, tmp_path / "shape.pt")
    torch.save({"model": {**sd, "generator.proj.bias": sd["generator.proj.bias"].double()}}, tmp_path / "dtype.pt")
    torch.save({"weights": [1, 2]}, tmp_path / "other.pt")
    a = tmp_path / "a.pt"
    with pytest.raises(ValueError, match="at least one checkpoint, got an empty list"):
        average_checkpoints([])
    with pytest.raises(ValueError, match="missing.pt lacks key 'generator.proj.bias'"):
        average_checkpoints([a, tmp_path / "missing.pt"])
    with pytest.raises(ValueError, match="extra.pt has key 'extra.weight'"):
        average_checkpoints([a, tmp_path / "extra.pt"])
    with pytest.raises(ValueError, match=r"key 'generator.proj.bias' has shape \(5,\)"):
        average_checkpoints([a, tmp_path / "shape.pt"])
    with pytest.raises(ValueError, match="dtype torch.float64"):
        average_checkpoints([a, tmp_path / "dtype.pt"])
    with pytest.raises(ValueError, match="neither a checkpoint with a 'model' state dict nor a state dict"):
        average_checkpoints([tmp_path / "other.pt"])


class _Payload:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))  # would create a file when unpickled


def test_unsafe_pickle_is_refused(tmp_path):
    canary = tmp_path / "canary"
    torch.save({"model": tiny(0).state_dict(), "surprise": _Payload(str(canary))}, tmp_path / "bad.pt")
    with pytest.raises(ValueError, match=r"^refused: .*bad\.pt contains code"):
        average_checkpoints([tmp_path / "bad.pt"])
    assert not canary.exists()


def test_written_average_keeps_the_training_format(tmp_path):
    ms = [tiny(s) for s in range(3)]
    paths = []
    for i, m in enumerate(ms):
        p = tmp_path / f"step_{i}.pt"
        torch.save(checkpoint(m, 100 * (i + 1), optimizer={"state": {}}, rng=[{"torch": torch.zeros(3)}]), p)
        paths.append(p)
    avg = average_checkpoints(paths, out_path=tmp_path / "out" / "avg.pt")
    saved = torch.load(tmp_path / "out" / "avg.pt", weights_only=True)
    assert saved["format"] == "annotated-transformer-checkpoint" and saved["step"] == 300
    assert saved["model_config"]["d_model"] == 16 and "optimizer" not in saved and "rng" not in saved
    assert saved["averaged_from"] == [str(p) for p in paths]
    assert all(torch.equal(saved["model"][k], v) for k, v in avg.items())
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["avg.pt"]  # no temporary file left behind
    m = make_model(**saved["model_config"])
    m.load_state_dict(saved["model"])  # loads strictly
    try:  # chapter 09's loader, when it is there
        from annotated_transformer.checkpoint import load_model
    except ImportError:
        return
    loaded = load_model(tmp_path / "out" / "avg.pt", device="cpu")
    assert all(torch.equal(loaded.state_dict()[k], v) for k, v in avg.items())


def test_bare_state_dicts_are_accepted_and_written_bare(tmp_path):
    a, b = tiny(0).state_dict(), tiny(1).state_dict()
    torch.save(a, tmp_path / "a.pt")
    torch.save(b, tmp_path / "b.pt")
    avg = average_checkpoints([tmp_path / "a.pt", tmp_path / "b.pt"], out_path=tmp_path / "avg.pt")
    saved = torch.load(tmp_path / "avg.pt", weights_only=True)
    assert saved.keys() == a.keys() and all(torch.equal(saved[k], avg[k]) for k in a)


def test_last_checkpoints(tmp_path):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    for step in (9, 10, 100, 2, 30):
        (run / "checkpoints" / f"step_{step}.pt").write_bytes(b"")
    (run / "checkpoints" / "step_final.pt").write_bytes(b"")  # not a step number: ignored
    os.utime(run / "checkpoints" / "step_2.pt", (2e9, 2e9))  # the newest file is not the last step
    assert [p.name for p in last_checkpoints(run, k=3)] == ["step_10.pt", "step_30.pt", "step_100.pt"]
    assert [p.name for p in last_checkpoints(run / "checkpoints", k=1)] == ["step_100.pt"]
    with pytest.warns(UserWarning, match="only 5"):
        assert len(last_checkpoints(run, k=20)) == 5
    with pytest.raises(FileNotFoundError, match="no checkpoints"):
        last_checkpoints(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such run"):
        last_checkpoints(tmp_path / "nope")
    with pytest.raises(ValueError, match="k must be >= 1"):
        last_checkpoints(run, k=0)


class MarkovChain(torch.nn.Module):
    """A stand-in 'model' with the Harvard API whose next-token distribution depends only on the last token:
    log p(next | last) = table[last]. It has no tgt_embed, so only use_cache=False can decode it."""

    class Generator(torch.nn.Module):
        def __init__(self, table):
            super().__init__()
            self.proj = torch.nn.Linear(table.size(0), table.size(0), bias=False, dtype=torch.float64)
            with torch.no_grad():
                self.proj.weight.copy_(table.T)  # one-hot(last) @ table = table[last]

        def forward(self, h):
            return torch.log_softmax(self.proj(h), dim=-1)

    def __init__(self, table):
        super().__init__()
        self.generator = self.Generator(table)

    def encode(self, src, src_mask):
        return torch.zeros(src.size(0), src.size(1), 1, dtype=torch.float64)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        return torch.nn.functional.one_hot(tgt, self.generator.proj.in_features).double()  # state = last token


def markov_table(probs):
    "probs: {from: {to: p}} over the ids 0..4; missing entries get a tiny probability."
    table = torch.full((5, 5), 1e-9, dtype=torch.float64)
    for a, row in probs.items():
        for b, p in row.items():
            table[a, b] = p
    return table.log()


def test_early_stopping_bound_uses_the_longest_possible_length():
    """From BOS: EOS with p=0.4, A (3) with p=0.35, B (4) 0.25; after A, A again with p=0.97. With α = 1 the
    long A A A ... hypothesis (cut at the limit, 20 tokens) scores -1.6/4.17 ≈ -0.38, far better than [EOS]
    (-0.92). After step 1 the live A has log p = -1.05: divided by lp(1) = 1 it looks worse than [EOS] — a search
    that bounded it with the *current* length would stop and return [EOS]. Its true bound is -1.05 / lp(20)."""
    chain = MarkovChain(markov_table({BOS: {EOS: 0.4, 3: 0.35, 4: 0.25}, 3: {3: 0.97, EOS: 0.02, 4: 0.01},
                                      4: {EOS: 0.9, 4: 0.1}}))
    src = torch.tensor([[3, 4, EOS]])
    mask = padding_mask(src, PAD)
    for early in (True, False):
        out, hyps = beam_search(chain, src, mask, beam_size=2, length_penalty=1.0, max_new_tokens=20,
                                use_cache=False, early_stopping=early, return_hypotheses=True)
        assert out[0].tolist() == [3] * 20, early
        assert abs(hyps[0][0].log_prob - (torch.tensor(0.35).log() + 19 * torch.tensor(0.97).log()).item()) < 1e-6
    # with α = 0 the raw log-probability wins: [EOS]
    assert beam_search(chain, src, mask, beam_size=2, length_penalty=0.0, max_new_tokens=20, use_cache=False).tolist() == [[EOS]]
    with pytest.raises(TypeError, match="use_cache=False"):
        beam_search(chain, src, mask, max_new_tokens=5)


def test_greedy_equals_chapter_06c_greedy_decode_simple():
    copytask = pytest.importorskip("annotated_transformer.copytask")
    m = small_model(seed=15, tgt_vocab=7)
    with torch.no_grad():
        m.generator.proj.bias[EOS] += 1.0
        m.generator.proj.bias[PAD] = -1e4  # greedy_decode_simple may pick PAD, greedy_decode never does
    src, mask = padded_sources(seed=15, batch=8)
    ours = greedy_decode(m, src, mask, max_new_tokens=14)
    theirs = copytask.greedy_decode_simple(m, src, mask, max_new_tokens=14)
    assert torch.equal(ours, theirs)


def _chapter_08_function(name):
    "A function that chapter 11 defines in a cell of its own (not exported: the chapter is the short path's)."
    import json
    from pathlib import Path
    nb = Path(__file__).resolve().parents[1] / "nbs" / "11_decoding.ipynb"
    import math
    from torch import Tensor
    scope = {"torch": torch, "math": math, "Tensor": Tensor, "BOS": BOS, "EOS": EOS, "PAD": PAD,
             "causal_mask": causal_mask}
    for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and f"\ndef {name}(" in "\n" + source:
            exec(compile(source, f"<chapter 11: {name}>", "exec"), scope)
            return scope[name]
    raise AssertionError(f"chapter 11 no longer defines {name}")


@pytest.mark.parametrize("seed,norm_first", [(0, False), (1, True), (2, False)])
def test_chapter_08s_greedy_equals_greedy_decode(seed, norm_first):
    "The 15-line teaching version (recomputing the prefix) gives greedy_decode's tokens (cache), in float64."
    greedy = _chapter_08_function("greedy")
    m = small_model(seed=seed, norm_first=norm_first)
    with torch.no_grad():
        m.generator.proj.bias[EOS] += 1.0  # some outputs end with EOS, others run to their limit
        m.generator.proj.bias[PAD] += 2.0  # PAD likely: neither may generate it
    src, mask = padded_sources(seed=seed, batch=6)
    assert torch.equal(greedy(m, src, mask), greedy_decode(m, src, mask))


def test_chapter_08s_length_penalty_is_gnmt_length_penalty():
    lp = lambda length, alpha: ((5 + length) / 6) ** alpha  # chapter 11's one line
    for n in range(1, 60):
        for alpha in (0.0, 0.3, 0.6, 1.0):
            assert lp(n, alpha) == gnmt_length_penalty(n, alpha)


def test_pad_is_never_generated():
    m = small_model(seed=16, tgt_vocab=7)
    with torch.no_grad():
        m.generator.proj.bias[PAD] = 3.0  # the model's favourite token is PAD
    src, mask = padded_sources(seed=16)
    out, scores = greedy_decode(m, src, mask, max_new_tokens=10, return_scores=True)
    assert not (out.masked_fill(after_end(out), 1) == PAD).any()
    assert (scores.masked_fill(after_end(out), -1.0) < 0).all()  # the chosen tokens' true log-probabilities
    out, hyps = beam_search(m, src, mask, max_new_tokens=10, return_hypotheses=True)
    assert all(PAD not in h.tokens for hs in hyps for h in hs)
    with pytest.raises(ValueError, match="pad and eos must be different ids"):
        greedy_decode(m, src, mask, pad=EOS)


# ----------------------------------------------------------------------------- sampling

def _sample(model, src, mask, **kw):
    from annotated_transformer.decoding import sample_decode
    return sample_decode(model, src, mask, **kw)


@pytest.mark.parametrize("norm_first", [False, True])
def test_sampling_at_temperature_zero_is_greedy(norm_first):
    m = small_model(seed=3, norm_first=norm_first)
    src, mask = padded_sources(seed=3)
    greedy, scores = greedy_decode(m, src, mask, return_scores=True)
    out, out_scores = _sample(m, src, mask, temperature=0, seed=0, return_scores=True)
    assert torch.equal(out, greedy) and torch.equal(out_scores, scores)
    assert torch.equal(_sample(m, src, mask, top_k=1, seed=5), greedy)  # one token left: no choice


@pytest.mark.parametrize("norm_first", [False, True])
def test_sampling_cache_equals_recompute_and_is_seeded(norm_first):
    m = small_model(seed=4, norm_first=norm_first)
    src, mask = padded_sources(seed=4)
    kw = dict(temperature=1.3, top_k=9, top_p=0.95, max_new_tokens=30)
    out = _sample(m, src, mask, seed=11, **kw)
    assert torch.equal(out, _sample(m, src, mask, seed=11, **kw))
    assert torch.equal(out, _sample(m, src, mask, seed=11, use_cache=False, **kw))
    assert torch.equal(out, _sample(m, src, mask, generator=torch.Generator().manual_seed(11), **kw))
    others = [_sample(m, src, mask, seed=s, **kw) for s in range(12, 15)]
    assert any(o.shape != out.shape or not torch.equal(o, out) for o in others)  # the seed matters


def test_sampling_stops_at_eos_never_draws_pad_and_scores_the_model():
    m = small_model(seed=5)
    with torch.no_grad():
        m.generator.proj.bias[PAD] += 3.0  # PAD made likely: it must still never be drawn
    src, mask = padded_sources(seed=5)
    out, scores = _sample(m, src, mask, temperature=1.0, seed=0, max_new_tokens=25, return_scores=True)
    end = after_end(out)
    assert (out[end] == PAD).all() and not (out[~end] == PAD).any()
    assert (scores[end] == 0).all()
    # the scores are the model's own log p of the drawn tokens (not the tempered ones)
    tf = teacher_forced_log_probs(m, src, mask, out.masked_fill(end, PAD))
    torch.testing.assert_close(scores[~end], tf[~end], rtol=0, atol=1e-12)


def test_sampling_errors():
    m = small_model()
    src, mask = padded_sources()
    with pytest.raises(ValueError, match="a generator or a seed, not both"):
        _sample(m, src, mask, seed=1, generator=torch.Generator())
    with pytest.raises(ValueError, match=r"temperature must be >= 0 \(0: greedy\), got -1"):
        _sample(m, src, mask, temperature=-1)
    with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\], got 1.5"):
        _sample(m, src, mask, top_p=1.5)
    with pytest.raises(ValueError, match="top_k must be >= 1"):
        _sample(m, src, mask, top_k=0)


def test_filter_logits_and_sample_next_match_chapter_13s():
    "Chapter 21 defines them; chapter 28's decoder-only model uses the same functions (same behaviour)."
    from annotated_transformer import decoder_only, decoding
    torch.manual_seed(0)
    logits = torch.randn(6, 20, dtype=torch.float64)
    for kw in [dict(), dict(top_k=3), dict(top_p=0.7), dict(top_k=5, top_p=0.5)]:
        assert torch.equal(decoding.filter_logits(logits, **kw), decoder_only.filter_logits(logits, **kw))
        for T in (0, 0.7, 1.5):
            a = decoding.sample_next(logits, T, generator=torch.Generator().manual_seed(1), **kw)
            b = decoder_only.sample_next(logits, T, generator=torch.Generator().manual_seed(1), **kw)
            assert torch.equal(a, b)


@pytest.mark.parametrize("seed", range(4))
def test_greedy_reads_done_every_k_steps_and_returns_the_same(seed):
    "Checking for EOS every k steps (fewer host reads) changes nothing: the same tokens, scores and width as every step."
    from annotated_transformer.decoding import _greedy_steps, _output_limits

    m = small_model(seed=seed, tgt_vocab=6)
    with torch.no_grad():
        m.generator.proj.bias[EOS] += 1.0  # rows end at different steps
    src, mask = padded_sources(seed=seed, batch=6)
    results = []
    for every in (1, 3, 8):
        limits = _output_limits(m, src, mask, 12, BOS, EOS, PAD)
        with torch.no_grad():
            memory = m.encode(src, mask)
            out, scores = _greedy_steps(IncrementalDecoder(m, memory, mask), limits, BOS, EOS, PAD, src.device,
                                        check_every=every)
        results.append((torch.stack(out, 1), torch.stack(scores, 1)))
    ids = results[0][0]
    assert ids.size(1) == max(length_of(row) for row in ids.tolist())  # the last step is some row's end
    for other_ids, other_scores in results[1:]:
        assert torch.equal(other_ids, ids) and torch.equal(other_scores, results[0][1])
    assert torch.equal(greedy_decode(m, src, mask, max_new_tokens=12), ids)

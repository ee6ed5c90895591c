"""Tests for annotated_transformer.batching (chapter 08): the padded Batch for teacher forcing and the token-budget
sampler (budget, coverage, determinism, exact resume, DDP shards)."""
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from annotated_transformer import batching
from annotated_transformer.batching import BOS, EOS, PAD, length_batches
from annotated_transformer.copytask import copy_task_pairs
# chapter 12's make_batch: chapter 08's with pad_to_multiple
from annotated_transformer.sampler import SOURCE_ALLOWANCE, TokenBatchSampler, make_batch, with_empty_rows


# ---- batches -------------------------------------------------------------------------------------
def test_make_batch_shift_masks_and_counts():
    b = make_batch([([5, 6, 7], [8, 9]), ([5], [8, 9, 10, 11])])
    assert b.src.tolist() == [[5, 6, 7, EOS], [5, EOS, PAD, PAD]]
    assert b.tgt_in.tolist() == [[BOS, 8, 9, PAD, PAD], [BOS, 8, 9, 10, 11]]
    assert b.tgt_out.tolist() == [[8, 9, EOS, PAD, PAD], [8, 9, 10, 11, EOS]]
    assert torch.equal(b.tgt_in[1, 1:], b.tgt_out[1, :-1])
    assert b.src_mask.dtype == torch.bool and b.src_mask.tolist() == [[[True] * 4], [[True, True, False, False]]]
    assert b.tgt_mask.shape == (2, 5, 5) and not b.tgt_mask[0, 0, 1]  # causal
    assert not b.tgt_mask[0, 4, 3]  # padding key
    assert b.ntokens == 8 and b.src_ntokens == 6
    # empty sentences are allowed: the source is EOS, the labels are EOS
    e = make_batch([([], [])])
    assert e.src.tolist() == [[EOS]] and e.tgt_in.tolist() == [[BOS]] and e.tgt_out.tolist() == [[EOS]]


def test_make_batch_errors():
    with pytest.raises(ValueError, match="at least one sentence pair"):
        make_batch([])
    with pytest.raises(ValueError, match="pair 1 contains the padding id 0"):
        make_batch([([5], [6]), ([5, 0, 7], [6])])
    with pytest.raises(ValueError, match="three different ids"):
        make_batch([([5], [6])], pad=0, bos=0, eos=2)
    with pytest.raises(ValueError, match="non-negative"):
        make_batch([([5, -3], [6])])


# ---- token-budget batching -----------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), min_size=1, max_size=300),
       max_tokens=st.integers(61, 2000), seed=st.integers(0, 10**6), epoch=st.integers(0, 3))
def test_sampler_budget_and_coverage(lengths, max_tokens, seed, epoch):
    pairs = [([3] * s, [4] * t) for s, t in lengths]
    sampler = TokenBatchSampler(pairs, max_tokens, seed=seed)
    plan = sampler.epoch_batches(epoch)
    for idx in plan:  # padded target within the budget, padded source within SOURCE_ALLOWANCE times it
        assert len(idx) * max(len(pairs[i][1]) + 1 for i in idx) <= max_tokens
        assert len(idx) * max(len(pairs[i][0]) + 1 for i in idx) <= SOURCE_ALLOWANCE * max_tokens
    assert sorted(i for idx in plan for i in idx) == list(range(len(pairs)))  # every pair exactly once
    assert TokenBatchSampler(pairs, max_tokens, seed=seed).epoch_batches(epoch) == plan  # deterministic


def test_sampler_order_depends_on_seed_and_epoch_and_groups_lengths():
    rng = random.Random(0)
    pairs = [([3] * rng.randint(1, 50), [3] * rng.randint(1, 50)) for _ in range(2000)]
    s = TokenBatchSampler(pairs, 400, seed=0)
    assert s.epoch_batches(0) != s.epoch_batches(1)
    assert s.epoch_batches(0) != TokenBatchSampler(pairs, 400, seed=1).epoch_batches(0)
    padded = sum(len(idx) * max(s.tgt_lens[i] for i in idx) for idx in s.epoch_batches(0))
    assert sum(s.tgt_lens) / padded > 0.95  # grouping by length leaves little padding


def test_sampler_cuts_once_and_reorders_or_recuts_with_rebatch():
    "rebatch=False: every epoch holds epoch 0's batches in a new order (fairseq); the default cuts anew every epoch."
    rng = random.Random(0)
    pairs = [([3] * rng.randint(1, 50), [3] * rng.randint(1, 50)) for _ in range(2000)]
    once, anew = TokenBatchSampler(pairs, 400, seed=0, rebatch=False), TokenBatchSampler(pairs, 400, seed=0)
    first = once.epoch_batches(0)
    assert anew.epoch_batches(0) == first  # epoch 0 is the same plan either way
    as_sets = lambda plan: sorted(map(sorted, plan))
    for epoch in (1, 2, 5):
        plan = once.epoch_batches(epoch)
        assert plan != first and as_sets(plan) == as_sets(first)  # same batches, another order
        recut = anew.epoch_batches(epoch)
        assert as_sets(recut) != as_sets(first)  # other batches (ties in length broken afresh)
        assert sorted(i for idx in recut for i in idx) == list(range(len(pairs)))
    assert once.epoch_batches(1) != once.epoch_batches(2)
    # the plan of epoch e depends only on (seed, e): a fresh sampler asked for epoch 5 first agrees
    assert TokenBatchSampler(pairs, 400, seed=0, rebatch=False).epoch_batches(5) == once.epoch_batches(5)
    assert TokenBatchSampler(pairs, 400, seed=1, rebatch=False).epoch_batches(5) != once.epoch_batches(5)
    for rebatch in (False, True):  # a restored sampler continues exactly, across the next epoch boundary
        a = TokenBatchSampler(pairs, 400, seed=0, rebatch=rebatch)
        stream = iter(a)
        for _ in range(len(first) + 3):
            next(stream)
        b = TokenBatchSampler(pairs, 400, seed=0, rebatch=rebatch)
        b.load_state_dict(a.state_dict())
        assert [next(stream) for _ in range(len(first))] == [idx for idx, _ in zip(iter(b), range(len(first)))]
        assert a.epoch == 2


def test_sampler_budget_counts_target_tokens():
    "Sources 1.5x as long as their targets (German -> English): the budget still fills with target tokens."
    rng = random.Random(0)
    pairs = [([3] * (3 * n // 2), [4] * n) for n in (rng.randint(5, 40) for _ in range(3000))]
    s = TokenBatchSampler(pairs, 1000, seed=0)
    plan = s.epoch_batches(0)
    real_target = sum(s.tgt_lens) / len(plan)
    assert real_target > 0.9 * 1000  # a budget on max(source, target) would give about 1000 / 1.5
    assert all(len(idx) * max(s.tgt_lens[i] for i in idx) <= 1000 for idx in plan)


def test_sampler_resumes_exactly_across_epochs():
    pairs = copy_task_pairs(500, 11, 10, seed=0)
    a = TokenBatchSampler(pairs, 100, seed=3)
    stream = iter(a)
    n = len(a.epoch_batches(0))
    for _ in range(n - 3):
        next(stream)
    state = a.state_dict()
    b = TokenBatchSampler(pairs, 100, seed=3)
    b.load_state_dict(state)
    expected = [next(stream) for _ in range(10)]  # crosses into epoch 1
    assert a.epoch == 1
    got = [batch for batch, _ in zip(iter(b), range(10))]
    assert got == expected
    with pytest.raises(ValueError, match="max_tokens=100, this one has 200"):
        TokenBatchSampler(pairs, 200, seed=3).load_state_dict(state)
    with pytest.raises(ValueError, match="rebatch=True, this one has False"):
        TokenBatchSampler(pairs, 100, seed=3, rebatch=False).load_state_dict(state)
    # a state saved before the option existed came from a sampler that cut anew every epoch
    old_state = {k: v for k, v in state.items() if k != "rebatch"}
    TokenBatchSampler(pairs, 100, seed=3).load_state_dict(old_state)
    with pytest.raises(ValueError, match="rebatch=True, this one has False"):
        TokenBatchSampler(pairs, 100, seed=3, rebatch=False).load_state_dict(old_state)


def test_sampler_errors():
    with pytest.raises(ValueError, match=r"pair 1 has a target of 31 tokens .* \(20 with max_tokens=20\)"):
        TokenBatchSampler([([3], [3]), ([3], [3] * 30)], 20)
    with pytest.raises(ValueError, match=r"pair 1 has a source of 81 tokens .* \(80 with max_tokens=20\)"):
        TokenBatchSampler([([3], [3]), ([3] * 80, [3])], 20)
    TokenBatchSampler([([3] * 79, [3])], 20)  # a source up to SOURCE_ALLOWANCE (4) times the budget is allowed
    with pytest.raises(ValueError, match=r"max_tokens must be >= 1, got 0"):
        TokenBatchSampler([([3], [3])], 0)
    with pytest.raises(TypeError, match=r"max_tokens must be an int, got float"):
        TokenBatchSampler([([3], [3])], 40.0)
    with pytest.raises(ValueError, match="cannot be shared by 2 ranks"):
        TokenBatchSampler([([3], [3] * 9), ([3], [3])], 10, num_shards=2)


@pytest.mark.parametrize("seed", range(5))
def test_sampler_gives_every_rank_a_pair(seed):
    "With DDP the last, shortest batch of the length-sorted plan borrows pairs, within the budget, from the one before."
    rng = random.Random(seed)
    pairs = [([3] * rng.randint(1, 30), [3] * rng.randint(1, 30)) for _ in range(rng.randint(50, 300))]
    for shards in (2, 4, 8):
        try:
            sampler = TokenBatchSampler(pairs, 256, seed=seed, num_shards=shards)
        except ValueError as e:  # only when the longest pairs alone leave too few per batch
            assert "cannot be shared" in str(e) and 256 // (max(len(t) for _, t in pairs) + 1) < 2 * shards
            continue
        for epoch in range(3):
            plan = sampler.epoch_batches(epoch)
            assert min(map(len, plan)) >= shards
            assert sorted(i for idx in plan for i in idx) == list(range(len(pairs)))
            for idx in plan:
                assert len(idx) * max(sampler.tgt_lens[i] for i in idx) <= 256
    tail = TokenBatchSampler([([3], [3] * 2)] * 4 + [([3], [3] * 3)], 12, num_shards=2, shuffle=False)
    assert tail.epoch_batches(0) == [[0, 1, 2], [3, 4]]  # without borrowing: [[0, 1, 2, 3], [4]]


@pytest.mark.parametrize("multiple", [1, 8, 16])
def test_pad_to_multiple_changes_shapes_not_results(multiple):
    "Extra padding is masked: a model's log-probabilities at the real positions do not change."
    from annotated_transformer.model import make_model
    torch.manual_seed(0)
    model = make_model(20, 20, N=1, d_model=16, d_ff=32, h=2, dropout=0.0).eval()
    pairs = [([5, 6, 7, 9], [8, 9]), ([5], [8, 9, 10, 11, 12]), ([4, 4, 4, 4, 4, 4, 4], [6])]
    plain, padded = make_batch(pairs), make_batch(pairs, pad_to_multiple=multiple)
    assert padded.src.size(1) % multiple == 0 and padded.tgt_in.size(1) % multiple == 0
    assert (padded.ntokens, padded.src_ntokens) == (plain.ntokens, plain.src_ntokens)
    with torch.no_grad():
        a = model.generator(model(plain.src, plain.tgt_in, plain.src_mask, plain.tgt_mask))
        b = model.generator(model(padded.src, padded.tgt_in, padded.src_mask, padded.tgt_mask))
    real = plain.tgt_out != PAD
    torch.testing.assert_close(b[:, :a.size(1)][real], a[real])
    with pytest.raises(ValueError, match="pad_to_multiple must be >= 1"):
        make_batch(pairs, pad_to_multiple=0)


@pytest.mark.parametrize("multiple", [1, 8, 16])
def test_bucketed_batches_keep_to_the_budget_and_resume(multiple):
    "The sampler counts lengths as make_batch(pad_to_multiple) pads them; a checkpoint of another multiple is refused."
    rng = random.Random(4)
    pairs = [([3] * rng.randint(1, 50), [3] * rng.randint(1, 50)) for _ in range(500)]
    sampler = TokenBatchSampler(pairs, max_tokens=400, seed=2, pad_to_multiple=multiple)
    shapes = set()
    for idx in sampler.epoch_batches(0):
        b = make_batch([pairs[i] for i in idx], pad_to_multiple=multiple)
        assert b.tgt_out.numel() <= 400 and b.src.numel() <= SOURCE_ALLOWANCE * 400
        assert b.src.size(1) % multiple == 0 == b.tgt_in.size(1) % multiple
        shapes.add((b.src.size(1), b.tgt_in.size(1)))
        rows = sampler.batch_rows(idx)  # the most pairs these padded lengths allow
        t, s = max(sampler.tgt_lens[i] for i in idx), max(sampler.src_lens[i] for i in idx)
        assert len(idx) <= rows and sampler._fits(rows, t, s) and not sampler._fits(rows + 1, t, s)
    assert multiple == 1 or len(shapes) <= (56 // multiple + 1) ** 2  # lengths <= 51 round to few buckets
    other = TokenBatchSampler(pairs, max_tokens=400, seed=2, pad_to_multiple=multiple * 2)
    with pytest.raises(ValueError, match=f"pad_to_multiple={multiple}, this one has {multiple * 2}"):
        other.load_state_dict(sampler.state_dict())
    with pytest.raises(ValueError, match=r"pair 0 has a target of 16 tokens \(with EOS/BOS, padded\)"):
        TokenBatchSampler([([3], [3] * 9)], max_tokens=12, pad_to_multiple=16)


def test_empty_rows_change_no_real_row():
    "with_empty_rows: no token, no label, no key; a model's outputs on the real rows stay as they were (float64)."
    from annotated_transformer.model import make_model

    torch.manual_seed(0)
    model = make_model(11, 11, N=2, d_model=32, d_ff=64, h=4, dropout=0.0).double().eval()
    b = make_batch(copy_task_pairs(3, 11, 6, seed=1), pad_to_multiple=4)
    full = with_empty_rows(b, 7)
    assert len(full) == 7 and (full.ntokens, full.src_ntokens) == (b.ntokens, b.src_ntokens)
    with torch.no_grad():
        for tgt_mask in (lambda x: x.tgt_mask, lambda x: None):  # the batch's masks, and the trainer's (causal)
            out = model(b.src, b.tgt_in, b.src_mask, tgt_mask(b))
            padded = model(full.src, full.tgt_in, full.src_mask, tgt_mask(full))
            torch.testing.assert_close(padded[:3], out, atol=1e-12, rtol=0)
            assert torch.isfinite(padded).all()
    with pytest.raises(ValueError, match="rows must be >= 3, got 2"):
        with_empty_rows(b, 2)


def test_length_batches_is_the_samplers_plan_in_length_order():
    "Chapter 08's length_batches equals TokenBatchSampler(shuffle=False) when no source is over 4x its target."
    for seed, budget in [(0, 50), (1, 300), (2, 1000)]:
        pairs = copy_task_pairs(1500, vocab=11, max_length=12, seed=seed)
        assert length_batches(pairs, budget) == TokenBatchSampler(pairs, budget, shuffle=False).epoch_batches(0)
    rng = random.Random(3)  # translation-like pairs: sources within twice their targets
    pairs = []
    for _ in range(800):
        t = rng.randint(1, 40)
        pairs.append(([3] * rng.randint(max(1, t // 2), 2 * t), [4] * t))
    assert length_batches(pairs, 400) == TokenBatchSampler(pairs, 400, shuffle=False).epoch_batches(0)


def test_chapter_06b_make_batch_is_chapter_09s_with_multiple_one():
    rng = random.Random(0)
    for _ in range(30):
        pairs = [([rng.randint(3, 50) for _ in range(rng.randint(0, 9))],
                  [rng.randint(3, 50) for _ in range(rng.randint(0, 9))]) for _ in range(rng.randint(1, 5))]
        a, b = batching.make_batch(pairs), make_batch(pairs, pad_to_multiple=1)
        assert (a.ntokens, a.src_ntokens) == (b.ntokens, b.src_ntokens)
        for x, y in zip((a.src, a.tgt_in, a.tgt_out, a.src_mask, a.tgt_mask),
                        (b.src, b.tgt_in, b.tgt_out, b.src_mask, b.tgt_mask)):
            assert x.dtype == y.dtype and torch.equal(x, y)

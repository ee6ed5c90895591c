"""The decoder-only language model of chapter 28 (annotated_transformer.decoder_only) and its bench script.

Every switch of the modern block keeps the model causal and keeps the key/value cache exact; sampling is seeded;
the filters keep what their definitions say (checked against a brute-force enumeration); bad settings are refused
in one line; the bench script's variants have equal parameters and its plans at least three seeds per run."""
import importlib.util
import itertools
import json
import math
import sys
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.testing import assert_close

from annotated_transformer.decoder_only import (DecoderOnlyLM, GroupedQueryAttention, LMConfig, RMSNorm, SwiGLU,
                                                cache_bytes, distinct_n, filter_logits, generate, lm_nll,
                                                prefix_mask, repetition_rate, sample_next)
from annotated_transformer.multihead import MultiHeadAttention

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("decoder_only_bench", REPO / "bench" / "decoder_only.py")
bench = importlib.util.module_from_spec(spec)
sys.modules["decoder_only_bench"] = bench
spec.loader.exec_module(bench)

SWITCHES = {
    "paper": {},
    "rmsnorm": dict(norm_first=True, norm="rms"),
    "swiglu": dict(feed_forward="swiglu"),
    "rope": dict(positional="rope"),
    "learned": dict(positional="learned"),
    "gqa": dict(n_kv_heads=2),
    "mqa": dict(n_kv_heads=1),
    "modern": dict(norm_first=True, norm="rms", feed_forward="swiglu", positional="rope", n_kv_heads=1),
}


def small(switch: str, dtype=torch.float64, **kw) -> DecoderOnlyLM:
    torch.manual_seed(0)
    config = LMConfig(vocab=37, N=2, d_model=32, d_ff=48, h=4, **SWITCHES[switch], **kw)
    return DecoderOnlyLM(config).to(dtype).eval()


@pytest.mark.parametrize("switch", SWITCHES)
def test_changing_token_t_changes_no_output_before_t(switch):
    model = small(switch)
    tokens = torch.randint(0, 37, (3, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        base = model.generator(model(tokens))
        for t in (0, 5, 11):
            changed = tokens.clone()
            changed[:, t] = (changed[:, t] + 7) % 37
            out = model.generator(model(changed))
            assert_close(out[:, :t], base[:, :t], rtol=0, atol=1e-12)
            assert (out[:, t] - base[:, t]).abs().max() > 1e-6  # position t reads its own token


@pytest.mark.parametrize("switch", SWITCHES)
def test_cached_sampling_equals_recomputation(switch):
    model = small(switch)
    prompt = torch.randint(0, 37, (4, 5), generator=torch.Generator().manual_seed(2))
    for settings in (dict(temperature=0), dict(temperature=1.0), dict(temperature=0.8, top_k=5, top_p=0.9)):
        runs = [generate(model, prompt, 25, use_cache=cache, generator=torch.Generator().manual_seed(3), **settings)
                for cache in (True, False)]
        assert runs[0].shape == (4, 30) and torch.equal(runs[0], runs[1]), settings


@pytest.mark.parametrize("switch", ["paper", "modern"])
def test_cached_states_equal_recomputed_states(switch):
    "Feeding a sequence in pieces through the caches gives the states of one pass over it."
    model = small(switch)
    tokens = torch.randint(0, 37, (2, 10), generator=torch.Generator().manual_seed(4))
    caches = model.new_caches()
    with torch.no_grad():
        pieces = [model(tokens[:, a:b], caches=caches) for a, b in ((0, 4), (4, 5), (5, 10))]
        assert_close(torch.cat(pieces, 1), model(tokens), rtol=0, atol=1e-12)


def test_prefix_generation_uses_the_prefix_mask_with_and_without_the_cache():
    model = small("modern")
    prompt = torch.randint(0, 37, (3, 6), generator=torch.Generator().manual_seed(5))
    fast, slow = (generate(model, prompt, 15, temperature=0, prefix=True, use_cache=c) for c in (True, False))
    assert torch.equal(fast, slow)
    # the first new token is the argmax of a pass over the prompt with every prompt position seeing every other
    with torch.no_grad():
        full = model.generator(model(prompt, torch.ones(1, 6, 6, dtype=torch.bool)))[:, -1]
    assert torch.equal(fast[:, 6], full.argmax(-1))


def test_prefix_positions_see_each_other_and_nothing_after():
    model = small("paper")
    tokens = torch.randint(0, 37, (2, 9), generator=torch.Generator().manual_seed(6))
    mask = prefix_mask(torch.tensor([4, 4]), 9)
    with torch.no_grad():
        base = model(tokens, mask)
        later = tokens.clone()
        later[:, 6] = (later[:, 6] + 1) % 37
        assert_close(model(later, mask)[:, :6], base[:, :6], rtol=0, atol=1e-12)  # causal after the prefix
        early = tokens.clone()
        early[:, 3] = (early[:, 3] + 1) % 37
        assert (model(early, mask)[:, 0] - base[:, 0]).abs().max() > 1e-6  # position 0 sees position 3


def test_sampling_is_seeded():
    logits = torch.randn(16, 50, generator=torch.Generator().manual_seed(0))
    draw = lambda seed: sample_next(logits, 1.0, top_p=0.95, generator=torch.Generator().manual_seed(seed))
    assert torch.equal(draw(1), draw(1))
    assert not torch.equal(draw(1), draw(2))
    model = small("paper")
    prompt = torch.zeros(2, 1, dtype=torch.long)
    once, again = (generate(model, prompt, 20, generator=torch.Generator().manual_seed(9)) for _ in range(2))
    assert torch.equal(once, again)


def test_greedy_is_the_zero_temperature_limit():
    logits = torch.randn(8, 30, generator=torch.Generator().manual_seed(0))
    assert torch.equal(sample_next(logits, 0), logits.argmax(-1))
    assert torch.equal(sample_next(logits, 1e-6, generator=torch.Generator().manual_seed(0)), logits.argmax(-1))


def _nucleus_by_enumeration(p: torch.Tensor, top_p: float) -> set[int]:
    "The smallest set of tokens whose probability reaches top_p, found by trying sets of growing size."
    order = sorted(range(len(p)), key=lambda i: -p[i].item())
    for size in range(1, len(p) + 1):
        if sum(p[i].item() for i in order[:size]) >= top_p - 1e-12:
            return set(order[:size])
    return set(order)


def test_top_p_keeps_the_smallest_set_that_reaches_p():
    g = torch.Generator().manual_seed(0)
    for _ in range(50):
        logits = torch.randn(12, generator=g, dtype=torch.float64) * 2
        p = logits.softmax(-1)
        for top_p in (0.1, 0.5, 0.9, 0.99, 1.0):
            kept = set(torch.isfinite(filter_logits(logits, top_p=top_p)).nonzero().flatten().tolist())
            assert kept == _nucleus_by_enumeration(p, top_p)


def test_top_k_keeps_the_k_highest():
    logits = torch.randn(5, 20, generator=torch.Generator().manual_seed(0))
    for k in (1, 3, 20, 50):
        kept = torch.isfinite(filter_logits(logits, top_k=k))
        assert (kept.sum(-1) == min(k, 20)).all()
        assert torch.equal(kept, logits >= logits.topk(min(k, 20), -1).values[:, -1:])


@pytest.mark.parametrize("kwargs,message", [
    (dict(temperature=-0.5), "temperature must be >= 0 (0: greedy), got -0.5"),
    (dict(top_p=0.0), "top_p must be in (0, 1], got 0.0"),
    (dict(top_p=1.5), "top_p must be in (0, 1], got 1.5"),
    (dict(top_k=0), "top_k must be >= 1, got 0"),
])
def test_bad_sampling_settings_are_refused_in_one_line(kwargs, message):
    with pytest.raises(ValueError) as e:
        sample_next(torch.zeros(1, 5), **kwargs)
    assert str(e.value) == message and "\n" not in str(e.value)


def test_parts_against_references():
    x = torch.randn(2, 3, 16)
    assert_close(RMSNorm(16)(x), nn.RMSNorm(16, eps=1e-5)(x))
    ff = SwiGLU(16, 24)
    w, v, w2 = ff.w_gate.weight, ff.w_up.weight, ff.w_down.weight
    a = x @ w.T
    assert_close(ff(x), ((a * torch.sigmoid(a)) * (x @ v.T)) @ w2.T)
    mha, gqa = MultiHeadAttention(4, 16, 0.0), GroupedQueryAttention(4, 16, 4, 0.0)
    gqa.load_state_dict(mha.state_dict())
    assert_close(gqa(x, x, x), mha(x, x, x))


def test_grouped_query_attention_caches_fewer_heads():
    sizes = {}
    for kv in (4, 2, 1):
        model = small("paper", n_kv_heads=kv)
        caches = model.new_caches()
        with torch.no_grad():
            model(torch.zeros(1, 10, dtype=torch.long), caches=caches)
        sizes[kv] = cache_bytes(caches)
    assert sizes[4] == 2 * 2 * 10 * 32 * 8  # (k and v) x layers x positions x d_model x 8 bytes
    assert sizes[4] == 2 * sizes[2] == 4 * sizes[1]


def test_loss_and_measures():
    model = small("paper")
    tokens = torch.randint(0, 37, (2, 7))
    nll, n = lm_nll(model, tokens)
    log_p = model.generator(model(tokens[:, :-1]))
    assert_close(nll, -log_p.gather(-1, tokens[:, 1:, None]).sum()) and n == 12
    assert repetition_rate("a b c a b c".split(), 3) == 1 / 4
    assert distinct_n([["a", "b"], ["a", "c"]], 1) == 3 / 4


def test_bad_configurations_are_refused():
    for kwargs, message in ((dict(h=3), "d_model=128 is not divisible by h=3"),
                            (dict(n_kv_heads=3), "h=4 is not divisible by n_kv_heads=3"),
                            (dict(feed_forward="gelu"), "feed_forward must be one of relu, swiglu"),
                            # relative positions live in the encoder-decoder's attention (chapter 05), not here
                            (dict(positional="relative"), "positional must be one of sinusoidal, learned, rope, got")):
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            LMConfig(**kwargs)


# ------------------------------------------------------------------------------------------------ the bench script
def test_variants_have_equal_parameters():
    base = bench.count(bench.lm_config("base", 2000))
    for v in bench.VARIANTS:
        assert abs(bench.count(bench.lm_config(v, 2000)) / base - 1) < 0.001, v
    assert bench.lm_config("swiglu", 2000).d_ff in range(330, 350)  # about 2/3 of 512


def test_translation_model_matches_the_miniature_encoder_decoder():
    records = [json.loads((REPO / "bench/results/table3" / f"mini_base_s{s}.json").read_text()) for s in range(3)]
    assert {r["parameters"] for r in records} == {bench.ENC_DEC_PARAMETERS}
    assert records[0]["train_config"]["steps"] == bench.MT_RECIPE["steps"]
    assert records[0]["train_config"]["max_tokens"] == bench.MT_RECIPE["max_tokens"]
    assert records[0]["train_config"]["warmup"] == bench.MT_RECIPE["warmup"]
    config = bench.mt_config(4000, tiny=False)
    assert abs(bench.count(config) / bench.ENC_DEC_PARAMETERS - 1) < 0.001


def test_translation_batches_score_the_target_only():
    from annotated_transformer.batching import BOS, EOS, PAD
    pairs = [([5, 6, 7], [8, 9]), ([5], [8, 9, 10, 11, 12])]
    for arm in ("prefix", "causal"):
        tokens, targets, mask = bench.mt_batch(pairs, arm)
        assert tokens[0].tolist() == [5, 6, 7, BOS, 8, 9, EOS, PAD]
        assert targets[0].tolist() == [PAD, PAD, PAD, 8, 9, EOS, PAD]
        assert targets[1].tolist() == [PAD, 8, 9, 10, 11, 12, EOS]
        assert (mask is None) == (arm == "causal")
    assert mask is None and bench.mt_batch(pairs, "prefix")[2][0, 0, 3]  # the source sees BOS


def test_plans_have_three_seeds_per_run():
    for plan in ("decoder_only_lm.txt", "decoder_only_translation.txt"):
        lines = bench.read_plan(REPO / "bench" / "plans" / plan)
        seeds = {name: {s for n, s in lines if n == name} for name, _ in lines}
        assert all(len(s) >= 3 for s in seeds.values()), seeds
    assert {n for n, _ in bench.read_plan(REPO / "bench/plans/decoder_only_lm.txt")} == {
        f"lm_{v}" for v in bench.VARIANTS}


def test_a_bad_plan_line_is_refused(tmp_path):
    plan = tmp_path / "plan.txt"
    plan.write_text("lm_base 0\nlm_nonsense 1\n")
    with pytest.raises(ValueError, match=r"plan.txt:2: expected 'NAME SEED'"):
        bench.read_plan(plan)


def test_tables_are_empty_without_records(tmp_path):
    assert bench.load_records(tmp_path) == []
    assert all("dev_ppl" not in line for line in bench.lm_table([]))
    assert bench.lm_spread_check([]) == {}


def test_the_spread_check_is_bartletts_test_of_the_paired_differences():
    "Differences of 1, 2, 3 and 0, 2, 4 from the base: variances 1 and 4, Bartlett's statistic by hand."
    values = {"base": [10, 10, 10], "rmsnorm": [11, 12, 13], "rope": [10, 12, 14]}
    records = [{"name": f"lm_{v}_s{s}", "seed": s, "dev_ppl": x}
               for v, xs in values.items() for s, x in enumerate(xs)]
    check = bench.lm_spread_check(records)
    pooled = (1 + 4) / 2  # k = 2 groups of n = 3, 2 d.o.f. each
    statistic = (4 * math.log(pooled) - 2 * (math.log(1) + math.log(4))) / (1 + (1 / 3) * (2 / 2 - 1 / 4))
    assert check["variants"] == 2 and check["df_each"] == 2 and check["largest_over_smallest"] == 4
    assert check["bartlett_p"] == pytest.approx(math.erfc(math.sqrt(statistic / 2)))  # chi-square on 1 d.o.f.


def test_tiny_runs_write_records_with_provenance(tmp_path):
    "Both kinds of run, a few updates of a tiny model on a few sentences: each writes its record."
    for name in ("lm_modern", "mt_prefix"):
        record = json.loads(bench.run(name, 0, tmp_path, tiny=True).read_text())
        assert record["name"] == f"{name}_s0" and record["tiny"]
        assert {"command", "commit", "device", "date", "torch"} <= set(record["provenance"])
        assert len(record["dev_curve"]) == 2 and record["dev_ppl"] > 1
    assert record["greedy"]["sentences"] == 6 and 0 <= record["greedy"]["bleu"] <= 100
    assert bench.load_records(tmp_path) == []  # tiny runs stay out of the tables


@pytest.mark.parametrize("arm", ["prefix", "causal"])
def test_a_beam_of_one_is_greedy(arm):
    from annotated_transformer.batching import EOS
    model = small("modern")
    with torch.no_grad():
        model.generator.proj.bias[EOS] += 2.0  # so that some outputs end
    for seed in range(4):
        prompt = torch.randint(3, 37, (1, 5), generator=torch.Generator().manual_seed(seed)).tolist()[0]
        beam = bench.beam_translate(model, prompt, arm, k=1, alpha=0.0, extra=8)
        greedy = generate(model, torch.tensor([prompt]), 4 + 8, temperature=0, eos=EOS,
                          prefix=arm == "prefix")[0, 5:].tolist()
        assert beam == (greedy[: greedy.index(EOS)] if EOS in greedy else greedy)
    wide = bench.beam_translate(model, prompt, arm, k=4, extra=8)
    assert all(0 <= t < 37 and t != EOS for t in wide)

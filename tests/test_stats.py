"""bench/stats.py, the experiments' statistics helper: its intervals against scipy's own tests and against cases
small enough to do by hand; its exact permutation test against scipy.stats.permutation_test; its verdicts."""
import importlib.util
import math
import statistics
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

spec = importlib.util.spec_from_file_location("bench_stats", Path(__file__).parent.parent / "bench" / "stats.py")
S = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = S  # dataclasses look their module up while the class is made
spec.loader.exec_module(S)

BASE = [27.9, 31.2, 29.4]
VARIANT = [26.1, 30.6, 26.8]


def test_textbook_t_quantiles():
    # the 97.5 % points of Student's t in every printed table
    for df, q in [(1, 12.706), (2, 4.303), (4, 2.776), (19, 2.093), (38, 2.024)]:
        assert S.t_quantile(df) == pytest.approx(q, abs=5e-4)


def test_paired_by_hand():
    iv = S.paired([1.0, 2.0, 3.0], [2.0, 2.0, 5.0])  # differences 1, 0, 2: mean 1, sd 1, se 1/sqrt(3), df 2
    assert (iv.mean, iv.df, iv.n) == (1.0, 2, 3)
    assert iv.se == pytest.approx(1 / math.sqrt(3))
    assert (iv.low, iv.high) == pytest.approx((1 - 4.3027 / math.sqrt(3), 1 + 4.3027 / math.sqrt(3)), abs=1e-4)
    assert not iv.excludes_zero()


def test_paired_matches_scipy_ttest_rel():
    iv = S.paired(BASE, VARIANT)
    ref = scipy_stats.ttest_rel(VARIANT, BASE)
    ci = ref.confidence_interval(0.95)
    assert (iv.low, iv.high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert iv.p == pytest.approx(ref.pvalue, rel=1e-10) and iv.t == pytest.approx(ref.statistic, rel=1e-12)


def test_paired_dicts_match_on_common_seeds():
    iv = S.paired({0: 1.0, 1: 2.0, 2: 3.0, 3: 99.0}, {0: 2.0, 1: 2.0, 2: 5.0})
    assert iv.n == 3 and iv.mean == pytest.approx(1.0)


def test_welch_matches_scipy_ttest_ind():
    a, b = [13.1, 13.6, 12.9, 13.4, 13.3], [12.2, 13.9, 14.1, 12.5]
    iv = S.welch(a, b)
    ref = scipy_stats.ttest_ind(b, a, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert (iv.low, iv.high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert iv.df == pytest.approx(ref.df, rel=1e-12) and iv.p == pytest.approx(ref.pvalue, rel=1e-10)


def test_one_run_by_hand():
    iv = S.one_run([10.0, 11.0, 12.0], 13.4)  # base mean 11, sd 1: one more run has SE sqrt(1 + 1/3), df 2
    assert iv.mean == pytest.approx(2.4) and iv.se == pytest.approx(math.sqrt(4 / 3)) and iv.df == 2
    assert iv.low == pytest.approx(2.4 - 4.3027 * math.sqrt(4 / 3), abs=1e-4) and not iv.excludes_zero()


def test_student_by_hand_and_against_scipy():
    iv = S.student([1.0, 3.0], [4.0, 6.0, 8.0])  # variances 2 and 4: pooled (2 + 8) / 3 on 3 degrees of freedom
    se = math.sqrt(10 / 3 * (1 / 2 + 1 / 3))
    assert iv.mean == pytest.approx(4.0) and iv.se == pytest.approx(se) and iv.df == 3
    ref = scipy_stats.ttest_ind([4.0, 6.0, 8.0], [1.0, 3.0], equal_var=True).confidence_interval(0.95)
    assert (iv.low, iv.high) == pytest.approx((ref.low, ref.high), rel=1e-12)


def test_pooled_by_hand():
    rows = {"x": ([0, 0, 0], [1, 2, 3]), "y": ([0, 0, 0], [0, 2, 4])}  # differences sd 1 and 2, means 2 and 2
    ivs = S.pooled_paired(rows)
    var = (2 * 1 + 2 * 4) / 4  # each row's variance weighted by its n - 1 = 2
    assert ivs["x"].df == 4 and ivs["x"].se == pytest.approx(math.sqrt(var / 3))
    assert ivs["y"].high - ivs["y"].mean == pytest.approx(2.7764 * math.sqrt(var / 3), abs=1e-4)


def test_pooled_of_one_row_is_the_paired_interval():
    iv = S.pooled_paired({"only": (BASE, VARIANT)})["only"]
    ref = S.paired(BASE, VARIANT)
    assert (iv.low, iv.high, iv.df) == pytest.approx((ref.low, ref.high, ref.df))


@pytest.mark.parametrize("paired", [True, False])
def test_exact_permutation_matches_scipy(paired):
    a, b = [5.1, 4.8, 6.0, 5.5], [5.9, 5.2, 6.8, 5.4]
    ours = S.permutation_p(a, b, paired_samples=paired)
    ref = scipy_stats.permutation_test(
        (np.array(b), np.array(a)), lambda x, y: np.mean(x) - np.mean(y),
        permutation_type="samples" if paired else "independent", n_resamples=np.inf, alternative="two-sided")
    assert ours == pytest.approx(ref.pvalue, rel=1e-12)


def test_permutation_floor_with_three_seeds():
    # every difference positive: the observed sum is the largest of 2^3 sign flips, and its mirror image ties it
    assert S.permutation_p([0, 0, 0], [1, 2, 3], paired_samples=True) == 2 / 8


@pytest.mark.parametrize("low, high, paper, expected", [
    (-3.0, -1.0, "better", "reproduces"),   # lower is better: the interval excludes zero on the paper's side
    (1.0, 3.0, "better", "contradicts"),
    (-3.0, 1.0, "better", "inconclusive"),  # crosses zero
    (-0.1, 0.1, "better", "same"),          # a difference the paper would have reported is excluded
    (-0.1, 0.1, "same", "same"),
    (0.05, 0.4, "same", "inconclusive"),    # excludes zero, but spans the margin
    (0.3, 0.9, "same", "contradicts"),      # wholly outside the paper's margin
    (-3.0, 1.0, "same", "inconclusive"),    # "within noise" is not agreement
    (1.0, 3.0, "not in paper", "worse"),
    (-3.0, 1.0, "not in paper", "inconclusive"),
])
def test_verdicts(low, high, paper, expected):
    mean = (low + high) / 2
    iv = S.Interval(mean, (high - low) / 4, 10, low, high, 3, "paired")
    assert S.verdict(iv, paper, margin=0.2, lower_is_better=True) == expected


def test_bleu_direction_is_the_other_way():
    iv = S.Interval(2.0, 0.5, 10, 1.0, 3.0, 3, "paired")
    assert S.verdict(iv, "better", margin=0.2, lower_is_better=False) == "reproduces"


@pytest.mark.parametrize("call", [
    lambda: S.paired([1.0], [2.0]),
    lambda: S.paired([1.0, 2.0], [1.0, 2.0, 3.0]),
    lambda: S.welch([1.0], [2.0, 3.0]),
    lambda: S.paired([1.0, float("nan")], [1.0, 2.0]),
    lambda: S.t_quantile(0),
    lambda: S.one_run([1.0], 2.0),
    lambda: S.pooled_paired({"x": ([1.0], [2.0])}),
])
def test_bad_input_is_refused(call):
    with pytest.raises(ValueError):
        call()


def test_text():
    assert S.Interval(1.234, 0.5, 4, -0.1, 2.5, 3, "paired").text(1) == "+1.2 [-0.1, +2.5]"
    assert statistics.mean(VARIANT) < statistics.mean(BASE)


def test_variance_ratio_by_hand():
    # variances 1 and 20/3: F = 0.15 on (2, 3) degrees of freedom, and with 2 numerator degrees of freedom the F
    # distribution has a closed form, P(F <= x) = 1 - (1 + 2x/d2)^(-d2/2): 1 - 1.1^-1.5 = 0.13322
    ratio, p = S.variance_ratio([1.0, 2.0, 3.0], [0.0, 2.0, 4.0, 6.0])
    assert ratio == pytest.approx(0.15) and p == pytest.approx(2 * (1 - 1.1 ** -1.5), rel=1e-9)
    back, p_back = S.variance_ratio([0.0, 2.0, 4.0, 6.0], [1.0, 2.0, 3.0])  # the other way round: the same test
    assert back == pytest.approx(1 / 0.15) and p_back == pytest.approx(p, rel=1e-9)
    # the textbook's 97.5 % point of F(9, 9), 4.026: a two-sided p of 0.05
    a = [0.0, 1.0] * 5
    b = [x * math.sqrt(4.026) for x in a]
    assert S.variance_ratio(b, a)[1] == pytest.approx(0.05, abs=2e-4)
    assert S.variance_ratio(a, a) == pytest.approx((1.0, 1.0))
    for bad in (lambda: S.variance_ratio([1.0], [1.0, 2.0]), lambda: S.variance_ratio([1.0, 1.0], [1.0, 2.0])):
        with pytest.raises(ValueError):
            bad()


# ------------------------------------------------------------------ the randomized-block model, Satterthwaite
import pandas as pd  # noqa: E402  (statsmodels' formulas read a data frame)
import statsmodels.formula.api as statsmodels  # noqa: E402  (the dev extra installs it: a reference nobody here wrote)

TABLE = {"base": {0: 30.1, 1: 33.0, 2: 28.7}, "a": {0: 27.9, 1: 31.2, 2: 29.4},
         "b": {0: 35.2, 1: 36.1, 2: 33.8}, "c": {0: 29.0, 1: 33.9}}  # c lacks seed 2: an incomplete block


@pytest.mark.parametrize("table", [{k: v for k, v in TABLE.items() if k != "c"}, TABLE])
def test_block_matches_statsmodels_ols(table):
    # the same additive model fitted by statsmodels: value ~ C(treatment, base first) + C(seed)
    rows = [{"t": t, "seed": s, "y": v} for t, runs in table.items() for s, v in runs.items()]
    fit = statsmodels.ols("y ~ C(t, Treatment('base')) + C(seed)", data=pd.DataFrame(rows)).fit()
    ci = fit.conf_int(0.05)
    got = S.block(table, "base")
    assert set(got) == set(table) - {"base"}
    for t, iv in got.items():
        name = f"C(t, Treatment('base'))[T.{t}]"
        assert iv.mean == pytest.approx(fit.params[name], abs=1e-10)
        assert iv.se == pytest.approx(fit.bse[name], rel=1e-9)
        assert iv.df == fit.df_resid and iv.kind == "block"
        assert (iv.low, iv.high) == pytest.approx((ci.loc[name, 0], ci.loc[name, 1]), rel=1e-9)
        assert iv.p == pytest.approx(fit.pvalues[name], rel=1e-7)


def test_block_complete_by_hand():
    # complete blocks: the difference is the mean paired difference; SE = sqrt(2 s^2 / n), s^2 the residual mean
    # square on (t - 1)(n - 1) degrees of freedom
    table = {k: v for k, v in TABLE.items() if k != "c"}
    y = np.array([[table[t][s] for s in range(3)] for t in ("base", "a", "b")])
    resid = y - y.mean(1, keepdims=True) - y.mean(0, keepdims=True) + y.mean()
    s2 = (resid ** 2).sum() / 4
    iv = S.block(table, "base")["a"]
    assert iv.mean == pytest.approx(statistics.mean(table["a"][s] - table["base"][s] for s in range(3)))
    assert iv.se == pytest.approx(math.sqrt(2 * s2 / 3)) and iv.df == 4


def test_block_refuses_what_it_cannot_fit():
    with pytest.raises(ValueError, match="base"):
        S.block(TABLE, "nope")
    with pytest.raises(ValueError, match="cannot separate"):
        S.block({"base": {0: 1.0}, "a": {1: 2.0}}, "base")  # no seed shared: treatment and seed confounded


def test_satterthwaite_df_is_welchs():
    a, b = [13.1, 13.6, 12.9, 13.4, 13.3], [12.2, 13.9, 14.1, 12.5]
    terms = [(statistics.variance(a) / 5, 4), (statistics.variance(b) / 4, 3)]
    assert S.satterthwaite_df(terms) == pytest.approx(S.welch(a, b).df, rel=1e-12)
    assert S.satterthwaite_df([(2.0, 7)]) == pytest.approx(7)  # one term: its own degrees of freedom
    with pytest.raises(ValueError):
        S.satterthwaite_df([(1.0, 0)])


# ------------------------------------------------------------------ Fieller's ratio interval
def test_fieller_endpoints_invert_the_t_test():
    # each end is a rho at which the t test of mean(b) - rho mean(a) sits exactly on the t quantile
    a, b = [20.1, 22.3, 19.4], [23.9, 21.0, 26.2]
    r = S.ratio(a, b)
    va, vb = statistics.variance(a) / 3, statistics.variance(b) / 3
    q = S.t_quantile(r.df)
    for rho in (r.low, r.high):
        t = (statistics.mean(b) - rho * statistics.mean(a)) / math.sqrt(vb + rho * rho * va)
        assert abs(t) == pytest.approx(q, rel=1e-10)
    assert r.low < r.estimate < r.high and r.kind == "fieller welch"
    assert r.df == pytest.approx(S.welch(a, b).df)


def test_fieller_reference_values_from_the_records():
    # computed independently for issue 60 from the records of chapter 24 (package over loop, in % of the loop):
    # French BLEU [-10.5, +36.5] %, French length ratio [-24, +97] %, excluded perplexity deficits 6.4 % (German)
    # and 9.7 % (French)
    sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
    import report_translation as R
    s = R.multilingual_summary()
    pct = lambda pair, m: S.ratio(*(R.measure_values(s[pair][p], m) for p in ("loop", "package"))).pct()
    assert [round(x, 1) for x in pct("fr-en", "bleu")[1:]] == [-10.5, 36.5]
    assert [round(x) for x in pct("fr-en", "ratio")[1:]] == [-24, 97]
    assert round(pct("de-en", "ppl")[2], 1) == 6.4 and round(pct("fr-en", "ppl")[2], 1) == 9.7


def test_fieller_one_run_and_unbounded():
    r = S.ratio([10.0, 11.0, 12.0], [13.2])  # one more run: var s^2 (1 + rho^2/n) on n - 1 df
    q = S.t_quantile(2)
    for rho in (r.low, r.high):
        assert abs(13.2 - rho * 11.0) / math.sqrt(1.0 + rho * rho / 3) == pytest.approx(q, rel=1e-10)
    noisy = S.ratio([0.5, -0.4, 0.2], [1.0, 1.1, 0.9])  # a denominator not told from zero: no bounded interval
    assert not noisy.bounded and noisy.pct()[1] is None


# ------------------------------------------------------------------ multiplicity
PS = [0.010, 0.040, 0.030, 0.005, 0.200, 0.046]


def test_holm_and_bh_match_statsmodels():
    from statsmodels.stats.multitest import multipletests
    assert S.holm(PS) == pytest.approx(list(multipletests(PS, method="holm")[1]), rel=1e-12)
    assert S.bh(PS) == pytest.approx(list(multipletests(PS, method="fdr_bh")[1]), rel=1e-12)
    assert S.holm([0.03]) == [0.03] and S.bh([0.03]) == [0.03]  # a family of one: unchanged


def test_holm_by_hand():
    # sorted 0.005, 0.010, 0.030, 0.040, 0.046, 0.200 times 6, 5, 4, 3, 2, 1, kept increasing
    assert S.holm(PS) == pytest.approx([0.05, 0.12, 0.12, 0.03, 0.2, 0.12])


def test_verdict_p_is_below_alpha_exactly_when_decided():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        mean, se, df = rng.normal(0, 2), rng.uniform(0.05, 2), int(rng.integers(1, 40))
        half = S.t_quantile(df) * se
        iv = S.Interval(mean, se, df, mean - half, mean + half, 3, "paired")
        paper = ["better", "worse", "same", "not in paper"][int(rng.integers(4))]
        margin = float(rng.uniform(0, 2))
        word = S.verdict(iv, paper, margin, bool(rng.integers(2)))
        p = S.verdict_p(iv, paper, margin, True)
        assert (p < 0.05) == (word != "inconclusive"), (iv, paper, margin, word, p)


def test_adjusted_verdicts_make_the_weak_ones_suggestive():
    words = ["reproduces", "contradicts", "inconclusive", "same"]
    assert S.adjusted_verdicts(words, [0.001, 0.03, 0.4, 0.02]) == \
        ["reproduces", "suggestive", "inconclusive", "suggestive"]  # Holm: 0.004, 0.06, 0.4, 0.06


def test_no_negative_zero_in_text():
    half = S.t_quantile(4) * 0.1
    iv = S.Interval(-0.04, 0.1, 4, -0.04 - half, -0.04 + half, 3, "paired")
    assert iv.text(1) == f"0.0 [{-0.04 - half:+.1f}, {-0.04 + half:+.1f}]" and "-0.0" not in iv.text(1)
    assert S.signed(-0.04, 1) == "0.0" and S.signed(-0.06, 1) == "-0.1" and S.signed(0.25, 1) == "+0.2"


def test_same_does_not_hide_a_difference_in_the_papers_direction():
    iv = S.Interval(0.3, 0.05, 10, 0.19, 0.41, 3, "paired")  # inside a margin of 1, and above zero
    assert S.verdict(iv, "worse", 1.0, lower_is_better=True) == "reproduces"
    assert S.verdict(iv, "better", 1.0, lower_is_better=True) == "contradicts"
    assert S.verdict(iv, "same", 1.0, lower_is_better=True) == "same"

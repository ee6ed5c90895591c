"""Intervals and verdicts for comparisons over seeds: the one statistics helper of the experiments (chapters 24,
25, 26 and 28).

Every difference is *variant minus base* (or *b minus a*), with a t-based 95 % confidence interval:

    paired(base, variant)         seed by seed: the mean of the differences, SE = sd/sqrt(n), n - 1 degrees of freedom
    welch(a, b)                   independent samples: Welch's SE and Welch-Satterthwaite degrees of freedom
    student(a, b)                 independent samples with one pooled variance, n_a + n_b - 2 degrees of freedom
    one_run(base, value)          a single run against several base runs: the prediction interval of one more base
                                  run, SE = sd(base) * sqrt(1 + 1/n), n - 1 degrees of freedom
    pooled_paired(rows)           several rows paired with the same base: one variance of the differences pooled over
                                  the rows, sum(n_i - 1) degrees of freedom, each row's SE = s_pooled / sqrt(n_i)
    block(table, base)            several variants and one base, each run with the same seeds: the randomized-block
                                  model (seed as block, additive), each variant minus base with the residual
                                  variance of the whole table, on its residual degrees of freedom (least squares:
                                  a row that lacks a seed is allowed)
    satterthwaite_df(terms)       the Welch-Satterthwaite degrees of freedom of a sum of variance estimates
    ratio(a, b)                   mean(b) / mean(a) with Fieller's interval (independent samples, Welch's variances
                                  and degrees of freedom; a single run of b: the one_run variance); `pct` gives
                                  it in % of a
    permutation_p(a, b, paired)   exact two-sided permutation test (every sign flip, or every relabelling)
    holm(ps), bh(ps)              p-values adjusted for a family of tests: Holm's step-down (controls the chance of
                                  any false verdict) and Benjamini-Hochberg (controls their expected share)
    verdict_p(...)                the p-value of a verdict: below 1 - LEVEL exactly when the interval decides it
    variance_ratio(a, b)          var(a) / var(b) and the two-sided F test of equal spreads
    verdict(interval, paper, margin, lower_is_better)
                                  'reproduces', 'contradicts', 'inconclusive' or 'same' (see `verdict`)

The t quantiles and p-values come from scipy; tests/test_stats.py checks the intervals against scipy's own tests
(`ttest_rel`, `ttest_ind(equal_var=False)`, `permutation_test`) and against cases small enough to do by hand.
"""
from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass

from scipy import stats as _scipy

LEVEL = 0.95  # every interval of the book


@dataclass(frozen=True)
class Interval:
    "A difference with its standard error, degrees of freedom and t-based confidence interval."
    mean: float  # the difference: variant minus base (b minus a)
    se: float  # its standard error
    df: float  # degrees of freedom of the t distribution (Welch: not a whole number)
    low: float
    high: float
    n: int  # pairs (paired) or the smaller sample (Welch)
    kind: str  # 'paired', 'welch', 'student', 'pooled paired', 'one run' or 'block'

    @property
    def t(self) -> float:
        return self.mean / self.se if self.se > 0 else math.copysign(math.inf, self.mean) if self.mean else 0.0

    @property
    def p(self) -> float:
        "Two-sided p-value of the t test of no difference."
        return float(2 * _scipy.t.sf(abs(self.t), self.df)) if self.se > 0 else float(self.mean == 0)

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def within(self, margin: float) -> bool:
        "The whole interval inside [-margin, +margin]: a difference larger than the margin is excluded."
        return -margin <= self.low and self.high <= margin

    def text(self, digits: int = 2, unit: str = "") -> str:
        "'+1.23 [-0.45, +2.91]' (UNIT after each number, e.g. ' %'); a number that rounds to zero is '0.00', unsigned."
        f = lambda x: signed(x, digits) + unit
        return f"{f(self.mean)} [{f(self.low)}, {f(self.high)}]"


def signed(x: float, digits: int) -> str:
    "X with its sign at DIGITS decimals ('+1.2', '-0.3'), and '0.0' without a sign where it rounds to zero."
    text = f"{x:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def t_quantile(df: float, level: float = LEVEL) -> float:
    "The two-sided LEVEL quantile of Student's t with DF degrees of freedom (12.706 for df 1, 2.093 for df 19)."
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    return float(_scipy.t.ppf(0.5 + level / 2, df))


def _interval(mean: float, se: float, df: float, n: int, kind: str, level: float) -> Interval:
    half = t_quantile(df, level) * se
    return Interval(mean, se, df, mean - half, mean + half, n, kind)


def _values(x) -> list[float]:
    values = list(x.values()) if isinstance(x, dict) else list(x)
    if any(not isinstance(v, (int, float)) or math.isnan(v) for v in values):
        raise ValueError(f"every value must be a number, got {values}")
    return [float(v) for v in values]


def differences(base, variant) -> list[float]:
    """variant - base, seed by seed. Dicts {seed: value} are matched on their common seeds (at least two);
    lists must have the same length and the same seeds in the same order."""
    if isinstance(base, dict) and isinstance(variant, dict):
        common = sorted(set(base) & set(variant))
        return [float(variant[s]) - float(base[s]) for s in common]
    a, b = _values(base), _values(variant)
    if len(a) != len(b):
        raise ValueError(f"paired samples must have the same length, got {len(a)} and {len(b)}")
    return [y - x for x, y in zip(a, b)]


def paired(base, variant, level: float = LEVEL) -> Interval:
    "The mean paired difference variant - base with its t interval on n - 1 degrees of freedom."
    d = differences(base, variant)
    if len(d) < 2:
        raise ValueError(f"a paired interval needs at least two pairs, got {len(d)}")
    return _interval(statistics.mean(d), statistics.stdev(d) / math.sqrt(len(d)), len(d) - 1, len(d), "paired",
                     level)


def welch(a, b, level: float = LEVEL) -> Interval:
    "mean(b) - mean(a) for independent samples, with Welch's standard error and degrees of freedom."
    a, b = _values(a), _values(b)
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"Welch's interval needs at least two values on each side, got {len(a)} and {len(b)}")
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        raise ValueError("both samples are constant: no spread to build an interval from")
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return _interval(statistics.mean(b) - statistics.mean(a), se, df, min(len(a), len(b)), "welch", level)


def one_run(base, value: float, level: float = LEVEL) -> Interval:
    """VALUE (one run of a variant) minus the mean of BASE (two or more runs): its interval is that of one more
    base run, the base's own spread with SE = sd(base) * sqrt(1 + 1/n) on n - 1 degrees of freedom."""
    base = _values(base)
    if len(base) < 2:
        raise ValueError(f"one run is judged against the spread of two or more base runs, got {len(base)}")
    se = statistics.stdev(base) * math.sqrt(1 + 1 / len(base))
    return _interval(float(value) - statistics.mean(base), se, len(base) - 1, 1, "one run", level)


def student(a, b, level: float = LEVEL) -> Interval:
    """mean(b) - mean(a) for independent samples assumed to spread alike: one variance pooled from both,
    SE = s_pooled * sqrt(1/n_a + 1/n_b), on n_a + n_b - 2 degrees of freedom (Student's two-sample t)."""
    a, b = _values(a), _values(b)
    if len(a) < 2 or len(b) < 2 or len(a) + len(b) < 3:
        raise ValueError(f"a pooled two-sample interval needs two or more values on each side, "
                         f"got {len(a)} and {len(b)}")
    df = len(a) + len(b) - 2
    var = ((len(a) - 1) * statistics.variance(a) + (len(b) - 1) * statistics.variance(b)) / df
    se = math.sqrt(var * (1 / len(a) + 1 / len(b)))
    return _interval(statistics.mean(b) - statistics.mean(a), se, df, min(len(a), len(b)), "student", level)


def pooled_variance(rows: dict[str, list[float]]) -> tuple[float, int]:
    """The variance of the paired differences pooled over ROWS ({row: differences}), weighted by each row's degrees
    of freedom, and the pooled degrees of freedom sum(n_i - 1). Rows with fewer than two differences add nothing."""
    df = sum(len(d) - 1 for d in rows.values() if len(d) >= 2)
    if df < 1:
        raise ValueError("pooling needs at least one row with two or more differences")
    ss = sum((len(d) - 1) * statistics.variance(d) for d in rows.values() if len(d) >= 2)
    return ss / df, df


def equal_spreads(rows: dict[str, list[float]]) -> dict:
    """Whether the paired differences of ROWS ({row: differences}) spread alike, as a pooled or block model assumes:
    Bartlett's test of equal variances (scipy) and the largest variance over the smallest (inf if one is 0)."""
    variances = [statistics.variance(d) for d in rows.values()]
    return {"bartlett_p": float(_scipy.bartlett(*rows.values()).pvalue),
            "largest_over_smallest": max(variances) / min(variances) if min(variances) > 0 else math.inf}


def pooled_paired(rows: dict[str, tuple], level: float = LEVEL) -> dict[str, Interval]:
    """Each row's paired difference with one pooled variance: ROWS is {row: (base, variant)} (lists or {seed:
    value} dicts), every row paired with its base. Assumes the differences of every row spread alike; the rows
    share their base runs, so their intervals are not independent of each other."""
    diffs = {name: differences(base, variant) for name, (base, variant) in rows.items()}
    var, df = pooled_variance(diffs)
    return {name: _interval(statistics.mean(d), math.sqrt(var / len(d)), df, len(d), "pooled paired", level)
            for name, d in diffs.items() if d}


def permutation_p(a, b, paired_samples: bool) -> float:
    """Exact two-sided p-value of the difference in means b - a under every relabelling: with PAIRED_SAMPLES every
    sign flip of the differences (2^n of them), otherwise every split of the pooled values into groups of the two
    sizes. The smallest possible p is 2/2^n paired (0.25 for three seeds) and 2/C(n_a + n_b, n_a) otherwise."""
    if paired_samples:
        d = differences(a, b)
        observed = abs(sum(d))
        flips = itertools.product((1, -1), repeat=len(d))
        stats_ = [abs(sum(s * x for s, x in zip(signs, d))) for signs in flips]
    else:
        a, b = _values(a), _values(b)
        pooled, na = a + b, len(a)
        observed = abs(statistics.mean(b) - statistics.mean(a))
        stats_ = []
        for group in itertools.combinations(range(len(pooled)), na):
            inside = set(group)
            ga = [pooled[i] for i in group]
            gb = [pooled[i] for i in range(len(pooled)) if i not in inside]
            stats_.append(abs(statistics.mean(gb) - statistics.mean(ga)))
    tolerance = 1e-12 * max(1.0, observed)
    return sum(s >= observed - tolerance for s in stats_) / len(stats_)


def block(table: dict, base: str, level: float = LEVEL) -> dict[str, Interval]:
    """The randomized-block analysis of TABLE ({treatment: {seed: value}}, BASE one of its treatments): the additive
    model value = treatment + seed + error, fitted by least squares, one error variance for every treatment. Each
    other treatment's difference from BASE is its coefficient, with the standard error the fit gives it and the
    residual degrees of freedom (runs - treatments - seeds + 1 when every treatment has every seed). With every
    seed in every row the difference is the mean paired difference; the standard error is sqrt(2 s^2 / n).
    Seed luck shared by all the treatments of a seed (the batches' order, where the shapes agree the initial
    weights) is removed as the seed's effect; what is left must spread alike in every treatment (check it)."""
    import numpy as np
    if base not in table:
        raise ValueError(f"the base {base!r} is not in the table")
    rows = [(t, s, float(v)) for t, runs in table.items() for s, v in runs.items()]
    treatments = [base] + sorted({t for t, _, _ in rows} - {base})
    seeds = sorted({s for _, s, _ in rows})
    X = np.zeros((len(rows), len(treatments) + len(seeds) - 1))
    for i, (t, s, _) in enumerate(rows):
        X[i, 0] = 1.0  # the base's mean at the first seed
        if t != base:
            X[i, treatments.index(t)] = 1.0
        if s != seeds[0]:
            X[i, len(treatments) - 1 + seeds.index(s)] = 1.0
    y = np.array([v for _, _, v in rows])
    rank = np.linalg.matrix_rank(X)
    df = int(len(rows) - rank)
    if rank < X.shape[1] or df < 1:
        raise ValueError(f"the table cannot separate treatments from seeds ({len(rows)} runs, rank {rank})")
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    s2 = float(((y - X @ coef) ** 2).sum()) / df
    cov = s2 * np.linalg.inv(X.T @ X)
    return {t: _interval(float(coef[i]), math.sqrt(cov[i, i]), df, len(table[t]), "block", level)
            for i, t in enumerate(treatments) if t != base}


def satterthwaite_df(terms) -> float:
    """The degrees of freedom of a sum of independent variance estimates, TERMS [(estimate, its degrees of
    freedom)], by Welch and Satterthwaite: (sum v)^2 / sum(v^2 / df). Welch's df is this with the two samples'
    s^2/n."""
    terms = [(float(v), float(d)) for v, d in terms]
    if not terms or any(d <= 0 or v < 0 for v, d in terms) or sum(v for v, _ in terms) == 0:
        raise ValueError(f"need variance estimates >= 0, not all 0, on positive degrees of freedom, got {terms}")
    return sum(v for v, _ in terms) ** 2 / sum(v * v / d for v, d in terms)


@dataclass(frozen=True)
class Ratio:
    "mean(b) / mean(a) with Fieller's confidence interval (low, high: None where the interval is unbounded)."
    estimate: float
    low: float | None
    high: float | None
    df: float
    kind: str  # 'fieller welch' or 'fieller one run'

    def pct(self) -> tuple[float, float | None, float | None]:
        "The ratio and its interval as a change in % of a: 100 (ratio - 1)."
        f = lambda r: None if r is None else 100 * (r - 1)
        return f(self.estimate), f(self.low), f(self.high)

    @property
    def bounded(self) -> bool:
        return self.low is not None and self.high is not None


def ratio(a, b, level: float = LEVEL) -> Ratio:
    """mean(b) / mean(a) with Fieller's interval: every rho for which the t test of mean(b) - rho mean(a) = 0 does
    not reject at LEVEL. The two samples are independent, with Welch's variances s^2/n and Welch's degrees of freedom
    (those of the difference b - a, so that the ratio and the difference are judged alike); a single value of b is one more run, with
    a's variance (one_run): var = s_a^2 (1 + rho^2 / n_a) on n_a - 1 degrees of freedom. Unlike dividing the
    interval of the difference by mean(a), this counts the uncertainty of the denominator: the interval is not
    symmetric, and it is unbounded when mean(a) itself is not distinguishable from zero."""
    a, b = _values(a), _values(b)
    if len(a) < 2:
        raise ValueError(f"a ratio interval needs two or more values of the denominator, got {len(a)}")
    ma, mb = statistics.mean(a), statistics.mean(b)
    if ma == 0:
        raise ValueError("the denominator's mean is zero")
    if len(b) >= 2:
        va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
        df = satterthwaite_df([(vb, len(b) - 1), (va, len(a) - 1)])  # Welch's, of the difference b - a
        kind = "fieller welch"
    elif len(b) == 1:
        va, vb = statistics.variance(a) / len(a), statistics.variance(a)
        df, kind = len(a) - 1, "fieller one run"
    else:
        raise ValueError("the numerator has no values")
    t2 = t_quantile(df, level) ** 2
    # (mb - rho ma)^2 = t2 (vb + rho^2 va): A rho^2 - 2 B rho + C = 0
    A, B, C = ma * ma - t2 * va, ma * mb, mb * mb - t2 * vb
    disc = B * B - A * C
    if A <= 0:  # the denominator is not distinguishable from zero: no bounded interval
        return Ratio(mb / ma, None, None, df, kind)
    root = math.sqrt(max(disc, 0.0))
    return Ratio(mb / ma, (B - root) / A, (B + root) / A, df, kind)


def holm(ps) -> list[float]:
    """Holm's step-down adjustment of a family's p-values: the k-th smallest times (m - k + 1), kept increasing,
    at most 1. A test is decided at level alpha when its adjusted p <= alpha; the chance of one or more false
    decisions in the family is then at most alpha, whatever the tests' dependence."""
    ps = [float(p) for p in ps]
    m, out, running = len(ps), [0.0] * len(ps), 0.0
    for k, i in enumerate(sorted(range(m), key=lambda i: ps[i])):
        running = max(running, min(1.0, (m - k) * ps[i]))
        out[i] = running
    return out


def bh(ps) -> list[float]:
    """Benjamini-Hochberg's adjustment: the k-th smallest p times m / k, kept increasing from the largest down, at
    most 1. Deciding where it is <= q keeps the expected share of false decisions at most q (independent or
    positively dependent tests)."""
    ps = [float(p) for p in ps]
    m, out, running = len(ps), [0.0] * len(ps), 1.0
    order = sorted(range(m), key=lambda i: ps[i])
    for k in range(m - 1, -1, -1):
        i = order[k]
        running = min(running, ps[i] * m / (k + 1))
        out[i] = min(1.0, running)
    return out


OUTCOMES = ("reproduces", "contradicts", "inconclusive", "same")
DECIDED = ("reproduces", "contradicts", "same", "better", "worse")


def verdict(interval: Interval, paper: str, margin: float, lower_is_better: bool) -> str:
    """What the interval says of the paper's claim PAPER: 'better', 'worse', 'same' (no difference beyond MARGIN,
    the paper's own resolution) or 'not in paper'.

    - 'same': the whole interval lies inside [-MARGIN, +MARGIN]; a difference the paper would have reported is
      excluded. This agrees with a paper's 'same' and is the opposite of a paper's 'better' or 'worse' (unless the
      interval also excludes zero on the paper's side: a difference smaller than the paper's, in its direction,
      'reproduces').
    - 'reproduces': the interval excludes zero on the paper's side.
    - 'contradicts': the interval excludes zero on the other side; or the paper saw no difference and the whole
      interval lies outside its margin.
    - 'inconclusive': anything else (the interval crosses zero, or spans the margin). Not agreement.
    Where the paper makes no claim ('not in paper'), the answer is the direction measured: 'better', 'worse',
    'same' or 'inconclusive'."""
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    if interval.within(margin) and not (paper in ("better", "worse") and interval.excludes_zero()):
        return "same"
    if paper == "same":
        outside = interval.low > margin or interval.high < -margin
        return "contradicts" if outside else "inconclusive"
    if not interval.excludes_zero():
        return "inconclusive"
    measured = "better" if (interval.high < 0) == lower_is_better else "worse"
    if paper not in ("better", "worse"):
        return measured
    return "reproduces" if measured == paper else "contradicts"


def variance_ratio(a, b) -> tuple[float, float]:
    """var(a) / var(b), the ratio of the two samples' variances (the square of the ratio of their standard
    deviations), and the two-sided p-value of the F test of equal variances on (n_a - 1, n_b - 1) degrees of
    freedom: twice the smaller tail, at most 1. The F test assumes that both samples are normal and is sensitive to
    outliers; a permutation test of the spreads is the check that does not lean on that."""
    a, b = _values(a), _values(b)
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"a variance ratio needs at least two values on each side, got {len(a)} and {len(b)}")
    va, vb = statistics.variance(a), statistics.variance(b)
    if va == 0 or vb == 0:
        raise ValueError("a constant sample has no spread to compare")
    ratio, dfa, dfb = va / vb, len(a) - 1, len(b) - 1
    return ratio, float(min(1.0, 2 * min(_scipy.f.cdf(ratio, dfa, dfb), _scipy.f.sf(ratio, dfa, dfb))))


def verdict_p(interval: Interval, paper: str, margin: float, lower_is_better: bool) -> float:
    """The p-value of the test behind `verdict`: below 1 - LEVEL exactly when the verdict is decided (anything but
    'inconclusive'), so that a family's verdicts can be adjusted together (`holm`). Two-sided in the interval's
    sense: for a difference, the t test of no difference; for 'same', twice the larger of the two one-sided tests
    against -MARGIN and +MARGIN (equivalence); for 'contradicts' of a paper's 'same', twice the one-sided test
    against the nearer margin. An inconclusive verdict gets the smallest of these (it is not decided either way)."""
    word = verdict(interval, paper, margin, lower_is_better)
    if interval.se == 0:
        return 0.0 if word != "inconclusive" else 1.0
    one = lambda x: float(_scipy.t.sf(x, interval.df))  # P(T > x)
    p_zero = 2 * one(abs(interval.mean) / interval.se)
    p_same = 2 * max(one((interval.mean + margin) / interval.se), one((margin - interval.mean) / interval.se))
    p_out = 2 * one((abs(interval.mean) - margin) / interval.se)
    if word == "same":
        return min(1.0, p_same)
    if paper == "same" and word == "contradicts":
        return min(1.0, p_out)
    if word != "inconclusive":
        return min(1.0, p_zero)
    return min(1.0, p_same, p_out if paper == "same" else p_zero)


def adjusted_verdicts(verdicts: list[str], ps: list[float], level: float = LEVEL) -> list[str]:
    """A family's VERDICTS after Holm's adjustment of their p-values PS (`verdict_p`): a decided verdict whose
    adjusted p exceeds 1 - LEVEL becomes 'suggestive'; the others stay."""
    alpha = 1 - level
    return [v if v not in DECIDED or p <= alpha + 1e-12 else "suggestive" for v, p in zip(verdicts, holm(ps))]

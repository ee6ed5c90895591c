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
    permutation_p(a, b, paired)   exact two-sided permutation test (every sign flip, or every relabelling)
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
    kind: str  # 'paired', 'welch', 'student', 'pooled paired' or 'one run'

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
        "'+1.23 [-0.45, +2.91]' (UNIT after each number, e.g. ' %')."
        return (f"{self.mean:+.{digits}f}{unit} [{self.low:+.{digits}f}{unit}, "
                f"{self.high:+.{digits}f}{unit}]")


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


OUTCOMES = ("reproduces", "contradicts", "inconclusive", "same")


def verdict(interval: Interval, paper: str, margin: float, lower_is_better: bool) -> str:
    """What the interval says of the paper's claim PAPER: 'better', 'worse', 'same' (no difference beyond MARGIN,
    the paper's own resolution) or 'not in paper'.

    - 'same': the whole interval lies inside [-MARGIN, +MARGIN]; a difference the paper would have reported is
      excluded. This agrees with a paper's 'same' and is the opposite of a paper's 'better' or 'worse'.
    - 'reproduces': the interval excludes zero on the paper's side.
    - 'contradicts': the interval excludes zero on the other side; or the paper saw no difference and the whole
      interval lies outside its margin.
    - 'inconclusive': anything else (the interval crosses zero, or spans the margin). Not agreement.
    Where the paper makes no claim ('not in paper'), the answer is the direction measured: 'better', 'worse',
    'same' or 'inconclusive'."""
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    if interval.within(margin):
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

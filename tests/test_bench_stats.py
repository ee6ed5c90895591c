"""The 95 % intervals of bench/inner_dropout.py: its table of Student's t quantiles against the t density, integrated
here, and its paired and pooled intervals against the textbook formulas on numbers small enough to check by hand."""
import importlib.util
import math
from pathlib import Path

import pytest

spec = importlib.util.spec_from_file_location("inner_dropout", Path(__file__).parent.parent / "bench" / "inner_dropout.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def t_probability_within(q: float, df: int, steps: int = 200_000) -> float:
    "P(|T| <= q) for Student's t with df degrees of freedom: the density integrated by Simpson's rule."
    c = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
    f = lambda x: c * (1 + x * x / df) ** (-(df + 1) / 2)  # noqa: E731
    h = q / steps
    s = f(0) + f(q) + sum((4 if k % 2 else 2) * f(k * h) for k in range(1, steps))
    return 2 * s * h / 3


@pytest.mark.parametrize("df", sorted(bench.T975))
def test_t_quantiles_hold_95_percent(df):
    assert t_probability_within(bench.T975[df], df) == pytest.approx(0.95, abs=2e-4)


def test_paired_and_pooled_intervals():
    paired = bench.paired_interval([1.0, 2.0, 3.0], [2.0, 2.0, 5.0])  # differences 1, 0, 2: mean 1, sd 1
    assert paired["mean"] == pytest.approx(1.0) and paired["se"] == pytest.approx(1 / math.sqrt(3))
    assert paired["ci95"] == pytest.approx([1 - 4.303 / math.sqrt(3), 1 + 4.303 / math.sqrt(3)]) and paired["df"] == 2
    pooled = bench.pooled_interval([1.0, 3.0], [4.0, 6.0, 8.0])  # variances 2 and 4: pooled (2 + 8) / 3
    se = math.sqrt(10 / 3 * (1 / 2 + 1 / 3))
    assert pooled["mean"] == pytest.approx(4.0) and pooled["se"] == pytest.approx(se) and pooled["df"] == 3
    assert pooled["ci95"] == pytest.approx([4 - 3.182 * se, 4 + 3.182 * se])

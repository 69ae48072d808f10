"""p-values, triad accuracy, breakdowns and the RadCliQ-style composite."""

import numpy as np
import pytest
from scipy import stats

from train.evaluation.composite import Composite, evaluate_composite
from train.evaluation.metaeval import agreement, breakdown, correlation_test, correlation_with_ci, group_split, triad_accuracy


def test_correlation_test_is_scipys_statistic_and_p_value():
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    y = x + rng.normal(scale=0.5, size=40)
    for method, fn in [("kendall", stats.kendalltau), ("spearman", stats.spearmanr), ("pearson", stats.pearsonr)]:
        stat, p = correlation_test(x, y, method)
        ref = fn(x, y)
        assert stat == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)
        assert p < 1e-4
    assert all(np.isnan(v) for v in correlation_test([1, 1, 1], [1, 2, 3], "kendall"))


def test_agreement_signs_the_value_and_the_ci_but_not_the_p_value():
    x = np.arange(30.0)
    y = -x + np.tile([0.0, 3.0, -3.0], 10)
    groups = [str(k // 3) for k in range(30)]
    res = agreement(x, y, groups, methods=("kendall", "pearson"), n_resamples=50, sign=-1.0)
    assert res["kendall"]["value"] > 0.8 and res["kendall"]["low"] <= res["kendall"]["value"] <= res["kendall"]["high"]
    assert res["pearson"]["p_value"] == pytest.approx(stats.pearsonr(x, y).pvalue)


def test_triad_accuracy_counts_strict_wins_and_ties_as_misses():
    assert triad_accuracy([0.9, 0.5, 0.4, 0.7], [0.1, 0.5, 0.6, 0.2]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no triads"):
        triad_accuracy([], [])


def test_breakdown_per_key_and_too_small_keys_say_why():
    rng = np.random.default_rng(1)
    x = rng.normal(size=60)
    y = x + rng.normal(scale=0.3, size=60)
    groups = [str(k // 2) for k in range(60)]
    keys = ["CT"] * 30 + ["MRI"] * 25 + ["US"] * 5
    out = breakdown(x, y, groups, keys, "pearson", n_resamples=30)
    assert list(out) == ["CT", "MRI", "US"]
    expected = correlation_with_ci(x[:30], y[:30], groups[:30], "pearson", n_resamples=30)
    assert out["CT"]["value"] == pytest.approx(expected.value) and out["CT"]["n_pairs"] == 30
    assert np.isnan(out["US"]["value"]) and "too few" in out["US"]["note"] and out["US"]["n_pairs"] == 5


def test_composite_recovers_a_linear_rule_and_predicts_held_out_pairs():
    rng = np.random.default_rng(2)
    a, b, noise = rng.normal(2, 3, 200), rng.normal(-1, 0.5, 200), rng.normal(0, 0.01, 200)
    y = 1.5 + 2.0 * a - 4.0 * b + noise
    comp = Composite.fit({"a": a, "b": b}, y)
    # standardised coefficients = raw coefficients times the feature's standard deviation
    assert comp.coef == pytest.approx([2.0 * a.std(), -4.0 * b.std()], rel=1e-2)
    assert comp.predict({"a": a, "b": b}) == pytest.approx(y, abs=0.05)
    groups = [str(k // 4) for k in range(200)]
    train, test = group_split(groups, 0.2, seed=0)
    res = evaluate_composite({"a": a, "b": b}, y, groups, train, test, n_resamples=50)
    assert res["n_test"] == len(test) and res["kendall"]["value"] > 0.95
    assert res["composite"]["features"] == ["a", "b"]


def test_composite_refuses_bad_columns_naming_them():
    with pytest.raises(ValueError, match="'b' is not finite at pair 1"):
        Composite.fit({"a": [1.0, 2, 3, 4, 5], "b": [1.0, np.nan, 3, 4, 5]}, [1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="differ in length"):
        Composite.fit({"a": [1.0, 2, 3, 4], "b": [1.0, 2, 3]}, [1, 2, 3, 4])
    comp = Composite.fit({"a": [1.0, 2, 3, 4, 5]}, [2, 4, 6, 8, 10])
    with pytest.raises(KeyError, match="needs the metric columns"):
        comp.predict({"b": [1.0]})

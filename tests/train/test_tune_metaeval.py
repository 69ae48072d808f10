"""train.evaluation.metaeval: correlations, the split by group (never leaks) and the grouped bootstrap."""

import numpy as np
import pytest
from scipy import stats

from data.ratings import RatedPair
from train.evaluation.metaeval import (bootstrap_ci, correlation, correlation_with_ci, group_resamples, group_split,
                                       kendall_b_of_resamples, shared_groups)
from train.tune.config import SplitSettings
from train.tune.data import split_pairs


@pytest.mark.parametrize("ties", [False, True])
def test_correlations_are_scipys_and_undefined_is_nan(ties):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=50), rng.normal(size=50) * 1e6 + 3e8
    if ties:
        x, y = np.round(x), np.round(y, -6)
    assert correlation(x, y, "pearson") == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert correlation(x, y, "spearman") == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert correlation(x, y, "kendall") == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert correlation(x, 2 * x + 1, "pearson") == 1.0
    assert np.isnan(correlation(np.ones(5), np.arange(5), "pearson"))
    assert np.isnan(correlation([1.0], [2.0], "kendall"))
    with pytest.raises(ValueError, match="unknown correlation"):
        correlation(x, y, "cosine")


@pytest.mark.parametrize("seed", range(5))
def test_group_split_never_puts_a_group_on_both_sides(seed):
    rng = np.random.default_rng(seed)
    groups = [f"study{k}" for k in rng.integers(0, 37, size=300)]
    train, test = group_split(groups, 0.2, seed)
    assert shared_groups(groups, train, test) == []
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(len(groups)))  # nothing dropped
    n_groups = len(set(groups))
    assert len({groups[i] for i in test}) == round(0.2 * n_groups)


def test_group_split_is_seeded_and_independent_of_pair_order():
    groups = [f"g{k % 10}" for k in range(40)]
    a_train, a_test = group_split(groups, 0.2, 3)
    b_train, b_test = group_split(groups, 0.2, 3)
    assert a_test.tolist() == b_test.tolist()
    reordered = groups[::-1]
    _, r_test = group_split(reordered, 0.2, 3)
    assert {groups[i] for i in a_test} == {reordered[i] for i in r_test}
    others = [{groups[i] for i in group_split(groups, 0.2, seed)[1]} for seed in range(4, 9)]
    assert any(o != {groups[i] for i in a_test} for o in others)  # the seed matters
    with pytest.raises(ValueError, match="at least 2"):
        group_split(["one"] * 5)


def test_rexval_like_pairs_split_by_study():
    pairs = [RatedPair(f"s{s}:{c}", f"ref {s}", f"cand {s} {c}", float(c), f"s{s}")
             for s in range(50) for c in range(4)]
    split = split_pairs(pairs, SplitSettings("group", 0.2, 0))
    assert split.shared_groups == [] and len(split.test) == 40 and len(split.train) == 160
    train_studies = {pairs[i].group for i in split.train}
    assert all(pairs[i].group not in train_studies for i in split.test)


def test_published_split_reports_shared_groups():
    pairs = [RatedPair(str(k), "same reference", f"c{k}", float(k), "g", {"split": "train" if k < 3 else "test"})
             for k in range(4)]
    split = split_pairs(pairs, SplitSettings("published", 0.2, 0))
    assert split.train.tolist() == [0, 1, 2] and split.test.tolist() == [3] and split.shared_groups == ["g"]


def test_bootstrap_resamples_whole_groups_and_covers_the_value():
    rng = np.random.default_rng(1)
    groups = np.repeat([f"g{k}" for k in range(30)], 4)
    y = rng.normal(size=len(groups))
    x = y + rng.normal(scale=1.0, size=len(groups))
    result = correlation_with_ci(x, y, groups, "pearson", n_resamples=300, seed=0)
    assert result.low < result.value < result.high and result.n_groups == 30 and result.n_pairs == 120
    flipped = correlation_with_ci(x, y, groups, "pearson", n_resamples=300, seed=0, sign=-1.0)
    assert flipped.value == pytest.approx(-result.value)
    assert (flipped.low, flipped.high) == pytest.approx((-result.high, -result.low))
    assert np.isfinite(bootstrap_ci(x, y, groups, "kendall", n_resamples=50)[0])
    assert np.isnan(bootstrap_ci(np.ones(8), y[:8], groups[:8], "pearson", n_resamples=20)[0])  # constant scores


@pytest.mark.parametrize("case", ["ties", "continuous", "one group constant", "two groups"])
def test_kendall_of_every_resample_at_once_is_scipys_on_each_resample_to_the_last_bit(case, monkeypatch):
    """The bootstrap's Kendall, computed from each row's multiplicity in a resample, equals
    ``scipy.stats.kendalltau`` (tau-b) on the resample's own rows, bit for bit, nan where it is undefined;
    so the CI is the one a loop over the resamples gives."""
    from train.evaluation import metaeval

    rng = np.random.default_rng(3)
    n_groups = {"two groups": 2}.get(case, 25)
    groups = np.repeat([f"g{k}" for k in range(n_groups)], rng.integers(1, 6, size=n_groups))
    x, y = rng.normal(size=len(groups)), rng.normal(size=len(groups))
    if case in ("ties", "two groups"):
        x, y = np.round(2 * x) / 2, np.round(y)
    if case == "one group constant":
        x[groups == "g0"], y[groups == "g0"] = 0.5, 1.0
    batched = kendall_b_of_resamples(x, y, groups, 200, seed=4)
    looped = np.array([correlation(x[idx], y[idx], "kendall") for _, idx in group_resamples(groups, 200, seed=4)])
    assert np.array_equal(batched, looped, equal_nan=True)
    assert np.isfinite(looped).sum() >= 50
    if case == "two groups":
        assert np.isnan(looped).any()  # a resample that drew one group twice: x or y constant, or one row
    sign = -1.0  # the CI of -tau
    batched_ci = bootstrap_ci(x, y, groups, "kendall", 200, seed=4, sign=sign)
    monkeypatch.setattr(metaeval, "KENDALL_BATCH_MAX_PAIRS", 0)  # one scipy call per resample
    assert bootstrap_ci(x, y, groups, "kendall", 200, seed=4, sign=sign) == batched_ci


def test_bootstrap_over_groups_is_wider_than_over_pairs_when_groups_cluster():
    """Pairs of one group share a shift: resampling groups must see that dependence."""
    rng = np.random.default_rng(2)
    n_groups, size = 20, 10
    shift = np.repeat(rng.normal(size=n_groups), size)
    x = shift + 0.3 * rng.normal(size=n_groups * size)
    y = shift + 0.3 * rng.normal(size=n_groups * size)
    grouped = bootstrap_ci(x, y, np.repeat(np.arange(n_groups), size), "pearson", 400, seed=0)
    per_pair = bootstrap_ci(x, y, np.arange(n_groups * size), "pearson", 400, seed=0)
    assert grouped[1] - grouped[0] > 1.3 * (per_pair[1] - per_pair[0])


def test_the_search_generates_only_the_synthetic_folder_it_reads(tmp_path, monkeypatch, default_synthetic):
    """The sample search reads Task 2 (and the demo Task 3) from ``synthetic_rate_eval``: when that folder
    is missing it makes Task 1-3 alone, byte for byte as the default sets hold them, not the ER²Score and
    ClinicalBLEURT rows beside them; the default sets count as there, and a stale folder is remade."""
    import importlib

    from train.tune.config import DataSettings
    from train.tune.data import read_pairs, synthetic_sets

    gen = importlib.import_module("data.synth.generate")  # the module (data.synth.generate is its function)
    made = []
    real = gen.generate
    monkeypatch.setattr(gen, "generate", lambda *a, **k: made.append(a) or real(*a, **k))
    root = tmp_path / "synthetic"
    settings = DataSettings(format="rate_eval_task2", path=str(root / "synthetic_rate_eval"),
                            generate_synthetic=str(root))
    assert synthetic_sets(settings) == ["task1", "task2", "task3"]
    pairs = read_pairs(settings)
    assert len(pairs) == 600 and len(made) == 1 and made[0][2] == {
        "rexval": 0, "task1": 400, "task2": 600, "task3": 150, "er2": 0, "bleurt": 0}
    assert not (root / "synthetic_er2" / "radcliq_synthetic.jsonl").read_text()  # said empty, not made
    ours = root / "synthetic_rate_eval"
    theirs = default_synthetic / "synthetic_rate_eval"
    assert {p.relative_to(ours): p.read_bytes() for p in ours.rglob("*") if p.is_file()} == \
        {p.relative_to(theirs): p.read_bytes() for p in theirs.rglob("*") if p.is_file()}
    read_pairs(settings)
    assert len(made) == 1  # there: not made again
    record = root / "generator_synthetic.json"
    record.write_text(record.read_text().replace('"seed": 0', '"seed": 5'))
    monkeypatch.setattr(gen, "generate", lambda *a, **k: made.append(a))  # the files stay: only the call counts
    read_pairs(settings)
    assert len(made) == 2 and made[1] == made[0]  # stale: made again
    full = DataSettings(format="rate_eval_task2", path=str(default_synthetic / "synthetic_rate_eval"),
                        generate_synthetic=str(default_synthetic))
    assert len(read_pairs(full)) == 600 and len(made) == 2  # the default sets count as there
    assert synthetic_sets(DataSettings(format="rexval", path=str(root / "synthetic_rexval"),
                                       generate_synthetic=str(root))) == ["rexval"]
    assert synthetic_sets(DataSettings(format="csv", path=str(tmp_path / "mine.csv"),
                                       generate_synthetic=str(root))) is None  # elsewhere: every set

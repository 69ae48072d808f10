"""Meta-evaluation helpers: how well a metric agrees with human ratings.

- :func:`correlation`: Pearson r, Kendall tau-b or Spearman rho between metric scores and
  ratings; ``nan`` when undefined (fewer than 2 pairs, or a constant input). Kendall is
  ``scipy.stats.kendalltau``; Pearson and Spearman (Pearson of ``scipy.stats.rankdata`` average
  ranks) are computed directly, as scipy defines them, at a tenth of the call overhead of
  ``pearsonr``/``spearmanr`` (they run once per TPE trial); the tests compare them with scipy.
- :func:`group_split`: a seeded train/test split by group (a ReXVal study, one reference report),
  so no group is ever on both sides.
- :func:`bootstrap_ci` / :func:`correlation_with_ci`: percentile confidence intervals from
  resampling *groups* with replacement (as RadCliQ/ReXVal: 1,000 resamples over studies); every
  pair of a drawn group comes along, as many times as the group is drawn.

Orientation: for ratings where lower is better (error counts), pass ``sign=-1`` so that a good
metric gets a positive value; the CI is then of ``-correlation``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

CORRELATIONS = ("pearson", "kendall", "spearman")


def check_method(method: str) -> str:
    if method not in CORRELATIONS:
        raise ValueError(f"unknown correlation {method!r}; expected one of {list(CORRELATIONS)}")
    return method


def correlation(scores: Sequence[float], ratings: Sequence[float], method: str) -> float:
    """The correlation of ``scores`` with ``ratings``; ``nan`` when it is undefined."""
    from scipy import stats

    check_method(method)
    x, y = np.asarray(scores, dtype=np.float64), np.asarray(ratings, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"scores and ratings must be 1-d of one length, got {x.shape} and {y.shape}")
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    if method == "kendall":
        return float(stats.kendalltau(x, y, variant="b").statistic)
    if method == "spearman":
        x, y = stats.rankdata(x), stats.rankdata(y)
    return _pearson(x, y)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r of two non-constant vectors, scaled first (as scipy does) against overflow."""
    xm, ym = x - x.mean(), y - y.mean()
    xm, ym = xm / np.abs(xm).max(), ym / np.abs(ym).max()
    r = float(np.dot(xm, ym) / np.sqrt(np.dot(xm, xm) * np.dot(ym, ym)))
    return max(-1.0, min(1.0, r))


def group_split(groups: Sequence[str], test_fraction: float = 0.2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(train indices, test indices)`` with ``round(test_fraction * n_groups)`` whole groups
    (at least one, and at least one left for training) drawn for the test side.

    Groups are sorted before a ``numpy.random.default_rng(seed)`` permutation, so the split
    depends only on the set of groups and the seed, not on the order of the pairs.
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must lie strictly between 0 and 1, got {test_fraction}")
    groups = [str(g) for g in groups]
    distinct = sorted(set(groups))
    if len(distinct) < 2:
        raise ValueError(f"cannot split {len(groups)} pairs by group: they hold {len(distinct)} group(s), "
                         "at least 2 are needed")
    n_test = min(max(1, round(test_fraction * len(distinct))), len(distinct) - 1)
    order = np.random.default_rng(seed).permutation(len(distinct))
    test_groups = {distinct[k] for k in order[:n_test]}
    is_test = np.array([g in test_groups for g in groups], dtype=bool)
    return np.flatnonzero(~is_test), np.flatnonzero(is_test)


def shared_groups(groups: Sequence[str], train: Sequence[int], test: Sequence[int]) -> list[str]:
    """The groups that have pairs on both sides of a split (empty for a sound split)."""
    g = np.asarray([str(x) for x in groups], dtype=object)
    return sorted(set(g[np.asarray(train, dtype=np.intp)]) & set(g[np.asarray(test, dtype=np.intp)]))


def group_resamples(groups: Sequence[str], n_resamples: int = 1000, seed: int = 0):
    """The bootstrap resamples over groups, one at a time: ``(drawn group indices into the sorted distinct
    groups, row indices)``; every row of a drawn group comes along, as many times as the group is
    drawn. Seeded (``numpy.random.default_rng(seed)``), so two systems scored on the same rows get the
    same resamples (a paired bootstrap)."""
    n_groups, inverse = _group_index(groups)
    members = [np.flatnonzero(inverse == k) for k in range(n_groups)]
    for drawn in _draws(n_groups, n_resamples, seed):
        yield drawn, np.concatenate([members[k] for k in drawn]) if len(drawn) else np.zeros(0, dtype=np.intp)


#: up to this many pairs, :func:`bootstrap_ci` computes Kendall's tau-b of every resample at once
#: (:func:`kendall_b_of_resamples`: an n-by-n matrix and a resamples-by-n matrix product); above, one
#: ``scipy.stats.kendalltau`` per resample
KENDALL_BATCH_MAX_PAIRS = 3000


def kendall_b_of_resamples(x: np.ndarray, y: np.ndarray, groups: Sequence[str], n_resamples: int = 1000,
                           seed: int = 0) -> np.ndarray:
    """Kendall's tau-b of each resample of :func:`group_resamples` (``nan`` where undefined), equal to
    ``correlation(x[idx], y[idx], "kendall")`` on each resample's rows, from each row's multiplicity ``w``
    in the resample rather than from the rows themselves: with ``s_ij = sign(x_i - x_j) * sign(y_i - y_j)``,
    concordant minus discordant pairs is ``w' S w / 2``; the tied pairs in ``x`` are ``W (W - 1) / 2`` summed
    over the distinct values of ``x``, ``W`` the multiplicity of the rows holding a value (so in ``y``);
    ``tau_b = (C - D) / sqrt(T - ties_x) / sqrt(T - ties_y)``, ``T = N (N - 1) / 2``, computed as scipy
    computes it. Every count is an integer below 2**53, exact in float64 whatever the order of the sums."""
    n_groups, row_group = _group_index(groups)
    per_group = np.array([np.bincount(drawn, minlength=n_groups) for drawn in _draws(n_groups, n_resamples, seed)],
                         dtype=np.float64).reshape(-1, n_groups)
    w = per_group[:, row_group]  # (resamples, rows): how often each row is in each resample
    s = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
    con_minus_dis = np.einsum("ri,ri->r", w @ s, w) / 2.0

    def tied(v: np.ndarray) -> np.ndarray:
        order = np.argsort(v, kind="stable")
        starts = np.flatnonzero(np.r_[True, v[order][1:] != v[order][:-1]])
        per_value = np.add.reduceat(w[:, order], starts, axis=1)  # (resamples, distinct values)
        return (per_value * (per_value - 1.0) / 2.0).sum(axis=1)

    size = w.sum(axis=1)
    tot = size * (size - 1.0) / 2.0
    xtie, ytie = tied(x), tied(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    tau = np.minimum(1.0, np.maximum(-1.0, tau))
    tau[(xtie == tot) | (ytie == tot)] = np.nan
    return tau


def _group_index(groups: Sequence[str]) -> tuple[int, np.ndarray]:
    """The number of distinct groups and each row's index among them, sorted by name."""
    distinct, inverse = np.unique(np.asarray([str(g) for g in groups], dtype=object), return_inverse=True)
    return len(distinct), inverse


def _draws(n_groups: int, n_resamples: int, seed: int):
    """The group indices each resample draws (seeded: ``numpy.random.default_rng(seed)``)."""
    rng = np.random.default_rng(seed)
    for _ in range(int(n_resamples)):
        yield rng.integers(0, n_groups, size=n_groups)


def bootstrap_ci(scores: Sequence[float], ratings: Sequence[float], groups: Sequence[str], method: str,
                 n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
                 sign: float = 1.0) -> tuple[float, float]:
    """Percentile CI of ``sign * correlation`` from ``n_resamples`` resamples of the groups.

    Resamples where the correlation is undefined (e.g. every drawn score equal) are left out of
    the percentiles; ``(nan, nan)`` when all are.
    """
    check_method(method)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    x, y = np.asarray(scores, dtype=np.float64), np.asarray(ratings, dtype=np.float64)
    if not len(x) == len(y) == len(groups):
        raise ValueError(f"{len(x)} scores, {len(y)} ratings and {len(groups)} groups: they must pair up")
    if method == "kendall" and 0 < len(x) <= KENDALL_BATCH_MAX_PAIRS and np.isfinite(x).all() and np.isfinite(y).all():
        values = sign * kendall_b_of_resamples(x, y, groups, n_resamples, seed)
    else:
        values = np.empty(int(n_resamples))
        for r, (_, idx) in enumerate(group_resamples(groups, n_resamples, seed)):
            values[r] = sign * correlation(x[idx], y[idx], method)
    values = values[np.isfinite(values)]
    if not len(values):
        return float("nan"), float("nan")
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class CorrelationResult:
    """``value`` = ``sign * correlation`` with its bootstrap CI ``[low, high]``."""

    method: str
    value: float
    low: float
    high: float
    n_pairs: int
    n_groups: int
    sign: float = 1.0

    def to_dict(self) -> dict:
        return asdict(self)


def correlation_with_ci(scores: Sequence[float], ratings: Sequence[float], groups: Sequence[str], method: str,
                        n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
                        sign: float = 1.0) -> CorrelationResult:
    """The signed correlation and its grouped bootstrap CI in one record."""
    value = sign * correlation(scores, ratings, method)
    low, high = bootstrap_ci(scores, ratings, groups, method, n_resamples, confidence, seed, sign)
    return CorrelationResult(method, float(value), low, high, len(scores), len(set(map(str, groups))), float(sign))


def correlation_test(scores: Sequence[float], ratings: Sequence[float], method: str) -> tuple[float, float]:
    """``(statistic, two-sided p-value)`` from scipy (``kendalltau`` tau-b, ``spearmanr``,
    ``pearsonr``); ``(nan, nan)`` when the correlation is undefined."""
    from scipy import stats

    check_method(method)
    x, y = np.asarray(scores, dtype=np.float64), np.asarray(ratings, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"scores and ratings must be 1-d of one length, got {x.shape} and {y.shape}")
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    fn = {"kendall": lambda: stats.kendalltau(x, y, variant="b"), "spearman": lambda: stats.spearmanr(x, y),
          "pearson": lambda: stats.pearsonr(x, y)}[method]
    res = fn()
    return float(res.statistic), float(res.pvalue)


def agreement(scores: Sequence[float], ratings: Sequence[float], groups: Sequence[str],
              methods: Sequence[str] = CORRELATIONS, n_resamples: int = 1000, confidence: float = 0.95,
              seed: int = 0, sign: float = 1.0) -> dict[str, dict]:
    """Per method: the signed correlation, its grouped bootstrap CI and scipy's p-value (of the
    unsigned statistic; the sign does not change it)."""
    out = {}
    for method in methods:
        res = correlation_with_ci(scores, ratings, groups, method, n_resamples, confidence, seed, sign).to_dict()
        res["p_value"] = correlation_test(scores, ratings, method)[1]
        out[method] = res
    return out


def triad_accuracy(synonym_scores: Sequence[float], opposite_scores: Sequence[float]) -> float:
    """RaTE-Eval Task 3: the share of triads whose synonym rewrite scores strictly higher than
    the opposite rewrite (a tie counts as a miss: the metric did not tell them apart)."""
    s, o = np.asarray(synonym_scores, dtype=np.float64), np.asarray(opposite_scores, dtype=np.float64)
    if s.shape != o.shape or s.ndim != 1:
        raise ValueError(f"synonym and opposite scores must be 1-d of one length, got {s.shape} and {o.shape}")
    if not len(s):
        raise ValueError("triad accuracy of no triads is undefined")
    return float(np.mean(s > o))


def breakdown(scores: Sequence[float], ratings: Sequence[float], groups: Sequence[str], keys: Sequence[str],
              method: str, min_pairs: int = 10, **ci_kwargs) -> dict[str, dict]:
    """The correlation with its CI within each value of ``keys`` (a modality, an anatomy), sorted
    by key. A key with fewer than ``min_pairs`` pairs or a single group gets ``value`` nan and
    ``note`` saying why, rather than a number from too little data."""
    x, y = np.asarray(scores, dtype=np.float64), np.asarray(ratings, dtype=np.float64)
    g, k = np.asarray([str(v) for v in groups], dtype=object), np.asarray([str(v) for v in keys], dtype=object)
    if not len(x) == len(y) == len(g) == len(k):
        raise ValueError(f"{len(x)} scores, {len(y)} ratings, {len(g)} groups and {len(k)} keys: they must pair up")
    out = {}
    for key in sorted(set(k)):
        idx = np.flatnonzero(k == key)
        n_groups = len(set(g[idx]))
        if len(idx) < min_pairs or n_groups < 2:
            out[key] = {"method": method, "value": float("nan"), "low": float("nan"), "high": float("nan"),
                        "n_pairs": int(len(idx)), "n_groups": n_groups,
                        "note": f"too few pairs or groups (need >= {min_pairs} pairs and >= 2 groups)"}
            continue
        out[key] = correlation_with_ci(x[idx], y[idx], g[idx], method, **ci_kwargs).to_dict()
    return out

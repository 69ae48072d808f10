"""Statistics over per-pair scores: the mean with a bootstrap confidence interval, and paired tests
of two systems scored on the same references.

- :func:`bootstrap_ci`: percentile bootstrap interval of the mean.
- :func:`paired_bootstrap_p`: two-sided paired bootstrap test of a mean difference (Koehn 2004,
  as ``sacrebleu --paired-bs``): the pairs are resampled with replacement, the resampled mean
  differences are centred on the observed one (which puts them under the null of no
  difference), and ``p = (1 + #{|d*_b - d| >= |d|}) / (B + 1)``.
- :func:`randomization_p`: approximate randomisation (Noreen 1989; ``sacrebleu --paired-ar``):
  in each trial the two systems' scores of each pair are swapped with probability 1/2;
  :func:`scipy.stats.permutation_test` with ``permutation_type="samples"`` does exactly this
  (and an exact test when 2^n is at most the number of trials).
"""

from __future__ import annotations

import numpy as np


def bootstrap_ci(values, n_resamples: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean (``nan``s for no values)."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    for k in range(n_resamples):  # one resample at a time: memory stays O(n)
        means[k] = values[rng.integers(0, len(values), len(values))].mean()
    lo, hi = np.percentile(means, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def summary(values, seed: int = 0) -> dict:
    """n, mean, sample std and the 95% bootstrap interval of the mean."""
    arr = np.asarray(values, dtype=np.float64)
    lo, hi = bootstrap_ci(arr, seed=seed)
    return {"n": int(arr.size), "mean": float(arr.mean()) if arr.size else float("nan"),
            "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0, "ci95": [lo, hi]}


def _paired(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired scores must be two 1-d arrays of one length, got {a.shape} and {b.shape}")
    if a.size == 0:
        raise ValueError("no pairs to compare")
    return a, b


def paired_bootstrap_p(a, b, n_resamples: int = 1000, seed: int = 0) -> float:
    """Two-sided p-value of ``mean(a - b) != 0`` by the centred paired bootstrap (module doc)."""
    a, b = _paired(a, b)
    d = a - b
    observed = d.mean()
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_resamples):
        if abs(d[rng.integers(0, d.size, d.size)].mean() - observed) >= abs(observed):
            hits += 1
    return (hits + 1) / (n_resamples + 1)


def randomization_p(a, b, n_resamples: int = 10000, seed: int = 0) -> float:
    """Two-sided p-value of ``mean(a - b) != 0`` by approximate randomisation (module doc)."""
    from radscore.optional import require

    permutation_test = require("scipy.stats").permutation_test
    a, b = _paired(a, b)
    if np.array_equal(a, b):
        return 1.0
    result = permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True,
                              permutation_type="samples", n_resamples=n_resamples, alternative="two-sided",
                              rng=np.random.default_rng(seed), batch=max(1, 2_000_000 // a.size))
    return float(result.pvalue)

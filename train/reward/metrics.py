"""ER²Score validation metrics: pair accuracy, reward margin, rank correlations.

- ``pair_acc``: share of pairs whose summed reward is higher for the accepted candidate (a tie
  counts as wrong); ``pair_acc/<item>``: per head, over the pairs where that sub-score differs
  (margin m_j ≠ 0), the share whose reward difference has the sign of m_j (``nan`` when no pair
  differs on the item); ``pairs/<item>``: how many pairs that was.
- ``reward_margin``: mean of Σ_j r_w,j - Σ_j r_l,j.
- ``kendall``/``spearman``: over the distinct candidates, predicted total (the sum of the heads)
  against the labelled total; ``kendall/<item>``/``spearman/<item>``: each head against its
  sub-score label (``nan`` when the labels or predictions are constant). Both sides are in
  internal units, which only flips the sign of both for a lower-is-better system, so the
  correlations are those of the native units.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats


def pair_metrics(dr: np.ndarray, sub_margins: np.ndarray, items: tuple[str, ...]) -> dict[str, float]:
    """``dr``: reward differences r_w - r_l (pairs, N); ``sub_margins``: m_j (pairs, N)."""
    out = {"pair_acc": float(np.mean(dr.sum(axis=1) > 0)) if len(dr) else math.nan,
           "reward_margin": float(np.mean(dr.sum(axis=1))) if len(dr) else math.nan}
    for j, name in enumerate(items):
        differs = sub_margins[:, j] != 0
        n = int(differs.sum())
        agree = np.sign(dr[differs, j]) == np.sign(sub_margins[differs, j])
        out[f"pair_acc/{name}"] = float(agree.mean()) if n else math.nan
        out[f"pairs/{name}"] = float(n)
    return out


def _correlations(pred: np.ndarray, gold: np.ndarray) -> tuple[float, float]:
    if len(pred) < 2 or np.all(pred == pred[0]) or np.all(gold == gold[0]):
        return math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.kendalltau(pred, gold).statistic), float(stats.spearmanr(pred, gold).statistic)


def correlation_metrics(pred: np.ndarray, gold: np.ndarray, gold_totals: np.ndarray,
                        items: tuple[str, ...]) -> dict[str, float]:
    """``pred``: rewards of the distinct candidates (rows, N); ``gold``: their sub-score labels
    (rows, N); ``gold_totals``: their labelled totals (rows,), all in internal units."""
    out = {}
    out["kendall"], out["spearman"] = _correlations(pred.sum(axis=1), gold_totals)
    for j, name in enumerate(items):
        out[f"kendall/{name}"], out[f"spearman/{name}"] = _correlations(pred[:, j], gold[:, j])
    return out

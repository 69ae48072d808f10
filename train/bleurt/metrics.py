"""Agreement between predicted and target quality: MSE, Pearson and Kendall (scipy.stats).

Pearson and Kendall are undefined when either side is constant or when there are fewer than two
pairs (an untrained head can be constant); they are then reported as 0.0 (no association), and a
warning says so, so that a monitored key never becomes NaN.
"""

from __future__ import annotations

import logging
import math

import numpy as np

log = logging.getLogger(__name__)


def regression_metrics(pred, target) -> dict[str, float]:
    """``mse``, ``pearson``, ``kendall`` (tau-b) and ``n`` of two equally long sequences."""
    pred, target = np.asarray(pred, dtype=np.float64), np.asarray(target, dtype=np.float64)
    if pred.shape != target.shape or pred.ndim != 1:
        raise ValueError(f"predictions {pred.shape} and targets {target.shape} must be 1-D and equal")
    if not len(pred):
        raise ValueError("no predictions to score")
    out = {"mse": float(np.mean((pred - target) ** 2)), "n": float(len(pred))}
    if len(pred) < 2 or np.ptp(pred) == 0 or np.ptp(target) == 0:
        log.warning("correlation undefined (%d pairs, prediction range %.3g, target range %.3g): "
                    "pearson and kendall reported as 0.0", len(pred), np.ptp(pred), np.ptp(target))
        return {**out, "pearson": 0.0, "kendall": 0.0}
    from scipy.stats import kendalltau, pearsonr

    pearson = float(pearsonr(pred, target)[0])
    kendall = float(kendalltau(pred, target)[0])
    return {**out, "pearson": pearson if math.isfinite(pearson) else 0.0,
            "kendall": kendall if math.isfinite(kendall) else 0.0}

"""A RadCliQ-style composite metric (SPEC §5): standardise metric scores, fit a linear regression
to the human ratings on the training pairs, and judge its predictions on held-out pairs.

Any metric columns can go in (BLEU-2, BERTScore, RaTEScore, ER²Score, ClinicalBLEURT, …). The
regression predicts the rating in its own orientation (for ReXVal: the mean error count), so
Kendall between prediction and rating is positive for a useful composite whichever way the rating
points.
RadCliQ-v1's published scaler and coefficients are kept in :data:`RADCLIQ_V1` for reference; its
RadGraph and semb features are not computed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from train.evaluation.metaeval import agreement

RADCLIQ_V1 = {  # SPEC §5: the public pickle's values
    "features": ["radgraph_combined", "bertscore", "semb", "bleu2"],
    "scaler_mean": [0.53792, 0.61757, 0.76479, 0.44738],
    "scaler_scale": [0.30283, 0.22431, 0.25394, 0.29893],
    "coef": [-0.37708, -0.37030, -0.25262, 0.0],
    "intercept": 0.0,
}


@dataclass
class Composite:
    """A fitted composite: ``rating ≈ intercept + coef · (x - mean) / scale``."""

    features: list[str]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    @classmethod
    def fit(cls, columns: Mapping[str, Sequence[float]], ratings: Sequence[float]) -> "Composite":
        from sklearn.linear_model import LinearRegression
        from sklearn.preprocessing import StandardScaler

        names = list(columns)
        if not names:
            raise ValueError("a composite needs at least one metric column")
        x = _matrix(columns, names)
        y = np.asarray(ratings, dtype=np.float64)
        if len(y) != len(x):
            raise ValueError(f"{len(x)} rows of metric scores and {len(y)} ratings: they must pair up")
        if len(y) < len(names) + 2:
            raise ValueError(f"{len(y)} training pairs are too few to fit {len(names)} coefficients")
        scaler = StandardScaler().fit(x)
        reg = LinearRegression().fit(scaler.transform(x), y)
        scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
        return cls(names, scaler.mean_.copy(), scale, reg.coef_.copy(), float(reg.intercept_))

    def predict(self, columns: Mapping[str, Sequence[float]]) -> np.ndarray:
        missing = [f for f in self.features if f not in columns]
        if missing:
            raise KeyError(f"the composite needs the metric columns {missing}")
        return self.intercept + ((_matrix(columns, self.features) - self.mean) / self.scale) @ self.coef

    def to_dict(self) -> dict:
        return {"features": self.features, "scaler_mean": self.mean.tolist(), "scaler_scale": self.scale.tolist(),
                "coef": self.coef.tolist(), "intercept": self.intercept}


def _matrix(columns: Mapping[str, Sequence[float]], names: Sequence[str]) -> np.ndarray:
    cols = [np.asarray(columns[n], dtype=np.float64) for n in names]
    lengths = {len(c) for c in cols}
    if len(lengths) != 1:
        raise ValueError(f"metric columns differ in length: {dict(zip(names, map(len, cols)))}")
    x = np.stack(cols, axis=1)
    bad = np.argwhere(~np.isfinite(x))
    if len(bad):
        row, col = bad[0]
        raise ValueError(f"metric {names[col]!r} is not finite at pair {row}")
    return x


def evaluate_composite(columns: Mapping[str, Sequence[float]], ratings: Sequence[float], groups: Sequence[str],
                       train: Sequence[int], test: Sequence[int],
                       n_resamples: int = 1000, seed: int = 0) -> dict:
    """Fit on ``train`` indices, predict ``test``; Kendall (with CI and p-value) on the test pairs."""
    tr, te = np.asarray(train, dtype=np.intp), np.asarray(test, dtype=np.intp)
    y, g = np.asarray(ratings, dtype=np.float64), np.asarray([str(v) for v in groups], dtype=object)
    comp = Composite.fit({k: np.asarray(v, dtype=np.float64)[tr] for k, v in columns.items()}, y[tr])
    pred = comp.predict({k: np.asarray(v, dtype=np.float64)[te] for k, v in columns.items()})
    res = agreement(pred, y[te], g[te], methods=("kendall",), n_resamples=n_resamples, seed=seed)
    return {"composite": comp.to_dict(), "kendall": res["kendall"], "n_train": int(len(tr)), "n_test": int(len(te))}

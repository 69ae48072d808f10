"""Adapters to the tools that researchers already score reports with (optional dependencies,
imported only when the adapter is used):

- :mod:`radscore.integrations.radeval`: RadEval metric classes and registry entries
  (``radscore_ratescore``, ``radscore_bleurt``, ``radscore_er2``);
- :mod:`radscore.integrations.trl`: reward functions with TRL's calling convention.

Both build their scorers with :func:`make_scorer`.
"""

from __future__ import annotations

METRICS = ("ratescore", "bleurt", "er2")


def make_scorer(metric: str, **kwargs):
    """A radscore scorer by metric name: ``ratescore`` (:class:`radscore.RaTEScore`; no argument =
    the official recipe), ``bleurt`` (:class:`radscore.ClinicalBLEURT`, ``model=``) or ``er2``
    (:class:`radscore.ER2Score`, ``export=``)."""
    if metric == "ratescore":
        from radscore.ratescore import RaTEScore

        return RaTEScore(**kwargs)
    if metric == "bleurt":
        from radscore.bleurt import ClinicalBLEURT

        return ClinicalBLEURT(**kwargs)
    if metric == "er2":
        from radscore.er2score import ER2Score

        kwargs.setdefault("progress", False)
        return ER2Score(**kwargs)
    raise ValueError(f"unknown metric {metric!r}; expected one of {list(METRICS)}")


def metric_of(scorer) -> str:
    """The metric name of a scorer instance."""
    for name, cls in (("ratescore", "RaTEScore"), ("bleurt", "ClinicalBLEURT"), ("er2", "ER2Score")):
        if type(scorer).__name__ == cls:
            return name
    raise ValueError(f"not a radscore scorer: {type(scorer).__name__}")


def per_pair(metric: str, scorer, candidates: list[str], references: list[str], progress: bool = False) -> dict:
    """Per-pair values of every output of a scorer: the headline under ``"score"``, the rest by name
    (RaTEScore's precision and recall, ER²Score's sub-scores)."""
    from radscore.records import score_records

    records, values = score_records(metric, scorer, candidates, references, progress=progress)
    extra = {"ratescore": ("precision", "recall"), "bleurt": (),
             "er2": tuple(scorer.system.items) if metric == "er2" else ()}[metric]
    return {"score": values, **{k: [r[k] for r in records] for k in extra}}

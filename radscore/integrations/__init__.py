"""Adapters to the tools that researchers already score reports with (optional dependencies,
imported only when the adapter is used):

- :mod:`radscore.integrations.radeval`: RadEval metric classes and registry entries, one per
  metric of :mod:`radscore.registry` (``radscore_ratescore``, ``radscore_bleurt``, ``radscore_er2``);
- :mod:`radscore.integrations.trl`: reward functions with TRL's calling convention.

Both build their scorers with :func:`make_scorer`.
"""

from __future__ import annotations

from radscore.registry import make_scorer, metric_of, names

__all__ = ["make_scorer", "metric_of", "names", "per_pair"]


def per_pair(scorer, candidates: list[str], references: list[str], progress: bool = False) -> dict:
    """Per-pair values of every output of a scorer: the headline under ``"score"``, the rest by name
    (its ``subscore_names``: RaTEScore's precision and recall, ER²Score's sub-scores)."""
    from radscore.records import score_records

    records, values = score_records(scorer, candidates, references, progress=progress)
    return {"score": values, **{k: [r[k] for r in records] for k in scorer.subscore_names}}

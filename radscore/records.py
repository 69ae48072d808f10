"""One record per scored pair, the same for every way of running a scorer (the ``radscore`` CLI,
Ray, the integrations): every sub-score by name."""

from __future__ import annotations

from radscore.registry import spec_of


def score_records(scorer, cands: list[str], refs: list[str], explain: bool = False,
                  progress: bool = True) -> tuple[list[dict], list[float]]:
    """One record per pair (every sub-score, :meth:`to_record`) and the headline value of each pair
    (the record key its registry entry names). ``explain`` only for scorers whose entry explains."""
    spec = spec_of(scorer)
    if explain and not spec.explain:
        raise ValueError(f"{spec.display_name} has no explanation to add")
    kw = {"explain": True} if explain else {}
    records = [r.to_record() for r in scorer.iter_score(cands, refs, progress=progress, **kw)]
    return records, [r[spec.headline] for r in records]

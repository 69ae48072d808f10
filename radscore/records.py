"""One record per scored pair, the same for every way of running a scorer (the ``radscore`` CLI,
Ray, the integrations): every sub-score by name."""

from __future__ import annotations


def score_records(metric: str, scorer, cands: list[str], refs: list[str], explain: bool = False,
                  progress: bool = True) -> tuple[list[dict], list[float]]:
    """One record per pair (every sub-score) and the headline value of each pair."""
    if metric == "ratescore":
        records = [p.to_dict() for p in scorer.iter_score(cands, refs, explain=explain, progress=progress)]
        return records, [r["f1"] for r in records]
    if metric == "bleurt":
        records = [s.to_dict() for s in scorer.iter_score(cands, refs, progress=progress)]
        return records, [r["score"] for r in records]
    up = scorer.system.higher_is_better
    records = [{**s.subscores, "total": s.total, "higher_is_better": up} for s in scorer.score(cands, refs)]
    return records, [r["total"] for r in records]

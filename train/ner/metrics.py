"""Entity-level NER metrics with seqeval (strict IOB2), at word level.

Both gold and predicted sequences go through :func:`data.iob.repair_iob` first (the project's one
invalid-IOB policy), so strict mode sees every predicted entity.
"""

from __future__ import annotations

from seqeval.metrics import accuracy_score, classification_report, f1_score, precision_score, recall_score
from seqeval.scheme import IOB2

from data.iob import repair_iob


def ner_metrics(gold: list[list[str]], pred: list[list[str]], per_type: bool = False) -> dict[str, float]:
    """``precision``, ``recall``, ``f1`` (micro, entity level), ``accuracy`` (word level) and,
    with ``per_type``, ``<TYPE>/precision|recall|f1|support``."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted")
    for k, (g, p) in enumerate(zip(gold, pred)):
        if len(g) != len(p):
            raise ValueError(f"sentence {k}: {len(g)} gold tags but {len(p)} predicted")
    gold = [repair_iob(g) for g in gold]
    pred = [repair_iob(p) for p in pred]
    kw = dict(mode="strict", scheme=IOB2, zero_division=0)
    out = {
        "precision": float(precision_score(gold, pred, **kw)),
        "recall": float(recall_score(gold, pred, **kw)),
        "f1": float(f1_score(gold, pred, **kw)),
        "accuracy": float(accuracy_score(gold, pred)),
    }
    if per_type:
        report = classification_report(gold, pred, output_dict=True, **kw)
        for etype, row in report.items():
            if etype.endswith("avg"):
                continue
            for key in ("precision", "recall", "f1-score", "support"):
                out[f"{etype}/{key.replace('-score', '')}"] = float(row[key])
    return out

"""The baselines beside a trained model on the rows it was tested on (:class:`data.rated.RatedSplit`).

Per row: the text-only baselines (:data:`~train.evaluation.baselines.BESIDE_MODEL`) and the shallow
learner (:data:`~train.evaluation.baselines.SHALLOW_NAME`, fitted on the train split's rows only;
for a ranking of pairs also the logistic pair model, under ``<name>_pair``). Per baseline: its
statistics on the split as the model is measured there: pair accuracy (a tie is a miss) and Kendall
tau-b of the totals for a ranking of pairs, Pearson and Kendall of the ratings otherwise; beside the
shallow learner, the values it chose on a validation part of the train rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from data.rated import RatedSplit
from train.evaluation.baselines import (BESIDE_MODEL, SHALLOW_NAME, pair_accuracy, rating_statistics,
                                        score_baselines, shallow_pair_scores, shallow_rating_scores)

PAIR_SUFFIX = "_pair"


@dataclass
class Beside:
    scores: dict[str, np.ndarray]     # baseline -> score per row of the evaluated split
    metrics: dict[str, dict]          # baseline -> its statistics (and the shallow learner's choices)


def split_baselines(train: RatedSplit, evaluated: RatedSplit, shallow: bool = True) -> Beside:
    """Every baseline's per-row scores and statistics on ``evaluated``; the shallow learner is
    fitted on ``train`` (when ``shallow`` and it holds at least two rows)."""
    refs, cands = evaluated.references, evaluated.candidates
    scores, _ = score_baselines(refs, cands, BESIDE_MODEL)
    chosen: dict = {}
    if shallow and len(train.ids) >= 2:
        scores[SHALLOW_NAME], chosen = shallow_rating_scores(train.references, train.candidates, train.target,
                                                             refs, cands)
        if evaluated.pairs is not None and train.pairs:
            better = [train.candidates[a] for a, _ in train.pairs]
            worse = [train.candidates[b] for _, b in train.pairs]
            scores[SHALLOW_NAME + PAIR_SUFFIX], pair_chosen = shallow_pair_scores(
                [train.references[a] for a, _ in train.pairs], better, worse, refs, cands)
            chosen.update({f"pair_{k}": v for k, v in pair_chosen.items()})
    metrics = {}
    for name, s in scores.items():
        if name.endswith(PAIR_SUFFIX):
            continue
        extra = chosen if name == SHALLOW_NAME else {}
        if evaluated.pairs is None:
            metrics[name] = {**rating_statistics(s, evaluated.target), **extra}
            continue
        w = np.array([a for a, _ in evaluated.pairs], dtype=np.intp)
        l = np.array([b for _, b in evaluated.pairs], dtype=np.intp)  # noqa: E741
        ranked = scores.get(name + PAIR_SUFFIX, s)
        metrics[name] = {"pair_acc": pair_accuracy(ranked[w], ranked[l]),
                         "kendall": rating_statistics(s, evaluated.target)["kendall"], **extra}
    return Beside(scores, metrics)

"""The rated pairs of a tune config, read through ``data/``'s readers, and their train/test split."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from data.ratings import RatedPair
from train.evaluation.metaeval import group_split, shared_groups
from train.tune.config import DataSettings, SplitSettings


def read_pairs(settings: DataSettings) -> list[RatedPair]:
    """Every rated pair the config names, in the reader's order (RaTE-Eval: train file first)."""
    if settings.generate_synthetic:
        from data.synth import generate_default

        generate_default(settings.generate_synthetic, progress=lambda m: print(m, flush=True))
    path = Path(settings.path)
    if settings.format in ("rate_eval_task1", "rate_eval_task2"):
        from data.rate_eval import read_rate_eval_task1, read_rate_eval_task2

        reader = read_rate_eval_task1 if settings.format == "rate_eval_task1" else read_rate_eval_task2
        return [p for split in settings.splits for p in reader(path, split)]
    if settings.format == "rexval":
        from data.rexval import read_rexval

        return read_rexval(path, significant_only=settings.significant_only, aggregate=settings.aggregate)
    from data.ratings import read_rating_csv

    cols = settings.columns or {}
    unknown = sorted(set(cols) - {"reference", "candidate", "rating", "id", "group"})
    if unknown:
        raise ValueError(f"data.columns: unknown key(s) {unknown}; expected reference, candidate, rating, id, group")
    return read_rating_csv(path, reference=cols.get("reference", "reference"),
                           candidate=cols.get("candidate", "candidate"), rating=cols.get("rating", "rating"),
                           id_column=cols.get("id"), group_column=cols.get("group"))


@dataclass
class Split:
    train: np.ndarray  # pair indices
    test: np.ndarray
    shared_groups: list  # groups on both sides: always empty for split.by = group

    def to_dict(self, pairs: list[RatedPair]) -> dict:
        def side(idx):
            return {"pairs": int(len(idx)), "groups": len({pairs[i].group for i in idx})}

        return {"train": side(self.train), "test": side(self.test),
                "groups_on_both_sides": len(self.shared_groups)}


def split_pairs(pairs: list[RatedPair], settings: SplitSettings) -> Split:
    """``group``: :func:`train.evaluation.metaeval.group_split` (seeded, whole groups). ``published``: the
    RaTE-Eval files' own train/test (``meta["split"]``); groups they share are reported, not moved.
    ``auto`` (the default): ``published`` when every pair carries a ``split``, ``group`` when none
    does; an error naming a pair without it when only some do."""
    groups = [p.group for p in pairs]
    by = settings.by
    if by == "auto":
        carry = [p.meta.get("split") is not None for p in pairs]
        if pairs and all(carry):
            by = "published"
        elif any(carry):
            missing = next(p for p, c in zip(pairs, carry) if not c)
            raise ValueError(f"split.by 'auto': {sum(carry)} of {len(pairs)} pairs carry a split but pair "
                             f"{missing.id!r} does not; it needs one in every pair or in none (or set "
                             "split.by: group or published)")
        else:
            by = "group"
    if by == "group":
        train, test = group_split(groups, settings.test_fraction, settings.seed)
    else:
        sides = [p.meta.get("split") for p in pairs]
        bad = [p.id for p, s in zip(pairs, sides) if s not in ("train", "test")]
        if bad:
            raise ValueError(f"split.by 'published': pair(s) {bad[:5]} carry no train/test split")
        train = np.array([i for i, s in enumerate(sides) if s == "train"], dtype=np.intp)
        test = np.array([i for i, s in enumerate(sides) if s == "test"], dtype=np.intp)
    if not len(train) or not len(test):
        raise ValueError(f"the split left {len(train)} training and {len(test)} test pairs; both need some")
    return Split(train, test, shared_groups(groups, train, test))


def data_fingerprint(pairs: list[RatedPair], split: Split) -> str:
    """A hash of the pairs (texts, ratings, groups) and of the split: a study is only resumed on
    the data it was started on."""
    digest = hashlib.sha256()
    for p in pairs:
        digest.update(json.dumps([p.reference, p.candidate, p.rating, p.group]).encode())
    digest.update(json.dumps([split.train.tolist(), split.test.tolist()]).encode())
    return digest.hexdigest()[:16]

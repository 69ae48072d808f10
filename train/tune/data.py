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


#: the generator's folders and the sets each holds
SYNTHETIC_FOLDERS = {"synthetic_rexval": ("rexval",), "synthetic_rate_eval": ("task1", "task2", "task3")}


def synthetic_sets(settings: DataSettings) -> list[str] | None:
    """The sets of ``data.synth`` that ``settings.path`` reads when it lies in a rated folder of the
    ``generate_synthetic`` folder (``synthetic_rate_eval``: Task 1-3; ``synthetic_rexval``); else None."""
    try:
        folder = Path(settings.path).resolve().relative_to(Path(settings.generate_synthetic).resolve()).parts[0]
    except (ValueError, IndexError):
        return None
    return list(SYNTHETIC_FOLDERS[folder]) if folder in SYNTHETIC_FOLDERS else None


def ensure_synthetic(settings: DataSettings) -> None:
    """Make the SYNTHETIC sets ``settings.path`` reads in ``settings.generate_synthetic`` unless they are
    there. The default sets (every set, :func:`data.synth.generate_default`) count as there. When only the
    folder the search reads is missing or stale, only its sets are made, at their default sizes (the other
    sets' files are written empty and the folder's record says so; ``python -m data synth --if-missing``,
    which every ``make train-*`` runs, fills them). Each set draws from its own seeded stream, so the sets
    come out byte for byte as when every set is made."""
    from data.synth.generate import DEFAULT_SIZES, corpus_paths, generate, generate_default, stale_reason

    def say(message: str) -> None:
        print(message, flush=True)

    folder, sets = Path(settings.generate_synthetic), synthetic_sets(settings)
    if sets is None:
        generate_default(folder, progress=say)
        return
    paths = corpus_paths()
    if stale_reason(folder, paths) is None:  # the default sets
        return
    sizes = {name: size if name in sets else 0 for name, size in DEFAULT_SIZES.items()}
    reason = stale_reason(folder, paths, sizes=sizes)
    if reason is None:
        return
    if reason != "missing":
        say(f"{folder}: regenerating the synthetic sets {sets}: {reason}")
    generate(folder, 0, sizes, progress=say)


def read_pairs(settings: DataSettings) -> list[RatedPair]:
    """Every rated pair the config names, in the reader's order (RaTE-Eval: train file first)."""
    if settings.generate_synthetic:
        ensure_synthetic(settings)
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

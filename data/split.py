"""The project's one report-level split of the sample corpus: ``data/samples/split.json``.

Every consumer on the sample profile uses it: the NER files (``python -m data build-samples``), every
SYNTHETIC set (references, candidates and inserted sentences come from one side;
:mod:`data.synth.generate`), the W search, the reward model, ClinicalBLEURT, the demo and the sample
ablation tables. Evaluation uses test-split reports only; ``tests/test_leakage.py`` proves it.

Assignment: reports are grouped by case (the ``group`` key of the corpus; reports of one group are
near-duplicate cases or follow-ups of one patient) and each group goes, as a whole, to ``train``,
``dev`` or ``test``: within each writing style, groups are ordered by the SHA-1 of
``"<salt>:<group>"`` and cut where the cumulative report count passes 70% and 85%. Deterministic,
stratified by style, 70/15/15 up to one group. Adding reports can move others, which is why the
split is stored: ``python -m data split`` writes it, and a test fails when the stored file
disagrees with the corpus (a report without a side, a group on two sides).

A second split, for the learned-metric experiments only: the **unseen-domain split**
``data/samples/split_unseen.json`` (:func:`make_held_out_split`), whose test side holds every report of
some anatomies (:data:`UNSEEN_ANATOMIES`: head, spine, breast) and no other, so that no training or dev
report shares their anatomy; a case group with one report of a held-out anatomy goes whole to test.
Dev is carved from the rest by the same hashed-group rule (85/15, stratified by style). The corpus
split stays the default of every command; the unseen-domain sets are made with
``python -m data synth --split data/samples/split_unseen.json --out checkpoints/synthetic_unseen``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from data.annotation import Report

SAMPLES_DIR = Path(__file__).resolve().parent / "samples"
SPLIT_FILE = SAMPLES_DIR / "split.json"
SPLITS = ("train", "dev", "test")
SHARES = (0.70, 0.15, 0.15)
SALT = "radscore-corpus-v2"
UNSEEN_SPLIT_FILE = SAMPLES_DIR / "split_unseen.json"
#: the anatomies the unseen-domain split holds out (our choice: 100 of the 427 sample reports,
#: the anatomies whose words the other reports share least)
UNSEEN_ANATOMIES = ("head", "spine", "breast")
#: train/dev shares of the reports that are not held out
UNSEEN_SHARES = (0.85, 0.15)


class SplitError(ValueError):
    """A split file that does not fit the corpus (a report missing, a group on two sides)."""


def _order(group: str, salt: str) -> str:
    return hashlib.sha1(f"{salt}:{group}".encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CorpusSplit:
    """Report id -> ``train``/``dev``/``test``, and report id -> case group."""

    sides: dict
    groups: dict
    salt: str = SALT
    #: the anatomies whose reports make the whole test side (the unseen-domain split); empty for the
    #: corpus split
    held_out_anatomies: tuple = ()

    def of(self, report_id: str) -> str:
        try:
            return self.sides[report_id]
        except KeyError:
            raise SplitError(f"report {report_id!r} is not in the corpus split "
                             f"({len(self.sides)} reports); run `python -m data split`") from None

    def synthetic_side(self, report_id: str) -> str:
        """The side in the published two-file layouts (RaTE-Eval ``rate_train``/``rate_test``):
        ``dev`` reports count as training data there; only ``test`` is held out."""
        return "test" if self.of(report_id) == "test" else "train"

    def ids(self, side: str) -> set:
        return {r for r, s in self.sides.items() if s == side}

    def case(self, report_id: str) -> str:
        return self.groups.get(report_id, report_id)

    def check(self, reports: list[Report]) -> None:
        """Raise :class:`SplitError` unless the split covers exactly these reports and keeps every
        group on one side."""
        ids = {r.id for r in reports}
        missing, extra = sorted(ids - set(self.sides)), sorted(set(self.sides) - ids)
        if missing or extra:
            raise SplitError(f"the split does not match the corpus: {len(missing)} report(s) without a side "
                             f"{missing[:5]}, {len(extra)} unknown id(s) {extra[:5]}; run `python -m data split`")
        bad = sorted(s for s in set(self.sides.values()) if s not in SPLITS)
        if bad:
            raise SplitError(f"unknown side(s) {bad}; expected {list(SPLITS)}")
        by_group: dict[str, set] = {}
        for r in reports:
            if self.groups.get(r.id, r.id) != r.case:
                raise SplitError(f"report {r.id!r}: group {r.case!r} in the corpus, "
                                 f"{self.groups.get(r.id, r.id)!r} in the split file; run `python -m data split`")
            by_group.setdefault(r.case, set()).add(self.sides[r.id])
        straddling = sorted(g for g, s in by_group.items() if len(s) > 1)
        if straddling:
            raise SplitError(f"group(s) {straddling[:5]} have reports on more than one side")
        if self.held_out_anatomies:
            held = set(self.held_out_anatomies)
            test_cases = {r.case for r in reports if r.anatomy in held}
            wrong = sorted(r.id for r in reports if (self.sides[r.id] == "test") != (r.case in test_cases))
            if wrong:
                raise SplitError(f"unseen-domain split: report(s) {wrong[:5]} are on the wrong side (the test side "
                                 f"holds exactly the case groups with a report of {sorted(held)})")


def make_split(reports: list[Report], salt: str = SALT, shares=SHARES, sides_names=SPLITS) -> CorpusSplit:
    members: dict[str, list[Report]] = {}
    for r in reports:
        members.setdefault(r.case, []).append(r)
    sides = {}
    for style in sorted({m[0].style for m in members.values()}):
        groups = sorted((g for g, m in members.items() if m[0].style == style), key=lambda g: _order(g, salt))
        total = sum(len(members[g]) for g in groups)
        cuts = [sum(shares[:k + 1]) * total for k in range(len(shares))]
        done = 0
        for g in groups:
            # the side whose cumulative share the group's midpoint falls in
            mid = done + len(members[g]) / 2
            side = next((name for name, cut in zip(sides_names, cuts) if mid < cut), sides_names[-1])
            sides.update({r.id: side for r in members[g]})
            done += len(members[g])
    return CorpusSplit(sides, {r.id: r.case for r in reports if r.case != r.id}, salt)


def make_held_out_split(reports: list[Report], anatomies=UNSEEN_ANATOMIES, salt: str = SALT) -> CorpusSplit:
    """The unseen-domain split: test = every case group with a report of one of ``anatomies``; the
    other groups go to train and dev (:data:`UNSEEN_SHARES`) by :func:`make_split`'s rule."""
    held = {a.strip() for a in anatomies if a.strip()}
    known = {r.anatomy for r in reports}
    unknown = sorted(held - known)
    if not held or unknown:
        raise SplitError(f"held-out anatomies {sorted(held)}: {unknown or 'none given'} not in the corpus "
                         f"(its anatomies: {sorted(known)})")
    test_cases = {r.case for r in reports if r.anatomy in held}
    rest = [r for r in reports if r.case not in test_cases]
    if not rest:
        raise SplitError(f"holding out {sorted(held)} leaves no training report")
    part = make_split(rest, salt, UNSEEN_SHARES, ("train", "dev"))
    sides = {**part.sides, **{r.id: "test" for r in reports if r.case in test_cases}}
    return CorpusSplit(sides, {r.id: r.case for r in reports if r.case != r.id}, salt, tuple(sorted(held)))


def to_json(split: CorpusSplit) -> dict:
    counts = Counter(split.sides.values())
    if split.held_out_anatomies:
        head = {"description": "The unseen-domain split of data/samples/reports.jsonl (issue #46), for the learned-metric "
                               "experiments only: its test side holds every report of the held-out anatomies, "
                               "train and dev none; written by `python -m data split --held-out-anatomies "
                               f"{','.join(split.held_out_anatomies)} --out data/samples/split_unseen.json`; "
                               "see data/split.py.",
                "rule": "test: each case group with a report of a held-out anatomy; the other groups go whole to "
                        "train or dev by sha1(salt:group) against the cumulative shares",
                "held_out_anatomies": list(split.held_out_anatomies),
                "salt": split.salt, "shares": dict(zip(("train", "dev"), UNSEEN_SHARES))}
    else:
        head = {"description": "The project's one report-level split of data/samples/reports.jsonl (train/dev/test), "
                               "written by `python -m data split`; see data/split.py.",
                "rule": "each case group goes whole to a side by sha1(salt:group) against the cumulative shares",
                "salt": split.salt, "shares": dict(zip(SPLITS, SHARES))}
    return {**head, "counts": {s: counts.get(s, 0) for s in SPLITS},
            "groups": dict(sorted(split.groups.items())),
            "reports": dict(sorted(split.sides.items()))}


def split_by_rule(reports: list[Report], held_out_anatomies=(), salt: str = SALT) -> CorpusSplit:
    """The corpus split, or with ``held_out_anatomies`` the unseen-domain split, as its rule makes it."""
    return make_held_out_split(reports, held_out_anatomies, salt) if held_out_anatomies else make_split(reports, salt)


def write_split(reports: list[Report], path: str | Path = SPLIT_FILE, salt: str = SALT,
                held_out_anatomies=()) -> CorpusSplit:
    split = split_by_rule(reports, held_out_anatomies, salt)
    split.check(reports)
    Path(path).write_text(json.dumps(to_json(split), indent=1) + "\n", encoding="utf-8")
    return split


def read_split(path: str | Path = SPLIT_FILE) -> CorpusSplit:
    path = Path(path)
    if not path.is_file():
        raise SplitError(f"{path}: no split file; run `python -m data split`")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        return CorpusSplit(dict(obj["reports"]), dict(obj.get("groups", {})), str(obj.get("salt", SALT)),
                           tuple(obj.get("held_out_anatomies", ())))
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as err:
        raise SplitError(f"{path}: not a split file ({err})") from None


def split_for(reports: list[Report], corpus_path: str | Path | None = None,
              split_path: str | Path | None = None) -> CorpusSplit:
    """The split of a corpus: ``split_path`` when given (e.g. the unseen-domain split), else the
    ``split.json`` stored beside its file when there is one (checked against the reports), else the
    same rule computed on the fly (for a user's own corpus)."""
    if split_path is not None:
        split = read_split(split_path)
        split.check(reports)
        return split
    if corpus_path is not None:
        stored = Path(corpus_path).parent / "split.json"
        if stored.is_file():
            split = read_split(stored)
            split.check(reports)
            return split
    return make_split(reports)

"""Rated report pairs, the ER²Score scoring systems, and readers for the simple rating formats.

- :class:`RatedPair` ``(id, reference, candidate, rating, group, meta)``: one human (or synthetic)
  judgement of a candidate against its reference. ``group`` is the unit for splitting and
  bootstrapping (a ReXVal study, one reference report). Every reader of rated pairs returns these
  (:mod:`data.rexval`, :mod:`data.rate_eval`, :func:`read_rating_csv`, :func:`read_bleurt_jsonl`).
- :class:`Triad` ``(original, synonym, opposite, meta)``: RaTE-Eval Task 3.
- :class:`ScoringSystem`, :data:`RADCLIQ`, :data:`MRSCORE` (SPEC §3.1), :class:`ER2Row`,
  :func:`read_er2_jsonl` and :func:`er2_pairs` (the pairing rule of SPEC §3.2).

Formats read here:
- plain CSV with columns ``reference, candidate, rating`` (names configurable; other columns go to
  ``meta``);
- BLEURT JSONL, one ``{"reference", "candidate", "score"}`` object a line (other keys to ``meta``);
- ER² JSONL, one ``{"reference", "candidate", "system", "subscores": {name: value}, "total"}``
  object a line (optional ``id``, ``reference_id``; other keys to ``meta``).
Every problem raises :class:`RatingFormatError` naming the file, the row or line, and what was
expected. Nothing is skipped silently.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path


class RatingFormatError(ValueError):
    """A rating file that does not follow its expected format."""


@dataclass
class RatedPair:
    id: str
    reference: str
    candidate: str
    rating: float
    group: str
    meta: dict = field(default_factory=dict)


@dataclass
class Triad:
    original: str
    synonym: str
    opposite: str
    meta: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ScoringSystem:
    """An ER²Score scoring system: sub-score names, optional weights and the direction.

    ``radcliq``: sub-scores are error counts in the six ReXVal categories, total = their sum,
    fewer is better. ``mrscore``: sub-score ``i`` is the points kept on item ``i``, i.e.
    ``W_i * (1 - S_i)`` with ``S_i`` = 1 when the item has an error, so the total
    ``= sum = 100 - sum(S_i * W_i)``; higher is better.
    """

    name: str
    items: tuple[str, ...]
    weights: tuple[float, ...] | None
    higher_is_better: bool

    def total(self, subscores: dict) -> float:
        return float(sum(subscores[k] for k in self.items))


RADCLIQ = ScoringSystem(
    "radcliq",
    ("false_prediction", "omission", "incorrect_location", "incorrect_severity",
     "added_comparison", "omitted_comparison"),
    None, higher_is_better=False,
)
MRSCORE = ScoringSystem(
    "mrscore",
    ("impression_consistency", "impression_organs", "lesion_description", "clinical_history",
     "completeness", "grammar", "terminology"),
    (30.0, 20.0, 20.0, 10.0, 10.0, 5.0, 5.0), higher_is_better=True,
)
SYSTEMS = {RADCLIQ.name: RADCLIQ, MRSCORE.name: MRSCORE}


@dataclass
class ER2Row:
    id: str
    reference: str
    candidate: str
    system: str
    subscores: dict
    total: float
    group: str
    meta: dict = field(default_factory=dict)


@dataclass
class ER2Pair:
    """Two candidates of one reference: ``accepted`` has the better total (SPEC §3.2).

    Margins are oriented so that better is higher: for a lower-is-better system (RadCliQ error
    counts) ``margin = total_l - total_w`` and ``sub_margins[j] = s_l,j - s_w,j``. ``margin > 0``
    always; a sub-margin may be <= 0.
    """

    system: str
    reference: str
    accepted: ER2Row
    rejected: ER2Row
    margin: float
    sub_margins: dict


def group_of(reference: str) -> str:
    """A stable group key for a reference text (used when a format has no study id)."""
    return "ref-" + hashlib.sha1(reference.encode("utf-8")).hexdigest()[:12]


def text_field(value, where: str, name: str, error=RatingFormatError) -> str:
    if not isinstance(value, str) or not value.strip():
        raise error(f"{where}: {name!r} must be a non-empty string, got {value!r}")
    return value


def number_field(value, where: str, name: str, error=RatingFormatError) -> float:
    if isinstance(value, bool):
        raise error(f"{where}: {name!r} must be a number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise error(f"{where}: {name!r} must be a number, got {value!r}") from None
    if not math.isfinite(out):
        raise error(f"{where}: {name!r} must be finite, got {value!r}")
    return out


def read_csv_table(path: str | Path, required: list[str]):
    """A CSV as a DataFrame of strings; raises unless every ``required`` column is present."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise RatingFormatError(f"{path}: file not found")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except Exception as err:  # pandas raises several parser error types
        raise RatingFormatError(f"{path}: cannot be read as CSV ({err})") from err
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise RatingFormatError(
            f"{path}: missing column(s) {missing}; found columns {list(df.columns)}"
        )
    if df.empty:
        raise RatingFormatError(f"{path}: no rows")
    return df


def read_jsonl(path: str | Path) -> list[tuple[int, dict]]:
    """``(line number, object)`` of every non-blank line; raises on invalid JSON."""
    path = Path(path)
    if not path.is_file():
        raise RatingFormatError(f"{path}: file not found")
    out = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise RatingFormatError(f"{path}:{lineno}: not valid JSON ({err.msg})") from None
            if not isinstance(rec, dict):
                raise RatingFormatError(f"{path}:{lineno}: expected a JSON object")
            out.append((lineno, rec))
    if not out:
        raise RatingFormatError(f"{path}: no records")
    return out


def read_rating_csv(path: str | Path, reference: str = "reference", candidate: str = "candidate",
                    rating: str = "rating", id_column: str | None = None,
                    group_column: str | None = None) -> list[RatedPair]:
    """A plain CSV of ``reference, candidate, rating`` (column names configurable)."""
    cols = [reference, candidate, rating] + [c for c in (id_column, group_column) if c]
    df = read_csv_table(path, cols)
    out = []
    for k, row in enumerate(df.to_dict("records")):
        where = f"{path}: row {k} (line {k + 2})"
        ref = text_field(row[reference], where, reference)
        out.append(RatedPair(
            str(row[id_column]) if id_column else f"{Path(path).name}:{k}",
            ref, text_field(row[candidate], where, candidate),
            number_field(row[rating], where, rating),
            str(row[group_column]) if group_column else group_of(ref),
            {c: v for c, v in row.items() if c not in cols},
        ))
    return out


def read_bleurt_jsonl(path: str | Path) -> list[RatedPair]:
    """BLEURT fine-tuning data: JSON lines ``{"reference", "candidate", "score"}``."""
    out = []
    for lineno, rec in read_jsonl(path):
        where = f"{path}:{lineno}"
        for key in ("reference", "candidate", "score"):
            if key not in rec:
                raise RatingFormatError(f"{where}: missing key {key!r} (expected reference, "
                                        "candidate, score)")
        ref = text_field(rec["reference"], where, "reference")
        meta = {k: v for k, v in rec.items()
                if k not in ("reference", "candidate", "score", "id", "reference_id")}
        out.append(RatedPair(str(rec.get("id", f"{Path(path).name}:{lineno}")), ref,
                             text_field(rec["candidate"], where, "candidate"),
                             number_field(rec["score"], where, "score"),
                             str(rec.get("reference_id") or group_of(ref)), meta))
    return out


def read_er2_jsonl(path: str | Path, systems: dict | None = None,
                   check_total: bool = True) -> list[ER2Row]:
    """ER²Score training rows; sub-scores are checked against known ``systems``.

    For a known system the sub-score names must be exactly its items and, with ``check_total``,
    ``total`` must equal their sum. Rows of an unknown system must all use the same names.
    """
    systems = SYSTEMS if systems is None else systems
    out, names_seen = [], {}
    for lineno, rec in read_jsonl(path):
        where = f"{path}:{lineno}"
        for key in ("reference", "candidate", "system", "subscores", "total"):
            if key not in rec:
                raise RatingFormatError(f"{where}: missing key {key!r} (expected reference, "
                                        "candidate, system, subscores, total)")
        system = text_field(rec["system"], where, "system")
        subs = rec["subscores"]
        if not isinstance(subs, dict) or not subs:
            raise RatingFormatError(f"{where}: 'subscores' must be a non-empty object")
        subs = {str(k): number_field(v, where, f"subscores.{k}") for k, v in subs.items()}
        expected = list(systems[system].items) if system in systems else names_seen.get(system)
        if expected is not None and sorted(subs) != sorted(expected):
            raise RatingFormatError(
                f"{where}: sub-scores {sorted(subs)} do not match system {system!r}: expected "
                f"{sorted(expected)}"
            )
        names_seen.setdefault(system, list(subs))
        total = number_field(rec["total"], where, "total")
        if check_total and abs(total - sum(subs.values())) > 1e-6:
            raise RatingFormatError(
                f"{where}: total {total:g} is not the sum of the sub-scores ({sum(subs.values()):g})"
            )
        ref = text_field(rec["reference"], where, "reference")
        meta = {k: v for k, v in rec.items()
                if k not in ("id", "reference", "candidate", "system", "subscores", "total",
                             "reference_id")}
        out.append(ER2Row(str(rec.get("id", f"{Path(path).name}:{lineno}")), ref,
                          text_field(rec["candidate"], where, "candidate"), system, subs, total,
                          str(rec.get("reference_id") or group_of(ref)), meta))
    return out


def er2_pairs(rows: list[ER2Row], systems: dict | None = None) -> list[ER2Pair]:
    """Every two rows of one system and one reference group with different totals form a pair.

    Rows with equal totals express no preference and form no pair (SPEC §3.2 requires m > 0).
    A system missing from ``systems`` is taken as higher-is-better.
    """
    systems = SYSTEMS if systems is None else systems
    groups: dict[tuple[str, str], list[ER2Row]] = {}
    for row in rows:
        groups.setdefault((row.system, row.group), []).append(row)
    out = []
    for (system, _), members in groups.items():
        sign = 1.0 if systems.get(system, ScoringSystem(system, (), None, True)).higher_is_better else -1.0
        for a, b in combinations(members, 2):
            if a.total == b.total:
                continue
            w, l = (a, b) if sign * (a.total - b.total) > 0 else (b, a)
            out.append(ER2Pair(system, w.reference, w, l, sign * (w.total - l.total),
                               {k: sign * (w.subscores[k] - l.subscores.get(k, 0.0)) + 0.0
                                for k in w.subscores}))
    return out

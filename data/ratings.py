"""Rated report pairs, the ER²Score scoring systems, and readers for the simple rating formats.

- :class:`RatedPair` ``(id, reference, candidate, rating, group, meta)``: one human (or synthetic)
  judgement of a candidate against its reference. ``group`` is the unit for splitting and
  bootstrapping (a ReXVal study, one reference report). Every reader of rated pairs returns these
  (:mod:`data.rexval`, :mod:`data.rate_eval`, :func:`read_rating_csv`, :func:`read_bleurt_jsonl`).
- :class:`Triad` ``(original, synonym, opposite, meta)``: RaTE-Eval Task 3.
- :class:`ScoringSystem`, :data:`RADCLIQ`, :data:`MRSCORE` (SPEC §3.1; defined in
  :mod:`radscore.systems` and re-exported here), :class:`ER2Row`, :func:`read_er2_jsonl`, and
  :func:`pair_er2_rows` / :func:`er2_pairs` (the pairing rule of SPEC §3.2).

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

import csv
import hashlib
import json
import logging
import math
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from data.textfile import numbered_lines
from radscore.systems import (BUILTIN_SYSTEMS, MRSCORE, RADCLIQ, ScoringSystem,  # noqa: F401 (re-exported)
                              ScoringSystemError)

log = logging.getLogger(__name__)

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


SYSTEMS = BUILTIN_SYSTEMS  # name -> ScoringSystem (defined in radscore.systems)


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
        raise error(f"{where}: {name!r} must be a number, got {value!r:.60}") from None
    except OverflowError:  # an integer beyond the float range (JSON allows any length)
        raise error(f"{where}: {name!r} must be finite, got an integer of {len(str(abs(value)))} digits") from None
    if not math.isfinite(out):
        raise error(f"{where}: {name!r} must be finite, got {value!r}")
    return out


def read_csv_table(path: str | Path, required: list[str]):
    """A CSV as a DataFrame of strings (every cell as written; a UTF-8 byte-order mark is
    ignored); raises unless every ``required`` column is present, the header names are distinct,
    and every row has as many fields as the header (a row with fewer fields is what a truncated
    file looks like, so it is an error, never padded)."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise RatingFormatError(f"{path}: file not found")
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            records = [(reader.line_num, row) for row in reader if row]
    except (UnicodeDecodeError, csv.Error) as err:
        raise RatingFormatError(f"{path}: cannot be read as UTF-8 CSV ({err})") from None
    if not records:
        raise RatingFormatError(f"{path}: empty file (no header)")
    header = records[0][1]
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise RatingFormatError(f"{path}: repeated column name(s) {repeated}")
    for k, (line, row) in enumerate(records[1:]):
        if len(row) != len(header):
            raise RatingFormatError(f"{path}: row {k} (ending on line {line}) has {len(row)} fields but the "
                                    f"header has {len(header)} (a truncated or misquoted file?)")
    missing = [c for c in required if c not in header]
    if missing:
        raise RatingFormatError(f"{path}: missing column(s) {missing}; found columns {header}")
    if len(records) == 1:
        raise RatingFormatError(f"{path}: no rows")
    return pd.DataFrame([row for _, row in records[1:]], columns=header, dtype=str)


def read_jsonl(path: str | Path) -> list[tuple[int, dict]]:
    """``(line number, object)`` of every non-blank line; raises on invalid JSON."""
    path = Path(path)
    if not path.is_file():
        raise RatingFormatError(f"{path}: file not found")
    out = []
    for lineno, line in numbered_lines(path, RatingFormatError):
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

    For a known system the sub-score names must be exactly its items, each in the system's range,
    and, with ``check_total``, ``total`` must equal the system's total rule (the sum, or the
    weighted sum). Rows of an unknown system must all use the same names (total = their sum).
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
        known = systems.get(system)
        expected = list(known.items) if known is not None else names_seen.get(system)
        if expected is not None and sorted(subs) != sorted(expected):
            raise RatingFormatError(
                f"{where}: sub-scores {sorted(subs)} do not match system {system!r}: expected "
                f"{sorted(expected)}"
            )
        if known is not None:
            try:
                known.check_subscores(subs, where)
            except ScoringSystemError as err:
                raise RatingFormatError(str(err)) from None
        names_seen.setdefault(system, list(subs))
        total = number_field(rec["total"], where, "total")
        rule_total = known.total(subs) if known is not None else sum(subs.values())
        if check_total and abs(total - rule_total) > 1e-6:
            rule = "weighted sum" if known is not None and known.total_rule == "weighted_sum" else "sum"
            raise RatingFormatError(
                f"{where}: total {total:g} is not the {rule} of the sub-scores ({rule_total:g})"
            )
        ref = text_field(rec["reference"], where, "reference")
        meta = {k: v for k, v in rec.items()
                if k not in ("id", "reference", "candidate", "system", "subscores", "total",
                             "reference_id")}
        out.append(ER2Row(str(rec.get("id", f"{Path(path).name}:{lineno}")), ref,
                          text_field(rec["candidate"], where, "candidate"), system, subs, total,
                          str(rec.get("reference_id") or group_of(ref)), meta))
    return out


@dataclass
class PairingSummary:
    """What the pairing rule made of the rows: nothing is dropped without being counted."""

    rows: int = 0
    groups: int = 0
    pairs: int = 0
    tied: int = 0  # candidate pairs skipped because their totals are equal (no preference)
    single: int = 0  # groups with one row (no pair possible)

    def __str__(self) -> str:
        return (f"{self.rows} rows in {self.groups} reference groups -> {self.pairs} pairs; "
                f"{self.tied} pairs skipped for equal totals; {self.single} groups with a single row")


def pair_er2_rows(rows: list[ER2Row], systems: dict | None = None) -> tuple[list[ER2Pair], PairingSummary]:
    """The pairing rule (SPEC §3.2) with its summary.

    Every two rows of one system and one reference group form a pair; the one with the better
    total is accepted. Margins are in internal (higher-is-better) units of the system
    (:meth:`radscore.systems.ScoringSystem.to_internal`), so ``margin > 0`` always. Rows with
    equal totals express no preference: that pair is skipped and counted in ``summary.tied``.
    A system missing from ``systems`` is taken as higher-is-better with total = sum.
    """
    systems = SYSTEMS if systems is None else systems
    groups: dict[tuple[str, str], list[ER2Row]] = {}
    for row in rows:
        groups.setdefault((row.system, row.group), []).append(row)
    out, summary = [], PairingSummary(rows=len(rows), groups=len(groups))
    for (name, _), members in groups.items():
        system = systems.get(name) or ScoringSystem(name, tuple(members[0].subscores), None, True)
        summary.single += len(members) == 1
        for a, b in combinations(members, 2):
            if a.total == b.total:
                summary.tied += 1
                continue
            sign = system.sign
            w, l = (a, b) if sign * (a.total - b.total) > 0 else (b, a)
            iw, il = system.to_internal(w.subscores), system.to_internal(l.subscores)
            out.append(ER2Pair(name, w.reference, w, l,
                               system.total_to_internal(w.total) - system.total_to_internal(l.total),
                               {k: x - y + 0.0 for k, x, y in zip(system.items, iw, il)}))
    summary.pairs = len(out)
    return out, summary


def er2_pairs(rows: list[ER2Row], systems: dict | None = None) -> list[ER2Pair]:
    """The pairs of :func:`pair_er2_rows`; skipped ties are reported with a logged warning."""
    pairs, summary = pair_er2_rows(rows, systems)
    if summary.tied:
        log.warning("ER² pairing: %s", summary)
    return pairs

"""ClinicalBLEURT data: the quality target of SPEC §4 and the reader of rated section pairs.

Target (SPEC §4), the project's one implementation (the synthetic generator uses it too)::

    quality = 1 - error_score / max_sentlen
    error_score = w_critical * critical + w_non_critical * non_critical + w_spelling * spelling_grammar

with default normalised weights critical 1, non-critical 1/3, spelling/grammar 1/12
(:data:`BLEURT_WEIGHTS`, configurable). ``max_sentlen`` is the larger sentence count of the two
texts, counted with radscore's radiology splitter (:func:`radscore.splitter.split_sentences`, then
:func:`radscore.text.clean_sentences`: stripped, sentences without a word or under 3 characters
dropped). A text with no countable sentence (e.g. ``"ok"``) counts as one sentence, so the
formula is always defined. **When the error score exceeds the sentence count** (several
critical errors per sentence) the formula's value is kept as it is: the quality goes below 0.
It is never clipped.

Rows (JSON lines, one section pair a line), in either form:

- ``{"reference", "candidate", "critical", "non_critical", "spelling"}``: error counts; the
  target is computed. ``spelling_grammar`` is accepted for ``spelling`` (the generator writes it).
- ``{"reference", "candidate", "score"}``: BLEURT's fine-tuning format; the score is the target.

Optional keys: ``id``, ``reference_id`` (the group for splitting; default: a hash of the
reference), ``section`` (any name, e.g. HPI, EXAM, RESULTS, ASSESSMENT); other keys go to
``meta``. A row with both counts and a score uses ``prefer`` (``"counts"`` by default).

**Empty sections are removed and counted**: a row whose reference or candidate is ``null``, ``""``
or only white space is dropped (as the paper dropped empty sections) and counted, per section, in
the :class:`ReadSummary` returned with the rows. Every other problem raises
:class:`~data.ratings.RatingFormatError` naming the file, the line and what was expected.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from data.ratings import RatedPair, RatingFormatError, group_of, number_field, read_jsonl
from radscore.splitter import split_sentences
from radscore.text import clean_sentences

ERROR_KINDS = ("critical", "non_critical", "spelling_grammar")
BLEURT_WEIGHTS = {"critical": 1.0, "non_critical": 1.0 / 3.0, "spelling_grammar": 1.0 / 12.0}
# accepted names of each count in a row, first the canonical one
COUNT_KEYS = {"critical": ("critical",), "non_critical": ("non_critical",),
              "spelling_grammar": ("spelling_grammar", "spelling")}
NO_SECTION = "(no section)"


def check_weights(weights: dict | None) -> dict[str, float]:
    """The weights to use: :data:`BLEURT_WEIGHTS` when ``None``; otherwise exactly the three
    :data:`ERROR_KINDS`, finite and non-negative."""
    if weights is None:
        return dict(BLEURT_WEIGHTS)
    if not isinstance(weights, dict) or sorted(weights) != sorted(ERROR_KINDS):
        got = sorted(weights) if isinstance(weights, dict) else type(weights).__name__
        raise ValueError(f"ClinicalBLEURT weights must name exactly {list(ERROR_KINDS)}, got {got}")
    out = {}
    for k in ERROR_KINDS:
        v = weights[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"ClinicalBLEURT weight {k!r} must be a finite number >= 0, got {v!r}")
        out[k] = float(v)
    return out


def count_sentences(text: str) -> int:
    """Sentences of ``text`` as the target counts them (radscore's radiology splitter, cleaned)."""
    return len(clean_sentences(split_sentences(text)))


def clinical_bleurt_quality(reference: str, candidate: str, counts: dict,
                            weights: dict | None = None) -> tuple[float, float, int]:
    """``(quality, error_score, max_sentlen)`` with ``quality = 1 - error_score / max_sentlen``
    (see the module doc: never clipped; it is negative when the error score exceeds the
    sentence count). ``counts`` maps each of :data:`ERROR_KINDS` to a number of errors."""
    weights = check_weights(weights)
    missing = [k for k in ERROR_KINDS if k not in counts]
    if missing:
        raise ValueError(f"error counts lack {missing}; expected {list(ERROR_KINDS)}")
    error_score = sum(weights[k] * counts[k] for k in ERROR_KINDS)
    max_sentlen = max(count_sentences(reference), count_sentences(candidate), 1)
    return 1.0 - error_score / max_sentlen, float(error_score), max_sentlen


@dataclass
class ReadSummary:
    """What a read kept and removed, so that nothing is dropped silently."""

    path: str
    lines: int = 0
    kept: int = 0
    empty_removed: Counter = field(default_factory=Counter)  # section -> rows removed
    target_from: Counter = field(default_factory=Counter)  # "counts" / "score" -> rows kept
    negative_targets: int = 0  # kept rows whose error score exceeds the sentence count

    @property
    def removed(self) -> int:
        return sum(self.empty_removed.values())

    def describe(self) -> str:
        parts = [f"{self.path}: {self.lines} rows, {self.kept} kept"]
        if self.removed:
            by = ", ".join(f"{s}: {n}" for s, n in sorted(self.empty_removed.items()))
            parts.append(f"{self.removed} removed with an empty reference or candidate ({by})")
        parts.append("target from " + ", ".join(f"{k} {n}" for k, n in sorted(self.target_from.items())))
        if self.negative_targets:
            parts.append(f"{self.negative_targets} targets below 0 (error score above the sentence count)")
        return "; ".join(parts)


def _is_empty(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _text(value, where: str, name: str) -> str:
    if not isinstance(value, str):
        raise RatingFormatError(f"{where}: {name!r} must be a string (or null/empty for an "
                                f"empty section), got {value!r:.60}")
    return value


def _counts(rec: dict, where: str) -> dict[str, float] | None:
    """The three error counts of a row, or None when it has none; an error when it has some."""
    found, missing = {}, []
    for kind, keys in COUNT_KEYS.items():
        present = [k for k in keys if k in rec]
        if len(present) > 1 and rec[present[0]] != rec[present[1]]:
            raise RatingFormatError(f"{where}: {present[0]!r} and {present[1]!r} disagree "
                                    f"({rec[present[0]]!r} vs {rec[present[1]]!r}); give one")
        if not present:
            missing.append(keys[-1] if kind == "spelling_grammar" else kind)
            continue
        value = number_field(rec[present[0]], where, present[0])
        if value < 0:
            raise RatingFormatError(f"{where}: {present[0]!r} must be >= 0, got {value:g}")
        found[kind] = value
    if not found:
        return None
    if missing:
        raise RatingFormatError(f"{where}: error counts are incomplete: missing {missing} "
                                "(expected critical, non_critical, spelling)")
    return found


def read_clinical_bleurt_jsonl(path: str | Path, weights: dict | None = None,
                               prefer: Literal["counts", "score"] = "counts"
                               ) -> tuple[list[RatedPair], ReadSummary]:
    """Rated section pairs of one JSONL file and a summary of what was kept (module doc).

    Each :class:`~data.ratings.RatedPair` has ``rating`` = the target and ``meta`` holding
    ``section``, ``target_from`` and, for count rows, the counts, ``error_score`` and
    ``max_sentlen``, plus any extra keys of the row.
    """
    if prefer not in ("counts", "score"):
        raise ValueError(f"prefer must be 'counts' or 'score', got {prefer!r}")
    weights = check_weights(weights)
    summary, out = ReadSummary(str(path)), []
    known = {"id", "reference_id", "reference", "candidate", "score", "section",
             *(k for keys in COUNT_KEYS.values() for k in keys)}
    for lineno, rec in read_jsonl(path):
        summary.lines += 1
        where = f"{path}:{lineno}"
        for key in ("reference", "candidate"):
            if key not in rec:
                raise RatingFormatError(f"{where}: missing key {key!r} (expected reference, candidate "
                                        "and either score or critical, non_critical, spelling)")
        section = rec.get("section")
        if section is not None and not isinstance(section, str):
            raise RatingFormatError(f"{where}: 'section' must be a string, got {section!r}")
        section = section or NO_SECTION
        counts = _counts(rec, where)
        score = number_field(rec["score"], where, "score") if "score" in rec else None
        if counts is None and score is None:
            raise RatingFormatError(f"{where}: no target: expected 'score' or the error counts "
                                    "critical, non_critical, spelling")
        if _is_empty(rec["reference"]) or _is_empty(rec["candidate"]):
            summary.empty_removed[section] += 1
            continue
        ref = _text(rec["reference"], where, "reference")
        cand = _text(rec["candidate"], where, "candidate")
        meta = {k: v for k, v in rec.items() if k not in known}
        meta["section"] = section
        if counts is not None and (score is None or prefer == "counts"):
            target, error_score, max_sentlen = clinical_bleurt_quality(ref, cand, counts, weights)
            meta.update(counts, error_score=error_score, max_sentlen=max_sentlen, target_from="counts")
            if score is not None:
                meta["file_score"] = score
            summary.negative_targets += target < 0
        else:
            target = score
            meta["target_from"] = "score"
            if counts is not None:
                meta.update(counts)
        summary.target_from[meta["target_from"]] += 1
        summary.kept += 1
        out.append(RatedPair(str(rec.get("id", f"{Path(path).name}:{lineno}")), ref, cand, float(target),
                             str(rec.get("reference_id") or group_of(ref)), meta))
    return out, summary

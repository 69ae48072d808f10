"""The inline annotation format of the authored corpus: ``[text|TYPE]``.

A sentence such as ``No [pleural effusion|NON-ABNORMALITY] or [pneumothorax|NON-DISEASE].``
is parsed into its plain text, its words and its entities (inclusive word indices).
Words come from :func:`tokenize_words`, the project's one word tokenizer for authored text.

Every malformed annotation raises :class:`AnnotationError` with the character position and
the reason; :func:`validate_reports_file` reports them as ``file:line: reason``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from data.textfile import numbered_lines
from radscore.labels import ENTITY_TYPES, OUTSIDE

# Words: numbers with decimals ("3.5"), words with inner hyphens, slashes or apostrophes
# ("C5-C6", "s/p", "T2-weighted"), else any single non-space symbol (punctuation).
WORD_RE = re.compile(r"\d+(?:[.,]\d+)*|\w+(?:[-'/]\w+)*|[^\w\s]")

REPORT_KEYS = ("id", "modality", "anatomy", "style", "findings", "impression")
# Optional keys: ``preamble`` (INDICATION / TECHNIQUE / COMPARISON lines, each written with its
# header, annotated like any sentence) and ``group`` (the case a report belongs to: reports of one
# group are near-duplicate cases and always fall on the same side of the corpus split).
OPTIONAL_KEYS = ("preamble", "group")
SECTIONS = ("preamble", "findings", "impression")
STYLES = ("clinical", "teaching")
MODALITIES = (
    "X-ray", "CT", "CTA", "MRI", "MRA", "Ultrasound", "Mammography", "Fluoroscopy",
    "Nuclear medicine", "PET-CT",
)
ANATOMIES = (
    "chest", "head", "neck", "spine", "abdomen", "pelvis", "upper extremity",
    "lower extremity", "breast", "cardiac", "vascular", "genitourinary", "whole body",
)


class AnnotationError(ValueError):
    """A malformed inline annotation."""


@dataclass(frozen=True)
class Entity:
    start: int  # first word index
    end: int  # last word index, inclusive (PURE convention)
    type: str


@dataclass(frozen=True)
class AnnotatedSentence:
    text: str
    words: tuple[str, ...]
    entities: tuple[Entity, ...]

    def iob_tags(self) -> list[str]:
        return entities_to_iob(len(self.words), self.entities)

    def entity_texts(self) -> list[tuple[str, str]]:
        return [(" ".join(self.words[e.start : e.end + 1]), e.type) for e in self.entities]


def tokenize_words(text: str) -> list[tuple[str, int, int]]:
    """Split text into words with their character offsets ``(word, start, end)``."""
    return [(m.group(), m.start(), m.end()) for m in WORD_RE.finditer(text)]


def entities_to_iob(n_words: int, entities) -> list[str]:
    tags = [OUTSIDE] * n_words
    for e in entities:
        tags[e.start] = f"B-{e.type}"
        for i in range(e.start + 1, e.end + 1):
            tags[i] = f"I-{e.type}"
    return tags


def _parse_marks(annotated: str) -> tuple[str, list[tuple[int, int, str]]]:
    """Strip ``[text|TYPE]`` marks; return plain text and character spans with types."""
    plain: list[str] = []
    spans: list[tuple[int, int, str]] = []
    i, n = 0, len(annotated)
    while i < n:
        ch = annotated[i]
        if ch == "[":
            close = annotated.find("]", i + 1)
            nxt_open = annotated.find("[", i + 1)
            if close < 0:
                raise AnnotationError(f"unbalanced bracket: '[' at column {i + 1} is never closed")
            if 0 <= nxt_open < close:
                raise AnnotationError(
                    f"overlapping or nested spans: '[' at column {nxt_open + 1} opens inside the "
                    f"span opened at column {i + 1}"
                )
            body = annotated[i + 1 : close]
            if "|" not in body:
                raise AnnotationError(f"span at column {i + 1} has no '|TYPE' part: {body!r}")
            text, _, etype = body.rpartition("|")
            if "|" in text:
                raise AnnotationError(f"span at column {i + 1} has more than one '|': {body!r}")
            if etype not in ENTITY_TYPES:
                raise AnnotationError(
                    f"unknown type {etype!r} at column {i + 1}; expected one of {list(ENTITY_TYPES)}"
                )
            if not text.strip():
                raise AnnotationError(f"empty span at column {i + 1}")
            if text != text.strip():
                raise AnnotationError(
                    f"span {text!r} at column {i + 1} has white space inside its brackets"
                )
            start = sum(len(p) for p in plain)
            plain.append(text)
            spans.append((start, start + len(text), etype))
            i = close + 1
        elif ch in "]|":
            raise AnnotationError(f"unbalanced bracket: stray {ch!r} at column {i + 1}")
        else:
            plain.append(ch)
            i += 1
    return "".join(plain), spans


def parse_annotated(annotated: str) -> AnnotatedSentence:
    """Parse one inline-annotated sentence; raise :class:`AnnotationError` when malformed."""
    if not isinstance(annotated, str) or not annotated.strip():
        raise AnnotationError("empty sentence")
    text, spans = _parse_marks(annotated)
    words = tokenize_words(text)
    starts = {s: k for k, (_, s, _) in enumerate(words)}
    ends = {e: k for k, (_, _, e) in enumerate(words)}
    entities = []
    for s, e, etype in spans:
        if s not in starts or e not in ends:
            raise AnnotationError(
                f"span {text[s:e]!r} does not fall on word boundaries: the words change when "
                "the annotation is stripped (a bracket splits a word)"
            )
        entities.append(Entity(starts[s], ends[e], etype))
    return AnnotatedSentence(text, tuple(w for w, _, _ in words), tuple(entities))


def strip_annotation(annotated: str) -> str:
    return _parse_marks(annotated)[0]


@dataclass(frozen=True)
class Report:
    id: str
    modality: str
    anatomy: str
    style: str
    findings: tuple[AnnotatedSentence, ...]
    impression: tuple[AnnotatedSentence, ...]
    raw: dict
    preamble: tuple[AnnotatedSentence, ...] = ()
    group: str = ""

    @property
    def sentences(self) -> tuple[AnnotatedSentence, ...]:
        """Every sentence of the report in reading order (preamble, findings, impression)."""
        return self.preamble + self.findings + self.impression

    @property
    def case(self) -> str:
        """The near-duplicate group of the report (its own id when it has none)."""
        return self.group or self.id

    def text(self, section: str | None = None) -> str:
        """The whole report (``section=None``) or one section, sentences joined by one space."""
        parts = {"preamble": self.preamble, "findings": self.findings, "impression": self.impression}
        if section is not None and section not in parts:
            raise ValueError(f"unknown section {section!r}; expected one of {list(parts)}")
        chosen = [parts[section]] if section else [parts[k] for k in SECTIONS]
        return " ".join(s.text for sec in chosen for s in sec)


def parse_report(record: dict) -> Report:
    """Check one corpus record and parse its sentences; errors name the field and sentence."""
    if not isinstance(record, dict):
        raise AnnotationError("a report must be a JSON object")
    missing = [k for k in REPORT_KEYS if k not in record]
    if missing:
        raise AnnotationError(f"missing keys {missing}")
    if record["style"] not in STYLES:
        raise AnnotationError(f"style {record['style']!r} is not one of {list(STYLES)}")
    if record["modality"] not in MODALITIES:
        raise AnnotationError(f"modality {record['modality']!r} is not one of {list(MODALITIES)}")
    if record["anatomy"] not in ANATOMIES:
        raise AnnotationError(f"anatomy {record['anatomy']!r} is not one of {list(ANATOMIES)}")
    unknown = sorted(set(record) - set(REPORT_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise AnnotationError(f"unknown keys {unknown}; allowed: {list(REPORT_KEYS + OPTIONAL_KEYS)}")
    group = record.get("group", "")
    if not isinstance(group, str):
        raise AnnotationError(f"group must be a string, not {type(group).__name__}")
    sections = {}
    for key in SECTIONS:
        value = record.get(key, [])
        # A report may be impression-only (one-line studies) and need not have a preamble.
        if not isinstance(value, list) or (key == "impression" and not value):
            raise AnnotationError(
                f"{key} must be a {'non-empty ' if key == 'impression' else ''}list of sentences")
        parsed = []
        for k, sentence in enumerate(value):
            try:
                parsed.append(parse_annotated(sentence))
            except AnnotationError as err:
                raise AnnotationError(f"{key}[{k}]: {err}") from None
        sections[key] = tuple(parsed)
    return Report(
        str(record["id"]), record["modality"], record["anatomy"], record["style"],
        sections["findings"], sections["impression"], record, sections["preamble"], group,
    )


def read_reports(path: str | Path) -> list[Report]:
    """Read and validate a corpus JSONL file; the first error raises with ``file:line``."""
    reports, errors = _read(path)
    if errors:
        raise AnnotationError(errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""))
    return reports


def validate_reports_file(path: str | Path) -> list[str]:
    """All problems of a corpus file as ``file:line: reason`` strings (empty when valid)."""
    return _read(path)[1]


def _read(path: str | Path) -> tuple[list[Report], list[str]]:
    path = Path(path)
    reports, errors, seen = [], [], {}
    for lineno, line in numbered_lines(path, AnnotationError):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            errors.append(f"{where}: not valid JSON ({err.msg})")
            continue
        try:
            report = parse_report(record)
        except AnnotationError as err:
            rid = record.get("id") if isinstance(record, dict) else None
            errors.append(f"{where}: report {rid!r}: {err}")
            continue
        if report.id in seen:
            errors.append(f"{where}: duplicate id {report.id!r} (first on line {seen[report.id]})")
            continue
        seen[report.id] = lineno
        reports.append(report)
    return reports, errors

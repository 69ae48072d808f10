"""IOB2 tags <-> entity spans (PURE convention: inclusive word indices).

Invalid IOB policy (one rule, applied everywhere: conversion, metrics, inference):
an ``I-X`` that does not continue an entity of type ``X`` (it follows ``O``, starts the
sentence, or follows an entity of another type) **starts a new entity of type X**, exactly as
if it were ``B-X``. This is the conlleval reading, and it never drops a tagged word.
:func:`repair_iob` rewrites such tags to ``B-X`` so that strict IOB2 tools (seqeval's strict
mode) see the same entities.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from radscore.labels import ENTITY_TYPES, LABEL2ID, OUTSIDE

Span = tuple[int, int, str]  # (start, end inclusive, TYPE)


def _check_tag(tag: str, where: str = "") -> None:
    if tag not in LABEL2ID:
        raise ValueError(f"{where}unknown tag {tag!r}; expected one of {list(LABEL2ID)}")


def repair_iob(tags: Sequence[str]) -> list[str]:
    """Apply the invalid-IOB policy: an ``I-X`` that continues nothing becomes ``B-X``."""
    out: list[str] = []
    prev_type = None
    for tag in tags:
        _check_tag(tag)
        if tag == OUTSIDE:
            out.append(tag)
            prev_type = None
            continue
        prefix, etype = tag[:1], tag[2:]
        if prefix == "I" and prev_type != etype:
            tag = f"B-{etype}"
        out.append(tag)
        prev_type = etype
    return out


def iob_to_spans(tags: Sequence[str]) -> list[Span]:
    """Entities of an IOB2 tag sequence, under the module's invalid-IOB policy."""
    spans: list[Span] = []
    start = None
    etype = None
    for i, tag in enumerate(repair_iob(tags)):
        if tag == OUTSIDE or tag.startswith("B-"):
            if start is not None:
                spans.append((start, i - 1, etype))
                start = etype = None
            if tag != OUTSIDE:
                start, etype = i, tag[2:]
    if start is not None:
        spans.append((start, len(tags) - 1, etype))
    return spans


def spans_to_iob(n_words: int, spans: Iterable[Sequence]) -> list[str]:
    """IOB2 tags for ``n_words`` words; spans must lie inside the sentence and not overlap."""
    tags = [OUTSIDE] * n_words
    for span in sorted((tuple(s) for s in spans), key=lambda s: s[0]):
        start, end, etype = int(span[0]), int(span[1]), str(span[2])
        if etype not in ENTITY_TYPES:
            raise ValueError(f"span {list(span)} has unknown type {etype!r}")
        if not 0 <= start <= end < n_words:
            raise ValueError(f"span {list(span)} lies outside the sentence of {n_words} words")
        if any(t != OUTSIDE for t in tags[start : end + 1]):
            raise ValueError(f"span {list(span)} overlaps another span")
        tags[start] = f"B-{etype}"
        for i in range(start + 1, end + 1):
            tags[i] = f"I-{etype}"
    return tags

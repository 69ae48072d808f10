"""One split of rated rows as an evaluation reads it, whatever the rating format."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RatedSplit:
    """Per row: its id, reference group, texts, a higher-is-better ``target`` and the ``labels`` a
    per-row predictions file carries; ``pairs`` holds ``(better row, worse row)`` indices where the
    rating is a ranking of pairs (ER²Score)."""

    ids: list[str]
    groups: list[str]
    references: list[str]
    candidates: list[str]
    target: list[float]
    labels: list[dict]
    pairs: list[tuple[int, int]] | None = None

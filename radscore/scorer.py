"""The interface every radscore scorer implements (:class:`radscore.RaTEScore`,
:class:`radscore.ClinicalBLEURT`, :class:`radscore.ER2Score`, and any metric added through
:mod:`radscore.registry`).

A scorer scores candidate reports against references, one result per pair, in input order. Each
result has ``to_record()``: the dict that ``radscore score`` writes for the pair (every sub-score
by name; the headline under the key its registry entry names). Everything that runs scorers (the
CLI, Ray, the RadEval and TRL adapters) goes through this interface and the registry, never
through a metric's name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Iterator, Protocol, Sequence


class ScoreResult(Protocol):
    """The result of one pair."""

    def to_record(self) -> dict:
        """The pair's record: every sub-score by name (JSON-serialisable)."""


class Scorer(ABC):
    """A metric loaded for scoring (see the module doc)."""

    @classmethod
    @abstractmethod
    def from_export(cls, source: str, **options: Any) -> "Scorer":
        """The scorer of an export: a folder or the Hub id it was published under; ``options`` are
        the constructor's other arguments (``device=``, ``batch_size=``, ...)."""

    @abstractmethod
    def iter_score(self, candidates: Sequence[str], references: Sequence[str], progress: bool = True,
                   **kw: Any) -> Iterator[ScoreResult]:
        """One result per pair, in input order, as a stream."""

    @abstractmethod
    def score(self, candidates: Sequence[str] | None = None, references: Sequence[str] | None = None,
              **aliases: Any) -> list:
        """One result per pair, in input order (sides by position or by any name of
        :mod:`radscore.inputs`)."""

    @abstractmethod
    def compute_score(self, candidates: Sequence[str] | None = None, references: Sequence[str] | None = None,
                      **aliases: Any) -> list[float]:
        """The headline value of each pair, in input order."""

    @abstractmethod
    def signature(self) -> dict:
        """What produced the scores (models, settings, radscore version)."""

    @property
    def higher_is_better(self) -> bool:
        """The direction of the headline value."""
        return True

    @property
    def subscore_names(self) -> tuple[str, ...]:
        """The record keys of the sub-scores besides the headline (reported by the integrations)."""
        return ()

    def clear_cache(self) -> None:
        """Forget what the scorer kept from earlier calls (``radscore compare`` clears it before
        each chunk, so that a resumed run scores exactly as an uninterrupted one). No-op by default."""

    def headline_detail(self) -> str | None:
        """What to add in parentheses after the headline's label (e.g. the scoring system and its
        direction), or None."""
        return None

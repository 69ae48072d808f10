"""Leakage by content: does a text hold a sentence of a report from the other side of a split?

An id check proves where an item says it comes from; this module reads what the item holds. Given
the corpus reports and a report-level split (the corpus split, :mod:`data.split`, or any other:
:meth:`SentenceIndex.from_sides` takes the held-out and the training report ids), it indexes the
sentences of each side and finds, in any list of texts, the sentences that are (near) copies of a
sentence only the *other* side has:

- ``find_copies(texts, index, direction="held_out")``: texts a model or search trains or selects on
  (train and dev rows, references and candidates; NER training sentences): a copy of a sentence
  that only held-out reports have is a leak of evaluation text into training.
- ``find_copies(texts, index, direction="training")``: evaluated texts: a copy of a sentence that
  only training reports have means an evaluated item was built from training text.

A sentence both sides have (boilerplate such as "No pneumothorax.") is nobody's leak: it is not
indexed. Units are compared as lower-cased token tuples (words, numbers and punctuation marks; a
sentence ends after ``.``, ``?`` or ``!``; a leading section heading "findings:" / "impression:" is
dropped, and so is the final mark).

A *near copy* (threshold, our choice): a unit within :func:`max_edits` token edits (Levenshtein
over tokens: insert, delete or substitute one token) of an other-side-only sentence, and strictly
closer to it than to every sentence of its own side (of any length: a tie goes to the own side). So a text sentence that is an own-side
sentence word for word is never a copy, and one edited from an own-side sentence counts only when
the edit took it closer to the other side's sentence than to its own. :func:`max_edits` allows no
edit below 5 tokens (short sentences differ in one word and mean something else: "no pleural
effusion" / "no pericardial effusion"), 1 edit for 5-7 tokens and 2 for 8 tokens or more.

Efficient by blocking: each indexed sentence is filed under its ``k + 1`` rarest distinct tokens
(``k`` its edit allowance); a unit within ``k`` edits keeps at least one of them (each edit removes
at most one token), so only the sentences filed under one of the unit's tokens are compared.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping

_TOKEN = re.compile(r"\w+(?:[-'.]\w+)*|[^\w\s]")
_ENDS = frozenset({".", "?", "!"})
_HEADINGS = frozenset({"findings", "impression", "impressions", "conclusion", "history", "technique", "comparison"})


def max_edits(n_tokens: int) -> int:
    """The token edits a near copy of an ``n_tokens``-long sentence may differ by (see the module)."""
    return 0 if n_tokens < 5 else 1 if n_tokens < 8 else 2


def units(text: str) -> list[tuple[str, ...]]:
    """The sentence units of a text: lower-cased token tuples, split after ``.``/``?``/``!``, without
    a leading section heading or the final mark; empty units dropped."""
    out, cur = [], []
    for tok in _TOKEN.findall(text.lower()):
        if tok in _ENDS:
            if cur:
                out.append(tuple(cur))
            cur = []
            continue
        if len(cur) == 1 and tok == ":" and cur[0] in _HEADINGS:
            cur = []
            continue
        cur.append(tok)
    if cur:
        out.append(tuple(cur))
    return out


def token_distance(a: tuple, b: tuple, limit: int) -> int:
    """Levenshtein distance over tokens, or ``limit + 1`` as soon as it exceeds ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        if min(cur) > limit:
            return limit + 1
        prev = cur
    return min(prev[-1], limit + 1)


#: the most edits any near copy may differ by (:func:`max_edits` of a long sentence)
MAX_EDITS = 2


class _Blocked:
    """Sentences filed under their ``k + 1`` rarest distinct tokens: ``k`` is the sentence's own
    allowance (:func:`max_edits`), or :data:`MAX_EDITS` for every sentence with ``any_length``
    (an index searched with a ``limit`` up to that many edits, whatever the sentence's length)."""

    def __init__(self, sentences: Iterable[tuple], frequency: Counter, any_length: bool = False):
        self.sentences = set(sentences)
        self.by_token: dict[str, list[tuple]] = {}
        for s in self.sentences:
            k = MAX_EDITS if any_length else max_edits(len(s))
            keys = sorted(set(s), key=lambda t: (frequency[t], t))[:k + 1]
            for t in keys:
                self.by_token.setdefault(t, []).append(s)

    def nearest(self, unit: tuple, limit: int | None = None) -> tuple[int, tuple | None]:
        """(distance, sentence) of the closest filed sentence within its own edit allowance, or
        with ``limit`` (at most :data:`MAX_EDITS`) within ``limit`` edits whatever its length;
        ``(big, None)`` when none is."""
        if unit in self.sentences:
            return 0, unit
        best, found = 10 ** 6, None
        seen = set()
        for t in set(unit):
            for s in self.by_token.get(t, ()):
                if s in seen:
                    continue
                seen.add(s)
                k = max_edits(len(s)) if limit is None else limit
                if k == 0:
                    continue
                d = token_distance(unit, s, k)
                if d <= k and (d, s) < (best, found or ()):
                    best, found = d, s
        return best, found


@dataclass
class SentenceIndex:
    """The sentence units of a split's two sides: ``held_out`` (e.g. the test split) and ``training``
    (every report a model or search may learn or select on: train and dev). ``origin`` maps a unit to
    the ids of the reports that hold it."""

    held_out: set
    training: set
    origin: dict = field(repr=False)

    @classmethod
    def from_sides(cls, reports: Iterable, held_out_ids: Iterable[str], training_ids: Iterable[str]) -> "SentenceIndex":
        """``reports``: :class:`data.annotation.Report` objects (their findings and impression
        sentences are read). A report in neither id set is ignored; one in both is an error."""
        held, train = set(map(str, held_out_ids)), set(map(str, training_ids))
        both = held & train
        if both:
            raise ValueError(f"report(s) {sorted(both)[:5]} are on both sides of the split")
        sides = {"held_out": set(), "training": set()}
        origin: dict = {}
        for r in reports:
            side = "held_out" if r.id in held else "training" if r.id in train else None
            if side is None:
                continue
            for s in r.findings + r.impression:
                for u in units(s.text):
                    sides[side].add(u)
                    origin.setdefault(u, set()).add(r.id)
        return cls(sides["held_out"], sides["training"], origin)

    @classmethod
    def from_split(cls, reports: Iterable, split, held_out: str = "test") -> "SentenceIndex":
        """From a split object with ``of(report_id)`` (:class:`data.split.CorpusSplit`): ``held_out``
        side against all the others."""
        reports = list(reports)
        return cls.from_sides(reports, [r.id for r in reports if split.of(r.id) == held_out],
                              [r.id for r in reports if split.of(r.id) != held_out])

    def __post_init__(self):
        freq = Counter(t for u in self.held_out | self.training for t in set(u))
        self._only = {"held_out": _Blocked(self.held_out - self.training, freq),
                      "training": _Blocked(self.training - self.held_out, freq)}
        self._all = {"held_out": _Blocked(self.held_out, freq, any_length=True),
                     "training": _Blocked(self.training, freq, any_length=True)}

    def only(self, side: str) -> set:
        return self._only[side].sentences


@dataclass(frozen=True)
class Copy:
    """A text unit that copies (``distance`` 0) or nearly copies a sentence only the other side has."""

    what: str
    item: str
    unit: str
    sentence: str
    distance: int
    reports: tuple

    def __str__(self) -> str:
        how = "holds" if self.distance == 0 else f"holds, {self.distance} token edit(s) away,"
        return (f"{self.what} {self.item}: {self.unit!r} {how} the sentence {self.sentence!r} of report(s) "
                f"{', '.join(self.reports[:3])}, which no report of the other side has")


def find_copies(texts: Mapping[str, Iterable], index: SentenceIndex, direction: str,
                allowed: Mapping[str, str] | None = None) -> list[Copy]:
    """The (near) copies, in ``texts``, of sentences only the ``direction`` side has.

    ``texts``: what -> iterable of ``(item name, text)`` (or of bare texts, named by position).
    ``direction``: ``"held_out"`` for texts trained or selected on, ``"training"`` for evaluated
    texts. ``allowed``: reviewed coincidences, unit text (as :attr:`Copy.unit`) -> why; they are not
    returned. A unit is tested once however many texts hold it; every text holding it is reported."""
    if direction not in ("held_out", "training"):
        raise ValueError(f"direction={direction!r}; expected held_out or training")
    own = "training" if direction == "held_out" else "held_out"
    other_only, own_all = index._only[direction], index._all[own]
    allowed = allowed or {}
    verdict: dict[tuple, tuple | None] = {}
    out = []
    for what, items in texts.items():
        for k, item in enumerate(items):
            name, text = (item if isinstance(item, tuple) else (f"#{k}", item))
            if not isinstance(text, str):
                raise TypeError(f"{what} {name}: expected a text, got {type(text).__name__}")
            for u in units(text):
                if u not in verdict:
                    verdict[u] = None
                    if u not in own_all.sentences:  # an own-side sentence word for word is never a copy
                        d, s = other_only.nearest(u)
                        if s is not None and own_all.nearest(u, limit=d)[0] > d:
                            verdict[u] = (d, s)
                found = verdict[u]
                if found is not None and " ".join(u) not in allowed:
                    d, s = found
                    out.append(Copy(what, str(name), " ".join(u), " ".join(s), d, tuple(sorted(index.origin[s]))))
    return out

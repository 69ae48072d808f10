"""Sentence splitters by name, and the radiology sentence splitter itself.

Names (:func:`resolve_splitter`): ``"rush"`` (radscore's reimplementation of the released
package's splitting, :mod:`radscore.rush`), ``"pyrush"`` (the same by medspacy, where it is
installed) and ``"radiology"`` (formerly ``"builtin"``, still accepted): the splitter below,
simpler than the released package's splitting and tuned for radiology reports.

Rules, in order:
1. A line break always ends a sentence (reports are often one finding per line).
2. A numbered-list marker (``1.``, ``2)``) at the start of a line or after a sentence end starts
   a new sentence; the marker stays with its sentence.
3. A period, ``!`` or ``?`` followed by white space
   ends a sentence, unless the word before it is a known abbreviation (``e.g.``, ``i.e.``,
   ``vs.``, ``approx.``, ``Dr.``, ``No.`` before a number, single initials) or the next word starts
   with a lower-case letter (a continuation such as "… 3 cm. in diameter" is rare, but
   "e.g. the" is common). Decimals ("3.5 cm") never split because no white space follows the dot.
4. White space is stripped; empty pieces are dropped. Nothing else is dropped or reordered:
   joining the returned spans' text covers every non-space character of the input.
"""

from __future__ import annotations

import functools
import re
from typing import Callable, Sequence

SPLITTERS = ("rush", "radiology", "pyrush")
SPLITTER_ALIASES = {"builtin": "radiology"}  # the radiology splitter's name before "rush" existed
# splitters that give the released package's sentences
RELEASED_SPLITTERS = ("rush", "pyrush")

ABBREVIATIONS = frozenset({
    "e.g", "i.e", "vs", "approx", "dr", "mr", "mrs", "ms", "fig", "figs", "cf", "al", "resp",
    "incl", "ca", "min", "max", "prox", "dist", "ant", "post", "sup", "inf", "lat", "med",
})
_LIST_MARKER = re.compile(r"(?:(?<=^)|(?<=\s))(\d{1,2}[.)])\s+(?=\S)")
_END = re.compile(r"[.!?]+(?=\s+)")


def _is_abbreviation(text: str, dot: int) -> bool:
    """Is the period at ``dot`` the end of an abbreviation?"""
    start = dot
    while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "([":
        start -= 1
    word = text[start:dot].lower().rstrip(".")
    if word in ABBREVIATIONS:
        return True
    if len(word) == 1 and word.isalpha():  # an initial, "A." in "Dr. A. Smith"
        return True
    if word.isdigit() and len(word) <= 2 and _starts_item(text, start):  # "2." of a list
        return True
    if word == "no":  # "No. 3" (number) but not "No." ending a sentence
        after = text[dot + 1 :].lstrip()
        return after[:1].isdigit()
    return False


def _starts_item(text: str, pos: int) -> bool:
    """Does ``pos`` begin a list item: the text start, a new line, or after a sentence end?"""
    before = text[:pos].rstrip()
    return not before or before[-1] in ".!?:;" or "\n" in text[len(before) : pos]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences of ``text`` (see module rules)."""
    if not isinstance(text, str):
        raise TypeError(f"expected a string, got {type(text).__name__}")
    cuts: set[int] = set()
    for m in re.finditer(r"\n", text):
        cuts.add(m.end())
    for m in _END.finditer(text):
        end = m.end()
        nxt = re.match(r"\s+(\S)", text[end:])
        if not nxt:
            continue
        if text[m.start()] == "." and m.end() - m.start() == 1 and _is_abbreviation(text, m.start()):
            continue
        if nxt.group(1).islower():
            continue
        cuts.add(end)
    for m in _LIST_MARKER.finditer(text):
        if _starts_item(text, m.start()):
            cuts.add(m.start())
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(text)), len(text)]
    spans = []
    for a, b in zip(bounds, bounds[1:]):
        piece = text[a:b]
        stripped = piece.strip()
        if stripped:
            lead = len(piece) - len(piece.lstrip())
            spans.append((a + lead, a + lead + len(stripped)))
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` as strings (see :func:`sentence_spans`)."""
    return [text[a:b] for a, b in sentence_spans(text)]


def pyrush_splitter() -> Callable[[str], list[str]]:
    """medspacy's PyRuSH sentencizer, loaded as the released package loads it."""
    try:
        import medspacy
    except ImportError as err:
        raise ImportError(
            "splitter='pyrush' needs medspacy (pip install medspacy; note that it requires numpy<2). "
            "splitter='rush' (the default) gives the same sentences without medspacy; or pass any "
            "callable text -> list of sentences") from err
    nlp = medspacy.load(medspacy_enable=["medspacy_pyrush"])
    return lambda text: [str(s) for s in nlp(text).sents]


@functools.cache
def rush_splitter():
    """The ``"rush"`` splitter (:class:`radscore.rush.RushSplitter`), made once per process: its
    automaton grows as it meets new texts, so every scorer shares it."""
    from radscore.rush import RushSplitter

    return RushSplitter()


def splitter_name(splitter: str) -> str:
    """The canonical name of a splitter name (``"builtin"`` is ``"radiology"``)."""
    return SPLITTER_ALIASES.get(splitter, splitter)


def resolve_splitter(splitter: str | Callable[[str], Sequence[str]]) -> Callable[[str], Sequence[str]]:
    if callable(splitter):
        return splitter
    name = splitter_name(splitter)
    if name == "rush":
        return rush_splitter()
    if name == "radiology":
        return split_sentences
    if name == "pyrush":
        return pyrush_splitter()
    raise ValueError(f"unknown splitter {splitter!r}; expected one of {list(SPLITTERS)} or a callable")

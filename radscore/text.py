"""Words and sentence filtering shared by the NER inference code, and the candidate input formats of the
learned metrics (:func:`mark_differences`).

:data:`WORD_RE` is the word tokenizer the span NER model was trained with: numbers with decimals
("3.5"), words with inner hyphens, slashes or apostrophes ("C5-C6", "s/p", "T2-weighted"), and
otherwise any single non-space symbol. ``data/annotation.py`` keeps an identical pattern for the
authored corpus (radscore may not import ``data/``); a test checks that the two agree.
"""

from __future__ import annotations

import re

WORD_RE = re.compile(r"\d+(?:[.,]\d+)*|\w+(?:[-'/]\w+)*|[^\w\s]")

# A sentence shorter than this (after stripping) is dropped, as the released scorer drops it.
MIN_SENTENCE_CHARS = 3


def tokenize_words(text: str) -> list[tuple[str, int, int]]:
    """The words of ``text`` with their character offsets: ``[(word, start, end), ...]``."""
    return [(m.group(), m.start(), m.end()) for m in WORD_RE.finditer(text)]


def keep_sentence(sentence: str) -> bool:
    """Whether a (stripped) sentence is scored: it must hold a non-space character and at least
    :data:`MIN_SENTENCE_CHARS` characters. The released package applies the same two tests."""
    return bool(sentence.split()) and len(sentence) >= MIN_SENTENCE_CHARS


def clean_sentences(sentences) -> list[str]:
    """Strip each sentence and keep those that pass :func:`keep_sentence`, in order."""
    out = []
    for s in sentences:
        s = str(s).strip()
        if keep_sentence(s):
            out.append(s)
    return out


# --- the candidate's input format (an opt-in of the learned metrics; "plain" is the papers') -------------------
#: ``plain``: the candidate as written (the papers' input). ``diff_marked``: the candidate with its differences
#: from the reference marked (:func:`mark_differences`), so that a small cross-encoder need not find the edit itself.
#: ``diff_only``: the marked candidate alone, the reference's place left empty: the marked text holds every word of
#: both reports once (shared runs once, deleted and inserted runs marked), so the input is about half as long.
CANDIDATE_FORMATS = ("plain", "diff_marked", "diff_only")
DELETED = ("[-", "-]")
INSERTED = ("[+", "+]")


def mark_differences(reference: str, candidate: str) -> str:
    """The candidate's whitespace-separated words with their differences from the reference's marked: a run of
    reference words the candidate lacks as ``[- words -]`` where they were, a run of candidate words the
    reference lacks as ``[+ words +]`` (a replacement gives both, the deleted run first). Words are compared
    exactly (case and attached punctuation included) and aligned by :class:`difflib.SequenceMatcher` without its
    junk heuristic, so the result depends only on the two texts. Runs of whitespace become one space; a
    candidate equal to its reference (up to whitespace) comes back without a mark."""
    from difflib import SequenceMatcher

    ref, cand = reference.split(), candidate.split()
    out: list[str] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, ref, cand, autojunk=False).get_opcodes():
        if op == "equal":
            out += cand[j1:j2]
            continue
        if op in ("delete", "replace"):
            out += [DELETED[0], *ref[i1:i2], DELETED[1]]
        if op in ("insert", "replace"):
            out += [INSERTED[0], *cand[j1:j2], INSERTED[1]]
    return " ".join(out)


def check_candidate_format(candidate_format: str) -> str:
    if candidate_format not in CANDIDATE_FORMATS:
        raise ValueError(f"candidate_format={candidate_format!r}; expected one of {list(CANDIDATE_FORMATS)}")
    return candidate_format


def format_inputs(candidate_format: str, references, candidates) -> tuple[list[str], list[str]]:
    """The (references, candidates) as the model reads them in ``candidate_format`` (:data:`CANDIDATE_FORMATS`)."""
    if check_candidate_format(candidate_format) == "plain":
        return list(references), list(candidates)
    marked = [mark_differences(r, c) for r, c in zip(references, candidates)]
    return ([""] * len(marked) if candidate_format == "diff_only" else list(references)), marked

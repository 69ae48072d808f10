"""Words and sentence filtering shared by the NER inference code.

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

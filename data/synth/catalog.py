"""Which edits exist, and the seeded loop that applies a number of them to a draft.

The generator chooses an error in three seeded steps, so that rare categories are not drowned by
common ones: a ReXVal category among those with at least one possible edit (uniform), a kind
within it (uniform), then one concrete option (uniform). Options are recomputed after every edit,
so later edits see earlier ones and never overlap them.
"""

from __future__ import annotations

import random

from data.synth import edits
from data.synth import rewrites
from data.synth.draft import Draft, EditConflict, Option, apply
from data.synth.lexicon import Lexicon

ERROR_FINDERS = {
    "insert_finding": None,  # needs donors: see error_options
    "unnegate": rewrites.find_unnegate,
    "antonym": rewrites.find_antonyms,
    "remove_finding": edits.find_remove_finding,
    "negate": rewrites.find_negate,
    "laterality": edits.find_laterality,
    "site": edits.find_site,
    "severity": edits.find_severity,
    "size": edits.find_size,
    "add_comparison": edits.find_add_comparison,
    "remove_comparison": edits.find_remove_comparison,
}
ERROR_KINDS = tuple(ERROR_FINDERS)
# Kinds that make sense inside one sentence (RaTE-Eval Task 1): no sentence insertion or removal.
SENTENCE_KINDS = tuple(k for k in ERROR_KINDS if k not in ("insert_finding", "remove_finding"))
TYPO_FINDERS = {"spelling": rewrites.find_spelling, "grammar": rewrites.find_grammar}
# Meaning-preserving rewrites (no ReXVal category): drawn as often as errors, so that the amount
# of changed text says little about the number of errors (a kind is drawn uniformly first).
MEANING_FINDERS = {
    "synonym": rewrites.find_synonyms,
    "reorder": rewrites.find_reorder,
    "rephrase_normal": rewrites.find_rephrase_normal,
    "negation_list": rewrites.find_negation_list,
    "header": rewrites.find_header,
    "add_negative": None,  # needs donor sentences: see meaning_preserving
}
MEANING_KINDS = tuple(MEANING_FINDERS)
SENTENCE_MEANING_KINDS = ("synonym", "rephrase_normal", "negation_list")
# How many meaning-preserving rewrites a candidate gets, drawn independently of its errors (our
# choice: more common than errors, a mean of 5 against 2.7 for the ReXVal-layout draw, so that
# text distance cannot count the errors); Task 1 (one sentence) draws from TASK1_MEANING_COUNTS.
MEANING_COUNTS = tuple(range(11))  # 0-10
TASK1_MEANING_COUNTS = (0, 1, 1, 2)  # inside one sentence (RaTE-Eval Task 1)


def error_options(draft: Draft, lex: Lexicon, donors=(), kinds=ERROR_KINDS) -> list[Option]:
    out = []
    for kind in kinds:
        if kind == "insert_finding":
            out += edits.find_insert_finding(draft, lex, donors)
        else:
            out += ERROR_FINDERS[kind](draft, lex)
    return out


def _pick(options: list[Option], rng: random.Random) -> Option:
    by_cat: dict = {}
    for o in options:
        by_cat.setdefault(o.category if o.category is not None else 0, []).append(o)
    cat = rng.choice(sorted(by_cat))
    kinds = sorted({o.kind for o in by_cat[cat]})
    kind = rng.choice(kinds)
    return rng.choice([o for o in by_cat[cat] if o.kind == kind])


def add_errors(draft: Draft, n: int, rng: random.Random, lex: Lexicon, donors=(),
               kinds=ERROR_KINDS) -> int:
    """Apply up to ``n`` errors; returns how many were applied (fewer when none is possible)."""
    done = 0
    for _ in range(n):
        options = error_options(draft, lex, donors, kinds)
        if not options:
            break
        apply(draft, _pick(options, rng))
        done += 1
    return done


def add_from(draft: Draft, n: int, rng: random.Random, lex: Lexicon, finders) -> int:
    """Apply up to ``n`` options drawn from ``finders`` (e.g. typos, synonyms)."""
    done = 0
    for _ in range(n):
        options = [o for f in finders for o in f(draft, lex)]
        if not options:
            break
        try:
            apply(draft, _pick(options, rng))
        except EditConflict:  # cannot happen with fresh options; kept as a guard
            break
        done += 1
    return done


def meaning_preserving(draft: Draft, rng: random.Random, lex: Lexicon, n: int = 1,
                       kinds=MEANING_KINDS, negatives=()) -> int:
    """Apply up to ``n`` meaning-preserving rewrites of ``kinds`` (kind uniform, then option);
    ``negatives``: donor sentences for ``add_negative`` (that kind is skipped without them)."""
    finders = [MEANING_FINDERS[k] for k in kinds if k != "add_negative"]
    if "add_negative" in kinds and negatives:
        finders.append(lambda d, lx: rewrites.find_add_negative(d, lx, negatives))
    return add_from(draft, n, rng, lex, finders)

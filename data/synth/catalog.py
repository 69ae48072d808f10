"""Which edits exist, and the seeded loop that applies a number of them to a draft.

The generator chooses an error in three seeded steps, so that rare categories are not drowned by
common ones: a ReXVal category among those with at least one possible edit (uniform), a kind
within it (uniform), then one concrete option (uniform). Options are recomputed after every edit,
so later edits see earlier ones and never overlap them.
"""

from __future__ import annotations

import functools
import random
import re

from data.synth import edits
from data.synth import mirror
from data.synth import rewrites
from data.synth.draft import SURFACE, Draft, EditConflict, Option, apply
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
    "insert_contradiction": None,  # needs negated donor sentences: see error_options
}
ERROR_KINDS = tuple(ERROR_FINDERS)
# Kinds that make sense inside one sentence (RaTE-Eval Task 1): no sentence insertion or removal.
SENTENCE_KINDS = tuple(k for k in ERROR_KINDS
                       if k not in ("insert_finding", "remove_finding", "insert_contradiction"))
TYPO_FINDERS = {"spelling": rewrites.find_spelling, "grammar": rewrites.find_grammar}
# Meaning-preserving rewrites (no ReXVal category). Report candidates draw them through the plan of
# generator v3 (planned_edits below); a kind is drawn uniformly first among those with an option.
MEANING_FINDERS = {
    "synonym": rewrites.find_synonyms,
    "reorder": rewrites.find_reorder,
    "rephrase_normal": rewrites.find_rephrase_normal,
    "negation_list": rewrites.find_negation_list,
    "header": rewrites.find_header,
    "add_negative": None,  # needs donor sentences: see meaning_preserving
    # generator v3 (data.synth.mirror): the surface operations errors make, without an error
    "negation_cue": mirror.find_negation_cue,
    "negated_antonym": mirror.find_negated_antonym,
    "there_is_seen": mirror.find_there_is_seen,
    "measurement": mirror.find_measurement,
    "list_order": mirror.find_list_order,
    "restate": mirror.find_restate,
    "drop_restatement": mirror.find_drop_restatement,
    "merge_sentences": mirror.find_merge_sentences,
}
MEANING_KINDS = tuple(MEANING_FINDERS)
SENTENCE_MEANING_KINDS = ("synonym", "rephrase_normal", "negation_list", "negation_cue", "negated_antonym",
                          "there_is_seen", "measurement", "list_order")
#: the rewrites that change how a negation or a normal statement is worded: the synonym member of a
#: Task 3 triad gets one where the opposite member gets its flip
CUE_MEANING_KINDS = ("negation_cue", "negated_antonym", "negation_list", "rephrase_normal")
# Task 1 (one sentence) draws its in-sentence rewrites from TASK1_MEANING_COUNTS; report candidates
# plan PLANNED_EDITS edits (below).
TASK1_MEANING_COUNTS = (0, 1, 1, 2)  # inside one sentence (RaTE-Eval Task 1)


def error_options(draft: Draft, lex: Lexicon, donors=(), kinds=ERROR_KINDS, negatives=()) -> list[Option]:
    out = []
    for kind in kinds:
        if kind == "insert_finding":
            out += edits.find_insert_finding(draft, lex, donors)
        elif kind == "insert_contradiction":
            out += mirror.find_insert_contradiction(draft, lex, negatives)
        else:
            out += ERROR_FINDERS[kind](draft, lex)
    return out


def _pick(options: list[Option], rng: random.Random) -> Option:
    cat = rng.choice(sorted({c if c is not None else 0 for c in {o.category for o in options}}))
    in_cat = [o for o in options if (o.category if o.category is not None else 0) == cat]
    kinds = sorted({o.kind for o in in_cat})
    kind = rng.choice(kinds)
    return rng.choice([o for o in in_cat if o.kind == kind])


def add_errors(draft: Draft, n: int, rng: random.Random, lex: Lexicon, donors=(),
               kinds=ERROR_KINDS, negatives=()) -> int:
    """Apply up to ``n`` errors; returns how many were applied (fewer when none is possible)."""
    done = 0
    for _ in range(n):
        options = error_options(draft, lex, donors, kinds, negatives)
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


def _meaning_finders(kinds, negatives) -> list:
    return [finder for _, finder in _meaning_finders_by_kind(kinds, negatives)]


def _meaning_finders_by_kind(kinds, negatives) -> list:
    """``(kind, finder)`` of ``kinds`` in their order, ``add_negative`` last (when there are ``negatives``)."""
    finders = [(k, MEANING_FINDERS[k]) for k in kinds if k != "add_negative"]
    if "add_negative" in kinds and negatives:
        finders.append(("add_negative", lambda d, lx: rewrites.find_add_negative(d, lx, negatives)))
    return finders


def meaning_preserving(draft: Draft, rng: random.Random, lex: Lexicon, n: int = 1,
                       kinds=MEANING_KINDS, negatives=()) -> int:
    """Apply up to ``n`` meaning-preserving rewrites of ``kinds`` (kind uniform, then option);
    ``negatives``: donor sentences for ``add_negative`` (that kind is skipped without them)."""
    return add_from(draft, n, rng, lex, _meaning_finders(kinds, negatives))


# --- generator v3: one surface plan for errors and meaning-preserving edits alike ----------------------
#: how often a planned edit is each surface operation, for errors and meaning-preserving edits
#: alike (our choice: in-place rewrites are the common case of both)
SURFACE_RATES = (("rewrite", 0.6), ("insert", 0.2), ("delete", 0.2))
#: meaning-preserving kinds a plan draws from (layout changes are drawn apart: LAYOUT_COUNTS)
PLANNED_MEANING_KINDS = tuple(k for k in MEANING_KINDS if k not in ("reorder", "header"))
#: sentence reordering and section headers, drawn per candidate independently of everything else
#: (our choice): they touch no statement, so their rate must not depend on the errors
LAYOUT_KINDS = ("reorder", "header")
LAYOUT_COUNTS = (0, 1, 1, 2)
#: how many edits (errors and meaning-preserving together) a report candidate plans: drawn
#: independently of its number of errors, so that the amount of changed text cannot count them;
#: a candidate with more errors than the plan gets exactly its errors (our choice: 7-11, above the
#: 0-7 errors of the sets' draws)
PLANNED_EDITS = tuple(range(7, 12))


#: the negation cue whose deletion or insertion a Task 3 rewording matches to its flip (our choice:
#: "no", the commonest cue and the one a flip of "No X." deletes)
CUES = frozenset({"no"})


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


@functools.lru_cache(maxsize=8)
def _antonym_words(antonyms: tuple) -> frozenset:
    """Every word of the antonym lexicon's pairs (computed once per lexicon, not per option)."""
    return frozenset(w for pair in antonyms for side in pair for w in _words(side))


def cue_signature(draft: Draft, option: Option, lex: Lexicon) -> tuple[bool, bool, bool, bool]:
    """What an in-place option does to cue words: (deletes a negation cue, inserts one, deletes an
    antonym-lexicon word, inserts one), from the words of the replaced text and of its replacement."""
    if option.op != "replace":
        return (False, False, False, False)
    old, new = _words(draft.slots[option.slot].text[option.start:option.end]), _words(option.text)
    antonym = _antonym_words(lex.antonyms)
    gone, came = old - new, new - old
    return (bool(gone & CUES), bool(came & CUES), bool(gone & antonym), bool(came & antonym))


def matched_pair(syn: Draft, opp: Draft, rng: random.Random, lex: Lexicon) -> bool:
    """Task 3: one flip on ``opp`` (a negation or an antonym) and, on ``syn``, one rewording of a
    negation or a normal statement (:data:`CUE_MEANING_KINDS`) with the flip's
    :func:`cue_signature` where one exists, so that deleted or inserted cue words do not tell
    the members apart. False when either has no option."""
    flips = rewrites.find_opposites(opp, lex)
    rewordings = (_options(syn, lex, _meaning_finders(CUE_MEANING_KINDS, ()))  # else any in-place rewording
                  or _options(syn, lex, _meaning_finders(SENTENCE_MEANING_KINDS, ())))
    if not flips or not rewordings:
        return False
    flip = _pick(flips, rng)
    sig = cue_signature(opp, flip, lex)
    same = [o for o in rewordings if cue_signature(syn, o, lex) == sig]
    if not same:  # any in-place meaning-preserving rewrite with the signature
        same = [o for o in _options(syn, lex, _meaning_finders(SENTENCE_MEANING_KINDS, ()))
                if cue_signature(syn, o, lex) == sig]
    apply(opp, flip)
    apply(syn, _pick(same or rewordings, rng))
    return True


def _options(draft: Draft, lex: Lexicon, finders) -> list[Option]:
    return [o for f in finders for o in f(draft, lex)]


def surface_of(option: Option) -> str:
    return SURFACE[option.op]


def _draw_surface(rng: random.Random, available=None) -> str:
    rates = [(name, rate) for name, rate in SURFACE_RATES if available is None or name in available]
    x, acc = rng.random() * sum(rate for _, rate in rates), 0.0
    for name, rate in rates:
        acc += rate
        if x < acc:
            return name
    return rates[-1][0]


def _apply_shaped(draft: Draft, options: list[Option], shape: str, rng: random.Random) -> bool:
    """Apply one option of surface ``shape``; where the draft offers none, the surface is drawn again
    among those it offers (at their rates), so that both classes fall back alike. False with no option."""
    ops = {o.op for o in options}
    available = {SURFACE[op] for op in ops} & set(dict(SURFACE_RATES))
    if not available:
        return False
    if shape not in available:
        shape = _draw_surface(rng, available)
    shaped_ops = {op for op in ops if SURFACE[op] == shape}
    shaped = [o for o in options if o.op in shaped_ops]
    apply(draft, _pick(shaped, rng))
    return True


#: the surface operations (:data:`SURFACE`) a kind's options can have, where they are not only "rewrite"
#: (an option's op is set where the finders make it: op="insert", "delete", "merge" or "swap")
KIND_SURFACES = {"insert_finding": {"insert"}, "insert_contradiction": {"insert"}, "remove_finding": {"delete"},
                 "remove_comparison": {"rewrite", "delete"}, "restate": {"insert"}, "add_negative": {"insert"},
                 "drop_restatement": {"delete"}, "merge_sentences": {"delete"}, "reorder": {"move"}}


def kind_surfaces(kind: str) -> set:
    return KIND_SURFACES.get(kind, {"rewrite"})


def _apply_planned(draft: Draft, shape: str, rng: random.Random, options_of) -> bool:
    """:func:`_apply_shaped` on ``options_of(kind_filter)``, the options of the kinds that pass the filter,
    in their order. The kinds that can make an option of ``shape`` are searched first: when they offer one,
    the pick is the one :func:`_apply_shaped` makes from every kind's options (the same options of that
    surface in the same order, the same random draws), without the others' search."""
    shaped = [o for o in options_of(lambda kind: shape in kind_surfaces(kind)) if SURFACE[o.op] == shape]
    if shaped:
        apply(draft, _pick(shaped, rng))
        return True
    return _apply_shaped(draft, options_of(lambda kind: True), shape, rng)


def planned_edits(draft: Draft, rng: random.Random, lex: Lexicon, n_errors: int, n_total: int,
                  donors=(), negatives=(), kinds=ERROR_KINDS, meaning_kinds=PLANNED_MEANING_KINDS) -> int:
    """``max(n_errors, n_total)`` edits, each with a surface operation drawn from
    :data:`SURFACE_RATES` before it is known whether it is an error; ``n_errors`` of them (at random
    places in the sequence) are errors of that operation, the others meaning-preserving edits of it.
    Where no option of the drawn operation exists, the operation is drawn again among those the
    draft offers the edit's class (:func:`_apply_shaped`). Returns
    the number of errors applied."""
    n = max(n_errors, n_total)
    roles = [True] * n_errors + [False] * (n - n_errors)
    rng.shuffle(roles)
    finders = _meaning_finders_by_kind(meaning_kinds, negatives)

    def errors_of(keep):
        return error_options(draft, lex, donors, [k for k in kinds if keep(k)], negatives)

    def meaning_of(keep):
        return [o for k, f in finders if keep(k) for o in f(draft, lex)]

    done = 0
    for is_error in roles:
        shape = _draw_surface(rng)
        if is_error:
            done += _apply_planned(draft, shape, rng, errors_of)
        else:
            _apply_planned(draft, shape, rng, meaning_of)
    return done

"""The six ReXVal error edits (SPEC §2), each as a finder of concrete :class:`Option` s.

Every ``find_*`` function lists, in a fixed order, all the places where its edit can be made on
the current draft; the generator picks one with its seeded ``random.Random`` and :func:`apply`
makes it. Only sentences that come from the reference are edited (never an inserted one), and
never text that an earlier edit already changed.

Clinically significant rule (each option's ``why`` says which clause decided it). An error is
significant when it changes whether, where or how severely a *present finding* (an ABNORMALITY or
DISEASE span) is reported, or invents or hides a change over time:

1. false prediction, kind ``insert_finding``: a sentence with a present finding, taken from another
   report of the same corpus anatomy, is inserted: always significant.
2. omission, kind ``remove_finding``: a reference sentence with a finding and no comparison (so
   that no uncounted category-6 error comes with it) is deleted: significant
   iff it holds an ABNORMALITY or DISEASE span; a sentence of only normal or negated statements
   (NON-* spans) is an insignificant omission.
3. location, kinds ``laterality`` / ``site``: a laterality word, an opposite positional word or a
   site from the anatomy's site groups is swapped inside an entity span: significant iff the
   sentence holds a present finding.
4. severity, kinds ``severity`` / ``size``: a grade word inside an ABNORMALITY/DISEASE span moves
   on its ladder (significant iff it moves >= 2 rungs or the ladder has two rungs); a measurement
   is scaled (significant iff the ratio is >= 1.5 and the sentence holds a present finding).
5. comparison added, kind ``add_comparison``: significant iff the phrase describes a change
   ("increased compared with the prior study"); a stability phrase ("unchanged from ...") is not.
6. comparison omitted, kind ``remove_comparison``: a comparison clause, or a sentence that is only
   a comparison statement, is removed: significant iff the removed text describes a change.
The opposite rewrites of :mod:`data.synth.rewrites` (negate, unnegate, antonym) are errors of
categories 2 and 1 and always significant: a finding's presence flips.
"""

from __future__ import annotations

import re
from functools import lru_cache

from data.synth.draft import FINDING, POSITIVE, Draft, Option
from data.synth.lexicon import Lexicon

WHY_POSITIVE = "the sentence holds a present finding (ABNORMALITY/DISEASE)"
WHY_NO_POSITIVE = "the sentence holds no present finding (only normal/negated statements or anatomy)"
_SIZE = r"(?<![\w.])(\d+(?:\.\d+)?)(?=\s*(?:{units})\b)"
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
# First words that point back to an earlier sentence: such a sentence is never moved or inserted.
ANAPHORA = frozenset({"this", "these", "it", "they", "its", "their", "such", "both",
                      "however", "also", "otherwise", "again", "which", "here", "the"})


@lru_cache(maxsize=None)
def phrase_re(phrase: str) -> re.Pattern:
    """A whole-word, case-insensitive pattern for ``phrase``."""
    return re.compile(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", re.IGNORECASE)


@lru_cache(maxsize=65536)
def has_match(pattern: re.Pattern, text: str) -> bool:
    """``pattern.search(text)``, memoised (the same sentences are searched many times)."""
    return pattern.search(text) is not None


@lru_cache(maxsize=None)
def lowered(groups: tuple) -> tuple:
    """``((term, term.lower()), ...)`` per group, computed once per lexicon group list."""
    return tuple(tuple((t, t.lower()) for t in g) for g in groups)


def match_case(source: str, replacement: str) -> str:
    """Give ``replacement`` the capitalisation of ``source``'s first letter."""
    if source[:1].isupper() and replacement[:1].islower():
        return replacement[0].upper() + replacement[1:]
    if source[:1].islower() and replacement[:1].isupper() and replacement[1:2].islower():
        return replacement[0].lower() + replacement[1:]
    return replacement


def editable(draft: Draft):
    """``(index, slot)`` of live sentences that come from the reference."""
    return [(i, s) for i, s in enumerate(draft.slots)
            if s.deleted_by is None and s.inserted_by is None and s.ref_index is not None]


def _swap_options(draft: Draft, groups, kind: str) -> list[Option]:
    out = []
    for i, slot in editable(draft):
        significant = slot.has(*POSITIVE)
        why = WHY_POSITIVE if significant else WHY_NO_POSITIVE
        for sp in slot.spans:
            segment = slot.span_text(sp)
            low = segment.lower()
            for group, terms in zip(groups, lowered(groups)):
                for term, term_low in terms:
                    if term_low not in low:  # cheap pre-check before the regex
                        continue
                    for m in phrase_re(term).finditer(segment):
                        a, b = sp.start + m.start(), sp.start + m.end()
                        if not slot.free(a, b):
                            continue
                        for other in group:
                            if other.lower() == term.lower():
                                continue
                            new = match_case(m.group(), other)
                            out.append(Option(kind, 3, significant, why, i, start=a, end=b,
                                              text=new, detail=(("from", m.group()), ("to", new))))
    return out


def find_laterality(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 3: swap left/right (and the like) inside an entity span."""
    return _swap_options(draft, lex.laterality, "laterality")


def find_site(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 3: swap an opposite position word or a site of the report's anatomy."""
    return _swap_options(draft, lex.position + lex.site_groups(draft.anatomy), "site")


def find_severity(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 4: move a grade word of an ABNORMALITY/DISEASE span on its ladder."""
    ladder_of = {}
    for ladder in lex.ladders:
        for word in ladder:
            ladder_of.setdefault(word.lower(), ladder)
    out = []
    for i, slot in editable(draft):
        for sp in slot.spans:
            if sp.type not in POSITIVE:
                continue
            for m in _WORD.finditer(slot.span_text(sp)):
                ladder = ladder_of.get(m.group().lower())
                a, b = sp.start + m.start(), sp.start + m.end()
                if ladder is None or not slot.free(a, b):
                    continue
                here = [w.lower() for w in ladder].index(m.group().lower())
                for rung, word in enumerate(ladder):
                    if rung == here:
                        continue
                    steps = abs(rung - here)
                    significant = steps >= lex.significant_steps or len(ladder) == 2
                    why = (f"moves {steps} rung(s) on the ladder {list(ladder)}; significant when "
                           f">= {lex.significant_steps} rungs or on a two-rung ladder")
                    new = match_case(m.group(), word)
                    out.append(Option("severity", 4, significant, why, i, start=a, end=b, text=new,
                                      detail=(("from", m.group()), ("to", new), ("steps", steps))))
    return out


def _format_size(value: float, decimals: int) -> str:
    if decimals == 0 and abs(value - round(value)) < 1e-9:
        return str(int(round(value)))
    return f"{value:.{max(decimals, 1)}f}"


def find_size(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 4: scale a measurement ``<number> mm|cm``."""
    pattern = re.compile(_SIZE.format(units="|".join(map(re.escape, lex.size_units))))
    out = []
    for i, slot in editable(draft):
        positive = slot.has(*POSITIVE)
        for m in pattern.finditer(slot.text):
            a, b = m.span(1)
            if not slot.free(a, b) or slot.crosses_span(a, b):
                continue
            old = m.group(1)
            decimals = len(old.split(".")[1]) if "." in old else 0
            for factor in lex.size_factors:
                new = _format_size(float(old) * factor, decimals)
                if float(new) <= 0 or float(new) == float(old):
                    continue
                ratio = max(float(new) / float(old), float(old) / float(new))
                significant = positive and ratio >= lex.size_significant_ratio
                why = (f"size ratio {ratio:.2f} (significant when >= {lex.size_significant_ratio} "
                       f"and {WHY_POSITIVE})" + ("" if positive else f"; {WHY_NO_POSITIVE}"))
                out.append(Option("size", 4, significant, why, i, start=a, end=b, text=new,
                                  detail=(("from", old), ("to", new), ("ratio", round(ratio, 3)))))
    return out


def find_add_comparison(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 5: append a comparison phrase to a sentence that has none."""
    out = []
    for i, slot in editable(draft):
        if not slot.spans or has_match(lex.comparison_markers, slot.text):
            continue
        pos = len(slot.text) - 1 if slot.text[-1:] in ".;:!?" else len(slot.text)
        if not slot.free(pos, pos):
            continue
        phrases = (lex.add_change if slot.has(*POSITIVE) else ()) + lex.add_stable
        for phrase in phrases:
            significant = bool(lex.change_words.search(phrase))
            why = ("the added comparison describes a change" if significant
                   else "the added comparison states stability (no change)")
            out.append(Option("add_comparison", 5, significant, why, i, start=pos, end=pos,
                              text=", " + phrase, detail=(("phrase", phrase),)))
    return out


def find_remove_comparison(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 6: delete a comparison clause, or a sentence that is only a comparison."""
    out = []
    for i, slot in editable(draft):
        seen = set()
        for pattern in lex.remove_clauses:
            for m in pattern.finditer(slot.text):
                a, b = m.span()
                if a == b or (a, b) in seen or not slot.free(a, b):
                    continue
                if any(sp.start < b and sp.end > a for sp in slot.spans):
                    continue
                seen.add((a, b))
                removed = slot.text[a:b]
                significant = bool(lex.change_words.search(removed))
                why = ("the removed comparison describes a change" if significant
                       else "the removed comparison states stability or only names the prior study")
                out.append(Option("remove_comparison", 6, significant, why, i, start=a, end=b,
                                  text="", detail=(("removed", removed.strip(" ,")),)))
        if (slot.untouched() and not slot.has(*FINDING) and lex.sentence_markers.search(slot.text)
                and len(draft.live()) > 1):
            significant = bool(lex.change_words.search(slot.text))
            why = ("the removed comparison sentence describes a change" if significant
                   else "the removed comparison sentence states stability")
            out.append(Option("remove_comparison", 6, significant, why, i, op="delete",
                              detail=(("removed", slot.text),)))
    return out


def find_remove_finding(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 2: delete a reference sentence that states a finding."""
    if len(draft.live()) <= 1:
        return []
    out = []
    for i, slot in editable(draft):
        if slot.untouched() and slot.has(*FINDING) and not has_match(lex.comparison_markers, slot.text):
            significant = slot.has(*POSITIVE)
            why = ("the removed sentence holds a present finding (ABNORMALITY/DISEASE)" if significant
                   else "the removed sentence holds only normal/negated statements (NON-* spans)")
            out.append(Option("remove_finding", 2, significant, why, i, op="delete",
                              detail=(("removed", slot.text),)))
    return out


# A section header opening a report section's first sentence ("FINDINGS: Lungs are clear.").
HEADER = re.compile(r"(?:FINDINGS|IMPRESSION):\s*")


def usable_donors(draft: Draft, lex: Lexicon, donors, named):
    """The ``(source, section, sentence)`` donors that may be inserted into ``draft``: not from its
    own report, not holding a comparison (it would add an uncounted category-5 error), not
    starting with a word that points back to its own report ("This", "The", "It", ...), and with
    texts ``named(sentence)`` of which none already appears in the candidate (it would repeat or
    contradict it) and at least one exists."""
    text = draft.text.lower()
    for source, section, sent in donors:
        if source == draft.reference_id:
            continue
        names = named(sent)
        if not names or any(t.lower() in text for t in names):
            continue
        if has_match(lex.comparison_markers, sent.text) or sent.words[0].lower() in ANAPHORA:
            continue
        yield source, section, sent


def section_positions(draft: Draft, section: str) -> list[int]:
    """Where a sentence can be inserted into ``section``: before each of its sentences except a
    first one that opens with the section header (the header stays at the top), and after its
    last one. Empty when the draft has no such section."""
    idx = [k for k, s in enumerate(draft.slots) if s.section == section]
    if not idx:
        return []
    return (idx[1:] if HEADER.match(draft.slots[idx[0]].text) else idx) + [idx[-1] + 1]


def find_insert_finding(draft: Draft, lex: Lexicon, donors) -> list[Option]:
    """Category 1: insert a sentence with a present finding from another report, into the findings
    or the impression (``donors``: ``(report_id, section, AnnotatedSentence)`` from reports of a
    compatible anatomy; filtered by :func:`usable_donors` on their present findings)."""
    positions = {sec: section_positions(draft, sec) for sec in ("findings", "impression")}
    out = []
    for source, section, sent in usable_donors(
            draft, lex, donors, lambda s: [t for t, ty in s.entity_texts() if ty in POSITIVE]):
        for sec, idx in positions.items():
            for k in idx:
                out.append(Option("insert_finding", 1, True,
                                  "the inserted sentence states a present finding absent from the "
                                  "reference", k, op="insert", sentence=sent, section=sec,
                                  detail=(("source", source), ("source_section", section))))
    return out

"""Rewrites: meaning-preserving (synonyms, reordering, ...), opposite (negation flips) and typos.

- ``synonym``: a phrase of a synonym group (``data/lexicons/synonyms.yaml``, abbreviations and
  their expansions included) becomes another member of the group, inside one entity span or
  inside plain text: every entity keeps its type.
- ``reorder``: two neighbouring sentences of the same section change places (not when the second
  starts with a word that points back, e.g. "This", "It", nor a sentence with a section header).
- ``rephrase_normal``: "No X." <-> "There is no X." in a sentence without a verb of its own.
- ``negation_list``: "No X or Y." <-> "No X and no Y." (the number of negation cues changes, the
  meaning does not).
- ``add_negative``: a sentence of only negated findings that the candidate does not mention,
  from another report of the same split side, anatomy and modality, is inserted (no error).
- ``header``: the "FINDINGS: " / "IMPRESSION: " header of a section's first sentence is added or
  removed (formatting only).
- ``unnegate`` / ``negate`` / ``antonym`` (``data/lexicons/negation.yaml``): the opposite rewrites.
  They flip the type of at least one span (NON-X <-> X); as errors they are category 1 (a finding
  appears) or 2 (a finding disappears), weighed by the model of :mod:`data.synth.edits` (the
  heaviest flipped finding; a tube's or line's position status is critical). The text stays
  grammatical: an un-negated list is joined by "and" ("No X or Y." -> "There is X and Y."), a
  negated one by "or"; "There are" for a plural first finding; "No X is seen." -> "X is seen.";
  a "No " prefix lower-cases the first word without touching acronyms or hyphenated words.
- ``spelling`` / ``grammar`` (``data/lexicons/spelling.yaml``): a typo in one word, a broken
  subject-verb agreement or a dropped article; no ReXVal category, no change of meaning.
"""

from __future__ import annotations

import re

from data.annotation import tokenize_words
from data.synth.draft import FLIP, NEGATED, POSITIVE, Draft, Option, Slot
from data.synth.draft import CRITICAL
from data.synth.edits import (ANAPHORA, HEADER, WHY_DEVICE, _lower_word, _which, editable,
                              finding_weight, is_device_sentence, lex_cached, match_case, phrase_matches,
                              section_positions, sentence_cached, slot_cached, slot_entities, usable_donors,
                              weighed)
from data.synth.lexicon import Lexicon

_LIST_GAP = re.compile(r"^(?:\s|,|\band\b|\bor\b|\bnor\b)*$", re.IGNORECASE)
_FINAL = re.compile(r"\s*(?:[.,;:]|$)")
SECTION_HEADERS = {"findings": "FINDINGS: ", "impression": "IMPRESSION: "}


def _segments(slot: Slot):
    """``(start, end)`` of every entity span and every stretch of plain text between them."""
    out, pos = [], 0
    for sp in sorted(slot.spans, key=lambda s: s.start):
        if sp.start > pos:
            out.append((pos, sp.start))
        out.append((sp.start, sp.end))
        pos = sp.end
    if pos < len(slot.text):
        out.append((pos, len(slot.text)))
    return out


def find_synonyms(draft: Draft, lex: Lexicon) -> list[Option]:
    out = []
    for i, slot in editable(draft):
        out += _slot_synonyms(lex, i, slot)
    return out


@slot_cached
def _slot_synonyms(lex: Lexicon, i: int, slot: Slot) -> list[Option]:
    out = []
    groups = _synonym_terms(lex)
    for s, e in _segments(slot):
        for g, term, start, end, found in phrase_matches(groups, slot.text[s:e]):
            group = lex.synonyms[g]
            a, b = s + start, s + end
            if group.final and not _FINAL.match(slot.text, b):
                continue
            if not slot.free(a, b):
                continue
            for other in group.terms:
                if other.lower() == term.lower():
                    continue
                new = _case_like(found, other, _sentence_start(slot.text, a))
                out.append(Option("synonym", None, False, "meaning-preserving synonym",
                                  i, start=a, end=b, text=new,
                                  detail=(("from", found), ("to", new))))
    return out


@lex_cached
def _synonym_terms(lex: Lexicon) -> tuple:
    """The terms of each synonym group (one tuple per lexicon)."""
    return tuple(g.terms for g in lex.synonyms)


def _is_acronym(phrase: str) -> bool:
    word = phrase.split(" ", 1)[0]
    return len(word) > 1 and word.isupper()


def _sentence_start(text: str, pos: int) -> bool:
    """True at the start of the sentence or right after a section header ("FINDINGS: ")."""
    return pos == 0 or bool(HEADER.fullmatch(text[:pos]))


def _case_like(found: str, other: str, at_start: bool) -> str:
    """``other`` spelt for the place of ``found``: an abbreviation keeps its capitals, and an
    expansion of an abbreviation is capitalised only at the start of a sentence."""
    if _is_acronym(other):
        return other
    if _is_acronym(found):
        return other[0].upper() + other[1:] if at_start else other
    return match_case(found, other)


def find_reorder(draft: Draft, lex: Lexicon | None = None) -> list[Option]:
    live = [k for k, s in enumerate(draft.slots) if s.deleted_by is None]
    out = []
    for k, nxt in zip(live, live[1:]):
        a, b = draft.slots[k], draft.slots[nxt]
        if a.section != b.section or a.moved_by is not None or b.moved_by is not None:
            continue
        if a.ref_index is None or b.ref_index is None:
            continue
        first = b.text.split(" ", 1)[0].lower().strip(",;:")
        if first in ANAPHORA - {"the"}:
            continue
        if HEADER.match(a.text) or HEADER.match(b.text):  # a header stays at its section's top
            continue
        out.append(Option("reorder", None, False, "meaning-preserving change of sentence order",
                          k, op="swap", other=nxt))
    return out


_NO_CUE = re.compile(r"No (?=[a-z])")
_THERE_IS_NO = re.compile(r"There (?:is|are) no (?=[a-z])")
_VERB = re.compile(r"\b(?:is|are|was|were|seen|noted|identified|present|demonstrated|visualized)\b")
_PLURAL_EXCEPTIONS = ("ss", "sis", "us", "ous", "xis")


def find_rephrase_normal(draft: Draft, lex: Lexicon | None = None) -> list[Option]:
    """A negative statement said the other common way: "No X." <-> "There is no X." ("are" when
    the first negated finding ends in a plural -s); only in a sentence with no verb of its own."""
    out = []
    for i, slot in editable(draft):
        head = HEADER.match(slot.text)
        at = head.end() if head else 0
        negated = sorted((sp for sp in slot.spans if sp.type in NEGATED), key=lambda sp: sp.start)
        m = _NO_CUE.match(slot.text, at)
        if m and negated and not _VERB.search(slot.text, m.end()):
            word = slot.span_text(negated[0]).split()[-1].lower()
            plural = word.endswith("s") and not word.endswith(_PLURAL_EXCEPTIONS)
            new = "There are no " if plural else "There is no "
        else:
            m = _THERE_IS_NO.match(slot.text, at)
            if not m or not negated:
                continue
            new = "No "
        a, b = m.start(), m.end()
        if not slot.free(a, b) or slot.crosses_span(a, b):
            continue
        out.append(Option("rephrase_normal", None, False, "meaning-preserving rephrasing of a "
                          "negative statement", i, start=a, end=b, text=new,
                          detail=(("from", m.group()), ("to", new))))
    return out


def find_negation_list(draft: Draft, lex: Lexicon | None = None) -> list[Option]:
    """Two negated findings said with one cue or with two: "No X or Y." <-> "No X and no Y."
    (only where the two spans are joined by nothing but the conjunction)."""
    out = []
    for i, slot in editable(draft):
        head = HEADER.match(slot.text)
        if not _NO_CUE.match(slot.text, head.end() if head else 0):
            continue
        negated = sorted((sp for sp in slot.spans if sp.type in NEGATED), key=lambda sp: sp.start)
        for left, right in zip(negated, negated[1:]):
            gap = slot.text[left.end:right.start]
            new = {" or ": " and no ", " and no ": " or "}.get(gap)
            if new is None or "," in slot.text[:left.end]:
                continue
            if not slot.free(left.end, right.start):
                continue
            out.append(Option("negation_list", None, False, "meaning-preserving change of how a "
                              "list of negated findings is joined", i, start=left.end,
                              end=right.start, text=new, detail=(("from", gap), ("to", new))))
    return out


def find_add_negative(draft: Draft, lex: Lexicon, donors) -> list[Option]:
    """A pertinent negative the reference does not state ("No pleural effusion."), taken from
    another report (``donors``: ``(report_id, section, AnnotatedSentence)`` of the same split side,
    anatomy and modality), inserted into the same section: a large textual change that is no
    error (it reports no finding). Donors are filtered by :func:`edits.usable_donors` on every
    non-anatomy text they name (it could contradict or repeat the candidate)."""
    out, positions = [], {}
    for source, section, sent in usable_donors(draft, lex, donors, _named_texts):
        if section not in positions:
            positions[section] = tuple(section_positions(draft, section))
        out += _add_negative_options(lex, sent, source, section, positions[section])
    return out


def _named_texts(sent) -> list[str]:
    """The texts of every span of a sentence but its anatomy."""
    return [t for t, ty in sent.entity_texts() if ty != "ANATOMY"]


@sentence_cached
def _add_negative_options(lex: Lexicon, sent, source: str, section: str, positions: tuple) -> tuple:
    return tuple(Option("add_negative", None, False, "a pertinent negative the reference "
                        "does not state: no finding is added", k, op="insert", sentence=sent,
                        section=section, detail=(("source", source), ("source_section", section)))
                 for k in positions)


def find_header(draft: Draft, lex: Lexicon | None = None) -> list[Option]:
    """The section header of the first sentence of findings or impression added or removed."""
    out, seen = [], set()
    live = {id(s) for _, s in editable(draft)}
    for i, slot in enumerate(draft.slots):
        if slot.deleted_by is not None or slot.section in seen:
            continue
        seen.add(slot.section)
        if id(slot) not in live or slot.moved_by is not None or slot.section not in SECTION_HEADERS:
            continue
        head = HEADER.match(slot.text)
        if head:
            a, b, new = 0, head.end(), ""
        else:
            a, b, new = 0, 0, SECTION_HEADERS[slot.section]
        if not slot.free(a, b):
            continue
        out.append(Option("header", None, False, "meaning-preserving section header change", i,
                          start=a, end=b, text=new,
                          detail=(("from", slot.text[a:b]), ("to", new))))
    return out


def _list_from(slot: Slot, spans, k: int, flip_from) -> list[int]:
    """Indices of the spans to flip: span ``k`` and the list that follows it (rule 6)."""
    flips = []
    for j in range(k, len(spans)):
        if j > k and not _LIST_GAP.match(slot.text[spans[j - 1].end:spans[j].start]):
            break
        if spans[j].type in flip_from:
            flips.append(j)
        elif spans[j].type != "ANATOMY":
            break
    return flips


_OR = re.compile(r"\b(?:or|nor)\b")
_AND = re.compile(r"\band\b")
# A verb right after the flipped list: "No focal lesion is seen." un-negates to "Focal lesion is
# seen.", not "There is focal lesion is seen."
_VERB_AFTER = re.compile(r"\s+(?:is|are|was|were|has|have|appears?|seems?)\b")


def _plural(phrase: str) -> bool:
    word = phrase.split()[-1].lower() if phrase.split() else ""
    return word.endswith("s") and not word.endswith(_PLURAL_EXCEPTIONS)


def _flip_option(slot: Slot, i: int, spans, k: int, cue_start: int, cue_to: str, flip_from,
                 kind: str, category: int, why: str, cue: str, lex: Lexicon, lower: bool = False):
    """Flip span ``k`` and its list; the cue ``[cue_start, spans[k].start)`` becomes ``cue_to``.

    The new text stays grammatical: a list joined by "or"/"nor" is joined by "and" once it is
    stated as present, and by "or" once negated; "There is" agrees with a plural first finding;
    "No X is seen." loses its cue instead of becoming "There is X is seen."; a first word
    lower-cased after a "No " prefix keeps its hyphens ("No catheter-associated thrombus")."""
    flips = _list_from(slot, spans, k, flip_from)
    if not flips:
        return None
    a, b = cue_start, spans[flips[-1]].end
    if not slot.free(a, b) or slot.crosses_span(a, b):
        return None
    first_text = slot.span_text(spans[k])
    if kind == "unnegate" and cue_to.startswith("There is ") and _plural(first_text):
        cue_to = "There are " + cue_to[len("There is "):]
    if kind == "unnegate" and cue_to.startswith("There ") and _VERB_AFTER.match(slot.text, b):
        cue_to = ""
    join = _OR if kind == "unnegate" else _AND
    to = "and" if kind == "unnegate" else "or"
    new, new_spans = cue_to, []
    for j in range(k, flips[-1] + 1):
        if j > k:
            new += join.sub(to, slot.text[spans[j - 1].end:spans[j].start])
        piece = slot.span_text(spans[j])
        if j == k and lower:
            piece = _lower_word(piece)
        start = len(new)
        new += piece
        new_spans.append((start, len(new), FLIP[spans[j].type] if j in flips else spans[j].type))
    if a == 0 and new[:1].islower():
        new = new[0].upper() + new[1:]
    flipped_texts = [slot.span_text(spans[j]) for j in flips]
    if (is_device_sentence(lex, slot.text, slot_entities(slot))
            and any(lex.device_status.search(t) for t in flipped_texts)):
        weight, significant, why = weighed(CRITICAL, f"{why}; {WHY_DEVICE}")
    else:
        w = max(finding_weight(lex, t) for t in flipped_texts)
        weight, significant, why = weighed(w, why + _which(w))
    flipped = [f"{slot.span_text(spans[j])}: {spans[j].type} -> {FLIP[spans[j].type]}" for j in flips]
    return Option(kind, category, significant, why, i, start=a, end=b, text=new,
                  spans=tuple(new_spans), weight=weight,
                  detail=(("cue", cue), ("to", cue_to), ("flipped", flipped)))


def _cue_before(text: str, pos: int, cues):
    for cue in cues:  # longest first
        start = pos - len(cue.cue)
        if start < 0 or text[start:pos] != cue.cue:
            continue
        if cue.initial and start != 0:
            continue
        if start > 0 and text[start - 1].isalnum():
            continue
        return cue, start
    return None, None


def find_unnegate(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 1: a negated finding is stated as present ("No X" -> "There is X")."""
    out = []
    for i, slot in editable(draft):
        spans = sorted(slot.spans, key=lambda s: s.start)
        for k, sp in enumerate(spans):
            if sp.type not in NEGATED + ("ANATOMY",):
                continue
            cue, start = _cue_before(slot.text, sp.start, lex.unnegate)
            if cue is None:
                continue
            opt = _flip_option(slot, i, spans, k, start, cue.to, NEGATED, "unnegate", 1,
                               "a negated finding is stated as present", cue.cue, lex)
            if opt:
                out.append(opt)
    return out


def find_negate(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 2: a present finding is negated ("with X" -> "without X", "X." -> "No X.")."""
    out = []
    for i, slot in editable(draft):
        spans = sorted(slot.spans, key=lambda s: s.start)
        for k, sp in enumerate(spans):
            if sp.type not in POSITIVE + ("ANATOMY",):
                continue
            why = "a present finding is negated"
            if sp.start == 0:
                opt = _flip_option(slot, i, spans, k, 0, lex.negate_prefix, POSITIVE, "negate", 2,
                                   why, "", lex, lower=True)
            else:
                cue, start = _cue_before(slot.text, sp.start, lex.negate)
                opt = cue and _flip_option(slot, i, spans, k, start, cue.to, POSITIVE, "negate", 2,
                                           why, cue.cue, lex)
            if opt:
                out.append(opt)
    return out


def find_antonyms(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 1 or 2: a normal statement becomes abnormal or the reverse ("patent" <-> "occluded")."""
    to_abnormal = {a.lower(): b for a, b in lex.antonyms}
    to_normal = {}
    for a, b in lex.antonyms:
        to_normal.setdefault(b.lower(), a)
    out = []
    for i, slot in editable(draft):
        for sp in slot.spans:
            text = slot.span_text(sp)
            if sp.type == "NON-ABNORMALITY" and text.lower() in to_abnormal:
                new, typ, cat = match_case(text, to_abnormal[text.lower()]), "ABNORMALITY", 1
                why = "a normal statement is replaced by its abnormal opposite"
            elif sp.type == "ABNORMALITY" and text.lower() in to_normal:
                new, typ, cat = match_case(text, to_normal[text.lower()]), "NON-ABNORMALITY", 2
                why = "an abnormal statement is replaced by its normal opposite"
            else:
                continue
            if not slot.free(sp.start, sp.end):
                continue
            if is_device_sentence(lex, slot.text, slot_entities(slot)) and lex.device_status.search(text):
                weight, significant, why = weighed(CRITICAL, f"{why}; {WHY_DEVICE}")
            else:
                w = finding_weight(lex, text if typ == "NON-ABNORMALITY" else new)
                weight, significant, why = weighed(w, why + _which(w))
            out.append(Option("antonym", cat, significant, why, i, start=sp.start, end=sp.end, text=new,
                              spans=((0, len(new), typ),), weight=weight,
                              detail=(("from", text), ("to", new),
                                      ("flipped", [f"{text}: {sp.type} -> {typ}"]))))
    return out


def find_opposites(draft: Draft, lex: Lexicon) -> list[Option]:
    return find_unnegate(draft, lex) + find_negate(draft, lex) + find_antonyms(draft, lex)


def _typos(word: str) -> list[tuple[str, str]]:
    m = len(word) // 2
    out = []
    if word[m - 1] != word[m]:
        out.append(("swap", word[: m - 1] + word[m] + word[m - 1] + word[m + 1:]))
    out.append(("drop", word[:m] + word[m + 1:]))
    out.append(("double", word[:m] + word[m] + word[m:]))
    return [(how, t) for how, t in out if t != word]


def find_spelling(draft: Draft, lex: Lexicon) -> list[Option]:
    out = []
    for i, slot in editable(draft):
        out += _slot_spelling(lex, i, slot)
    return out


@slot_cached
def _slot_spelling(lex: Lexicon, i: int, slot: Slot) -> list[Option]:
    out = []
    for word, a, b in tokenize_words(slot.text):
        if not word.isalpha() or len(word) < lex.spelling_min_length or not slot.free(a, b):
            continue
        in_entity = any(sp.start <= a and b <= sp.end for sp in slot.spans)
        for how, typo in _typos(word):
            out.append(Option("spelling", None, False, "spelling error (meaning unchanged)", i,
                              start=a, end=b, text=typo,
                              detail=(("from", word), ("to", typo), ("typo", how),
                                      ("in_entity", in_entity))))
    return out


def find_grammar(draft: Draft, lex: Lexicon) -> list[Option]:
    out = []
    for i, slot in editable(draft):
        out += _slot_grammar(lex, i, slot)
    return out


@lex_cached
def _grammar_words(lex: Lexicon) -> tuple[dict, set]:
    """The agreement pairs both ways and the articles, lower-cased (once per lexicon)."""
    pairs = {}
    for a, b in lex.agreement:
        pairs.setdefault(a.lower(), b)
        pairs.setdefault(b.lower(), a)
    return pairs, {w.lower() for w in lex.articles}


@slot_cached
def _slot_grammar(lex: Lexicon, i: int, slot: Slot) -> list[Option]:
    pairs, articles = _grammar_words(lex)
    out = []
    for word, a, b in tokenize_words(slot.text):
        if any(sp.start < b and sp.end > a for sp in slot.spans):
            continue
        low = word.lower()
        if low in pairs and slot.free(a, b):
            new = match_case(word, pairs[low])
            out.append(Option("grammar", None, False, "agreement error (meaning unchanged)", i,
                              start=a, end=b, text=new,
                              detail=(("from", word), ("to", new), ("in_entity", False))))
        elif low in articles and slot.text[b:b + 1] == " " and slot.free(a, b + 1):
            out.append(Option("grammar", None, False, "dropped article (meaning unchanged)", i,
                              start=a, end=b + 1, text="",
                              detail=(("from", word), ("to", ""), ("in_entity", False))))
    return out

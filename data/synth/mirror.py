"""Generator v3: edits that give each surface operation to both label classes.

Before v3, errors mostly rewrote a sentence in place, while meaning-preserving rewrites mostly
reordered sentences, added headers or inserted a pertinent negative: counting the reference
sentences that survive word for word, a deleted "no" or an inserted antonym-lexicon word told
the two apart without any model. This module adds the missing halves (our design; the table of
operation x label class x rate is in docs/synthetic.md):

Meaning-preserving, **in place** (a reference sentence no longer occurs word for word):

- ``negation_cue``: the negation said with another cue of the same polarity: "No X" <->
  "No evidence of X" <-> "Negative for X", "without X" <-> "with no X", and "No X." -> "X is not seen." (a deleted
  "no", as an un-negation has, and the meaning kept);
- ``negated_antonym``: "Hila are [normal in size]." <-> "Hila are not [enlarged]." (an inserted
  antonym-lexicon word and "not", as an antonym flip has; the span stays NON-ABNORMALITY);
- ``there_is_seen``: "There is X." <-> "X is seen." for a present finding;
- ``measurement``: "1.4 cm" <-> "14 mm" (a changed number, as a size error has);
- ``list_order``: "A and B" -> "B and A" inside one list of findings.

Meaning-preserving, **whole sentences**:

- ``restate``: a sentence of the findings with a present finding is restated, word for word, at
  the end of the impression (as radiologists summarise), where the impression does not name it;
- ``drop_restatement``: an impression sentence whose every finding the findings state word for
  word is removed (its content stays in the report);
- ``merge_sentences``: two neighbouring sentences become one: "No A." "No B." -> "No A or B.",
  others joined by a semicolon ("Increased atelectasis; no pneumothorax."): a reference sentence
  disappears, no statement is lost.

Errors, **whole sentences** (the counterpart of ``add_negative``):

- ``insert_contradiction``: a negated sentence from another report (same split side and anatomy)
  that denies a finding the candidate states as present ("Small left pleural effusion." ... "No
  pleural effusion."): category 2 (the finding is contradicted, as a negation removes it), weighed
  as the denied finding.

Every finder lists options like the finders of :mod:`data.synth.edits`; texts stay annotated
(negation cues outside the spans, ANNOTATION.md rule 2).
"""

from __future__ import annotations

import re
from functools import lru_cache

from data.synth.draft import NEGATED, POSITIVE, Draft, Option, Slot
from data.synth.edits import (ANAPHORA, HEADER, _lower_word, _which, editable, has_match, match_case,
                              present_weight, restated, section_positions, sentence_cached, weighed)
from data.synth.lexicon import Lexicon
from data.synth.rewrites import _plural

#: polarity-keeping cue rewordings before a negated span (our choice): (cue, to, sentence-initial only)
CUE_REWORDINGS = (
    ("No evidence of ", "No ", True),
    ("No ", "No evidence of ", True),
    ("No ", "Negative for ", True),
    ("Negative for ", "No ", True),
    ("no evidence of ", "no ", False),
    ("with no ", "without ", False),
    ("without ", "with no ", False),
)
_VERB = re.compile(r"\b(?:is|are|was|were|seen|noted|identified|present|demonstrated|visualized|"
                   r"has|have|measures?|measuring|appears?|remains?|extends?|projects?|terminates?)\b")
_PREDICATE = re.compile(r"\b(?:is|are|appears?|appear|remains?|remain)\s$")
_THERE = re.compile(r"There (is|are) ")
_SEEN = re.compile(r" (is|are) seen\.$")
_MEASURE = re.compile(r"(?<![\w.])(\d+(?:\.\d)?) (cm|mm)\b")


def _start(slot: Slot) -> int:
    head = HEADER.match(slot.text)
    return head.end() if head else 0


def _shifted(slot: Slot, a: int, b: int, offset: int):
    """The spans inside ``[a, b)`` relative to a new text in which ``slot.text[a:b]`` starts at ``offset``."""
    return tuple((sp.start - a + offset, sp.end - a + offset, sp.type) for sp in slot.spans
                 if a <= sp.start and sp.end <= b)


def _option(kind: str, why: str, i: int, a: int, b: int, new: str, spans=None, **detail) -> Option:
    return Option(kind, None, False, why, i, start=a, end=b, text=new, spans=spans,
                  detail=tuple(detail.items()))


# --- meaning-preserving, in place ---------------------------------------------------------------------
def find_negation_cue(draft: Draft, lex: Lexicon | None = None) -> list[Option]:
    out = []
    for i, slot in editable(draft):
        at = _start(slot)
        negated = sorted((sp for sp in slot.spans if sp.type in NEGATED), key=lambda sp: sp.start)
        for sp in negated:
            for cue, to, initial in CUE_REWORDINGS:
                a = sp.start - len(cue)
                if a < 0 or slot.text[a:sp.start] != cue or (initial and a != at):
                    continue
                if a > 0 and slot.text[a - 1].isalnum():
                    continue
                if not slot.free(a, sp.start) or slot.crosses_span(a, sp.start):
                    continue
                out.append(_option("negation_cue", "meaning-preserving rewording of a negation cue",
                                   i, a, sp.start, to, **{"from": cue, "to": to}))
        # "No X." -> "X is not seen." (the whole sentence is a negated list and nothing else)
        if negated and slot.text.startswith("No ", at) and slot.text.endswith("."):
            body = slot.text[at + 3:-1]
            first = negated[0]
            if (first.start == at + 3 and not _VERB.search(body)
                    and all(sp.type in NEGATED or sp.type == "ANATOMY" for sp in slot.spans)
                    and slot.free(at, len(slot.text)) and not slot.crosses_span(at, len(slot.text))):
                piece = body[:1].upper() + body[1:] if not body[:1].isupper() else body
                verb = "are" if (len(negated) > 1 or _plural(slot.span_text(negated[-1]))) else "is"
                new = f"{piece} {verb} not seen."
                spans = _shifted(slot, at + 3, len(slot.text), 0)
                out.append(_option("negation_cue", "meaning-preserving rewording of a negation cue",
                                   i, at, len(slot.text), new, spans, **{"from": "No ", "to": f"{verb} not seen"}))
    return out


def find_negated_antonym(draft: Draft, lex: Lexicon) -> list[Option]:
    to_abnormal = {a.lower(): b for a, b in lex.antonyms}
    to_normal: dict[str, str] = {}
    for a, b in lex.antonyms:
        to_normal.setdefault(b.lower(), a)
    out = []
    for i, slot in editable(draft):
        for sp in slot.spans:
            if sp.type != "NON-ABNORMALITY" or not slot.free(sp.start, sp.end):
                continue
            text = slot.span_text(sp)
            low = text.lower()
            if low in to_abnormal and _PREDICATE.search(slot.text[:sp.start]):
                word = to_abnormal[low]
                new = "not " + word
                out.append(_option("negated_antonym", "meaning-preserving: a normal statement said as "
                                   "its negated opposite", i, sp.start, sp.end, new,
                                   ((4, len(new), "NON-ABNORMALITY"),), **{"from": text, "to": new}))
            elif low in to_normal and slot.text[:sp.start].endswith("not "):
                a = sp.start - 4
                if not slot.free(a, sp.start) or slot.crosses_span(a, sp.start):
                    continue
                new = to_normal[low]
                out.append(_option("negated_antonym", "meaning-preserving: a negated abnormal statement "
                                   "said as its normal opposite", i, a, sp.end, new,
                                   ((0, len(new), "NON-ABNORMALITY"),), **{"from": "not " + text, "to": new}))
    return out


def find_there_is_seen(draft: Draft, lex: Lexicon | None = None) -> list[Option]:
    out = []
    for i, slot in editable(draft):
        at = _start(slot)
        end = len(slot.text)
        if not slot.text.endswith(".") or not slot.free(at, end) or slot.crosses_span(at, end):
            continue
        m = _THERE.match(slot.text, at)
        if m:
            body = slot.text[m.end():-1]
            first = min(slot.spans, key=lambda s: s.start, default=None)
            if (first is None or first.type not in POSITIVE or _VERB.search(body)
                    or first.start - m.end() > 3):  # at most an article before the finding
                continue
            piece = body[:1].upper() + body[1:]
            new = f"{piece} {m.group(1)} seen."
            out.append(_option("there_is_seen", "meaning-preserving: a present finding stated with "
                               "another construction", i, at, end, new,
                               _shifted(slot, m.end(), end, 0), **{"from": "There is", "to": "is seen"}))
            continue
        m = _SEEN.search(slot.text)
        if m:
            body = slot.text[at:m.start()]
            first = min(slot.spans, key=lambda s: s.start, default=None)
            if (first is None or first.type not in POSITIVE or first.start > at + 3 or _VERB.search(body)):
                continue
            piece = _lower_word(body)
            new = f"There {m.group(1)} {piece}."
            offset = len(f"There {m.group(1)} ")
            out.append(_option("there_is_seen", "meaning-preserving: a present finding stated with "
                               "another construction", i, at, end, new,
                               _shifted(slot, at, m.start(), offset), **{"from": "is seen", "to": "There is"}))
    return out


def find_measurement(draft: Draft, lex: Lexicon | None = None) -> list[Option]:
    out = []
    for i, slot in editable(draft):
        for m in _MEASURE.finditer(slot.text):
            value, unit = m.group(1), m.group(2)
            if unit == "cm":
                new = f"{round(float(value) * 10)} mm"
            elif "." not in value and int(value) >= 10:  # whole millimetres from 1 cm up: one decimal in cm
                new = f"{int(value) / 10:g} cm"
            else:
                continue
            a, b = m.span()
            if not slot.free(a, b) or slot.crosses_span(a, b):
                continue
            out.append(_option("measurement", "meaning-preserving: the same measurement in another unit",
                               i, a, b, new, **{"from": m.group(), "to": new}))
    return out


def find_list_order(draft: Draft, lex: Lexicon | None = None) -> list[Option]:
    out = []
    for i, slot in editable(draft):
        spans = sorted(slot.spans, key=lambda s: s.start)
        for left, right in zip(spans, spans[1:]):
            gap = slot.text[left.end:right.start]
            if gap not in (" and ", " or ") or left.type != right.type or left.type == "ANATOMY":
                continue
            if not slot.free(left.start, right.end):
                continue
            lt, rt = slot.span_text(left), slot.span_text(right)
            if left.start == _start(slot):  # sentence-initial: the capital moves with the position
                lt, rt = _lower_word(lt), match_case(lt, rt) if not rt[:1].isupper() else rt
                if rt[:1].islower():
                    rt = rt[0].upper() + rt[1:]
            new = rt + gap + lt
            spans_new = ((0, len(rt), right.type), (len(rt) + len(gap), len(new), left.type))
            out.append(_option("list_order", "meaning-preserving change of the order of a list", i,
                               left.start, right.end, new, spans_new, **{"from": slot.text[left.start:right.end],
                                                                         "to": new}))
    return out


# --- meaning-preserving, whole sentences ----------------------------------------------------------------
def _present_texts(slot: Slot) -> list[str]:
    return [slot.span_text(sp).lower() for sp in slot.spans if sp.type in POSITIVE]


def find_restate(draft: Draft, lex: Lexicon) -> list[Option]:
    impression = [s for s in draft.live() if s.section == "impression"]
    if not impression:
        return []
    said = " ".join(s.text.lower() for s in impression)
    positions = section_positions(draft, "impression")
    out = []
    for k, (section, sent) in enumerate(draft.ref_sentences):
        if section != "findings":
            continue
        slot = next((s for s in draft.slots if s.ref_index == k), None)
        if slot is None or slot.deleted_by is not None:
            continue
        present = [t.lower() for t, ty in sent.entity_texts() if ty in POSITIVE]
        if not present or any(t in said for t in present) or sent.words[0].lower() in ANAPHORA:
            continue
        if has_match(lex.comparison_markers, sent.text):
            continue
        out.append(Option("restate", None, False, "meaning-preserving: a finding of the findings restated "
                          "in the impression", positions[-1], op="insert", sentence=sent, section="impression",
                          detail=(("restated_from", "findings"),)))
    return out


def find_drop_restatement(draft: Draft, lex: Lexicon | None = None) -> list[Option]:
    if len(draft.live()) <= 1:
        return []
    out = []
    for i, slot in editable(draft):
        if slot.untouched() and restated(draft, slot) and not HEADER.match(slot.text):
            out.append(Option("drop_restatement", None, False, "meaning-preserving: an impression sentence "
                              "that the findings state word for word is removed", i, op="delete",
                              detail=(("removed", slot.text),)))
    return out


_ONLY_NO = re.compile(r"No [^.;:,]*\.$")


def find_merge_sentences(draft: Draft, lex: Lexicon | None = None) -> list[Option]:
    """Two neighbouring reference sentences of one section become one: "No A." "No B." -> "No A or
    B."; any other two are joined by a semicolon, as reports do ("Increased atelectasis; no
    pneumothorax."). A reference sentence disappears and no statement is lost."""
    live = [k for k, s in enumerate(draft.slots) if s.deleted_by is None]
    out = []
    for k, nxt in zip(live, live[1:]):
        a, b = draft.slots[k], draft.slots[nxt]
        if a.section != b.section or a.ref_index is None or b.ref_index is None:
            continue
        if not (a.untouched() and b.untouched()) or HEADER.match(b.text) or not a.text.endswith("."):
            continue
        if ";" in a.text or ";" in b.text:
            continue
        at = _start(a)
        negatives = (_ONLY_NO.fullmatch(a.text, at) and _ONLY_NO.fullmatch(b.text) and a.spans and b.spans
                     and all(sp.type in NEGATED for sp in a.spans + b.spans)
                     and " or " not in a.text and " and " not in a.text)
        if negatives:
            new, offset, cut = " or " + _lower_word(b.text[3:]), len(" or "), 3
        else:
            new, offset, cut = "; " + _lower_word(b.text), len("; "), 0
        spans = _shifted(b, cut, len(b.text), offset)
        out.append(Option("merge_sentences", None, False, "meaning-preserving: two neighbouring sentences "
                          "said as one", k, op="merge", start=len(a.text) - 1, end=len(a.text),
                          text=new, spans=spans, other=nxt, detail=(("merged", b.text),)))
    return out


# --- errors, whole sentences ----------------------------------------------------------------------------
def find_insert_contradiction(draft: Draft, lex: Lexicon, donors) -> list[Option]:
    """``donors``: ``(report_id, section, AnnotatedSentence)`` of negated findings only."""
    present = [(t, s) for s in draft.live() for t in _present_texts(s)]
    if not present:
        return []
    out, where = [], None
    for source, section, sent in donors:
        if source == draft.reference_id:
            continue
        denied = _denied(lex, sent)
        hit = [(d, t) for d in denied for t, _ in present if _names_word(d, t)]
        if not hit:
            continue
        w = present_weight(lex, [(t, "ABNORMALITY") for _, t in hit])
        if where is None:
            sec = "impression" if any(s.section == "impression" for s in draft.live()) else draft.live()[0].section
            where = sec, tuple(section_positions(draft, sec))
        out += _contradiction_options(lex, sent, source, w, tuple(sorted({t for _, t in hit})), *where)
    return out


@sentence_cached
def _denied(lex: Lexicon, sent) -> tuple[str, ...]:
    """The negated findings a donor sentence denies, lower-cased; none for a sentence that starts
    with a word that points back or holds a comparison (never inserted)."""
    if sent.words[0].lower() in ANAPHORA or has_match(lex.comparison_markers, sent.text):
        return ()
    return tuple(t.lower() for t, ty in sent.entity_texts() if ty in NEGATED)


@lru_cache(maxsize=4096)
def _word_re(phrase: str) -> re.Pattern:
    return re.compile(rf"\b{re.escape(phrase)}\b")


@lru_cache(maxsize=262144)
def _names_word(phrase: str, text: str) -> bool:
    """True when ``phrase`` occurs in ``text`` between word boundaries."""
    return _word_re(phrase).search(text) is not None


@sentence_cached
def _contradiction_options(lex: Lexicon, sent, source: str, w: int, denies: tuple, sec: str,
                           positions: tuple) -> tuple:
    weight, significant, why = weighed(w, "the inserted sentence denies a finding the report states as "
                                       "present" + _which(w))
    return tuple(Option("insert_contradiction", 2, significant, why, k, op="insert", sentence=sent,
                        section=sec, weight=weight, detail=(("source", source), ("denies", list(denies))))
                 for k in positions)

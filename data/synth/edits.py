"""The six ReXVal error edits (SPEC §2), each as a finder of concrete :class:`Option` s.

Every ``find_*`` function lists, in a fixed order, all the places where its edit can be made on
the current draft; the generator picks one with its seeded ``random.Random`` and :func:`apply`
makes it. Only sentences that come from the reference are edited (never an inserted one), and
never text that an earlier edit already changed.

Clinical weight model (one model for every error; each option's ``why`` says which clause
decided it). What an edit *changes*, not how much text it touches, decides its weight:

- **critical (3)**: the edit changes whether, where or how severely a *critical finding* is present
  (a finding of ``data/lexicons/critical.yaml``: pneumothorax, free air, aortic dissection,
  intracranial hemorrhage, ...), or moves or flips the position of a tube or line (a sentence naming
  a device whose only present finding, if any, is a position status: "in satisfactory position"
  <-> "malpositioned", a laterality or site swap, a tip distance scaled beyond the size threshold);
- **major (2)**: the same kinds of change for any other present finding (ABNORMALITY or DISEASE
  span), or a comparison describing a change added or removed;
- **minor (1)**: everything else that is still an error: a normal or negated statement omitted,
  a location or size changed in a sentence without a present finding, a severity or size change
  below the threshold, a comparison stating stability (or only naming the prior study) added or
  removed, and any change to *incidental* findings only (degenerative changes, granulomas,
  atherosclerotic calcification, ...: ``incidental`` of ``critical.yaml``), however long the text.

A change of a present finding means: the finding is added (category 1, a whole sentence inserted,
or a negated finding un-negated), removed (category 2, its sentence deleted or the finding
negated), moved (category 3), or re-graded beyond the threshold (category 4). A sentence or a
flipped list weighs as its heaviest present finding. An error is **clinically significant** (the
ReXVal flag) iff its weight is major or critical. So a large edit can be trivial (an inserted
"Mild degenerative changes of the thoracic spine." is minor) and a one-word edit critical ("left"
-> "right" in "Small left pneumothorax.", a dropped "No" before "pneumothorax"). Meaning-preserving
rewrites and typos weigh 0.

Per kind:

1. false prediction, kind ``insert_finding``: a sentence with a present finding, taken from another
   report of the same split side, anatomy and (where possible) modality, is inserted: weight of its
   heaviest present finding.
2. omission, kind ``remove_finding``: a reference sentence with a finding and no comparison (so
   that no uncounted category-6 error comes with it) is deleted: weight of its heaviest present
   finding; minor when it holds only normal or negated statements (NON-* spans).
3. location, kinds ``laterality`` / ``site``: a laterality word, an opposite positional word or a
   site from the anatomy's site groups is swapped inside an entity span: critical in a device
   sentence, else the weight of the sentence's heaviest present finding, minor without one.
4. severity, kinds ``severity`` / ``size``: a grade word inside an ABNORMALITY/DISEASE span moves
   on its ladder (beyond the threshold when it moves >= 2 rungs or the ladder has two rungs: then
   the weight of that finding, else minor); a measurement is scaled (beyond the threshold when the
   ratio is >= 1.5: critical in a device sentence, else the weight of the sentence's heaviest
   present finding; minor otherwise).
5. comparison added, kind ``add_comparison``: major iff the phrase describes a change
   ("increased since the prior CT", "new", "enlarging"), minor for stability or a bare mention
   ("unchanged from the prior study", "stable", "Compared with the prior study, ..."). Wording and
   position vary: a clause at the end of the sentence, a parenthesis right after a present
   finding, a modifier before it ("new small effusion"), or an opening phrase.
6. comparison omitted, kind ``remove_comparison``: a comparison clause, or a sentence that is only
   a comparison statement, is removed: major iff the removed text describes a change, else minor.
The opposite rewrites of :mod:`data.synth.rewrites` (negate, unnegate, antonym) are errors of
categories 2 and 1 (a finding's presence flips): the weight of the heaviest flipped finding
(critical for a device status flip).
"""

from __future__ import annotations

import re
from functools import lru_cache

from data.synth.draft import CRITICAL, FINDING, MAJOR, MINOR, POSITIVE, WEIGHT_CLASSES, Draft, Option
from data.synth.lexicon import Lexicon

WHY_POSITIVE = "the sentence holds a present finding (ABNORMALITY/DISEASE)"
WHY_NO_POSITIVE = "the sentence holds no present finding (only normal/negated statements or anatomy)"
WHY_DEVICE = "the sentence states where a tube or line lies (a misplaced device is critical)"


def lex_cached(fn):
    """Memoise ``fn(lex, *args)``, a pure function of the lexicon and hashable ``args`` (a
    :class:`Lexicon` holds dicts, so it is keyed by its id; each entry holds the lexicon itself, so
    that id cannot be reused while cached). The same texts are weighed many times."""
    cache: dict = {}

    def wrapper(lex, *args):
        key = (id(lex), args)
        hit = cache.get(key)
        if hit is None:
            if len(cache) > 200000:
                cache.clear()
            hit = cache[key] = (lex, fn(lex, *args))
        return hit[1]

    wrapper.__wrapped__ = fn
    return wrapper


def sentence_cached(fn):
    """Memoise ``fn(lex, sent, *args)``, a pure function of the lexicon, a donor sentence (an
    immutable :class:`~data.annotation.AnnotatedSentence` of the corpus) and hashable ``args``: keyed
    by the ids of the first two, which each entry holds so that neither id can be reused while cached
    (hashing a whole sentence would cost more than the lookup saves)."""
    cache: dict = {}

    def wrapper(lex, sent, *args):
        key = (id(lex), id(sent), args)
        hit = cache.get(key)
        if hit is None:
            if len(cache) > 200000:
                cache.clear()
            hit = cache[key] = (lex, sent, fn(lex, sent, *args))
        return hit[2]

    wrapper.__wrapped__ = fn
    return wrapper


# -- the clinical weight model (module doc) --------------------------------------------------------
@lex_cached
def finding_weight(lex: Lexicon, text: str) -> int:
    """CRITICAL for a critical finding's text, MINOR for an incidental one, else MAJOR."""
    if lex.critical.search(text):
        return CRITICAL
    if lex.incidental.search(text):
        return MINOR
    return MAJOR


def is_device_sentence(lex: Lexicon, text: str, entities) -> bool:
    """True when ``text`` names a tube or line and its only present findings (``entities``:
    ``(text, type)`` pairs) are position statuses ("malpositioned")."""
    return _device_sentence(lex, text, tuple(entities))


@lex_cached
def _device_sentence(lex: Lexicon, text: str, entities: tuple) -> bool:
    return bool(lex.devices.search(text)) and all(
        lex.device_status.search(t) for t, ty in entities if ty in POSITIVE)


def present_weight(lex: Lexicon, entities) -> int:
    """The weight of the heaviest present finding among ``(text, type)`` pairs; 0 without one."""
    return max((finding_weight(lex, t) for t, ty in entities if ty in POSITIVE), default=0)


def slot_entities(slot) -> list[tuple[str, str]]:
    return [(slot.span_text(sp), sp.type) for sp in slot.spans]


def weighed(weight: int, why: str) -> tuple[int, bool, str]:
    """``(weight, significant, why)`` with the weight class named in ``why``."""
    return weight, weight >= MAJOR, f"{WEIGHT_CLASSES[weight]}: {why}"


def location_weight(lex: Lexicon, slot) -> tuple[int, bool, str]:
    """Weight of moving something in ``slot`` (a location swap, a size beyond the threshold)."""
    return _location_weight(lex, slot.text, tuple(slot_entities(slot)))


@lex_cached
def _location_weight(lex: Lexicon, text: str, ents: tuple) -> tuple[int, bool, str]:
    if is_device_sentence(lex, text, ents):
        return weighed(CRITICAL, WHY_DEVICE)
    w = present_weight(lex, ents)
    if not w:
        return weighed(MINOR, WHY_NO_POSITIVE)
    return weighed(w, WHY_POSITIVE + _which(w))


def _which(weight: int) -> str:
    return {CRITICAL: ", a critical finding", MINOR: ", incidental findings only"}.get(weight, "")
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


def slot_cached(fn):
    """Memoise a per-sentence option finder ``fn(lex, i, slot, *extra)``: its options depend only
    on the lexicon, the slot's index, text, spans and earlier changes (and ``extra``), so a
    sentence that no edit touched is not searched again after every edit. Options are immutable;
    the result is the same list either way (generation stays byte-identical)."""
    cache: dict = {}

    def wrapper(lex, i, slot, *extra):
        key = (id(lex), i, slot.text, slot.section, tuple((sp.start, sp.end, sp.type) for sp in slot.spans),
               tuple((c.start, c.end) for c in slot.changes), extra)
        hit = cache.get(key)
        if hit is None:
            if len(cache) > 20000:
                cache.clear()
            # the entry holds the lexicon itself, so its id cannot be reused while cached
            hit = cache[key] = (lex, fn(lex, i, slot, *extra))
        return hit[1]

    wrapper.__wrapped__ = fn
    return wrapper


def editable(draft: Draft):
    """``(index, slot)`` of live sentences that come from the reference."""
    return [(i, s) for i, s in enumerate(draft.slots)
            if s.deleted_by is None and s.inserted_by is None and s.ref_index is not None]


def _swap_options(draft: Draft, lex: Lexicon, kind: str) -> list[Option]:
    out = []
    for i, slot in editable(draft):
        out += _slot_swaps(lex, i, slot, kind, draft.anatomy)
    return out


@lex_cached
def swap_groups(lex: Lexicon, kind: str, anatomy: str) -> tuple:
    """The groups of ``kind``'s swaps: laterality words, or opposite position words and the sites of
    ``anatomy`` (one tuple per lexicon, kind and anatomy)."""
    if kind == "laterality":
        return lex.laterality
    return lex.position + lex.site_groups(anatomy)


_MATCHES: dict = {}


def phrase_matches(groups: tuple, segment: str) -> tuple:
    """``(group index, term, start, end, matched text)`` of every whole-word match of a term of
    ``groups`` (tuples of phrases) in ``segment``, by group, term and position: what a finder
    searches the same sentence for after every edit, found once per text (keyed by the id of
    ``groups``, which the entry holds so that id cannot be reused while cached)."""
    key = (id(groups), segment)
    hit = _MATCHES.get(key)
    if hit is None:
        low = segment.lower()
        out = []
        for g, terms in enumerate(lowered(groups)):
            for term, term_low in terms:
                if term_low not in low:  # cheap pre-check before the regex
                    continue
                out += [(g, term, m.start(), m.end(), m.group()) for m in phrase_re(term).finditer(segment)]
        if len(_MATCHES) > 100000:
            _MATCHES.clear()
        hit = _MATCHES[key] = (groups, tuple(out))
    return hit[1]


@slot_cached
def _slot_swaps(lex: Lexicon, i: int, slot, kind: str, anatomy: str) -> list[Option]:
    groups = swap_groups(lex, kind, anatomy)
    out = []
    weight, significant, why = location_weight(lex, slot)
    for sp in slot.spans:
        for g, term, start, end, found in phrase_matches(groups, slot.span_text(sp)):
            a, b = sp.start + start, sp.start + end
            if not slot.free(a, b):
                continue
            for other in groups[g]:
                if other.lower() == term.lower():
                    continue
                new = match_case(found, other)
                out.append(Option(kind, 3, significant, why, i, start=a, end=b,
                                  text=new, detail=(("from", found), ("to", new)),
                                  weight=weight))
    return out


def find_laterality(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 3: swap left/right (and the like) inside an entity span."""
    return _swap_options(draft, lex, "laterality")


def find_site(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 3: swap an opposite position word or a site of the report's anatomy."""
    return _swap_options(draft, lex, "site")


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
                    beyond = steps >= lex.significant_steps or len(ladder) == 2
                    fw = finding_weight(lex, slot.span_text(sp))
                    weight, significant, why = weighed(fw if beyond else MINOR, (
                        f"moves {steps} rung(s) on the ladder {list(ladder)}; beyond the threshold "
                        f"when >= {lex.significant_steps} rungs or on a two-rung ladder"
                        + (_which(fw) if beyond else "")))
                    new = match_case(m.group(), word)
                    out.append(Option("severity", 4, significant, why, i, start=a, end=b, text=new,
                                      detail=(("from", m.group()), ("to", new), ("steps", steps)),
                                      weight=weight))
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
        moved = location_weight(lex, slot)
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
                head = f"size ratio {ratio:.2f} (beyond the threshold when >= {lex.size_significant_ratio})"
                if ratio >= lex.size_significant_ratio:
                    weight, significant, why = moved[0], moved[1], f"{moved[2]}; {head}"
                else:
                    weight, significant, why = weighed(MINOR, head)
                out.append(Option("size", 4, significant, why, i, start=a, end=b, text=new,
                                  detail=(("from", old), ("to", new), ("ratio", round(ratio, 3))),
                                  weight=weight))
    return out


def _comparison(lex: Lexicon, i: int, a: int, b: int, text: str, placement: str, phrase: str,
                spans=None, finding: str | None = None) -> Option:
    return _comparison_option(lex, i, a, b, text, placement, phrase, spans, finding)


@lex_cached
def _comparison_option(lex: Lexicon, i: int, a: int, b: int, text: str, placement: str, phrase: str,
                       spans, finding: str | None) -> Option:
    weight, significant, why = _comparison_weight(lex, phrase)
    return Option("add_comparison", 5, significant, why, i, start=a, end=b, text=text, spans=spans,
                  weight=weight, detail=(("phrase", phrase), ("placement", placement))
                  + ((("finding", finding),) if finding else ()))


@lex_cached
def _comparison_weight(lex: Lexicon, phrase: str) -> tuple[int, bool, str]:
    change = bool(lex.change_words.search(phrase))
    return weighed(MAJOR if change else MINOR, (
        "the added comparison describes a change" if change
        else "the added comparison states stability or only names a prior study"))


# Words after which a modifier can open a noun phrase ("with [a] new effusion"); a finding after
# anything else (a verb: "is elevated") gets no modifier.
MODIFIER_AFTER = frozenset({"a", "an", "the", "with", "of", "for", "and", "including", "shows",
                            "demonstrates", "reveals"})
_ARTICLE_BEFORE = re.compile(r"(?<![\w-])(an?|An?) $")


def find_add_comparison(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 5: add a comparison to a sentence that has none, worded and placed in one of the
    ways of ``comparisons.yaml`` (``placement``: ``end``, ``after`` a present finding, a modifier
    ``before`` it, or an ``opening``)."""
    out = []
    for i, slot in editable(draft):
        out += _slot_comparisons(lex, i, slot, draft.modality)
    return out


@slot_cached
def _slot_comparisons(lex: Lexicon, i: int, slot, modality: str) -> list[Option]:
    if not slot.spans or has_match(lex.comparison_markers, slot.text):
        return []
    priors = lex.prior_phrases(modality)
    out = []
    present = [sp for sp in sorted(slot.spans, key=lambda sp: sp.start) if sp.type in POSITIVE]
    clauses = (lex.add_change if present else ()) + lex.add_stable
    filled = [t.replace("{prior}", priors[(k + i) % len(priors)]) for k, t in enumerate(clauses)]
    pos = len(slot.text) - 1 if slot.text[-1:] in ".;:!?" else len(slot.text)
    if slot.free(pos, pos):
        out += [_comparison(lex, i, pos, pos, ", " + c, "end", c) for c in filled]
    for sp in present:
        if slot.text[sp.end:].strip(" .;:!?") and slot.text[sp.end:sp.end + 1] in " ,":
            if slot.free(sp.end, sp.end):
                out += [_comparison(lex, i, sp.end, sp.end, f" ({c})", "after", c,
                                    finding=slot.span_text(sp)) for c in filled]
        out += _modifier_options(lex, i, slot, sp)
    head = HEADER.match(slot.text)
    at = head.end() if head else 0
    first = slot.text[at:].split(" ", 1)[0]
    if (first[:1].isupper() and first[1:] == first[1:].lower() and slot.free(at, at + 1)
            and not any(sp.start <= at < sp.end for sp in slot.spans)):
        for t in lex.openings:
            for prior in priors:
                phrase = t.replace("{prior}", prior)
                out.append(_comparison(lex, i, at, at + 1, phrase + slot.text[at].lower(),
                                       "opening", phrase.strip(" ,")))
    return out


def _modifier_options(lex: Lexicon, i: int, slot, sp) -> list[Option]:
    """A change or stability modifier right before the present finding ``sp`` ("new small
    effusion"), at the start of the sentence or after a word of :data:`MODIFIER_AFTER`; an
    article before it is made to agree ("an enlarging", "a new")."""
    out = []
    head = HEADER.match(slot.text)
    at = head.end() if head else 0
    text = slot.span_text(sp)
    for word in lex.modifiers_change + lex.modifiers_stable:
        if sp.start == at:  # the finding opens the sentence: the modifier takes its capital
            if not slot.free(sp.start, sp.end):
                continue
            body = _lower_word(text)
            new = word[0].upper() + word[1:] + " " + body
            out.append(_comparison(lex, i, sp.start, sp.end, new, "before", word,
                                   spans=((len(new) - len(body), len(new), sp.type),), finding=text))
            continue
        before = slot.text[at:sp.start].split()
        if not before or before[-1].lower() not in MODIFIER_AFTER:
            continue  # "is [elevated]" must not become "is worsening elevated"
        art = _ARTICLE_BEFORE.search(slot.text, 0, sp.start)
        a = art.start() if art else sp.start
        if not slot.free(a, sp.start) or slot.crosses_span(a, sp.start):
            continue
        new = word + " "
        if art:
            article = "an" if word[0] in "aeiou" else "a"
            new = match_case(art.group(1), article) + " " + new
        out.append(_comparison(lex, i, a, sp.start, new, "before", word, finding=text))
    return out


def _lower_word(text: str) -> str:
    """``text`` with its first word lower-cased unless that word is an acronym ("CT", "IVC")."""
    word = re.match(r"[\w'-]*", text).group()
    letters = word.replace("-", "").replace("'", "")
    if word[:1].isupper() and letters[1:] == letters[1:].lower():
        return text[0].lower() + text[1:]
    return text


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
                change = bool(lex.change_words.search(removed))
                weight, significant, why = weighed(MAJOR if change else MINOR, (
                    "the removed comparison describes a change" if change
                    else "the removed comparison states stability or only names the prior study"))
                out.append(Option("remove_comparison", 6, significant, why, i, start=a, end=b,
                                  text="", detail=(("removed", removed.strip(" ,")),), weight=weight))
        if (slot.untouched() and not slot.has(*FINDING) and lex.sentence_markers.search(slot.text)
                and len(draft.live()) > 1):
            change = bool(lex.change_words.search(slot.text))
            weight, significant, why = weighed(MAJOR if change else MINOR, (
                "the removed comparison sentence describes a change" if change
                else "the removed comparison sentence states stability"))
            out.append(Option("remove_comparison", 6, significant, why, i, op="delete",
                              detail=(("removed", slot.text),), weight=weight))
    return out


def restated(draft: Draft, slot) -> bool:
    """True when ``slot`` is an impression sentence whose every present finding (at least one) a
    live findings sentence states word for word: removing it loses nothing (generator v3's
    meaning-preserving ``drop_restatement``), so it is never an omission error."""
    if slot.section != "impression":
        return False
    present = [slot.span_text(sp).lower() for sp in slot.spans if sp.type in POSITIVE]
    if not present:
        return False
    findings = " ".join(s.text.lower() for s in draft.live() if s.section == "findings")
    return all(t in findings for t in present)


def find_remove_finding(draft: Draft, lex: Lexicon) -> list[Option]:
    """Category 2: delete a reference sentence that states a finding (not an impression sentence
    that only restates findings: :func:`restated`)."""
    if len(draft.live()) <= 1:
        return []
    out = []
    for i, slot in editable(draft):
        if (slot.untouched() and slot.has(*FINDING) and not has_match(lex.comparison_markers, slot.text)
                and not restated(draft, slot)):
            w = present_weight(lex, slot_entities(slot))
            weight, significant, why = weighed(w or MINOR, (
                "the removed sentence holds a present finding (ABNORMALITY/DISEASE)" + _which(w) if w
                else "the removed sentence holds only normal/negated statements (NON-* spans)"))
            out.append(Option("remove_finding", 2, significant, why, i, op="delete",
                              detail=(("removed", slot.text),), weight=weight))
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
        names = _donor_names(lex, sent, named)
        if names is None or any(t in text for t in names):
            continue
        yield source, section, sent


@sentence_cached
def _donor_names(lex: Lexicon, sent, named) -> tuple[str, ...] | None:
    """``named(sent)`` lower-cased, or None when the donor is never usable (it names nothing,
    holds a comparison or starts with a word that points back)."""
    names = named(sent)
    if not names or has_match(lex.comparison_markers, sent.text) or sent.words[0].lower() in ANAPHORA:
        return None
    return tuple(t.lower() for t in names)


def present_texts(sent) -> list[str]:
    """The texts of a sentence's present findings (ABNORMALITY/DISEASE spans)."""
    return [t for t, ty in sent.entity_texts() if ty in POSITIVE]


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
    positions = tuple((sec, tuple(section_positions(draft, sec))) for sec in ("findings", "impression"))
    out = []
    for source, section, sent in usable_donors(draft, lex, donors, present_texts):
        out += _insert_finding_options(lex, sent, source, section, positions)
    return out


@sentence_cached
def _insert_finding_options(lex: Lexicon, sent, source: str, section: str, positions: tuple) -> tuple:
    """The options inserting one donor at ``positions`` (``(section, indices)`` pairs)."""
    ents = sent.entity_texts()
    if is_device_sentence(lex, sent.text, ents):
        weight, significant, why = weighed(CRITICAL, "the inserted sentence reports a misplaced "
                                           "tube or line absent from the reference")
    else:
        w = present_weight(lex, ents)
        weight, significant, why = weighed(w, "the inserted sentence states a present finding "
                                           "absent from the reference" + _which(w))
    return tuple(Option("insert_finding", 1, significant, why, k, op="insert", sentence=sent, section=sec,
                        weight=weight, detail=(("source", source), ("source_section", section)))
                 for sec, idx in positions for k in idx)

"""A candidate report under construction: annotated sentences whose every change is traced.

A :class:`Draft` starts as a copy of a reference report (or of one sentence). Each sentence is a
:class:`Slot`: plain text plus entity spans as character offsets. Edits change a slot through
:meth:`Slot.replace` (replace a character range, keeping or re-typing the spans), or delete,
insert or swap whole slots. Every change records the edit that made it and where it sits in the
candidate sentence and in the reference sentence, so :meth:`Draft.finalize` can give each edit
its exact character span in the final candidate text and in the reference text.

Two edits never touch overlapping text (:class:`EditConflict`); this is what keeps every span
exact. Texts are the findings and impression sentences joined by one space (a report's preamble
is not edited and not part of them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from data.annotation import AnnotatedSentence, Report, parse_annotated, tokenize_words

POSITIVE = ("ABNORMALITY", "DISEASE")
NEGATED = ("NON-ABNORMALITY", "NON-DISEASE")
FINDING = POSITIVE + NEGATED
FLIP = {"ABNORMALITY": "NON-ABNORMALITY", "NON-ABNORMALITY": "ABNORMALITY",
        "DISEASE": "NON-DISEASE", "NON-DISEASE": "DISEASE"}
CATEGORY_NAMES = {
    1: "false prediction of finding",
    2: "omission of finding",
    3: "incorrect location/position of finding",
    4: "incorrect severity of finding",
    5: "mention of comparison that is not present in the reference",
    6: "omission of comparison describing a change from a previous study",
}


# Clinical weight of an edit (the one model of data.synth.edits): 0 for a rewrite or typo (no
# error), then minor < major < critical; an error is clinically significant iff weight >= MAJOR.
MINOR, MAJOR, CRITICAL = 1, 2, 3
WEIGHT_CLASSES = {0: "none", MINOR: "minor", MAJOR: "major", CRITICAL: "critical"}


@lru_cache(maxsize=65536)
def _parse(annotated: str) -> AnnotatedSentence:
    """:func:`parse_annotated`, memoised (an untouched sentence is parsed again in every candidate
    of its report; a broken one raises every time, as exceptions are not cached)."""
    return parse_annotated(annotated)


class EditConflict(ValueError):
    """An edit that would overlap an earlier edit or cut through an entity span."""


@dataclass
class Span:
    start: int  # character offsets in the slot text, end exclusive
    end: int
    type: str


@dataclass
class Change:
    edit: int
    start: int  # in the current slot text
    end: int
    ref_start: int  # in the reference sentence text
    ref_end: int


@dataclass
class Slot:
    section: str
    text: str
    spans: list[Span]
    ref_index: int | None = None  # index of the reference sentence it came from
    changes: list[Change] = field(default_factory=list)
    deleted_by: int | None = None
    inserted_by: int | None = None
    moved_by: int | None = None

    @classmethod
    def from_sentence(cls, sent: AnnotatedSentence, section: str, ref_index: int | None = None,
                      inserted_by: int | None = None) -> "Slot":
        words = tokenize_words(sent.text)
        spans = [Span(words[e.start][1], words[e.end][2], e.type) for e in sent.entities]
        return cls(section, sent.text, spans, ref_index, inserted_by=inserted_by)

    # -- reading -------------------------------------------------------------------------------
    def annotated(self) -> str:
        """The slot in the inline ``[text|TYPE]`` form."""
        out, pos = [], 0
        for sp in sorted(self.spans, key=lambda s: s.start):
            out.append(self.text[pos:sp.start])
            out.append(f"[{self.text[sp.start:sp.end]}|{sp.type}]")
            pos = sp.end
        out.append(self.text[pos:])
        return "".join(out)

    def sentence(self) -> AnnotatedSentence:
        """Re-parse the slot; raises :class:`data.annotation.AnnotationError` if it is broken."""
        return _parse(self.annotated())

    def types(self) -> list[str]:
        return [sp.type for sp in sorted(self.spans, key=lambda s: s.start)]

    def has(self, *types: str) -> bool:
        return any(sp.type in types for sp in self.spans)

    def span_text(self, sp: Span) -> str:
        return self.text[sp.start:sp.end]

    def untouched(self) -> bool:
        return (not self.changes and self.deleted_by is None and self.inserted_by is None
                and self.moved_by is None)

    def free(self, a: int, b: int) -> bool:
        """True when ``[a, b)`` overlaps no earlier change (an insertion may touch one's edge)."""
        for c in self.changes:
            if a == b:
                if c.start < a < c.end:
                    return False
            elif a < c.end and b > c.start:
                return False
        return True

    def crosses_span(self, a: int, b: int) -> bool:
        """True when ``[a, b)`` cuts through an entity span's edge (neither inside nor around it)."""
        for sp in self.spans:
            inside = sp.start <= a and b <= sp.end and (a < b or sp.start < a < sp.end)
            around = a <= sp.start and sp.end <= b and a < b
            disjoint = sp.end <= a or sp.start >= b
            if not (inside or around or disjoint):
                return True
        return False

    def to_ref(self, pos: int) -> int:
        """Map a position outside every change to the reference sentence."""
        ref = pos
        for c in sorted(self.changes, key=lambda c: c.start):
            if c.end <= pos:
                ref = pos - c.end + c.ref_end
        return ref

    # -- editing -------------------------------------------------------------------------------
    def replace(self, a: int, b: int, new: str, edit: int, new_spans=None) -> None:
        """Replace characters ``[a, b)`` by ``new``, recorded as ``edit``.

        Spans before or after the range shift; a span containing the range grows or shrinks with
        it (its type is kept); spans wholly inside the range are replaced by ``new_spans``
        (``(start, end, type)`` relative to ``new``). When ``new_spans`` is given, a span equal to
        the range counts as inside it. A range crossing a span edge raises :class:`EditConflict`.
        """
        if not (0 <= a <= b <= len(self.text)):
            raise EditConflict(f"range {a}..{b} outside the sentence of length {len(self.text)}")
        if not self.free(a, b):
            raise EditConflict(f"range {a}..{b} overlaps an earlier edit")
        delta = len(new) - (b - a)
        ref_a, ref_b = self.to_ref(a), self.to_ref(b)
        kept: list[Span] = []
        for sp in self.spans:
            if sp.end <= a:
                kept.append(sp)
            elif sp.start >= b:
                kept.append(Span(sp.start + delta, sp.end + delta, sp.type))
            elif new_spans is not None and a <= sp.start and sp.end <= b:
                continue
            elif sp.start <= a and b <= sp.end:
                kept.append(Span(sp.start, sp.end + delta, sp.type))
            elif a <= sp.start and sp.end <= b:
                continue
            else:
                raise EditConflict(
                    f"range {a}..{b} cuts through the span {self.span_text(sp)!r} ({sp.type})"
                )
        for s, e, t in new_spans or ():
            kept.append(Span(a + s, a + e, t))
        self.spans = sorted(kept, key=lambda s: s.start)
        for c in self.changes:
            if c.start >= b:
                c.start += delta
                c.end += delta
        self.changes.append(Change(edit, a, a + len(new), ref_a, ref_b))
        self.changes.sort(key=lambda c: c.start)
        self.text = self.text[:a] + new + self.text[b:]


@dataclass
class Draft:
    reference_id: str
    anatomy: str
    modality: str
    ref_sentences: list[tuple[str, AnnotatedSentence]]  # (section, sentence) of the reference
    slots: list[Slot]
    edits: list[dict] = field(default_factory=list)

    @classmethod
    def from_report(cls, report: Report) -> "Draft":
        pairs = [("findings", s) for s in report.findings] + [("impression", s) for s in report.impression]
        return cls.from_sentences(report.id, pairs, report.anatomy, report.modality)

    @classmethod
    def from_sentences(cls, reference_id: str, pairs, anatomy: str = "", modality: str = "") -> "Draft":
        pairs = list(pairs)
        slots = [Slot.from_sentence(s, sec, k) for k, (sec, s) in enumerate(pairs)]
        return cls(reference_id, anatomy, modality, pairs, slots)

    @property
    def reference(self) -> str:
        return " ".join(s.text for _, s in self.ref_sentences)

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.live())

    def live(self) -> list[Slot]:
        return [s for s in self.slots if s.deleted_by is None]

    def new_edit(self, kind: str, category: int | None, significant: bool, why: str,
                 section: str, weight: int = 0, **detail) -> int:
        self.edits.append({
            "id": len(self.edits), "kind": kind, "category": category,
            "category_name": CATEGORY_NAMES.get(category), "significant": bool(significant),
            "weight": int(weight), "weight_class": WEIGHT_CLASSES[int(weight)],
            "why": why, "section": section, "detail": detail,
        })
        return len(self.edits) - 1

    # -- whole-sentence edits ------------------------------------------------------------------
    def delete(self, slot: Slot, edit: int) -> None:
        if not slot.untouched():
            raise EditConflict("only an untouched reference sentence can be deleted")
        if len(self.live()) <= 1:
            raise EditConflict("the candidate would have no sentence left")
        slot.deleted_by = edit

    def insert(self, index: int, sent: AnnotatedSentence, section: str, edit: int) -> Slot:
        slot = Slot.from_sentence(sent, section, None, inserted_by=edit)
        self.slots.insert(index, slot)
        return slot

    def swap(self, i: int, j: int, edit: int) -> None:
        self.slots[i], self.slots[j] = self.slots[j], self.slots[i]
        self.slots[i].moved_by = self.slots[j].moved_by = edit
        self.edits[edit]["detail"]["_slots"] = [id(self.slots[i]), id(self.slots[j])]

    # -- result --------------------------------------------------------------------------------
    def finalize(self) -> dict:
        """Candidate text, its annotated sentences and every edit with its spans and texts."""
        reference = self.reference
        ref_off, pos = [], 0
        for _, s in self.ref_sentences:
            ref_off.append(pos)
            pos += len(s.text) + 1
        cand_off, pos = {}, 0
        for slot in self.live():
            cand_off[id(slot)] = pos
            pos += len(slot.text) + 1
        candidate = self.text
        cand_spans: dict[int, list] = {}
        ref_spans: dict[int, list] = {}

        def add(table, edit, a, b):
            table.setdefault(edit, []).append((a, b))

        for slot in self.slots:
            r0 = ref_off[slot.ref_index] if slot.ref_index is not None else None
            rlen = len(self.ref_sentences[slot.ref_index][1].text) if r0 is not None else 0
            if slot.deleted_by is not None:
                add(ref_spans, slot.deleted_by, r0, r0 + rlen)
                continue
            c0 = cand_off[id(slot)]
            if slot.inserted_by is not None:
                add(cand_spans, slot.inserted_by, c0, c0 + len(slot.text))
            for c in slot.changes:
                add(cand_spans, c.edit, c0 + c.start, c0 + c.end)
                if r0 is not None:
                    add(ref_spans, c.edit, r0 + c.ref_start, r0 + c.ref_end)
        edits = []
        by_id = {id(s): s for s in self.slots}
        for e in self.edits:
            e = {**e, "detail": dict(e["detail"])}
            for sid in e["detail"].pop("_slots", []):
                s = by_id[sid]
                add(cand_spans, e["id"], cand_off[sid], cand_off[sid] + len(s.text))
                r0 = ref_off[s.ref_index]
                add(ref_spans, e["id"], r0, r0 + len(self.ref_sentences[s.ref_index][1].text))
            cs, rs = cand_spans.get(e["id"]), ref_spans.get(e["id"])
            e["candidate_span"] = [min(a for a, _ in cs), max(b for _, b in cs)] if cs else None
            e["reference_span"] = [min(a for a, _ in rs), max(b for _, b in rs)] if rs else None
            e["before"] = reference[slice(*e["reference_span"])] if rs else ""
            e["after"] = candidate[slice(*e["candidate_span"])] if cs else ""
            edits.append(e)
        sentences = []
        for slot in self.live():
            slot.sentence()  # raises if an edit broke the annotation
            sentences.append({"section": slot.section, "annotated": slot.annotated()})
        return {"reference_id": self.reference_id, "anatomy": self.anatomy,
                "modality": self.modality, "reference": reference, "candidate": candidate,
                "candidate_sentences": sentences, "edits": edits}


@dataclass(frozen=True, init=False)
class Option:
    """One concrete, fully specified edit that :func:`apply` can make to a draft.

    ``op``: ``replace`` (characters ``[start, end)`` of slot ``slot`` become ``text``, with
    ``spans`` as in :meth:`Slot.replace`), ``delete`` (slot ``slot``), ``insert`` (``sentence``
    at index ``slot`` in ``section``), ``swap`` (slots ``slot`` and ``other``) or ``merge`` (slot
    ``other`` is deleted and ``[start, end)`` of slot ``slot`` becomes ``text``, which holds it).
    """

    kind: str
    category: int | None
    significant: bool
    why: str
    slot: int
    op: str = "replace"
    start: int = 0
    end: int = 0
    text: str = ""
    spans: tuple | None = None
    sentence: AnnotatedSentence | None = None
    section: str = ""
    other: int | None = None
    detail: tuple = ()
    weight: int = 0  # MINOR / MAJOR / CRITICAL for an error, 0 otherwise

    def __init__(self, kind: str, category: int | None, significant: bool, why: str, slot: int,
                 op: str = "replace", start: int = 0, end: int = 0, text: str = "", spans: tuple | None = None,
                 sentence: AnnotatedSentence | None = None, section: str = "", other: int | None = None,
                 detail: tuple = (), weight: int = 0) -> None:
        # the fields in one step, where a frozen dataclass's own __init__ sets them one by one with
        # object.__setattr__ (three times slower): the finders make options by the hundred thousand
        self.__dict__.update(kind=kind, category=category, significant=significant, why=why, slot=slot, op=op,
                             start=start, end=end, text=text, spans=spans, sentence=sentence, section=section,
                             other=other, detail=detail, weight=weight)


#: what a reader of the two texts sees of an edit, by its operation (recorded as each edit's ``surface``)
SURFACE = {"replace": "rewrite", "insert": "insert", "delete": "delete", "merge": "delete", "swap": "move"}


def apply(draft: Draft, option: Option) -> int:
    """Make ``option`` on ``draft``; returns the new edit's id (raises :class:`EditConflict`)."""
    section = option.section or draft.slots[option.slot].section
    edit = draft.new_edit(option.kind, option.category, option.significant, option.why,
                          section, option.weight, **dict(option.detail))
    draft.edits[edit]["surface"] = SURFACE[option.op]
    try:
        if option.op == "replace":
            draft.slots[option.slot].replace(option.start, option.end, option.text, edit,
                                             option.spans)
        elif option.op == "delete":
            draft.delete(draft.slots[option.slot], edit)
        elif option.op == "insert":
            draft.insert(option.slot, option.sentence, section, edit)
        elif option.op == "swap":
            draft.swap(option.slot, option.other, edit)
        elif option.op == "merge":  # slot ``other`` joins slot ``slot``: its text replaces [start, end)
            other = draft.slots[option.other]
            if not other.untouched():
                raise EditConflict("only an untouched reference sentence can be merged")
            draft.slots[option.slot].replace(option.start, option.end, option.text, edit, option.spans)
            draft.delete(other, edit)
        else:
            raise EditConflict(f"unknown operation {option.op!r}")
    except EditConflict:
        draft.edits.pop()
        raise
    return edit

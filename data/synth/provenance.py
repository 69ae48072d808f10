"""Which corpus reports a SYNTHETIC pair was made from, read back from the sets' manifests.

Every item of :mod:`data.synth` records its reference report (``reference_id``) and its edits; an
inserted sentence records the report it came from (``detail.source``). :func:`pair_sources` maps
each ``(reference text, candidate text)`` pair of a synthetic folder to all of these report ids, so
a check can follow any pair a reader returns back to the corpus, whatever layout it was read from.
"""

from __future__ import annotations

import json
from pathlib import Path

MANIFEST = "manifest_synthetic.jsonl"


def edit_sources(edits) -> set[str]:
    """Report ids that edits brought text from (inserted sentences)."""
    return {str(e["detail"]["source"]) for e in edits or ()
            if isinstance(e.get("detail"), dict) and e["detail"].get("source")}


def pair_sources(folder: str | Path) -> dict[tuple[str, str], set[str]]:
    """``(reference, candidate) -> {report ids}`` for every item under ``folder`` (Task 3 triads
    give two pairs: original with synonym, original with opposite). Two items with the same texts
    share one entry holding the union of their sources."""
    out: dict[tuple[str, str], set[str]] = {}
    paths = sorted(Path(folder).rglob(MANIFEST))
    if not paths:
        raise FileNotFoundError(f"{folder}: no {MANIFEST} (not a data.synth folder)")
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            ref_id = str(rec["reference_id"])
            if rec.get("set") == "task3":
                for kind in ("synonym", "opposite"):
                    key = (rec["original"], rec[kind])
                    out.setdefault(key, set()).update({ref_id} | edit_sources(rec[f"{kind}_edits"]))
            else:
                key = (rec["reference"], rec["candidate"])
                out.setdefault(key, set()).update({ref_id} | edit_sources(rec["edits"]))
    return out


def pair_records(folder: str | Path) -> dict[tuple[str, str], list[tuple[dict, list]]]:
    """``(reference, candidate) -> [(manifest record, its edits)]`` for every item under ``folder``
    (Task 3 triads give two pairs, each with its own edits)."""
    out: dict[tuple[str, str], list] = {}
    for path in sorted(Path(folder).rglob(MANIFEST)):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("set") == "task3":
                for kind in ("synonym", "opposite"):
                    out.setdefault((rec["original"], rec[kind]), []).append((rec, rec[f"{kind}_edits"]))
            else:
                out.setdefault((rec["reference"], rec["candidate"]), []).append((rec, rec["edits"]))
    return out


def reference_texts(report, rec: dict) -> set[str]:
    """The text(s) the generator renders from corpus ``report`` as the reference of manifest record
    ``rec``, with the generator's own :class:`~data.synth.draft.Draft`: one sentence for Task 1
    (``rec["sentence"]``, e.g. ``findings[2]``), one section for ClinicalBLEURT rows (the manifest
    does not name it: either non-empty section), else findings and impression."""
    from data.synth.draft import Draft

    if rec.get("set") == "task1":
        section, _, k = rec["sentence"].rstrip("]").partition("[")
        sent = getattr(report, section)[int(k)]
        return {Draft.from_sentences(report.id, [(section, sent)]).reference}
    if rec.get("set") == "bleurt":
        return {Draft.from_sentences(report.id, [(sec, s) for s in getattr(report, sec)]).reference
                for sec in ("findings", "impression") if getattr(report, sec)}
    return {Draft.from_report(report).reference}

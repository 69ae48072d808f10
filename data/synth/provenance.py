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

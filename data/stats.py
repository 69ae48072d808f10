"""``python -m data stats <folder>``: entity statistics in the layout of RaTEScore's Table 2.

``<folder>`` is either a RaTE-NER root (holding source folders) or one source folder.
For every source and split: reports (when the records name them), sentences, and per entity
type the total count and, in brackets, the number of distinct entity strings (lower-cased).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from radscore.labels import ENTITY_TYPES
from data.ratener import SPLITS, NERSentence, RaTENERFormatError, list_subsets, load_split


def _sources(folder: Path) -> tuple[Path, list[str]]:
    if any((folder / f"{s}_IOB.json").is_file() for s in SPLITS):
        return folder.parent, [folder.name]
    subsets = list_subsets(folder)
    if not subsets:
        raise RaTENERFormatError(f"{folder}: no RaTE-NER source folders or split files found")
    return folder, subsets


def split_stats(sentences: list[NERSentence]) -> dict:
    totals, distinct = Counter(), {t: set() for t in ENTITY_TYPES}
    for s in sentences:
        for a, b, t in s.spans:
            totals[t] += 1
            distinct[t].add(" ".join(s.tokens[a : b + 1]).lower())
    reports = {s.meta.get("report_id") or s.meta.get("doc_key") for s in sentences} - {None}
    return {
        "reports": len(reports) or None,
        "sentences": len(sentences),
        "entities": {t: (totals[t], len(distinct[t])) for t in ENTITY_TYPES},
        "modality": Counter(s.meta.get("modality") for s in sentences if s.meta.get("modality")),
        "anatomy": Counter(s.meta.get("anatomy") for s in sentences if s.meta.get("anatomy")),
        "report_meta": {(s.meta.get("report_id"), s.meta.get("modality"), s.meta.get("anatomy"))
                        for s in sentences if s.meta.get("report_id")},
    }


def collect(folder: str | Path) -> dict[str, dict[str, dict]]:
    root, subsets = _sources(Path(folder))
    out = {}
    for sub in subsets:
        out[sub] = {}
        for split in SPLITS:
            if (root / sub / f"{split}_IOB.json").is_file():  # a source may lack a split
                out[sub][split] = split_stats(load_split(root, sub, split, "IOB"))
    return out


def format_table(stats: dict[str, dict[str, dict]]) -> str:
    short = {"ABNORMALITY": "ABN", "NON-ABNORMALITY": "NON-ABN", "DISEASE": "DIS",
             "NON-DISEASE": "NON-DIS", "ANATOMY": "ANAT"}
    head = ["source", "split", "reports", "sentences", *(short[t] for t in ENTITY_TYPES), "entities"]
    rows = []
    for sub, splits in stats.items():
        for split, st in splits.items():
            ents = st["entities"]
            rows.append([sub, split, "-" if st["reports"] is None else str(st["reports"]),
                         str(st["sentences"]),
                         *(f"{ents[t][0]} ({ents[t][1]})" for t in ENTITY_TYPES),
                         str(sum(v[0] for v in ents.values()))])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = lambda r: "  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
    lines = [fmt(head), fmt(["-" * w for w in widths]), *map(fmt, rows)]
    lines.append("entity columns: total (distinct strings, lower-cased)")
    for key in ("modality", "anatomy"):
        reports = {}
        for splits in stats.values():
            for st in splits.values():
                for rid, mod, ana in st["report_meta"]:
                    reports[rid] = mod if key == "modality" else ana
        if reports:
            counts = Counter(reports.values())
            listing = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
            lines.append(f"{key} ({len(counts)}), reports: {listing}")
    return "\n".join(lines)

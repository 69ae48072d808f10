"""An ablation table beside the paper's, written as markdown, CSV and JSON.

Layout: the paper's key columns, then for each metric the paper's number and ours side by side
(ours with its bootstrap CI where it is a correlation), then ``ours: source or status``. A row
whose value we cannot produce says why (``needs the paper profile``, ``unavailable: …``, ``skipped:
needs …`` for a comparator whose package or model is not on this machine, ``failed: …``) and holds
no number. Rows of ours only (e.g. the sample profile's MiniLM runs)
show ``—`` in the paper's columns.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from radscore.atomic import atomic_open, write_text_atomic
from train.ablations.paper import PaperTable

MEASURED, NEEDS_PAPER = "measured", "needs the paper profile"
DASH = "—"


@dataclass
class Cell:
    value: float
    low: float | None = None
    high: float | None = None
    n: int | None = None

    @classmethod
    def of(cls, result: dict) -> "Cell":
        """From a :func:`train.evaluation.metaeval.agreement` entry."""
        return cls(result["value"], result.get("low"), result.get("high"), result.get("n_pairs"))


@dataclass
class Row:
    label: tuple[str, ...]
    paper: dict                       # metric -> published number or None
    ours: dict = field(default_factory=dict)  # metric -> Cell
    status: str = MEASURED  # measured | needs the paper profile | unavailable: … | skipped: needs … | failed: …
    source: str = ""                  # what produced ours
    in_paper: bool = True

    @property
    def kind(self) -> str:
        return self.status.split(":", 1)[0]


@dataclass
class Table:
    paper: PaperTable
    profile: str
    ours_data: str                    # which data produced ours
    rows: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    runs: list = field(default_factory=list)   # run names used

    def counts(self) -> dict:
        out = {MEASURED: 0, NEEDS_PAPER: 0, "unavailable": 0, "skipped": 0, "failed": 0}
        for row in self.rows:
            out[row.kind] = out.get(row.kind, 0) + 1
        return out

    def failures(self) -> list[dict]:
        return [{"row": " / ".join(r.label), "reason": r.status[len("failed: "):]}
                for r in self.rows if r.kind == "failed"]


def _num(value: float | None, metric: str) -> str:
    if value is None:
        return DASH
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    return f"{value:.2f}" if metric == "s/sample" and value >= 0.1 else f"{value:.3f}"


def _ours(cell: Cell | None, metric: str) -> str:
    if cell is None:
        return DASH
    text = _num(cell.value, metric)
    if cell.low is not None and cell.high is not None and not (math.isnan(cell.low) or math.isnan(cell.high)):
        text += f" [{cell.low:.3f}, {cell.high:.3f}]"
    return text


def _status_text(row: Row) -> str:
    if row.kind == MEASURED:
        return row.source
    return row.status + (f" ({row.source})" if row.source and row.source not in row.status else "")


def to_markdown(table: Table) -> str:
    p = table.paper
    head = [*p.key_columns]
    for m in p.metrics:
        head += [f"{m} (paper)", f"{m} (ours)"]
    head.append("ours: source or status")
    lines = [f"# {p.name}: {p.title} ({table.profile} profile)", "",
             f"**Ours:** {table.ours_data}", "",
             f"**Paper:** {p.source}; measured on {p.paper_data}.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in table.rows:
        label = list(row.label) if row.in_paper else [*row.label[:-1], f"{row.label[-1]} (ours only)"]
        cells = [*label]
        for m in p.metrics:
            cells += [_num(row.paper.get(m), m) if row.in_paper else DASH, _ours(row.ours.get(m), m)]
        cells.append(_status_text(row).replace("|", "/"))
        lines.append("| " + " | ".join(cells) + " |")
    if table.notes:
        lines += ["", "Notes:"] + [f"- {n}" for n in table.notes]
    return "\n".join(lines) + "\n"


def csv_header(table: Table) -> list[str]:
    head = list(table.paper.key_columns)
    for m in table.paper.metrics:
        head += [f"{m} paper", f"{m} ours", f"{m} ours low", f"{m} ours high"]
    return head + ["in paper", "status", "source", "ours data"]


def write_csv(table: Table, path: Path) -> None:
    def num(v):
        return "" if v is None or (isinstance(v, float) and math.isnan(v)) else repr(float(v))

    with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(csv_header(table))
        for row in table.rows:
            values = list(row.label)
            for m in table.paper.metrics:
                cell = row.ours.get(m)
                values += [num(row.paper.get(m)) if row.in_paper else "", num(cell.value if cell else None),
                           num(cell.low if cell else None), num(cell.high if cell else None)]
            w.writerow(values + [str(row.in_paper).lower(), row.status, row.source, table.ours_data])


def to_dict(table: Table, extra: dict | None = None) -> dict:
    p = table.paper
    return {"table": p.name, "title": p.title, "profile": table.profile, "ours_data": table.ours_data,
            "paper_source": p.source, "paper_data": p.paper_data, "key_columns": list(p.key_columns),
            "metrics": list(p.metrics), "notes": table.notes, "counts": table.counts(),
            "rows": [{"label": list(r.label), "in_paper": r.in_paper, "paper": r.paper, "status": r.status,
                      "source": r.source, "ours": {m: _finite(vars(c)) for m, c in r.ours.items()}}
                     for r in table.rows],
            **(extra or {})}


def _finite(cell: dict) -> dict:
    """NaN (an undefined correlation) as null, so the JSON stays standard."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in cell.items()}


def write_table(table: Table, out_dir: Path, extra: dict | None = None) -> dict[str, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {ext: out_dir / f"{table.paper.name}.{ext}" for ext in ("md", "csv", "json")}
    write_text_atomic(paths["md"], to_markdown(table), encoding="utf-8")
    write_csv(table, paths["csv"])
    from radscore.environment import environment

    data = to_dict(table, extra)
    data.setdefault("environment", environment())  # the process that tested the runs (each run folder keeps its own)
    write_text_atomic(paths["json"], json.dumps(data, indent=1, default=_jsonable) + "\n", encoding="utf-8")
    return paths


def _jsonable(value):
    import numpy as np

    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")

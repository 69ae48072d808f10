"""``radscore score --explain --html FILE``: RaTEScore's matches as one self-contained HTML page.

For each pair: the candidate and the reference, each entity highlighted by type where it occurs in
the text (searched in reading order, ignoring case and spacing: :func:`entity_pattern`; an entity
not found after the previous one is listed in the tables only), then one table per direction: each scored
entity, its best match in the other report, both types, the cosine, the affinity weight it got and
the penalty factor. RaTEScore matches every entity to its most similar entity on the other side,
so "matched" here means "has a best match"; an entity is marked *unmatched* when the other
report has no entity at all (the pair then gets ``empty_score``). Row shading follows the
cosine. No script, no external resource: it opens in any browser, offline.
"""

from __future__ import annotations

import html
import re
from typing import Sequence

from radscore.labels import ENTITY_TYPES

COLOURS = {"ABNORMALITY": "#f4a7a7", "NON-ABNORMALITY": "#b9e4b0", "DISEASE": "#f7c97f",
           "NON-DISEASE": "#b5d3f5", "ANATOMY": "#ddd0f2"}
_CSS = """
body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;line-height:1.45;color:#222}
.pair{border:1px solid #ccc;border-radius:6px;padding:1em;margin:1.5em 0}
.text{white-space:pre-wrap;background:#fafafa;padding:.5em;border-radius:4px}
.ent{border-radius:3px;padding:0 2px}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
.unmatched{color:#999;font-style:italic}
.legend span{margin-right:1em}
"""


def entity_pattern(text: str) -> re.Pattern | None:
    """How an entity text is searched in its report: case-insensitive (uncased models lower-case
    what they read), any whitespace or none between its pieces (sub-word models rejoin words with
    spaces, "left - sided" for "left-sided")."""
    pieces = re.findall(r"\w+|[^\w\s]", text)
    return re.compile(r"\s*".join(map(re.escape, pieces)), re.IGNORECASE) if pieces else None


def _highlight(text: str, entities: Sequence[dict]) -> str:
    """``text`` with each entity wrapped in a span of its type, searched left to right."""
    out, pos = [], 0
    for ent in entities:
        pattern = entity_pattern(ent["text"])
        found = pattern.search(text, pos) if pattern else None
        if found is None:
            continue  # not in the text after the previous entity: shown in the tables only
        out.append(html.escape(text[pos:found.start()]))
        t = ent["type"]
        out.append(f'<span class="ent" data-type="{html.escape(t)}" title="{html.escape(t)}: '
                   f'{html.escape(ent["text"])}" style="background:{COLOURS.get(t, "#eee")}">'
                   f"{html.escape(found.group(0))}</span>")
        pos = found.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _table(direction: str, records: Sequence[dict], entities: Sequence[dict]) -> str:
    head = (f'<table class="matches" data-direction="{direction}"><tr><th>entity</th><th>type</th>'
            "<th>best match</th><th>type</th><th>cosine</th><th>weight</th><th>penalty</th></tr>")
    if not records:
        rows = "".join(f'<tr class="unmatched"><td>{html.escape(e["text"])}</td><td>{html.escape(e["type"])}</td>'
                       '<td colspan="5">unmatched: the other report has no entity</td></tr>' for e in entities)
        return head + rows + "</table>"
    rows = []
    for m in records:
        shade = max(0.0, min(1.0, m["cosine"]))
        rows.append(f'<tr class="matched" style="background:rgba(120,180,120,{0.35 * shade:.2f})">'
                    f'<td>{html.escape(m["entity"])}</td><td>{html.escape(m["type"])}</td>'
                    f'<td>{html.escape(m["matched_entity"])}</td><td>{html.escape(m["matched_type"])}</td>'
                    f'<td>{m["cosine"]:.3f}</td><td>{m["weight"]:.3f}</td><td>{m["penalty"]:.3f}</td></tr>')
    return head + "".join(rows) + "</table>"


def render(pairs: Sequence[dict], candidates: Sequence[str], references: Sequence[str],
           ids: Sequence[str] | None = None, title: str = "RaTEScore explained") -> str:
    """The page for scored pairs (``PairScore.to_dict()`` with ``matches``) and their texts."""
    legend = "".join(f'<span><span class="ent" style="background:{COLOURS[t]}">{t}</span></span>'
                     for t in ENTITY_TYPES)
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>",
             f'<p class="legend">{legend}</p>',
             "<p>Each entity is matched to its most similar entity in the other report; the weight is "
             "the affinity W(type, matched type), the penalty factor is p for a penalised type pair and "
             "1 otherwise. Precision scores the candidate's entities, recall the reference's.</p>"]
    for k, (pair, cand, ref) in enumerate(zip(pairs, candidates, references)):
        name = ids[k] if ids is not None else str(k)
        matches = pair.get("matches") or {"candidate": [], "reference": []}
        parts.append(
            f'<section class="pair" id="pair-{html.escape(str(name))}"><h2>{html.escape(str(name))}: '
            f'F1 {pair["f1"]:.4f} (precision {pair["precision"]:.4f}, recall {pair["recall"]:.4f})</h2>'
            f'<h3>candidate</h3><div class="text" data-side="candidate">{_highlight(cand, pair["candidate_entities"])}</div>'
            f'<h3>reference</h3><div class="text" data-side="reference">{_highlight(ref, pair["reference_entities"])}</div>'
            "<h3>candidate entities → reference (precision)</h3>"
            + _table("candidate", matches["candidate"], pair["candidate_entities"])
            + "<h3>reference entities → candidate (recall)</h3>"
            + _table("reference", matches["reference"], pair["reference_entities"]) + "</section>")
    parts.append("</body></html>\n")
    return "".join(parts)

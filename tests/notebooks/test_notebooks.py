"""Every notebook of notebooks/ runs top to bottom (nbclient, a python3 kernel of this environment,
started in notebooks/ as Jupyter would) on the tiny random artefacts, and shows what it promises:
tables with the expected columns and rows, plots, and the notice that its models are untrained.

Cells are found by their tag (cell metadata ``tags``), so the checks survive edits of the text.
"""

from __future__ import annotations

import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

from radscore.systems import RADCLIQ  # noqa: E402
from train.rehearsal.tiny import FORCE_TINY_ENV, WalkthroughExport, walkthrough_export  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
CELL_TIMEOUT = 120  # seconds per cell; a whole notebook takes about 10 s here
UNTRAINED = "UNTRAINED"


class TableParser(HTMLParser):
    """The header cells and body rows of the first HTML table (pandas' ``to_html``)."""

    def __init__(self):
        super().__init__()
        self.headers: list[str] = []
        self.rows: list[list[str]] = []
        self._section = None
        self._cell: list[str] | None = None
        self._tables = 0

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._tables += 1
        elif tag in ("thead", "tbody") and self._tables == 1:
            self._section = tag
        elif tag == "tr" and self._section == "tbody":
            self.rows.append([])
        elif tag in ("th", "td") and self._section:
            self._cell = []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None:
            text = "".join(self._cell).strip()
            if self._section == "thead":
                self.headers.append(text)
            else:
                self.rows[-1].append(text)
            self._cell = None
        elif tag in ("thead", "tbody"):
            self._section = None


def parse_table(html: str) -> TableParser:
    parser = TableParser()
    parser.feed(html)
    return parser


def tagged(nb, tag: str):
    cells = [c for c in nb.cells if c.cell_type == "code" and tag in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged {tag!r}, found {len(cells)}"
    return cells[0]


def texts(cell) -> str:
    """Everything the cell printed to stdout."""
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


def tables(cell) -> list[TableParser]:
    return [parse_table(o.data["text/html"]) for o in cell.outputs
            if o.output_type in ("display_data", "execute_result") and "text/html" in o.data]


def images(cell) -> int:
    return sum(o.output_type == "display_data" and "image/png" in o.data for o in cell.outputs)


def run(name: str, monkeypatch):
    monkeypatch.setenv(FORCE_TINY_ENV, "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    start = time.perf_counter()
    nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    print(f"{name}: {time.perf_counter() - start:.1f} s")
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    return nb


def test_every_notebook_is_checked_here_and_saved_without_outputs():
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert names == sorted(CHECKS), f"notebooks {names} vs checked {sorted(CHECKS)}: add a check for each notebook"
    for name in names:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        nbformat.validate(nb)
        dirty = [k for k, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
        assert not dirty, f"{name}: cells {dirty} were saved with outputs; clear them before committing"
        assert nb.metadata["kernelspec"]["name"] == "python3"


def test_walkthrough_export_prefers_the_trained_export_unless_tiny_is_forced(tmp_path, monkeypatch):
    trained = tmp_path / "trained"
    built = []

    def build(folder):
        built.append(folder)
        return str(folder)

    monkeypatch.delenv(FORCE_TINY_ENV, raising=False)
    missing = walkthrough_export(trained, build, tmp_path)
    assert missing.untrained and "no trained export" in missing.reason and UNTRAINED in missing.reason
    trained.mkdir()
    (trained / "radscore_manifest.json").write_text("{}")
    chosen = walkthrough_export(trained, build, tmp_path)
    assert chosen == WalkthroughExport(str(trained), False, f"the trained export at {trained}")
    monkeypatch.setenv(FORCE_TINY_ENV, "1")
    forced = walkthrough_export(trained, build, tmp_path)
    assert forced.untrained and forced.folder == str(tmp_path / "tiny_export") and FORCE_TINY_ENV in forced.reason
    assert built == [tmp_path / "tiny_export"] * 2


def check_ratescore(nb):
    assert UNTRAINED in texts(tagged(nb, "ner-export")) and FORCE_TINY_ENV in texts(tagged(nb, "ner-export"))
    counts = tables(tagged(nb, "entity-counts"))[-1]
    assert counts.rows and {"pair", "side"} <= set(counts.headers)
    entities = tables(tagged(nb, "entities"))[0]
    assert {"side", "entity", "type"} <= set(entities.headers)
    assert {row[1] for row in entities.rows} == {"candidate", "reference"}  # the tiny model tags both sides
    explain = tagged(nb, "explain")
    matches = tables(explain)[0]
    assert {"direction", "entity", "matched_entity", "type", "matched_type", "cosine", "weight", "penalised",
            "penalty"} <= set(matches.headers)
    assert len(matches.rows) == len(entities.rows)  # one record per entity and direction
    assert "recomputed from the records" in texts(explain)
    scores = tables(tagged(nb, "scores"))[0]
    assert {"pair", "matrix", "precision", "recall", "f1"} <= set(scores.headers)
    assert len(scores.rows) == 6  # 3 pairs x 2 matrices
    f1 = [float(row[scores.headers.index("f1")]) for row in scores.rows]  # index cell first in both
    assert all(0.0 <= value <= 1.0 for value in f1)
    assert UNTRAINED in texts(tagged(nb, "scores"))
    for tag in ("cosine-plot", "matrix-plot", "scores-plot"):
        assert images(tagged(nb, tag)) == 1, tag


def check_er2score(nb):
    systems = tables(tagged(nb, "systems"))[0]
    assert {"system", "item", "weight", "range", "description"} <= set(systems.headers)
    assert len(systems.rows) == 6 + 7  # RadCliQ's and MRScore's items
    export = texts(tagged(nb, "export"))
    assert UNTRAINED in export and "scoring system: radcliq" in export
    subscores = tables(tagged(nb, "subscores"))[0]
    assert {*RADCLIQ.items, "tier", "predicted_total", "labelled_total"} <= set(subscores.headers)
    assert len(subscores.rows) == 3 and all(row[0].startswith("radcliq-") for row in subscores.rows)
    assert images(tagged(nb, "plot")) == 1
    ranking = texts(tagged(nb, "ranking"))
    assert ranking.count("radcliq-") == 6


CHECKS = {"ratescore_walkthrough.ipynb": check_ratescore, "er2score_walkthrough.ipynb": check_er2score}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_notebook_runs_top_to_bottom_on_tiny_artefacts(name, monkeypatch):
    CHECKS[name](run(name, monkeypatch))

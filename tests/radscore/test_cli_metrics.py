"""``radscore score --metric`` for all three metrics (ids, CSV/JSONL by suffix, the signature
beside the output), ``radscore compare`` (paired tests, the plot) and the HTML explanation."""

from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from radscore.cli import compare_systems, main
from radscore.stats import paired_bootstrap_p, randomization_p
from radscore.systems import RADCLIQ
from train.rehearsal.tiny import build_tiny_bleurt_export, build_tiny_iob_export, build_tiny_reward_export

CANDS = ["No pleural effusion. Heart size normal.", "", "Mild cardiomegaly.", "Liver is enlarged."]
REFS = ["Small left pleural effusion.", "No pneumothorax.", "Heart size is normal.", "Fatty liver."]
IDS = ["s10", "s11", "s12", "s13"]


@pytest.fixture(scope="module")
def exports(tmp_path_factory, tiny_backbone):
    root = tmp_path_factory.mktemp("exports")
    build_tiny_reward_export(root / "er2", tiny_backbone, RADCLIQ, max_length=48)
    return {"ner": build_tiny_iob_export(root / "ner", seed=0, head_std=0.3, o_bias=2.5),
            "bleurt": build_tiny_bleurt_export(root / "bleurt", tiny_backbone), "er2": str(root / "er2"),
            "encoder": tiny_backbone}


@pytest.fixture
def pairs(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps({"study": i, "gen": c, "gt": r}) + "\n" for i, c, r in zip(IDS, CANDS, REFS)))
    return path


def _args(exports, metric):
    if metric == "ratescore":
        return ["--ner", exports["ner"], "--encoder", exports["encoder"]]
    return ["--metric", metric, "--model", exports[metric]]


@pytest.mark.parametrize("metric, keys", [("ratescore", {"precision", "recall", "f1"}),
                                          ("bleurt", {"score", "truncated"}),
                                          ("er2", set(RADCLIQ.items) | {"total", "higher_is_better"})])
@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_every_metric_writes_ids_subscores_and_a_signature(exports, pairs, tmp_path, capsys, metric, keys, suffix):
    out = tmp_path / f"scores.{suffix}"
    code = main(["score", *_args(exports, metric), "--candidates", str(pairs), "--references", str(pairs),
                 "--field", "gen", "--reference-field", "gt", "--id-column", "study", "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    if suffix == "csv":
        with open(out, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    else:
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == IDS and [int(r["index"]) for r in rows] == [0, 1, 2, 3]
    assert keys <= set(rows[0]), set(rows[0])
    if metric == "er2":
        assert all(str(r["higher_is_better"]) == "False" for r in rows)  # RadCliQ: error counts
    meta = json.loads(Path(str(out) + ".meta.json").read_text())
    assert meta["metric"] == metric and meta["summary"]["n"] == 4
    assert meta["signature"]["radscore"] and meta["inputs"]["candidates"]["sha256"]
    model_key = {"ratescore": "ner", "bleurt": "model", "er2": "export"}[metric]
    assert meta["signature"][model_key]["weights_sha256"]


def test_ids_must_agree_between_the_two_files(exports, tmp_path, capsys):
    c, r = tmp_path / "c.csv", tmp_path / "r.csv"
    c.write_text("id,text\na,x\nb,y\n")
    r.write_text("id,text\na,x\nc,y\n")
    code = main(["score", *_args(exports, "bleurt"), "--candidates", str(c), "--references", str(r),
                 "--column", "text", "--id-column", "id", "--quiet"])
    assert code == 2
    assert "record 1: id 'b' in" in capsys.readouterr().err


def test_a_missing_model_is_one_clear_line(tmp_path, pairs, capsys):
    code = main(["score", "--metric", "er2", "--model", str(tmp_path / "no_such_export"), "--candidates", str(pairs),
                 "--references", str(pairs), "--field", "gen", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "no such folder" in err and "Traceback" not in err


# ---- compare --------------------------------------------------------------------------------------
def test_paired_tests_separate_a_real_difference_from_noise():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.3, 0.7, 300)
    better = base + 0.05 + rng.normal(0, 0.02, 300)
    same = base + rng.normal(0, 0.02, 300)
    assert paired_bootstrap_p(better, base) < 0.01 and randomization_p(better, base) < 0.01
    assert paired_bootstrap_p(same, base, seed=1) > 0.05 and randomization_p(same, base, seed=1) > 0.05
    assert randomization_p(base, base) == 1.0
    result = compare_systems({"base": base.tolist(), "better": better.tolist()})
    comp = result["comparisons"][0]
    assert comp["system"] == "better" and comp["mean_difference"] == pytest.approx(float((better - base).mean()))
    assert comp["difference_ci95"][0] > 0 and comp["wins"] > 250


def test_compare_two_systems_prints_the_test_and_draws_the_plot(exports, tmp_path, capsys):
    refs, a, b = tmp_path / "refs.txt", tmp_path / "a.txt", tmp_path / "b.txt"
    refs.write_text("\n".join(REFS) + "\n")
    a.write_text("\n".join(CANDS) + "\n")
    b.write_text("\n".join(REFS) + "\n")  # system b copies the references
    out = tmp_path / "cmp"
    # the second system by --system, the old name of --candidates
    code = main(["compare", *_args(exports, "ratescore"), "--references", str(refs), "--candidates", f"A={a}",
                 "--system", f"copy={b}", "--out-dir", str(out), "--quiet", "--randomization", "500"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "| A | 4 |" in printed.out and "| copy | 4 |" in printed.out and "p (randomisation)" in printed.out
    result = json.loads((out / "compare.json").read_text())
    assert result["baseline"] == "A" and result["comparisons"][0]["system"] == "copy"
    assert 0 < result["comparisons"][0]["p_randomization"] <= 1
    png = (out / "differences.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert len((out / "scores.copy.jsonl").read_text().splitlines()) == 4


# ---- HTML explain ---------------------------------------------------------------------------------
class _Spans(HTMLParser):
    def __init__(self):
        super().__init__()
        self.entities, self.sides, self.rows, self._in = [], [], [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "span" and "data-type" in a:
            self._in = a["data-type"]
        if tag == "div" and "data-side" in a:
            self.sides.append(a["data-side"])
        if tag == "tr" and a.get("class") in ("matched", "unmatched"):
            self.rows.append(a["class"])

    def handle_data(self, data):
        if self._in:
            self.entities.append((data, self._in))

    def handle_endtag(self, tag):
        if tag == "span":
            self._in = None


def test_explain_html_highlights_every_entity_by_type(exports, tmp_path, capsys):
    c, r = tmp_path / "c.txt", tmp_path / "r.txt"
    c.write_text("\n".join(CANDS) + "\n")
    r.write_text("\n".join(REFS) + "\n")
    page, out = tmp_path / "report.html", tmp_path / "s.jsonl"
    code = main(["score", *_args(exports, "ratescore"), "--candidates", str(c), "--references", str(r),
                 "--explain", "--html", str(page), "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    parser = _Spans()
    parser.feed(text)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    entities = {(e["text"].lower(), e["type"]) for row in rows
                for side in ("candidate_entities", "reference_entities") for e in row[side]}
    highlighted = [(re.sub(r"\s+", " ", t).lower(), ty) for t, ty in parser.entities]
    total = sum(len(row[side]) for row in rows for side in ("candidate_entities", "reference_entities"))
    # every highlight is an entity of its type; most entities are found (tiny random NER: fragments)
    assert all(h in entities or (h[0].replace(" ", ""), h[1]) in {(t.replace(" ", ""), ty) for t, ty in entities}
               for h in highlighted), highlighted
    assert len(highlighted) >= 0.8 * total > 0
    assert parser.sides.count("candidate") == 4 and parser.sides.count("reference") == 4
    n_matches = sum(len(row["matches"]["candidate"]) + len(row["matches"]["reference"]) for row in rows)
    assert parser.rows.count("matched") == n_matches
    assert parser.rows.count("unmatched") == sum(len(row["reference_entities"]) + len(row["candidate_entities"])
                                                 for row in rows if not row["matches"]["candidate"]
                                                 and not row["matches"]["reference"])


def test_explain_is_for_ratescore_and_html_needs_it(exports, pairs, capsys):
    assert main(["score", *_args(exports, "bleurt"), "--candidates", str(pairs), "--references", str(pairs),
                 "--field", "gen", "--explain", "--quiet"]) == 2
    assert "--explain shows RaTEScore's entity matches" in capsys.readouterr().err
    assert main(["score", *_args(exports, "ratescore"), "--candidates", str(pairs), "--references", str(pairs),
                 "--field", "gen", "--html", "x.html", "--quiet"]) == 2
    assert "add --explain" in capsys.readouterr().err

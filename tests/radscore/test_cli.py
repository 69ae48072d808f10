"""``radscore score``: text, JSON lines and CSV inputs, JSON lines out, the summary, errors."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from radscore.cli import bootstrap_ci, main, read_reports, summary
from train.rehearsal.tiny import build_tiny_iob_export

CANDS = ["No pleural effusion. Heart size normal.", "", "Mild cardiomegaly.\u00a0Ödem.", "Liver is enlarged."]
REFS = ["Small left pleural effusion.", "No pneumothorax.", "Heart size is normal.", "Fatty liver."]


@pytest.fixture(scope="module")
def tiny_iob(tmp_path_factory):
    return build_tiny_iob_export(tmp_path_factory.mktemp("tiny_iob"))


@pytest.fixture
def text_files(tmp_path):
    c, r = tmp_path / "cands.txt", tmp_path / "refs.txt"
    c.write_text("\n".join(CANDS) + "\n", encoding="utf-8")
    r.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    return c, r


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_text_files_in_jsonl_out(tiny_iob, tiny_backbone, text_files, tmp_path, capsys):
    c, r = text_files
    out = tmp_path / "scores.jsonl"
    code = main(["score", "--ner", tiny_iob, "--encoder", tiny_backbone, "--candidates", str(c),
                 "--references", str(r), "--out", str(out), "--quiet"])
    assert code == 0
    rows = _lines(out)
    assert [row["index"] for row in rows] == [0, 1, 2, 3]
    assert rows[1]["f1"] == 0.5  # the empty line is an empty report, in its place
    assert all({"precision", "recall", "f1", "candidate_entities", "reference_entities"} <= set(row) for row in rows)
    assert "matches" not in rows[0]
    err = capsys.readouterr().err
    assert "n=4" in err and "mean=" in err and "std=" in err and "95% CI=[" in err


def test_jsonl_with_field_and_explain_to_stdout(tiny_iob, tiny_backbone, tmp_path, capsys):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"gen": c, "gt": r}) + "\n" for c, r in zip(CANDS, REFS)))
    code = main(["score", "--ner", tiny_iob, "--encoder", tiny_backbone, "--candidates", str(pairs),
                 "--references", str(pairs), "--field", "gen", "--reference-field", "gt", "--explain", "--quiet"])
    assert code == 0
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert len(rows) == 4 and "matches" in rows[0] and rows[1]["matches"] == {"candidate": [], "reference": []}
    assert "n=4" in captured.err


def test_csv_with_columns(tiny_iob, tiny_backbone, tmp_path):
    table = tmp_path / "pairs.csv"
    with open(table, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["candidate", "reference"])
        w.writerows(zip(CANDS, REFS))
    out = tmp_path / "scores.jsonl"
    assert main(["score", "--ner", tiny_iob, "--encoder", tiny_backbone, "--candidates", str(table),
                 "--references", str(table), "--column", "candidate", "--reference-column", "reference",
                 "--out", str(out), "--quiet"]) == 0
    assert len(_lines(out)) == 4


def test_errors_name_the_file_and_the_problem(tiny_iob, tmp_path, capsys):
    c, r = tmp_path / "c.txt", tmp_path / "r.txt"
    c.write_text("a\nb\nc\n")
    r.write_text("a\nb\n")
    assert main(["score", "--ner", tiny_iob, "--candidates", str(c), "--references", str(r), "--quiet"]) == 2
    assert "holds 3 reports but" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"report": "x"}\n{"text": "y"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: no field 'report'"):
        read_reports(str(bad), field="report")
    with pytest.raises(ValueError, match=r"needs --field"):
        read_reports(str(bad))
    with pytest.raises(ValueError, match=r"no such file"):
        read_reports(str(tmp_path / "missing.txt"))


def test_text_reader_keeps_control_characters_and_empty_lines(tmp_path):
    f = tmp_path / "r.txt"
    f.write_text("a\x0cb\x1c\r\n\nlast", encoding="utf-8")
    assert read_reports(str(f)) == ["a\x0cb\x1c", "", "last"]


def test_summary_and_bootstrap():
    s = summary([0.5] * 10)
    assert s["n"] == 10 and s["mean"] == 0.5 and s["std"] == 0.0 and s["ci95"] == [0.5, 0.5]
    values = np.random.default_rng(1).uniform(size=200)
    lo, hi = bootstrap_ci(values)
    assert lo < values.mean() < hi and hi - lo < 0.2
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)


def test_console_command_with_progress(tiny_iob, tiny_backbone, text_files, tmp_path):
    c, r = text_files
    out = tmp_path / "scores.jsonl"
    done = subprocess.run([sys.executable, "-m", "radscore.cli", "score", "--ner", tiny_iob, "--encoder",
                           tiny_backbone, "--candidates", str(c), "--references", str(r), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "RaTEScore" in done.stderr and "4/4" in done.stderr  # the progress bar, then the summary
    assert len(_lines(out)) == 4

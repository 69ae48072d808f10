"""The authored sample corpus: its size and coverage, and the committed RaTE-NER files."""

import filecmp
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from data.annotation import read_reports
from data.samples import RATENER_DIR, REPORTS, build_samples

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reports():
    return read_reports(REPORTS)


def test_corpus_size_and_coverage(reports):
    sentences = [s for r in reports for s in r.sentences]
    types = Counter(e.type for s in sentences for e in s.entities)
    styles = Counter(r.style for r in reports)
    assert len(reports) >= 240
    assert len(sentences) >= 1200
    assert len({r.modality for r in reports}) >= 8
    assert len({r.anatomy for r in reports}) >= 12
    assert all(types[t] >= 250 for t in ("ANATOMY", "ABNORMALITY", "NON-ABNORMALITY", "DISEASE", "NON-DISEASE")), types
    assert min(styles.values()) >= 0.35 * len(reports), styles


def test_committed_ratener_files_are_up_to_date(tmp_path):
    build_samples(REPORTS, tmp_path)
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(RATENER_DIR) for p in RATENER_DIR.rglob("*") if p.is_file())
    assert fresh == committed, "run `python -m data build-samples` and commit data/samples/ratener"
    stale = [str(p) for p in fresh if not filecmp.cmp(tmp_path / p, RATENER_DIR / p, shallow=False)]
    assert not stale, f"out of date with reports.jsonl: {stale}; run `python -m data build-samples`"


def test_splits_are_by_report(tmp_path):
    from data.ratener import load_split

    seen = {}
    for split in ("train", "dev", "test"):
        ids = {s.meta["report_id"] for s in load_split(RATENER_DIR, "all", split)}
        for other, other_ids in seen.items():
            assert not ids & other_ids, f"reports in both {split} and {other}"
        seen[split] = ids


def test_stats_command_prints_the_table():
    out = subprocess.run([sys.executable, "-m", "data", "stats", "data/samples/ratener/all"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    header = out.splitlines()[0].split()
    assert header[:4] == ["source", "split", "reports", "sentences"] and "NON-DIS" in header
    rows = [line.split() for line in out.splitlines()[2:5]]
    assert [r[:2] for r in rows] == [["all", "train"], ["all", "dev"], ["all", "test"]]
    assert "modality (" in out and "anatomy (" in out


def test_validate_command_flags_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "modality": "CT", "anatomy": "head", "style": "clinical", '
                   '"findings": ["No [bleed|NON-DISEASE"], "impression": ["ok"]}\n')
    proc = subprocess.run([sys.executable, "-m", "data", "validate", str(bad)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and f"{bad}:1: report 'x': findings[0]: unbalanced bracket" in proc.stderr

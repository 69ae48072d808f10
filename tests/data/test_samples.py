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
    assert len(reports) >= 400
    assert len(sentences) >= 2500
    assert len({r.modality for r in reports}) >= 10
    assert len({r.anatomy for r in reports}) >= 12
    assert all(types[t] >= 250 for t in ("ANATOMY", "ABNORMALITY", "NON-ABNORMALITY", "DISEASE", "NON-DISEASE")), types
    assert min(styles.values()) >= 0.30 * len(reports), styles


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


def test_corpus_v2_realism(reports):
    """The corpus issue's bars: size, normal share, long reports, headers, coverage."""
    from data.corpus_check import corpus_figures

    fig = corpus_figures(reports)
    n = fig["reports"]
    assert n >= 400, fig
    assert fig["normal_or_near_normal"] >= 0.25 * n, fig
    assert fig["long"] >= 0.10 * n, fig
    assert fig["with_headers"] >= 0.30 * n, fig
    assert fig["with_placeholder"] >= 0.10 * n and fig["length_bins"]["1-3"] > 0, fig
    assert len(fig["modalities"]) >= 10 and len(fig["anatomies"]) >= 12, fig


def test_the_corpus_is_consistent(reports):
    """`python -m data validate --consistency` is clean on the shipped corpus: no issue beyond the
    reviewed exceptions, and no reviewed exception that no longer occurs."""
    from data.corpus_check import read_reviewed, unreviewed_issues

    assert read_reviewed(), "data/samples/consistency_reviewed.txt holds the reviewed exceptions"
    issues, stale = unreviewed_issues(reports)
    assert not issues, "\n".join(issues[:20])
    assert not stale, stale


def test_consistency_check_finds_two_types_and_a_missed_mention():
    from data.annotation import parse_report
    from data.corpus_check import consistency_issues

    def rep(rid, findings):
        return parse_report({"id": rid, "modality": "CT", "anatomy": "abdomen", "style": "clinical",
                             "findings": findings, "impression": ["No [ascites|NON-ABNORMALITY]."]})

    a = rep("r1", ["A [renal calculus|ABNORMALITY] is seen.", "The [lesion|ABNORMALITY] is stable."])
    b = rep("r2", ["A [renal calculus|DISEASE] is seen.", "The lesion is stable."])
    issues = consistency_issues([a, b])
    assert any(i.startswith("typed two ways: 'renal calculus'") and "r1 findings[0]" in i and "r2 findings[0]" in i
               for i in issues), issues
    assert any("not in r2 findings[1]" in i and "'lesion'" in i for i in issues), issues
    assert consistency_issues([a]) == []


def test_the_stored_split_fits_the_corpus_and_keeps_groups_together(reports):
    from data.split import SPLIT_FILE, make_split, read_split

    split = read_split(SPLIT_FILE)
    split.check(reports)
    assert split.sides == make_split(reports).sides, "run `python -m data split` and commit data/samples/split.json"
    counts = Counter(split.sides.values())
    assert all(abs(counts[s] / len(reports) - share) < 0.03 for s, share in
               (("train", 0.70), ("dev", 0.15), ("test", 0.15))), counts
    grouped = [r for r in reports if r.group and r.group != r.id]
    assert grouped, "the corpus records its near-duplicate cases in `group`"
    for r in grouped:
        assert split.of(r.id) == split.of(r.group)
    # the NER files follow it
    from data.ratener import load_split

    for side in ("train", "dev", "test"):
        assert {s.meta["report_id"] for s in load_split(RATENER_DIR, "all", side)} == split.ids(side)


def test_split_check_refuses_a_group_on_two_sides(reports, tmp_path):
    from data.split import CorpusSplit, SplitError

    r = next(r for r in reports if r.group and r.group != r.id)
    sides = {x.id: "train" for x in reports}
    sides[r.id] = "test"
    with pytest.raises(SplitError, match="more than one side"):
        CorpusSplit(sides, {x.id: x.case for x in reports if x.case != x.id}).check(reports)
    with pytest.raises(SplitError, match="without a side"):
        CorpusSplit({k: v for k, v in sides.items() if k != r.id}, {}).check(reports)


def test_corpus_stats_and_split_check_commands():
    out = subprocess.run([sys.executable, "-m", "data", "corpus-stats"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert "normal or near-normal" in out and "with section headers" in out and "corpus split" in out
    proc = subprocess.run([sys.executable, "-m", "data", "split", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0 and "split.json: ok" in proc.stdout, proc.stderr


def test_the_unseen_domain_split_command_writes_checks_and_refuses(reports, tmp_path):
    """`python -m data split --held-out-anatomies`: the unseen-domain split as stored; --check
    finds a report moved to the wrong side; an anatomy the corpus lacks is refused by name."""
    import json

    from data.split import UNSEEN_SPLIT_FILE, CorpusSplit, SplitError, make_held_out_split

    out = tmp_path / "split_unseen.json"
    proc = subprocess.run([sys.executable, "-m", "data", "split", "--held-out-anatomies", "head,spine,breast",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text()) == json.loads(UNSEEN_SPLIT_FILE.read_text())  # the committed file is the rule's
    obj = json.loads(out.read_text())
    moved = next(r.id for r in reports if r.anatomy == "chest" and obj["reports"][r.id] == "train")
    obj["reports"][moved] = "test"
    out.write_text(json.dumps(obj))
    proc = subprocess.run([sys.executable, "-m", "data", "split", "--check", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode != 0 and moved in proc.stdout + proc.stderr
    with pytest.raises(SplitError, match="'elbow'"):
        make_held_out_split(reports, ("head", "elbow"))
    split = make_held_out_split(reports, ("breast",))
    wrong = dict(split.sides)
    wrong[next(r.id for r in reports if r.anatomy == "breast")] = "train"
    with pytest.raises(SplitError, match="wrong side"):
        CorpusSplit(wrong, split.groups, split.salt, split.held_out_anatomies).check(reports)

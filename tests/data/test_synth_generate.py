"""The synthetic generator end to end on a small hand-made corpus, and its labelling rules."""

import csv
import json
import random
from pathlib import Path

import pytest

from data.cli import main
from data.rate_eval import read_rate_eval_task1, read_rate_eval_task2, read_rate_eval_task3
from data.ratings import MRSCORE, er2_pairs, read_bleurt_jsonl, read_er2_jsonl
from data.rexval import read_rexval
from data.synth import generate, generate_default, parse_sizes
from data.synth.generate import SynthError
from data.synth.labels import (RaterNoise, clinical_bleurt_quality, mrscore_items,
                               radcliq_subscores, simulate_raters, task1_rating, task2_score)


def _r(rid, anatomy, findings, impression):
    return {"id": rid, "modality": "CT", "anatomy": anatomy, "style": "clinical",
            "findings": findings, "impression": impression}


# Hand-made reports, written for these tests only.
CORPUS = [
    _r("c1", "chest", ["[Small right pleural effusion|ABNORMALITY], decreased since the prior study.",
                       "No [pneumothorax|NON-DISEASE].", "[Heart size|ANATOMY] is [normal|NON-ABNORMALITY]."],
       ["[Decreasing small right pleural effusion|ABNORMALITY]."]),
    _r("c2", "chest", ["[Right lower lobe|ANATOMY] [consolidation|ABNORMALITY] concerning for [pneumonia|DISEASE].",
                       "No [pleural effusion|NON-ABNORMALITY] or [pneumothorax|NON-DISEASE].",
                       "[Cardiomediastinal silhouette|ANATOMY] is unchanged."],
       ["[Right lower lobe|ANATOMY] [pneumonia|DISEASE]."]),
    _r("c3", "chest", ["[Lungs|ANATOMY] are [clear|NON-ABNORMALITY] without [focal consolidation|NON-ABNORMALITY].",
                       "A [4 mm nodule|ABNORMALITY] in the [left upper lobe|ANATOMY] is seen.",
                       "[Mild degenerative changes|ABNORMALITY] of the [thoracic spine|ANATOMY]."],
       ["No [acute cardiopulmonary abnormality|NON-ABNORMALITY]."]),
    _r("c4", "chest", ["[Moderate cardiomegaly|DISEASE] with [mild pulmonary edema|ABNORMALITY].",
                       "[Small bilateral pleural effusions|ABNORMALITY]."],
       ["[Congestive heart failure|DISEASE]."]),
    _r("a1", "abdomen", ["[Liver|ANATOMY] shows [diffuse low attenuation|ABNORMALITY] consistent with [hepatic steatosis|DISEASE].",
                         "[Gallbladder|ANATOMY] contains [multiple gallstones|ABNORMALITY] without [wall thickening|NON-ABNORMALITY].",
                         "[Portal vein|ANATOMY] is [patent|NON-ABNORMALITY]."],
       ["[Hepatic steatosis|DISEASE] and [cholelithiasis|DISEASE]."]),
    _r("a2", "abdomen", ["[Right kidney|ANATOMY] measures 10.5 cm and is [normal|NON-ABNORMALITY].",
                         "A [2.1 cm simple cyst|ABNORMALITY] in the [left kidney|ANATOMY].",
                         "No [hydronephrosis|NON-ABNORMALITY]."],
       ["[Simple left renal cyst|ABNORMALITY]."]),
    _r("a3", "abdomen", ["[Appendix|ANATOMY] is [dilated|ABNORMALITY] to 12 mm with [periappendiceal fat stranding|ABNORMALITY].",
                         "No [free air|NON-ABNORMALITY] or [abscess|NON-DISEASE]."],
       ["[Acute appendicitis|DISEASE] without [perforation|NON-DISEASE]."]),
    _r("a4", "abdomen", ["[Pancreatic head|ANATOMY] [mass|ABNORMALITY] measuring 3 cm with [upstream ductal dilatation|ABNORMALITY].",
                         "[Spleen|ANATOMY] is [normal in size|NON-ABNORMALITY]."],
       ["[Pancreatic head mass|ABNORMALITY], suspicious for [adenocarcinoma|DISEASE]."]),
]
SIZES = {"rexval": 8, "task1": 20, "task2": 12, "task3": 6, "er2": 9, "bleurt": 12}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "reports.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in CORPUS))
    return path


@pytest.fixture(scope="module")
def out(tmp_path_factory, corpus):
    folder = tmp_path_factory.mktemp("synth")
    counts = generate(folder, seed=7, sizes=SIZES, reports=corpus)
    assert counts == {"rexval": 8, "task1": 20, "task2": 12, "task3": 6, "radcliq": 9, "mrscore": 9,
                      "bleurt": 12}
    return folder


def _files(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _manifests(folder: Path) -> list[dict]:
    return [json.loads(line) for p in sorted(folder.rglob("manifest_synthetic.jsonl"))
            for line in p.read_text().splitlines()]


def test_outputs_load_through_the_readers(out):
    rexval = read_rexval(out / "synthetic_rexval")
    assert len(rexval) == 8 and {p.meta["n_raters"] for p in rexval} == {6}
    t1 = read_rate_eval_task1(out / "synthetic_rate_eval", "train") + read_rate_eval_task1(out / "synthetic_rate_eval", "test")
    t2 = read_rate_eval_task2(out / "synthetic_rate_eval", "train") + read_rate_eval_task2(out / "synthetic_rate_eval", "test")
    assert (len(t1), len(t2), len(read_rate_eval_task3(out / "synthetic_rate_eval"))) == (20, 12, 6)
    assert all(p.rating * 4 == int(p.rating * 4) for p in t2)  # steps of 0.25
    radcliq = read_er2_jsonl(out / "synthetic_er2" / "radcliq_synthetic.jsonl")
    mrscore = read_er2_jsonl(out / "synthetic_er2" / "mrscore_synthetic.jsonl")
    assert (len(radcliq), len(mrscore)) == (9, 9)
    assert all(p.margin > 0 for p in er2_pairs(radcliq + mrscore))
    assert len(read_bleurt_jsonl(out / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl")) == 12


def test_same_seed_same_bytes_other_seed_other_data(out, corpus, tmp_path):
    again = tmp_path / "again"
    generate(again, seed=7, sizes=SIZES, reports=corpus)
    assert _files(again) == _files(out)
    other = tmp_path / "other"
    generate(other, seed=8, sizes=SIZES, reports=corpus)
    assert _files(other) != _files(out)


def test_no_errored_candidate_equals_its_reference_and_spans_are_exact(out):
    records = _manifests(out)
    assert records
    for rec in records:
        if rec["set"] == "task3":
            assert rec["original"] not in (rec["synonym"], rec["opposite"])
            continue
        assert rec["candidate"] != rec["reference"], rec["id"]
        for e in rec["edits"]:
            if e["candidate_span"]:
                assert rec["candidate"][slice(*e["candidate_span"])] == e["after"]
            if e["reference_span"]:
                assert rec["reference"][slice(*e["reference_span"])] == e["before"]


def test_everything_says_synthetic(out):
    assert "SYNTHETIC" in (out / "SYNTHETIC_README.md").read_text()
    for path in out.rglob("*"):
        if path.is_dir():
            continue
        rel = path.relative_to(out).as_posix()
        assert "synthetic" in rel.lower()
        if path.suffix == ".csv":
            assert "synthetic" in next(csv.reader(path.open()))
        if path.suffix == ".jsonl":
            assert all(json.loads(line)["synthetic"] is True for line in path.read_text().splitlines())


def test_labels_agree_with_the_manifests(out):
    records = {r["id"]: r for r in _manifests(out)}
    for pair in read_rexval(out / "synthetic_rexval"):
        assert pair.rating == pytest.approx(records[pair.id]["labels"]["mean_errors"])
    for row in read_er2_jsonl(out / "synthetic_er2" / "radcliq_synthetic.jsonl"):
        assert row.subscores == radcliq_subscores(records[row.id]["edits"])
    for row in read_bleurt_jsonl(out / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl"):
        rec = records[row.id]
        counts = {k: rec["labels"][k] for k in ("critical", "non_critical", "spelling_grammar")}
        assert row.rating == pytest.approx(clinical_bleurt_quality(rec["reference"], rec["candidate"], counts)[0])


def test_clinical_bleurt_rows_are_section_pairs(out):
    """As the paper's training data (SPEC §4): one section of a reference against an edited copy of
    that section alone, never the whole report."""
    from data.annotation import parse_annotated

    reports = {r["id"]: r for r in CORPUS}
    rows = [json.loads(line) for line in
            (out / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl").read_text().splitlines()]
    assert {row["section"] for row in rows} <= {"findings", "impression"}
    for row in rows:
        rep = reports[row["reference_id"]]
        text = {sec: " ".join(parse_annotated(s).text for s in rep[sec]) for sec in ("findings", "impression")}
        assert row["reference"] == text[row["section"]], row["id"]
        other = "impression" if row["section"] == "findings" else "findings"
        assert not text[other] or text[other] not in row["candidate"], row["id"]


def test_sizes_and_default_generation(tmp_path, corpus):
    assert parse_sizes("rexval=4, task1=2")["task1"] == 2 and parse_sizes(None)["er2"] == 1800
    with pytest.raises(SynthError, match="unknown set 'foo'"):
        parse_sizes("foo=1")
    with pytest.raises(SynthError, match="expected task1=<non-negative integer>"):
        parse_sizes("task1=-3")



def test_default_sets_are_reused_only_when_this_generator_made_them(tmp_path, corpus, capsys):
    """Sets from another generator version, corpus, seed or sizes are regenerated, with the reason."""
    from data.synth.generate import DEFAULT_SIZES, fingerprint, stale_reason, write_fingerprint

    paths = [Path(corpus)]
    assert stale_reason(tmp_path, paths) == "missing"
    (tmp_path / "SYNTHETIC_README.md").write_text("already there")
    assert "older generator" in stale_reason(tmp_path, paths)  # sets written before fingerprints
    write_fingerprint(tmp_path, fingerprint(paths), 0, DEFAULT_SIZES)
    assert stale_reason(tmp_path, paths) is None
    assert generate_default(tmp_path, reports=corpus) is None  # this generator's sets: kept
    assert "seed 0" in stale_reason(tmp_path, paths, seed=1)
    assert "sizes" in stale_reason(tmp_path, paths, sizes={"task1": 3})
    write_fingerprint(tmp_path, "0" * 16, 0, DEFAULT_SIZES)
    assert "another version" in stale_reason(tmp_path, paths)
    copy = tmp_path / "reports.jsonl"
    copy.write_text(Path(corpus).read_text())
    assert fingerprint([copy]) == fingerprint(paths)
    copy.write_text(Path(corpus).read_text().replace("Small right", "Small left"))
    assert fingerprint([copy]) != fingerprint(paths)  # the corpus changed: new fingerprint


def test_the_fingerprint_names_the_output_version_lexicons_and_corpus_not_the_code(tmp_path, corpus, monkeypatch):
    """A faster generator that writes the same bytes keeps its sets current; a new output version does not,
    nor do other lexicons (the default sets' digest, tests/data/test_synth_digest.py, holds the code to it)."""
    import importlib
    import shutil

    module = importlib.import_module("data.synth.generate")

    paths = [Path(corpus)]
    before = module.fingerprint(paths)
    monkeypatch.setattr(module, "OUTPUT_VERSION", module.OUTPUT_VERSION + 1)
    assert module.fingerprint(paths) != before
    monkeypatch.undo()
    lexicons = tmp_path / "lexicons"
    shutil.copytree(module.REPO / "data" / "lexicons", lexicons)
    assert module.fingerprint(paths, lexicons) == before
    first = sorted(lexicons.glob("*.yaml"))[0]
    first.write_text(first.read_text() + "\n# one more line\n")
    assert module.fingerprint(paths, lexicons) != before


def test_cli_synth(tmp_path, corpus, capsys):
    code = main(["synth", "--out", str(tmp_path), "--seed", "1", "--reports", str(corpus),
                 "--sizes", "rexval=4,task1=3,task2=3,task3=2,er2=3,bleurt=3"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "SYNTHETIC" in printed and "task1    3" in printed
    assert main(["synth", "--sizes", "bad=1"]) == 2


# -- labelling rules on hand-written edit lists ---------------------------------------------------
def _e(category, significant=True, section="findings", kind="x", **detail):
    return {"category": category, "significant": significant, "section": section, "kind": kind,
            "detail": detail}


def test_radcliq_and_mrscore_rules():
    edits = [_e(3, True, "impression"), _e(2, False), _e(4, False), _e(None, False, kind="spelling", in_entity=True)]
    assert radcliq_subscores(edits) == {"false_prediction": 0, "omission": 1, "incorrect_location": 1,
                                        "incorrect_severity": 1, "added_comparison": 0, "omitted_comparison": 0}
    s, subs, total = mrscore_items(edits)
    assert s == {"impression_consistency": 1, "impression_organs": 1, "lesion_description": 0,
                 "clinical_history": 0, "completeness": 1, "grammar": 0, "terminology": 1}
    assert total == 100 - 30 - 20 - 10 - 5 == sum(subs.values())
    assert list(subs) == list(MRSCORE.items)
    _, _, clean = mrscore_items([_e(None, False, kind="synonym")])
    assert clean == 100.0


def test_clinical_bleurt_target_can_go_negative():
    ref = "No effusion. Heart is normal."
    q, score, n = clinical_bleurt_quality(ref, "No effusion.", {"critical": 1, "non_critical": 3, "spelling_grammar": 12})
    assert (score, n, q) == (3.0, 2, -0.5)
    q, _, _ = clinical_bleurt_quality(ref, ref, {"critical": 0, "non_critical": 1, "spelling_grammar": 0})
    assert q == pytest.approx(1 - 1 / 6)


def test_task1_and_task2_rules():
    assert task1_rating(3, 3, [_e(3)]) == (1, 3, pytest.approx(2 / 3))
    assert task1_rating(1, 1, [_e(5), _e(1)]) == (2, 2, 0.0)  # a comparison adds a potential error
    assert task1_rating(2, 2, [_e(None, kind="synonym")]) == (0, 2, 1.0)
    assert task2_score([]) == (1.0, 5.0)
    assert task2_score([_e(None, kind="synonym")]) == (1.0, 5.0)  # rewrites cost nothing


def _w(weight, category=1):
    return {**_e(category, weight >= 2), "weight": weight}


def test_task2_score_follows_the_clinical_weights():
    """One critical error costs more than four major ones; twenty minor ones cost about as much
    as one critical; the report's number of findings plays no part."""
    assert [task2_score([_w(w)])[1] for w in (1, 2, 3)] == [4.75, 3.75, 1.5]
    kept, score = task2_score([_w(2), _w(1, 4)])
    assert kept == pytest.approx(0.75 * 0.95) and score == 3.5
    assert task2_score([_w(3)])[0] < task2_score([_w(2)] * 4)[0]
    assert abs(task2_score([_w(1)] * 20)[0] - task2_score([_w(3)])[0]) < 0.06


def test_rater_noise_extremes():
    edits = [_e(1), _e(2, False), _e(2, False)]
    exact = simulate_raters(edits, random.Random(0), RaterNoise(n_raters=3, miss=0, spurious=0, flip_significance=0))
    assert all(r[(1, True)] == 1 and r[(2, False)] == 2 and sum(r.values()) == 3 for r in exact)
    blind = simulate_raters(edits, random.Random(0), RaterNoise(n_raters=2, miss=1, spurious=0))
    assert all(sum(r.values()) == 0 for r in blind)
    noisy = simulate_raters([], random.Random(0), RaterNoise(n_raters=50, miss=0, spurious=1))
    assert all(sum(r.values()) == 1 for r in noisy)


def test_synthetic_files_say_so_inside(tmp_path):
    """Task 1 text files carry a SYNTHETIC marker inside the file and the ReXVal-layout file says in
    a column that its candidates are synthetic edits; the readers still read both."""
    import csv
    import json

    from data.rate_eval import RaTEEvalFormatError, read_rate_eval_task1
    from data.rexval import read_rexval
    from data.synth.generate import generate

    generate(tmp_path, 0, {"rexval": 4, "task1": 12, "task2": 0, "task3": 0, "er2": 0, "bleurt": 0})
    t1 = tmp_path / "synthetic_rate_eval" / "Task1_sentence_rate"
    for side in ("train", "test"):
        for kind in ("gt_report", "similar_report"):
            obj = json.loads((t1 / f"{kind}_{side}.json").read_text())
            assert obj["SYNTHETIC"].startswith("SYNTHETIC") and isinstance(obj["texts"], list)
        pairs = read_rate_eval_task1(tmp_path / "synthetic_rate_eval", side)
        assert [p.reference for p in pairs] == json.loads((t1 / f"gt_report_{side}.json").read_text())["texts"]
    rows = list(csv.DictReader((tmp_path / "synthetic_rexval" / "50_samples_gt_and_candidates.csv").open()))
    assert rows and all(r["candidates_are"].startswith("SYNTHETIC edits of gt_report") for r in rows)
    assert len(read_rexval(tmp_path / "synthetic_rexval")) == 4 * len(rows)
    (t1 / "gt_report_test.json").write_text(json.dumps({"SYNTHETIC": "x", "texts": "not a list"}))
    with pytest.raises(RaTEEvalFormatError, match="texts as a list"):
        read_rate_eval_task1(tmp_path / "synthetic_rate_eval", "test")

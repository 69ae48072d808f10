"""Readers of the rating formats on small hand-made fixtures, well-formed and malformed."""

import json
import shutil
from pathlib import Path

import pytest

from data.rate_eval import (RaTEEvalFormatError, read_rate_eval_task1, read_rate_eval_task2,
                            read_rate_eval_task3)
from data.ratings import (RatingFormatError, er2_pairs, read_bleurt_jsonl, read_er2_jsonl,
                          read_rating_csv)
from data.rexval import ERRORS_FILE, GT_FILE, ReXValFormatError, read_rexval

FIX = Path(__file__).resolve().parents[1] / "fixtures"
REXVAL = FIX / "rexval_small"
RATE_EVAL = FIX / "rate_eval_small"
RATINGS = FIX / "ratings_small"


# -- ReXVal ------------------------------------------------------------------------------------
def test_rexval_mean_errors_per_pair():
    pairs = read_rexval(REXVAL)
    assert [p.id for p in pairs[:4]] == ["s100:radgraph", "s100:bertscore", "s100:s_emb", "s100:bleu"]
    assert [p.group for p in pairs] == ["s100"] * 4 + ["s200"] * 4
    expected = [2 / 3, 4 / 3, 4 / 3, 5 / 3, 2 / 3, 1.0, 4 / 3, 1 / 3]
    assert [p.rating for p in pairs] == pytest.approx(expected)
    s_emb = pairs[2]
    assert s_emb.reference.startswith("No pleural effusion")
    assert s_emb.candidate == "No pneumothorax. Mild cardiomegaly."
    assert s_emb.meta["per_rater"] == [2.0, 1.0, 1.0]
    assert s_emb.meta["per_category"][1] == pytest.approx(1.0)
    assert s_emb.meta["per_category"][2] == pytest.approx(1 / 3)
    assert s_emb.meta["n_raters"] == 3 and s_emb.meta["study_number"] == 0


def test_rexval_significant_only_and_aggregates():
    sig = read_rexval(REXVAL, significant_only=True)
    assert [p.rating for p in sig] == pytest.approx([1 / 3, 1, 2 / 3, 5 / 3, 1 / 3, 1, 4 / 3, 0])
    assert read_rexval(REXVAL, aggregate="sum")[2].rating == 4.0
    assert read_rexval(REXVAL, aggregate="median")[2].rating == 1.0
    with pytest.raises(ReXValFormatError, match="unknown aggregate"):
        read_rexval(REXVAL, aggregate="max")


def test_rexval_two_paths_column_order_and_extra_columns(tmp_path):
    import pandas as pd

    gt = pd.read_csv(REXVAL / GT_FILE)
    err = pd.read_csv(REXVAL / ERRORS_FILE)
    gt = gt[["bleu", "gt_report", "study_id", "radgraph", "bertscore", "s_emb"]].assign(synthetic=True)
    err = err[list(reversed(err.columns))].assign(note="x")
    gt.to_csv(tmp_path / "a.csv", index=False)
    err.to_csv(tmp_path / "b.csv", index=False)
    pairs = read_rexval((tmp_path / "a.csv", tmp_path / "b.csv"))
    by_id = {p.id: p.rating for p in pairs}
    assert by_id == pytest.approx({p.id: p.rating for p in read_rexval(REXVAL)})
    assert [p.meta["candidate_type"] for p in pairs[:4]] == ["bleu", "radgraph", "bertscore", "s_emb"]


def _broken_rexval(tmp_path, edit_errors=None, edit_gt=None):
    folder = tmp_path / "rx"
    shutil.copytree(REXVAL, folder)
    if edit_errors:
        path = folder / ERRORS_FILE
        path.write_text(edit_errors(path.read_text()))
    if edit_gt:
        path = folder / GT_FILE
        path.write_text(edit_gt(path.read_text()))
    return folder


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("num_errors", "n_err"), r"missing column\(s\) \['num_errors'\]"),
    (lambda t: t.replace("0,radgraph,0,2,False,1", "5,radgraph,0,2,False,1"),
     r"row 0 \(line 2\): study_number 5 is not a row"),
    (lambda t: t.replace("0,radgraph,0,2,False,1", "0,radgraph,0,7,False,1"),
     r"row 0 \(line 2\): error_category must be 1-6, got 7"),
    (lambda t: t.replace("0,radgraph,0,2,False,1", "0,radgraph,0,2,False,1.5"),
     r"row 0 \(line 2\): num_errors must be an integer"),
    (lambda t: t.replace("0,radgraph,0,2,False,1", "0,radgraph,0,2,maybe,1"),
     r"row 0 \(line 2\): clinically_significant must be a boolean, got 'maybe'"),
    (lambda t: t.replace("0,radgraph,1,2,False,0", "0,radgraph,0,2,False,0"),
     r"row 1 \(line 3\): duplicate of row 0 \(line 2\)"),
    (lambda t: t.replace("0,radgraph,0,2,False,1", "0,gpt4,0,2,False,1"),
     r"candidate_type\(s\) \['gpt4'\] are not candidate columns"),
    (lambda t: "\n".join(l for l in t.splitlines() if not l.startswith("1,bleu")) + "\n",
     r"no rows for study_number 1 \(s200\), candidate 'bleu'"),
])
def test_rexval_errors_name_file_row_and_expectation(tmp_path, edit, message):
    folder = _broken_rexval(tmp_path, edit_errors=edit)
    with pytest.raises(ReXValFormatError, match=message) as err:
        read_rexval(folder)
    assert ERRORS_FILE in str(err.value)


def test_rexval_gt_file_problems(tmp_path):
    folder = _broken_rexval(tmp_path, edit_gt=lambda t: t.replace("gt_report", "report"))
    with pytest.raises(ReXValFormatError, match=rf"{GT_FILE}: missing column\(s\) \['gt_report'\]"):
        read_rexval(folder)
    folder = _broken_rexval(tmp_path / "b", edit_gt=lambda t: t.replace('"Lungs are clear."', '""'))
    with pytest.raises(ReXValFormatError, match=r"row 0 \(line 2\): empty candidate text in column 'bleu'"):
        read_rexval(folder)
    with pytest.raises(ReXValFormatError, match="missing 6_valid_raters"):
        (tmp_path / "c").mkdir()
        shutil.copy(REXVAL / GT_FILE, tmp_path / "c")
        read_rexval(tmp_path / "c")


# -- RaTE-Eval ---------------------------------------------------------------------------------
def test_task1_rate_column_and_other_encodings():
    test = read_rate_eval_task1(RATE_EVAL, "test")
    assert [(p.reference, p.candidate, p.rating) for p in test][1] == (
        "Small right pleural effusion.", "Small left pleural effusion.", pytest.approx(2 / 3))
    assert [p.id for p in test] == ["rate_test.csv:0", "rate_test.csv:1", "rate_test.csv:2"]
    train = read_rate_eval_task1(RATE_EVAL / "Task1_sentence_rate", "train")  # task folder works too
    assert [(p.reference, p.candidate, p.rating) for p in train] == [
        ("Mild cardiomegaly.", "Moderate cardiomegaly.", 0.5), ("No acute fracture.", "Acute fracture.", 0.0)]
    assert train[0].group != train[1].group


def _copy_rate_eval(tmp_path):
    dst = tmp_path / "re"
    shutil.copytree(RATE_EVAL, dst)
    return dst


def test_task1_malformed(tmp_path):
    root = _copy_rate_eval(tmp_path)
    t1 = root / "Task1_sentence_rate"
    (t1 / "rate_test.csv").write_text("index,rate\n0,0.5\n1,0.7\n")
    with pytest.raises(RaTEEvalFormatError, match="3 texts, similar_report_test.json 3, rate_test.csv 2 rows"):
        read_rate_eval_task1(root, "test")
    (t1 / "rate_test.csv").write_text("index,rate\n0,0.5\n1,1.7\n2,1\n")
    with pytest.raises(RaTEEvalFormatError, match=r"rate_test.csv: row 1 \(line 3\): rating 1.7 outside \[0, 1\]"):
        read_rate_eval_task1(root, "test")
    (t1 / "rate_test.csv").write_text("index,quality\n0,0.5\n1,0.7\n2,1\n")
    with pytest.raises(RaTEEvalFormatError, match="no rating column"):
        read_rate_eval_task1(root, "test")
    (t1 / "gt_report_test.json").write_text('["a", 3, "c"]')
    with pytest.raises(RaTEEvalFormatError, match=r"gt_report_test.json: element 1: 'text' must be a non-empty string"):
        read_rate_eval_task1(root, "test")
    with pytest.raises(RaTEEvalFormatError, match="unknown split"):
        read_rate_eval_task1(root, "dev")
    with pytest.raises(RaTEEvalFormatError, match="no Task1_sentence_rate/ folder"):
        read_rate_eval_task1(tmp_path, "test")


def test_task2_scores_and_malformed(tmp_path):
    pairs = read_rate_eval_task2(RATE_EVAL, "test")
    assert [p.rating for p in pairs] == [5.0, 2.75, 0.25]
    assert pairs[0].group == pairs[1].group != pairs[2].group  # same reference, same group
    root = _copy_rate_eval(tmp_path)
    path = root / "Task2_paragraph_rate" / "rate_test.csv"
    path.write_text('gt_report,similar_report,Score\n"a","b",5.5\n')
    with pytest.raises(RaTEEvalFormatError, match=r"row 0 \(line 2\): Score 5.5 outside \[0, 5\]"):
        read_rate_eval_task2(root, "test")
    path.write_text('gt_report,similar_report,Score\n"a","",5\n')
    with pytest.raises(RaTEEvalFormatError, match=r"row 0 \(line 2\): 'similar_report' must be a non-empty"):
        read_rate_eval_task2(root, "test")
    path.write_text('gt_report,candidate,Score\n"a","b",5\n')
    with pytest.raises(RaTEEvalFormatError, match=r"missing column\(s\) \['similar_report'\]"):
        read_rate_eval_task2(root, "test")


def test_task3_triads_from_csv_and_jsonl(tmp_path):
    triads = read_rate_eval_task3(RATE_EVAL)
    assert len(triads) == 3
    assert (triads[0].original, triads[0].synonym, triads[0].opposite) == (
        "The portal vein is patent.", "The portal vein is open.", "The portal vein is occluded.")
    assert triads[1].original == "No pleural effusion." and triads[1].opposite == "Pleural effusion is present."
    assert [t.meta["file"] for t in triads] == ["more_triads.jsonl", "triads.csv", "triads.csv"]
    root = _copy_rate_eval(tmp_path)
    (root / "Task3_synthetic" / "triads.csv").write_text("original,synonym,negation\na,b,c\n")
    with pytest.raises(RaTEEvalFormatError, match="no opposite column"):
        read_rate_eval_task3(root)


# -- plain CSV, BLEURT JSONL, ER² JSONL ----------------------------------------------------------
def test_plain_csv(tmp_path):
    pairs = read_rating_csv(RATINGS / "pairs.csv")
    assert [(p.candidate, p.rating, p.meta["note"]) for p in pairs] == [
        ("No pneumothorax.", 1.0, "same"), ("Small pneumothorax.", 0.0, "negation flipped")]
    path = tmp_path / "p.csv"
    path.write_text("ref,hyp,human\nA.,B.,0.5\nA.,C.,high\n")
    with pytest.raises(RatingFormatError, match=r"p.csv: row 1 \(line 3\): 'human' must be a number, got 'high'"):
        read_rating_csv(path, reference="ref", candidate="hyp", rating="human")
    with pytest.raises(RatingFormatError, match=r"missing column\(s\) \['reference', 'candidate', 'rating'\]"):
        read_rating_csv(path)


def test_bleurt_jsonl(tmp_path):
    rows = read_bleurt_jsonl(RATINGS / "bleurt.jsonl")
    assert [(r.id, r.rating) for r in rows] == [("bleurt.jsonl:1", pytest.approx(11 / 12)), ("b2", 0.0)]
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"reference": "a", "candidate": "b", "score": 1}\n{"reference": "a", "candidate": "b"}\n')
    with pytest.raises(RatingFormatError, match=r"b.jsonl:2: missing key 'score'"):
        read_bleurt_jsonl(bad)
    bad.write_text('{"reference": "a", "candidate": "b", "score": "x"}\n')
    with pytest.raises(RatingFormatError, match=r"b.jsonl:1: 'score' must be a number"):
        read_bleurt_jsonl(bad)
    bad.write_text('{"reference": "a",\n')
    with pytest.raises(RatingFormatError, match=r"b.jsonl:1: not valid JSON"):
        read_bleurt_jsonl(bad)


def test_er2_rows_and_pairs(tmp_path):
    rows = read_er2_jsonl(RATINGS / "er2_rows.jsonl")
    assert [(r.id, r.system, r.total, r.group) for r in rows] == [
        ("r1", "radcliq", 0, "ref1"), ("r2", "radcliq", 2, "ref1"),
        ("m1", "mrscore", 95, "ref1"), ("m2", "mrscore", 60, "ref1")]
    pairs = {p.system: p for p in er2_pairs(rows)}
    rc, mr = pairs["radcliq"], pairs["mrscore"]
    assert (rc.accepted.id, rc.rejected.id, rc.margin) == ("r1", "r2", 2.0)  # fewer errors wins
    assert rc.sub_margins["incorrect_location"] == 1.0 and rc.sub_margins["omission"] == 0.0
    assert (mr.accepted.id, mr.rejected.id, mr.margin) == ("m1", "m2", 35.0)
    assert mr.sub_margins["terminology"] == -5.0  # a sub-margin may be negative


@pytest.mark.parametrize("change, message", [
    (lambda r: r["subscores"].pop("omission"), r"er2.jsonl:1: sub-scores .* do not match system 'radcliq'"),
    (lambda r: r.update(total=5), r"er2.jsonl:1: total 5 is not the sum of the sub-scores \(0"),
    (lambda r: r.pop("candidate"), r"er2.jsonl:1: missing key 'candidate'"),
    (lambda r: r["subscores"].update(omission="two"), r"er2.jsonl:1: 'subscores.omission' must be a number"),
])
def test_er2_malformed(tmp_path, change, message):
    rec = json.loads((RATINGS / "er2_rows.jsonl").read_text().splitlines()[0])
    change(rec)
    path = tmp_path / "er2.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(RatingFormatError, match=message):
        read_er2_jsonl(path)


def test_er2_custom_system_uses_consistent_names(tmp_path):
    path = tmp_path / "custom.jsonl"
    recs = [{"reference": "a", "candidate": "b", "system": "mine", "subscores": {"x": 1, "y": 2}, "total": 3},
            {"reference": "a", "candidate": "c", "system": "mine", "subscores": {"x": 1, "z": 2}, "total": 3}]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(RatingFormatError, match=r"custom.jsonl:2: sub-scores \['x', 'z'\] do not match system 'mine'"):
        read_er2_jsonl(path)

"""The ClinicalBLEURT target (SPEC §4) on hand-made rows, and the rated-pairs reader."""

import json

import pytest

from data.clinical_bleurt import (BLEURT_WEIGHTS, NO_SECTION, check_weights, clinical_bleurt_quality,
                                  count_sentences, read_clinical_bleurt_jsonl)
from data.ratings import RatingFormatError

REF3 = "No pleural effusion. Heart size is normal. Mild bibasilar atelectasis."


def _counts(c=0, n=0, s=0):
    return {"critical": c, "non_critical": n, "spelling_grammar": s}


def test_quality_formula_on_hand_made_pairs():
    # 3 sentences in the reference, 2 in the candidate: max_sentlen = 3
    cand = "No pleural effusion. Heart size is enlarged."
    assert clinical_bleurt_quality(REF3, cand, _counts(1)) == (pytest.approx(1 - 1 / 3), 1.0, 3)
    # default weights: critical 1, non-critical 1/3, spelling/grammar 1/12
    q, score, n = clinical_bleurt_quality(REF3, cand, _counts(1, 3, 6))
    assert (score, n) == (pytest.approx(1 + 1 + 0.5), 3) and q == pytest.approx(1 - 2.5 / 3)
    # the candidate may hold more sentences than the reference
    longer = REF3 + " New right upper lobe nodule. Small left effusion."
    assert clinical_bleurt_quality(REF3, longer, _counts(2))[2] == 5
    assert clinical_bleurt_quality(REF3, REF3, _counts()) == (1.0, 0.0, 3)


def test_error_score_above_the_sentence_count_keeps_the_formula_value():
    q, score, n = clinical_bleurt_quality("Heart is normal.", "Heart is enlarged.", _counts(3, 1, 0))
    assert (n, score) == (1, pytest.approx(3 + 1 / 3))
    assert q == pytest.approx(1 - (3 + 1 / 3))  # about -2.33: never clipped to 0


def test_weights_are_configurable_and_checked():
    weights = {"critical": 2.0, "non_critical": 1.0, "spelling_grammar": 0.0}
    q, score, _ = clinical_bleurt_quality(REF3, REF3, _counts(1, 1, 5), weights)
    assert score == 3.0 and q == pytest.approx(0.0)
    assert check_weights(None) == BLEURT_WEIGHTS and check_weights(None) is not BLEURT_WEIGHTS
    with pytest.raises(ValueError, match=r"must name exactly \['critical', 'non_critical', 'spelling_grammar'\]"):
        check_weights({"critical": 1.0, "non_critical": 0.5})
    with pytest.raises(ValueError, match="weight 'critical' must be a finite number >= 0"):
        check_weights({"critical": -1.0, "non_critical": 0.5, "spelling_grammar": 0.1})
    with pytest.raises(ValueError, match=r"error counts lack \['spelling_grammar'\]"):
        clinical_bleurt_quality(REF3, REF3, {"critical": 1, "non_critical": 0})


def test_sentences_are_counted_with_the_radscore_splitter_and_cleaning():
    assert count_sentences("Lungs are clear.\nNo effusion. 2. Stable nodule.") == 3
    # pieces under 3 characters or without a word are not sentences
    assert count_sentences("Lungs are clear. -- \n ok \n.") == 1
    # a text with no countable sentence counts as one, so the formula stays defined
    assert clinical_bleurt_quality("ok", "ok", _counts(1)) == (0.0, 1.0, 1)


def _write(tmp_path, rows, name="rows.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_reader_computes_targets_takes_scores_and_counts_removed_empty_sections(tmp_path):
    path = _write(tmp_path, [
        {"reference": REF3, "candidate": REF3, "critical": 0, "non_critical": 1, "spelling": 0,
         "section": "EXAM", "annotator": "a1"},
        {"reference": "Heart is normal.", "candidate": "Heart is large.", "score": 0.25, "id": "s2",
         "reference_id": "study-9"},
        {"reference": "", "candidate": "Heart is large.", "score": 0.1, "section": "HPI"},
        {"reference": "Lungs clear.", "candidate": "  \n", "critical": 0, "non_critical": 0,
         "spelling_grammar": 0, "section": "HPI"},
        {"reference": None, "candidate": "x", "score": 1, "section": "RESULTS"},
        {"reference": "Heart is normal.", "candidate": "Heart is large.", "critical": 1,
         "non_critical": 0, "spelling": 0, "score": 0.9},
    ])
    rows, summary = read_clinical_bleurt_jsonl(path)
    assert [r.rating for r in rows] == [pytest.approx(1 - 1 / 9), 0.25, 0.0]
    assert rows[0].meta == {"section": "EXAM", "annotator": "a1", "critical": 0, "non_critical": 1,
                            "spelling_grammar": 0, "error_score": pytest.approx(1 / 3), "max_sentlen": 3,
                            "target_from": "counts"}
    assert (rows[1].id, rows[1].group, rows[1].meta["target_from"]) == ("s2", "study-9", "score")
    assert rows[2].meta["file_score"] == 0.9 and rows[0].id == "rows.jsonl:1"
    assert (summary.lines, summary.kept, summary.removed) == (6, 3, 3)
    assert summary.empty_removed == {"HPI": 2, "RESULTS": 1}
    assert summary.target_from == {"counts": 2, "score": 1}
    assert "3 removed with an empty reference or candidate (HPI: 2, RESULTS: 1)" in summary.describe()
    # prefer="score" takes the file's score where a row has both
    rows, _ = read_clinical_bleurt_jsonl(path, prefer="score")
    assert rows[2].rating == 0.9 and rows[2].meta["target_from"] == "score"
    # other weights change the computed targets only
    rows, _ = read_clinical_bleurt_jsonl(path, weights={"critical": 0.5, "non_critical": 0.0,
                                                        "spelling_grammar": 0.0})
    assert [r.rating for r in rows] == [1.0, 0.25, 0.5]
    assert rows[2].meta["section"] == NO_SECTION


def test_reader_counts_negative_targets(tmp_path):
    path = _write(tmp_path, [{"reference": "Heart is normal.", "candidate": "Heart is large.",
                              "critical": 2, "non_critical": 0, "spelling": 0}])
    rows, summary = read_clinical_bleurt_jsonl(path)
    assert rows[0].rating == -1.0 and summary.negative_targets == 1
    assert "1 targets below 0" in summary.describe()


@pytest.mark.parametrize("row, message", [
    ({"candidate": "b", "score": 1}, r"rows.jsonl:1: missing key 'reference'"),
    ({"reference": "a", "candidate": "b"}, r"rows.jsonl:1: no target: expected 'score' or the error counts"),
    ({"reference": "a", "candidate": "b", "critical": 1}, r"rows.jsonl:1: error counts are incomplete: "
     r"missing \['non_critical', 'spelling'\]"),
    ({"reference": "a", "candidate": "b", "critical": -1, "non_critical": 0, "spelling": 0},
     r"rows.jsonl:1: 'critical' must be >= 0"),
    ({"reference": "a", "candidate": "b", "critical": "two", "non_critical": 0, "spelling": 0},
     r"rows.jsonl:1: 'critical' must be a number"),
    ({"reference": "a", "candidate": "b", "critical": 0, "non_critical": 0, "spelling": 1,
      "spelling_grammar": 2}, r"rows.jsonl:1: 'spelling_grammar' and 'spelling' disagree"),
    ({"reference": ["a"], "candidate": "b", "score": 1}, r"rows.jsonl:1: 'reference' must be a string"),
    ({"reference": "a", "candidate": "b", "score": 1, "section": 3}, r"'section' must be a string"),
    ({"reference": "a", "candidate": "b", "score": "nan"}, r"'score' must be finite"),
])
def test_reader_errors_name_the_line_and_the_problem(tmp_path, row, message):
    path = _write(tmp_path, [row])
    with pytest.raises(RatingFormatError, match=message):
        read_clinical_bleurt_jsonl(path)


def test_reader_rejects_bad_options_and_files(tmp_path):
    with pytest.raises(ValueError, match="prefer must be 'counts' or 'score'"):
        read_clinical_bleurt_jsonl(tmp_path / "x.jsonl", prefer="mean")
    with pytest.raises(RatingFormatError, match="file not found"):
        read_clinical_bleurt_jsonl(tmp_path / "missing.jsonl")
    with pytest.raises(RatingFormatError, match=r"bad.jsonl:2: not valid JSON"):
        read_clinical_bleurt_jsonl(_write(tmp_path, ['{"reference": "a", "candidate": "b", "score": 1}',
                                                     '{"reference": '], "bad.jsonl"))

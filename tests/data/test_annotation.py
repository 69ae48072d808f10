import json

import pytest

from data.annotation import (AnnotationError, parse_annotated, strip_annotation,
                             tokenize_words, validate_reports_file)


def test_parse_worked_example():
    s = parse_annotated("No [pleural effusion|NON-ABNORMALITY] or [pneumothorax|NON-DISEASE].")
    assert s.text == "No pleural effusion or pneumothorax."
    assert s.words == ("No", "pleural", "effusion", "or", "pneumothorax", ".")
    assert s.iob_tags() == ["O", "B-NON-ABNORMALITY", "I-NON-ABNORMALITY", "O", "B-NON-DISEASE", "O"]
    assert s.entity_texts() == [("pleural effusion", "NON-ABNORMALITY"), ("pneumothorax", "NON-DISEASE")]


def test_words_keep_decimals_levels_and_abbreviations():
    words = [w for w, _, _ in tokenize_words("A 3.5 cm mass at C5-C6, s/p resection.")]
    assert words == ["A", "3.5", "cm", "mass", "at", "C5-C6", ",", "s/p", "resection", "."]


@pytest.mark.parametrize("text, reason", [
    ("No [effusion|NON-ABNORMALITY.", "unbalanced bracket"),
    ("No effusion|NON-ABNORMALITY].", "unbalanced bracket"),
    ("A [mass|TUMOR].", "unknown type"),
    ("A [ |ABNORMALITY] mass.", "empty span"),
    ("A [left [lung|ANATOMY] mass|ABNORMALITY].", "overlapping or nested"),
    ("Two [effusion|ABNORMALITY]s.", "word boundaries"),
    ("A [ mass|ABNORMALITY].", "white space"),
])
def test_each_malformed_annotation_is_named(text, reason):
    with pytest.raises(AnnotationError, match=reason):
        parse_annotated(text)


def test_strip_annotation_returns_plain_text():
    assert strip_annotation("[Heart|ANATOMY] size is [normal|NON-ABNORMALITY].") == "Heart size is normal."


def test_validator_reports_file_and_line(tmp_path):
    good = {"id": "r1", "modality": "CT", "anatomy": "head", "style": "clinical",
            "findings": ["No [acute intracranial hemorrhage|NON-DISEASE]."], "impression": ["[Normal|NON-ABNORMALITY] study."]}
    bad = dict(good, id="r2", findings=["[Ventricles|ANATOMY] are [normal|NONE]."])
    wrong_style = dict(good, id="r3", style="casual")
    path = tmp_path / "reports.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (good, bad, wrong_style, good)) + "\n")
    errors = validate_reports_file(path)
    assert errors[0].startswith(f"{path}:2: report 'r2': findings[0]: unknown type 'NONE'")
    assert errors[1].startswith(f"{path}:3: report 'r3': style 'casual'")
    assert errors[2] == f"{path}:4: duplicate id 'r1' (first on line 1)"
    assert len(errors) == 3

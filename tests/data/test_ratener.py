import json
import shutil
from pathlib import Path

import pytest

from data.ratener import RaTENERFormatError, list_subsets, load_split, resolve_root

HUB = Path(__file__).resolve().parents[1] / "fixtures" / "ratener_hub"


def test_every_source_and_encoding_reads_the_same_sentences():
    mimic = load_split(HUB, "MIMIC_IV", "train")  # JSON lines, int tags
    radio = load_split(HUB, "Radiopaedia", "train")  # JSON array, string tags
    both = load_split(HUB, "all", "train")  # JSON array, int tags
    assert [s.tokens for s in both] == [s.tokens for s in mimic + radio]
    assert [s.tags for s in both] == [s.tags for s in mimic + radio]
    assert mimic[0].tags == ["O", "B-NON-ABNORMALITY", "I-NON-ABNORMALITY", "O", "B-NON-DISEASE", "O"]
    assert radio[1].spans == [(0, 1, "ANATOMY"), (3, 4, "NON-ABNORMALITY")]


def test_span_file_and_derived_spans_agree_with_iob():
    for split in ("train", "dev", "test"):
        from_span = load_split(HUB, "all", split, scheme="span")
        from_iob = load_split(HUB, "all", split, scheme="IOB")
        assert [(s.tokens, s.spans, s.tags) for s in from_span] == [(s.tokens, s.spans, s.tags) for s in from_iob]
    # Radiopaedia has no span files: spans are derived from IOB
    derived = load_split(HUB, "Radiopaedia", "dev", scheme="span")
    assert derived[0].spans == [(0, 0, "ANATOMY"), (2, 4, "ABNORMALITY"), (7, 8, "DISEASE")]


def test_list_subsets_and_hub_ids():
    assert list_subsets(HUB) == ["MIMIC_IV", "Radiopaedia", "all"]
    assert resolve_root("Angelakeke/RaTE-NER") == "hf://datasets/Angelakeke/RaTE-NER"
    with pytest.raises(RaTENERFormatError, match="neither a local folder nor a Hub dataset id"):
        resolve_root("no/such/folder")


def _copy(tmp_path):
    dst = tmp_path / "hub"
    shutil.copytree(HUB, dst)
    return dst


def _write_lines(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.mark.parametrize("record, message", [
    ({"tokens": ["a", "b"], "ner_tags": [10, 42]}, "record 1: unknown tag id 42 at word 1"),
    ({"tokens": ["a", "b"], "ner_tags": ["O", "B-TUMOR"]}, "record 1: unknown tag 'B-TUMOR' at word 1"),
    ({"tokens": ["a", "b"], "ner_tags": [10]}, "record 1: 2 tokens but 1 tags"),
    ({"tokens": [], "ner_tags": []}, "record 1: empty token list"),
])
def test_iob_validation_names_file_and_record(tmp_path, record, message):
    root = _copy(tmp_path)
    path = root / "MIMIC_IV" / "dev_IOB.json"
    _write_lines(path, [{"tokens": ["ok"], "ner_tags": [10]}, record])
    with pytest.raises(RaTENERFormatError) as err:
        load_split(root, "MIMIC_IV", "dev")
    assert str(path) in str(err.value) and message in str(err.value)


def test_span_outside_sentence_is_named(tmp_path):
    root = _copy(tmp_path)
    path = root / "all" / "dev_span.json"
    _write_lines(path, [{"doc_key": "d", "sentences": [["a", "b"], ["c"]], "ner": [[[0, 0, "ANATOMY"]], [[1, 3, "DISEASE"]]]}])
    with pytest.raises(RaTENERFormatError, match=r"record 0, sentence 1: span \[1, 3, 'DISEASE'\] lies outside the sentence"):
        load_split(root, "all", "dev", scheme="span")


def test_label_files_must_match_the_spec_order(tmp_path):
    root = _copy(tmp_path)
    labels = json.loads((root / "idx2label.json").read_text())
    labels["0"], labels["1"] = labels["1"], labels["0"]
    (root / "idx2label.json").write_text(json.dumps(labels))
    with pytest.raises(RaTENERFormatError, match="label set differs"):
        load_split(root, "MIMIC_IV", "train")


def test_empty_and_missing_splits_are_errors(tmp_path):
    root = _copy(tmp_path)
    (root / "MIMIC_IV" / "test_IOB.json").write_text("")
    with pytest.raises(RaTENERFormatError, match="the test split is empty"):
        load_split(root, "MIMIC_IV", "test")
    with pytest.raises(RaTENERFormatError, match="no train_IOB.json"):
        load_split(root, "nowhere", "train")

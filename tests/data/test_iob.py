import pytest

from data.iob import iob_to_spans, repair_iob, spans_to_iob


def test_round_trip_valid_sequences():
    tags = ["B-ANATOMY", "I-ANATOMY", "B-ABNORMALITY", "O", "B-DISEASE", "B-DISEASE", "I-DISEASE"]
    spans = iob_to_spans(tags)
    assert spans == [(0, 1, "ANATOMY"), (2, 2, "ABNORMALITY"), (4, 4, "DISEASE"), (5, 6, "DISEASE")]
    assert spans_to_iob(len(tags), spans) == tags


def test_invalid_i_starts_a_new_entity():
    # I- after O, at the start, and after another type: each starts an entity of its own type.
    tags = ["I-ANATOMY", "O", "I-DISEASE", "I-DISEASE", "I-ABNORMALITY"]
    assert repair_iob(tags) == ["B-ANATOMY", "O", "B-DISEASE", "I-DISEASE", "B-ABNORMALITY"]
    assert iob_to_spans(tags) == [(0, 0, "ANATOMY"), (2, 3, "DISEASE"), (4, 4, "ABNORMALITY")]


def test_unknown_tag_and_bad_spans_raise():
    with pytest.raises(ValueError, match="unknown tag 'B-TUMOR'"):
        iob_to_spans(["B-TUMOR"])
    with pytest.raises(ValueError, match="outside the sentence"):
        spans_to_iob(3, [(2, 3, "ANATOMY")])
    with pytest.raises(ValueError, match="overlaps"):
        spans_to_iob(4, [(0, 2, "ANATOMY"), (2, 3, "DISEASE")])

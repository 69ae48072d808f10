import random

import pytest

from radscore.splitter import sentence_spans, split_sentences


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Small effusion, e.g. at the base. No pneumothorax.",
         ["Small effusion, e.g. at the base.", "No pneumothorax."]),
        ("Compare i.e. the prior. Stable.", ["Compare i.e. the prior.", "Stable."]),
        ("Left vs. right lung. Clear.", ["Left vs. right lung.", "Clear."]),
        ("Seen by Dr. Smith today. Nodule.", ["Seen by Dr. Smith today.", "Nodule."]),
        ("Dr. A. Smith reviewed. Fine.", ["Dr. A. Smith reviewed.", "Fine."]),
        ("The mass (approx. 3 cm) is stable. Done.", ["The mass (approx. 3 cm) is stable.", "Done."]),
        ("(e.g. CT) shows it. Next.", ["(e.g. CT) shows it.", "Next."]),
        ("Report No. 3 reviewed. No. Nothing else.", ["Report No. 3 reviewed.", "No.", "Nothing else."]),
    ],
)
def test_abbreviations_do_not_end_a_sentence(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Nodule measures 3.5 cm. Stable.", ["Nodule measures 3.5 cm.", "Stable."]),
        ("Sizes: 1.2 x 3.4 cm.", ["Sizes: 1.2 x 3.4 cm."]),
        ("Ratio 0.5. Normal.", ["Ratio 0.5.", "Normal."]),
        # a number ending a sentence is not a list marker
        ("Lesion in segment 4. 5 mm nodule.", ["Lesion in segment 4.", "5 mm nodule."]),
        ("Size 12. Next item.", ["Size 12.", "Next item."]),
    ],
)
def test_decimals_and_numbers(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1. Effusion. 2. Nodule. 3. Stable.", ["1. Effusion.", "2. Nodule.", "3. Stable."]),
        ("1) Small effusion.\n2) No pneumothorax.", ["1) Small effusion.", "2) No pneumothorax."]),
        ("IMPRESSION:\n 1. Effusion\n 2. Nodule", ["IMPRESSION:", "1. Effusion", "2. Nodule"]),
        ("Findings: 1) Effusion. 2) Nodule.", ["Findings:", "1) Effusion.", "2) Nodule."]),
    ],
)
def test_numbered_lists_keep_their_marker(text, expected):
    assert split_sentences(text) == expected


def test_line_breaks_always_split():
    text = "FINDINGS:\n1. Effusion.\n2. Nodule 3.5 cm.\n\nIMPRESSION: Stable."
    assert split_sentences(text) == ["FINDINGS:", "1. Effusion.", "2. Nodule 3.5 cm.", "IMPRESSION: Stable."]
    assert split_sentences("Lung\nclear") == ["Lung", "clear"]  # even without punctuation
    assert split_sentences("Heart normal.\r\nLungs clear.") == ["Heart normal.", "Lungs clear."]
    assert split_sentences("Effusion.  \n  Nodule.") == ["Effusion.", "Nodule."]


def test_other_end_marks_and_continuations():
    assert split_sentences("Is there effusion? Yes! Large.") == ["Is there effusion?", "Yes!", "Large."]
    assert split_sentences("Stable... Improved.") == ["Stable...", "Improved."]
    # a lower-case next word continues the sentence; no space after the dot never splits
    assert split_sentences("No effusion. no pneumothorax.") == ["No effusion. no pneumothorax."]
    assert split_sentences("Heart size normal.Lungs clear.") == ["Heart size normal.Lungs clear."]


@pytest.mark.parametrize("text", ["", "   ", " \n\t \r\n "])
def test_empty_and_whitespace_text(text):
    assert sentence_spans(text) == []
    assert split_sentences(text) == []


def test_no_end_mark_is_one_sentence_and_spans_are_offsets():
    text = "  No focal consolidation  "
    assert sentence_spans(text) == [(2, 24)]
    assert split_sentences(text) == ["No focal consolidation"]


def test_not_a_string_raises():
    with pytest.raises(TypeError, match="expected a string"):
        sentence_spans(None)


def _check_cover(text):
    spans = sentence_spans(text)
    for (a, b), nxt in zip(spans, spans[1:] + [(len(text), len(text))]):
        assert 0 <= a < b <= nxt[0]  # non-empty, in order, no overlap
        assert text[a:b] == text[a:b].strip()
    # everything outside the spans is white space, so the spans hold every other character in order
    outside = list(text)
    for a, b in spans:
        outside[a:b] = [" "] * (b - a)
    assert "".join(outside).strip() == ""
    inside = "".join(text[a:b] for a, b in spans)
    assert [c for c in inside if not c.isspace()] == [c for c in text if not c.isspace()]


def test_spans_cover_every_non_space_character_in_order():
    pieces = list("aA1. !?\n\t)(:;") + ["e.g.", "Dr.", "No.", "3.5", "12.", "vs.", "\r\n", "\u00a0", "Effusion"]
    rng = random.Random(1234)
    for _ in range(3000):
        _check_cover("".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))))
    _check_cover("FINDINGS:\n1. Effusion, e.g. small.\n2) Nodule 3.5 cm vs. 3.2 cm. Dr. Smith.  ")

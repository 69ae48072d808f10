import torch

from radscore.models import PACKAGED_MINILM, resolve_model_path
from radscore.span_model import SPAN_CLASSES, decode_spans, enumerate_spans, word_piece_bounds
from train.ner.data import IGNORE, piece_labels
from train.ner.metrics import ner_metrics
from radscore.labels import ID2LABEL


def test_every_sub_word_piece_is_labelled():
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(resolve_model_path(PACKAGED_MINILM))
    words = ["No", "pleural", "effusion", "or", "pneumothorax", "."]
    tags = ["O", "B-NON-ABNORMALITY", "I-NON-ABNORMALITY", "O", "B-NON-DISEASE", "O"]
    enc = tok(words, is_split_into_words=True)
    pieces = tok.convert_ids_to_tokens(enc["input_ids"])
    labels = [ID2LABEL.get(i, "IGN") if i != IGNORE else "IGN" for i in piece_labels(enc.word_ids(), tags)]
    assert list(zip(pieces, labels)) == [
        ("[CLS]", "IGN"), ("no", "O"),
        ("pl", "B-NON-ABNORMALITY"), ("##eur", "I-NON-ABNORMALITY"), ("##al", "I-NON-ABNORMALITY"),
        ("e", "I-NON-ABNORMALITY"), ("##ff", "I-NON-ABNORMALITY"), ("##usion", "I-NON-ABNORMALITY"),
        ("or", "O"),
        ("p", "B-NON-DISEASE"), ("##ne", "I-NON-DISEASE"), ("##um", "I-NON-DISEASE"),
        ("##otho", "I-NON-DISEASE"), ("##ra", "I-NON-DISEASE"), ("##x", "I-NON-DISEASE"),
        (".", "O"), ("[SEP]", "IGN"),
    ]
    assert word_piece_bounds(enc.word_ids())[1] == (2, 4)  # "pleural" spans pieces 2..4


def test_span_enumeration():
    assert enumerate_spans(3, 2) == [(0, 0), (0, 1), (1, 1), (1, 2), (2, 2)]
    assert len(enumerate_spans(20, 8)) == sum(min(8, 20 - s) for s in range(20))
    assert enumerate_spans(0, 8) == []


def test_decoding_takes_the_most_probable_non_overlapping_spans():
    spans = [(0, 0), (0, 1), (1, 1), (2, 3), (3, 3)]
    anatomy, disease = SPAN_CLASSES.index("ANATOMY"), SPAN_CLASSES.index("DISEASE")
    probs = torch.full((5, len(SPAN_CLASSES)), 0.01)
    probs[0, anatomy] = 0.6   # (0,0) ANATOMY 0.6
    probs[1, anatomy] = 0.9   # (0,1) ANATOMY 0.9: wins over (0,0) and (1,1)
    probs[2, disease] = 0.8   # (1,1) overlaps (0,1): dropped
    probs[3, 0] = 0.9         # (2,3) none
    probs[4, disease] = 0.7   # (3,3) DISEASE
    assert decode_spans(spans, probs) == [(0, 1, "ANATOMY"), (3, 3, "DISEASE")]


def test_metrics_are_seqeval_strict_with_the_repair_policy():
    gold = [["B-ANATOMY", "I-ANATOMY", "O", "B-DISEASE"]]
    pred = [["B-ANATOMY", "I-ANATOMY", "O", "I-DISEASE"]]  # invalid I- is repaired to B-: both right
    m = ner_metrics(gold, pred, per_type=True)
    assert m["f1"] == 1.0 and m["accuracy"] == 1.0 and m["DISEASE/support"] == 1.0
    m = ner_metrics(gold, [["B-ANATOMY", "O", "O", "O"]])
    assert m["precision"] == 0.0 and m["recall"] == 0.0 and m["accuracy"] == 0.5


def test_training_labels_follow_the_repair_rule():
    """An ``I-X`` that continues nothing is trained as ``B-X`` (data/iob.py's one rule)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(resolve_model_path(PACKAGED_MINILM))
    words = ["small", "effusion", "left", "lung"]
    tags = ["O", "I-ABNORMALITY", "I-ANATOMY", "I-ANATOMY"]
    enc = tok(words, is_split_into_words=True)
    pieces = tok.convert_ids_to_tokens(enc["input_ids"])[1:-1]
    labels = [ID2LABEL[i] for i in piece_labels(enc.word_ids(), tags)[1:-1]]
    assert list(zip(pieces, labels)) == [
        ("small", "O"), ("e", "B-ABNORMALITY"), ("##ff", "I-ABNORMALITY"), ("##usion", "I-ABNORMALITY"),
        ("left", "B-ANATOMY"), ("lung", "I-ANATOMY")]


def test_word_tags_fill_words_without_pieces_as_inference_does():
    from train.ner.data import word_tags

    # words 0..5; words 2 and 5 have no pieces
    assert word_tags(6, [0, 1, 3, 4], ["B-ANATOMY", "I-ANATOMY", "I-ANATOMY", "O"]) == [
        "B-ANATOMY", "I-ANATOMY", "I-ANATOMY", "I-ANATOMY", "O", "O"]
    # an entity ends before the piece-less word: it stays outside
    assert word_tags(4, [0, 1, 3], ["B-ANATOMY", "I-ANATOMY", "B-DISEASE"]) == [
        "B-ANATOMY", "I-ANATOMY", "O", "B-DISEASE"]
    # a type change across the gap: outside
    assert word_tags(3, [0, 2], ["B-ANATOMY", "I-DISEASE"]) == ["B-ANATOMY", "O", "I-DISEASE"]

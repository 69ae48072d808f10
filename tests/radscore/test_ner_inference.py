"""NER inference: the released decoding rules, windowing of long sentences, export loading.

The tiny random exports come from ``train/rehearsal/tiny.py`` (shared with the notebooks).
"""

import json
import re

import pytest
import torch

from radscore.labels import ID2LABEL, IOB_LABELS, LABEL2ID
from radscore.ner import (Entity, IOBRecognizer, SpanRecognizer, central_window, decode_released,
                          load_ner, ner_kind, windows)
from radscore.span_model import SPAN_CLASSES
from radscore.text import WORD_RE, clean_sentences, keep_sentence, tokenize_words
from train.rehearsal.tiny import build_tiny_iob_export, build_tiny_span_export


# ---- tiny exports (train/rehearsal/tiny.py) -----------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_iob(tmp_path_factory):
    return build_tiny_iob_export(tmp_path_factory.mktemp("tiny_iob"))


@pytest.fixture(scope="module")
def tiny_span(tmp_path_factory):
    return build_tiny_span_export(tmp_path_factory.mktemp("tiny_span"))


# ---- words and sentences ----------------------------------------------------------------------
def test_word_regex_is_the_one_of_the_annotation_format():
    from data.annotation import WORD_RE as DATA_WORD_RE
    from data.annotation import tokenize_words as data_tokenize

    assert WORD_RE.pattern == DATA_WORD_RE.pattern and WORD_RE.flags == DATA_WORD_RE.flags
    text = "C5-C6 s/p T2-weighted 3.5 cm, 1,200 mL; patient's é\x00 (L>R)."
    assert tokenize_words(text) == data_tokenize(text)
    assert [w for w, _, _ in tokenize_words("3.5 cm.")] == ["3.5", "cm", "."]


def test_sentence_filter_is_the_released_rule():
    assert not keep_sentence("ok") and not keep_sentence("") and keep_sentence("No.")
    assert clean_sentences(["  a  ", " Lungs clear. ", "\t\n", "abc"]) == ["Lungs clear.", "abc"]


# ---- the released decoding rules --------------------------------------------------------------
@pytest.mark.parametrize("labels, expected", [
    (["O", "B-ANATOMY", "I-ANATOMY", "O", "O"], [(1, 2, "ANATOMY")]),
    (["O", "B-DISEASE", "B-ANATOMY", "O", "O"], [(1, 1, "DISEASE"), (2, 2, "ANATOMY")]),
    (["O", "I-DISEASE", "I-DISEASE", "O", "O"], []),  # an I- run that continues nothing is dropped
    (["O", "B-DISEASE", "I-ANATOMY", "O", "O"], [(1, 2, "DISEASE")]),  # keeps the opening type
    (["O", "O", "B-ANATOMY", "I-ANATOMY", "I-ANATOMY"], [(2, 3, "ANATOMY")]),  # entity runs to [SEP]
    (["O", "O", "B-ANATOMY", "I-ANATOMY", "O"], [(2, 3, "ANATOMY")]),
    (["O", "O", "O", "B-ANATOMY", "I-ANATOMY"], [(3, 3, "ANATOMY")]),  # [SEP]'s label is the look-ahead
    # an entity open at [SEP] after an earlier B-/I- boundary is dropped (the released `end` state)
    (["O", "B-DISEASE", "B-ANATOMY", "I-ANATOMY", "I-ANATOMY"], [(1, 1, "DISEASE")]),
])
def test_released_decoding(labels, expected):
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    assert decode_released(tokens, labels) == expected


def test_windows_cover_everything_and_overlap():
    assert windows(5, 10) == [(0, 5)]
    w = windows(25, 10)
    assert w[0] == (0, 10) and w[-1] == (15, 25) and all(b - a == 10 for a, b in w)
    assert all(a2 < b1 for (_, b1), (a2, _) in zip(w, w[1:]))  # consecutive windows overlap
    assert central_window(12, 12, w) == 1  # piece 12 sits best in (5, 15)


# ---- windowing with deterministic stand-in models ---------------------------------------------
class _WordLabeller(torch.nn.Module):
    """Stands in for a token classifier: B-ANATOMY on one token id, O elsewhere."""

    def __init__(self, target_id: int):
        super().__init__()
        from transformers import PretrainedConfig

        self.config = PretrainedConfig(id2label=dict(ID2LABEL))
        self.target = target_id

    def forward(self, input_ids, attention_mask):
        logits = torch.zeros(*input_ids.shape, len(IOB_LABELS))
        logits[..., LABEL2ID["O"]] = 1.0
        logits[..., LABEL2ID["B-ANATOMY"]] = 2.0 * (input_ids == self.target)
        return type("Out", (), {"logits": logits})()


class _SpanLabeller(torch.nn.Module):
    """Stands in for the span model: ANATOMY for the one-word span of one token id."""

    max_span_width = 3

    def __init__(self, target_id: int):
        super().__init__()
        self.target = target_id

    def forward(self, ids, mask, starts, ends, widths):
        hit = (ids.gather(1, starts) == self.target) & (widths == 0)
        logits = torch.zeros(*starts.shape, len(SPAN_CLASSES))
        logits[..., SPAN_CLASSES.index("ANATOMY")] = 5.0 * hit
        return logits


@pytest.fixture(scope="module")
def minilm_tokenizer():
    from transformers import AutoTokenizer

    from radscore.models import PACKAGED_MINILM, resolve_model_path

    return AutoTokenizer.from_pretrained(resolve_model_path(PACKAGED_MINILM))


def test_iob_sentence_longer_than_the_model_is_windowed_not_truncated(minilm_tokenizer):
    liver = minilm_tokenizer.convert_tokens_to_ids("liver")
    ner = IOBRecognizer("stand-in", _WordLabeller(liver), minilm_tokenizer, torch.device("cpu"), 4,
                        position_limit=32)
    assert ner.window == 30
    sentence = " ".join(["the liver is normal"] * 60)  # 240 pieces: 8+ windows
    entities = ner([sentence, "liver"])
    assert entities[0] == [Entity("liver", "ANATOMY")] * 60
    assert entities[1] == [Entity("liver", "ANATOMY")]  # B- then [SEP] labelled O: one entity


def test_span_sentence_longer_than_the_model_is_windowed_not_truncated(minilm_tokenizer):
    liver = minilm_tokenizer.convert_tokens_to_ids("liver")
    ner = SpanRecognizer("stand-in", _SpanLabeller(liver), minilm_tokenizer, torch.device("cpu"), 4,
                         position_limit=24)
    sentence = " ".join(["The liver, normal."] * 50)
    entities = ner([sentence, "", "\x00\x01 é"])
    assert entities[0] == [Entity("liver", "ANATOMY")] * 50
    assert entities[1:] == [[], []]


# ---- loading real (tiny) exports --------------------------------------------------------------
def test_iob_export_loads_and_tags(tiny_iob):
    ner = load_ner(tiny_iob, device="cpu", batch_size=3)
    assert isinstance(ner, IOBRecognizer) and ner_kind(tiny_iob) == "ner-iob"
    sentences = ["No pleural effusion or pneumothorax.", "Mild cardiomegaly.", "é ü 中文 \x07 ok", "x" * 30]
    out = ner(sentences)
    assert len(out) == 4 and all(e.type in {l[2:] for l in IOB_LABELS if l != "O"} for s in out for e in s)
    assert out == [ner([s])[0] for s in sentences]  # batching does not change the entities


def test_span_export_loads_and_tags(tiny_span):
    ner = load_ner(tiny_span, device="cpu")
    assert isinstance(ner, SpanRecognizer) and ner.model.max_span_width == 4
    sentence = "Small left pleural effusion, no pneumothorax."
    out = ner([sentence, ""])
    assert out[1] == []
    for e in out[0]:  # entity texts are pieces of the sentence, at most 4 words long
        assert e.text in sentence and len(tokenize_words(e.text)) <= 4


def test_folder_without_manifest_is_read_as_iob(tiny_iob, tmp_path):
    import shutil

    folder = tmp_path / "plain"
    shutil.copytree(tiny_iob, folder)
    (folder / "radscore_manifest.json").unlink()
    assert ner_kind(str(folder)) == "ner-iob"


def test_wrong_label_set_is_a_clear_error(tmp_path):
    labels = {0: "O", 1: "B-PER", 2: "I-PER"}
    folder = build_tiny_iob_export(tmp_path / "wrong", id2label=labels)
    (tmp_path / "wrong" / "radscore_manifest.json").unlink()
    with pytest.raises(ValueError, match=r"not a RaTE NER model.*id2label is not the RaTE-NER label set"):
        load_ner(folder)


def test_not_a_model_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no config.json"):
        load_ner(str(tmp_path))
    (tmp_path / "radscore_manifest.json").write_text(json.dumps({"kind": "bleurt", "format_version": 1}))
    with pytest.raises(ValueError, match="expected ner-iob or ner-span"):
        load_ner(str(tmp_path))

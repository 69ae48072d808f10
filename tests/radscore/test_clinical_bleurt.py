"""radscore.ClinicalBLEURT on a tiny random export: order, batching, the length rule, bad input."""

import json

import pytest
import torch

from train.rehearsal.tiny import build_tiny_bleurt_export

import radscore
from radscore.bleurt import BleurtScore, ClinicalBLEURT, encode_pairs, longest_first
from radscore.export import write_manifest

REFS = ["No pleural effusion. Heart size is normal.", "Mild cardiomegaly.",
        "The liver is enlarged with diffuse fatty infiltration. No focal lesion.", "Lungs are clear."]
CANDS = ["No pleural effusion. Heart size is enlarged.", "Severe cardiomegaly.",
         "The liver is normal. No focal lesion.", ""]


@pytest.fixture(scope="module")
def export(tmp_path_factory, tiny_backbone):
    return build_tiny_bleurt_export(tmp_path_factory.mktemp("tiny_bleurt"), tiny_backbone)


def test_longest_first_rule():
    assert longest_first(10, 20, 40) == (10, 20)  # fits: nothing removed
    assert longest_first(5, 100, 40) == (5, 35)   # the short text stays whole
    assert longest_first(100, 5, 40) == (35, 5)
    assert longest_first(100, 90, 40) == (20, 20)  # both long: half each
    assert longest_first(100, 90, 41) == (20, 21)
    with pytest.raises(ValueError, match="leaves no room"):
        longest_first(1, 1, -1)


def test_encode_pairs_puts_the_reference_first_and_flags_truncation(export):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(export)
    long_ref = " ".join(["effusion"] * 200)
    short, cut = encode_pairs(tok, ["No effusion.", long_ref], ["Small effusion.", "No effusion."], 32)
    pieces = tok.convert_ids_to_tokens(short.input_ids)
    assert pieces[0] == "[CLS]" and pieces.count("[SEP]") == 2
    assert pieces[1:pieces.index("[SEP]")] == tok.tokenize("No effusion.")
    assert short.token_type_ids == [0] * (pieces.index("[SEP]") + 1) + [1] * (len(pieces) - pieces.index("[SEP]") - 1)
    assert not short.truncated
    assert cut.truncated and len(cut.input_ids) == 32
    assert (cut.reference_pieces, cut.kept_reference_pieces) == (len(tok.tokenize(long_ref)), 32 - 3 - cut.candidate_pieces)
    assert cut.kept_candidate_pieces == cut.candidate_pieces  # the short candidate is kept whole


def test_scores_keep_input_order_whatever_the_batch_size(export):
    one = ClinicalBLEURT(export, batch_size=1).score(CANDS, REFS, progress=False)
    three = ClinicalBLEURT(export, batch_size=3).score(CANDS, REFS, progress=False)
    assert all(isinstance(s, BleurtScore) for s in one) and len(one) == len(CANDS)
    assert [s.score for s in three] == pytest.approx([s.score for s in one], abs=1e-5)
    # each pair alone gives its own score: nothing depends on the neighbours
    alone = [ClinicalBLEURT(export).compute_score([c], [r]) for c, r in zip(CANDS, REFS)]
    assert [a[0] for a in alone] == pytest.approx([s.score for s in one], abs=1e-5)
    assert not any(s.truncated for s in one)
    assert one[0].to_dict()["kept_candidate_pieces"] == one[0].candidate_pieces


def test_long_pairs_are_scored_on_what_is_kept_and_say_so(export):
    scorer = ClinicalBLEURT(export)
    assert scorer.max_length == 64  # from the manifest
    long_cand = "Small effusion. " * 60
    result = scorer.score([long_cand, CANDS[1]], [REFS[0], REFS[1]], progress=False)
    assert result[0].truncated and not result[1].truncated
    assert result[0].kept_reference_pieces == result[0].reference_pieces
    assert result[0].kept_reference_pieces + result[0].kept_candidate_pieces == 64 - 3
    wider = ClinicalBLEURT(export, max_length=1000)
    assert wider.max_length == 512  # capped by the position table
    assert not wider.score([long_cand], [REFS[0]], progress=False)[0].truncated
    assert scorer.signature()["length_rule"] == "longest_first"


@pytest.mark.parametrize("cands, refs, message", [
    ("No effusion.", ["No effusion."], "candidates must be a sequence of strings .* got a single string"),
    (["a", None], ["b", "c"], r"candidates\[1\] is None"),
    (["a"], ["b", "c"], "candidates has 1 reports but references has 2"),
    ({"a"}, ["b"], r"candidates must be a sequence of strings .* got set"),
])
def test_bad_input_is_a_clear_error(export, cands, refs, message):
    with pytest.raises(ValueError, match=message):
        ClinicalBLEURT(export).score(cands, refs, progress=False)


def test_empty_input_and_loading_rules(export, tmp_path, tiny_backbone):
    assert ClinicalBLEURT(export).score([], [], progress=False) == []
    other = tmp_path / "other"
    other.mkdir()
    (other / "radscore_manifest.json").write_text(json.dumps({"kind": "ner-iob", "format_version": 1}))
    with pytest.raises(ValueError, match="export of kind 'ner-iob', expected bleurt"):
        ClinicalBLEURT(str(other))
    plain = build_tiny_bleurt_export(tmp_path / "plain", tiny_backbone, manifest=False)
    assert ClinicalBLEURT(plain).max_length == 512  # no manifest: the model's own limit
    three = build_tiny_bleurt_export(tmp_path / "three", tiny_backbone, manifest=False, num_labels=3)
    with pytest.raises(ValueError, match="a regressor has one output, this model has 3 labels"):
        ClinicalBLEURT(three)


def test_lazy_export_from_the_package():
    assert radscore.ClinicalBLEURT is ClinicalBLEURT
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        radscore.Nope  # noqa: B018

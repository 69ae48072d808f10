"""``RaTEScore(backend="openvino")`` on tiny random exports: same scores as torch in fp32, IR converted
once and kept next to the export (else in the cache), a new IR for new weights, honest precision."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("openvino")

from radscore import RaTEScore  # noqa: E402
from radscore import openvino_backend as ovb  # noqa: E402
from train.rehearsal.tiny import build_tiny_iob_export, build_tiny_span_export  # noqa: E402

CANDIDATES = ["Small left pleural effusion. No pneumothorax.",
              "Endotracheal tube terminates 4 cm above the carina.\nHeart size is normal.",
              "Mild degenerative changes of the thoracic spine. Lungs are clear without consolidation.",
              "No acute abnormality."]
REFERENCES = ["Moderate right pleural effusion with adjacent atelectasis.",
              "ET tube in satisfactory position. Cardiomegaly.",
              "Lungs are clear. No pleural effusion or pneumothorax.",
              "No acute cardiopulmonary process."]


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RADSCORE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "openvino"


@pytest.fixture(scope="module")
def models(tmp_path_factory, tiny_backbone):
    return {"iob": build_tiny_iob_export(tmp_path_factory.mktemp("ov_iob"), seed=0, head_std=0.3, o_bias=2.5),
            "encoder": tiny_backbone}


@pytest.mark.slow
def test_fp32_scores_equal_torch_and_ir_is_kept_next_to_the_export(models, cache):
    torch_scores = RaTEScore(models["iob"], models["encoder"]).score(CANDIDATES, REFERENCES)
    scorer = RaTEScore(models["iob"], models["encoder"], backend="openvino")
    ov_scores = scorer.score(CANDIDATES, REFERENCES)
    assert any(p.candidate_entities for p in torch_scores)  # the tiny NER tags something
    for a, b in zip(torch_scores, ov_scores):
        assert [e.text for e in a.candidate_entities] == [e.text for e in b.candidate_entities]
        assert b.f1 == pytest.approx(a.f1, abs=1e-5)
    assert scorer.ner.model.converted and scorer.encoder.model.converted
    ner_ir = sorted(Path(models["iob"], "openvino").glob("ner-iob-*.xml"))
    assert len(ner_ir) == 1 and ner_ir[0].with_suffix(".bin").is_file()
    # the encoder folder is no radscore export: its IR goes to the cache
    assert len(list(cache.glob("encoder-*.xml"))) == 1
    assert not Path(models["encoder"], "openvino").exists()
    sig = scorer.signature()
    assert (sig["backend"], sig["precision"], sig["backend_precision"]) == ("openvino", "fp32", "fp32")
    again = RaTEScore(models["iob"], models["encoder"], backend="openvino")
    assert not again.ner.model.converted and not again.encoder.model.converted  # read, not converted
    assert again.compute_score(CANDIDATES, REFERENCES) == pytest.approx([p.f1 for p in ov_scores], abs=1e-7)


def test_new_weights_get_a_new_key(tmp_path):
    from transformers import AutoModelForTokenClassification

    load = lambda seed, name: AutoModelForTokenClassification.from_pretrained(
        build_tiny_iob_export(tmp_path / name, seed=seed))
    key = lambda model: ovb.weights_key(model, "ner-iob", "1.0")
    one, two, one_again = load(1, "a"), load(2, "b"), load(1, "c")
    assert key(one) != key(two)
    assert key(one) == key(one_again)  # same weights in another folder: same IR name
    assert ovb.weights_key(one, "ner-iob", "2.0") != key(one)  # another OpenVINO: converted again


def test_span_export_runs_on_openvino(tmp_path, models, cache):
    span = build_tiny_span_export(tmp_path / "span", seed=0)
    ref = RaTEScore(span, models["encoder"]).score(CANDIDATES, REFERENCES)
    got = RaTEScore(span, models["encoder"], backend="openvino").score(CANDIDATES, REFERENCES)
    assert any(p.candidate_entities for p in ref)
    for a, b in zip(ref, got):
        assert [(e.text, e.type) for e in a.candidate_entities] == [(e.text, e.type) for e in b.candidate_entities]
        assert b.f1 == pytest.approx(a.f1, abs=1e-5)


def test_bf16_says_what_ran(models, cache):
    import openvino as ov

    native = "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scorer = RaTEScore(models["iob"], models["encoder"], backend="openvino", precision="bf16")
    sig = scorer.signature()
    assert sig["precision"] == "bf16"
    if native:
        assert sig["backend_precision"] == "bf16"
    else:  # OpenVINO runs f32 here: warned, and the signature says so
        assert sig["backend_precision"] == "fp32"
        assert any("no native bfloat16" in str(w.message) for w in caught)


def test_bad_backend_and_missing_openvino(models, monkeypatch):
    with pytest.raises(ValueError, match="unknown backend 'onnx'"):
        RaTEScore(models["iob"], models["encoder"], backend="onnx")
    monkeypatch.setitem(sys.modules, "openvino", None)
    with pytest.raises(ImportError, match=r"radscore\[openvino\]"):
        ovb._require_openvino()


def test_ir_folder_rules(tmp_path, models, cache):
    assert ovb.ir_folder(models["iob"]) == Path(models["iob"]) / "openvino"
    assert ovb.ir_folder(models["encoder"]) == cache
    assert ovb.ir_folder("packaged:all-MiniLM-L6-v2") == cache

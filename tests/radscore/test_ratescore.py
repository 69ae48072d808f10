"""radscore.RaTEScore end to end on tiny random exports: alignment, bad input, explain, options."""

import json
import math

import numpy as np
import pytest

from radscore import RaTEScore
from radscore.ratescore import PairScore
from radscore.scoring import AffinityMatrix
from train.rehearsal.tiny import build_tiny_iob_export, build_tiny_span_export

REPORTS = [
    "No pleural effusion or pneumothorax. Heart size is normal.",
    "Small left pleural effusion.\nMild bibasilar atelectasis.",
    "The liver is enlarged with diffuse fatty infiltration. No focal lesion.",
    "Endotracheal tube terminates 4 cm above the carina. Lungs are clear.",
    "Degenerative changes of the lumbar spine. No fracture.",
]


@pytest.fixture(scope="module")
def tiny_iob(tmp_path_factory):
    return build_tiny_iob_export(tmp_path_factory.mktemp("tiny_iob"))


@pytest.fixture(scope="module")
def make(tiny_iob, tiny_backbone):
    """A scorer with the tiny NER export and the tiny random encoder (fast), options as given."""
    return lambda **kw: RaTEScore(tiny_iob, **{"encoder": tiny_backbone, **kw})


@pytest.fixture(scope="module")
def scorer(make):
    return make(batch_size=4)


def _pairs():
    return REPORTS, REPORTS[1:] + REPORTS[:1]


def test_compute_score_is_f1_of_score(scorer):
    cands, refs = _pairs()
    scores = scorer.compute_score(cands, refs)
    pairs = scorer.score(cands, refs)
    assert len(scores) == len(cands) and scores == [p.f1 for p in pairs]
    for p in pairs:
        assert isinstance(p, PairScore) and all(math.isfinite(x) for x in (p.precision, p.recall, p.f1))
        assert p.candidate_entities and p.reference_entities  # the random model tags plenty


@pytest.mark.parametrize("empty", ["", "   \n\t ", "ok", "\n.\n"])
def test_an_empty_report_scores_empty_score_in_its_own_place(scorer, empty):
    cands, refs = _pairs()
    alone = scorer.compute_score(cands, refs)
    cands2 = cands[:2] + [empty] + cands[2:]
    refs2 = refs[:2] + [REPORTS[0]] + refs[2:]
    got = scorer.compute_score(cands2, refs2)
    assert len(got) == len(cands2)
    assert got[2] == 0.5
    assert got[:2] + got[3:] == pytest.approx(alone, abs=1e-9)  # no later score shifts
    swapped = scorer.compute_score(refs2, cands2)  # the empty report as the reference
    assert swapped[2] == 0.5 and len(swapped) == len(cands2)


def test_empty_score_is_configurable(make):
    s = make(empty_score=0.0)
    assert s.compute_score(["", REPORTS[0]], [REPORTS[0], REPORTS[0]])[0] == 0.0


def test_chunking_does_not_change_scores(make, scorer):
    cands, refs = _pairs()
    small = make(chunk_size=2, batch_size=2)
    assert small.compute_score(cands, refs) == pytest.approx(scorer.compute_score(cands, refs), abs=1e-6)


@pytest.mark.parametrize("cands, refs, message", [
    ("a report", ["a report"], r"candidate_list must be a sequence of strings .* got a single string"),
    ({"a": "b"}, ["a"], r"candidate_list must be a sequence of strings .* got dict"),
    (["a", None], ["a", "b"], r"candidate_list\[1\] is None"),
    (["a", "b"], ["a", 3], r"reference_list\[1\] is a int"),
    (["a", "b"], ["a"], r"candidate_list has 2 reports but reference_list has 1"),
])
def test_bad_input_names_the_index_and_the_problem(scorer, cands, refs, message):
    with pytest.raises(ValueError, match=message):
        scorer.compute_score(cands, refs)


def test_bad_input_in_score_too(scorer):
    with pytest.raises(ValueError, match=r"references\[0\] is a bytes"):
        scorer.score(["a"], [b"a"])


def test_long_unicode_and_control_characters_score_normally(scorer):
    long_report = " ".join(REPORTS * 200)[:50_000]
    one_sentence = ("small nodule in the left lower lobe " * 1500)[:50_000]  # no sentence end at all
    odd = ["Épanchement pleural gauche. Ödem. 肺炎. \u2028Lungs\u00a0clear.", "No\x00 effusion\x07.\x1b[0m Ok.",
           "\ufeffHeart size normal.\r\nNo pneumothorax.\r\n"]
    cands = [long_report, one_sentence, *odd]
    got = scorer.score(cands, [REPORTS[0]] * len(cands))
    assert len(got) == len(cands)
    for p in got:
        assert math.isfinite(p.f1) and -1.0 <= p.f1 <= 1.0
    assert len(got[1].candidate_entities) > 50  # the over-long sentence was read to its end


def test_explain_records_add_up_to_the_scores(scorer):
    cands, refs = _pairs()
    for p in scorer.score(cands, refs, explain=True):
        for side, value in (("candidate", p.precision), ("reference", p.recall)):
            records = p.matches[side]
            assert len(records) == len(p.candidate_entities if side == "candidate" else p.reference_entities)
            w = np.array([r["weight"] for r in records])
            terms = np.array([r["weight"] * r["cosine"] * r["penalty"] for r in records])
            assert terms.sum() / w.sum() == pytest.approx(value, abs=1e-9)
            for r in records:
                assert set(r) >= {"entity", "matched_entity", "type", "matched_type", "cosine", "weight",
                                  "penalised", "penalty"}
                assert (r["penalty"] != 1.0) == r["penalised"] or scorer.matrix.penalty == 1.0
        json.dumps(p.to_dict())  # JSON-ready


def test_explain_of_an_empty_side_is_empty(scorer):
    p = scorer.score([""], [REPORTS[0]], explain=True)[0]
    assert p.f1 == 0.5 and p.matches == {"candidate": [], "reference": []}


def test_matrix_and_penalty_options(make, tmp_path):
    cands, refs = _pairs()
    short = AffinityMatrix.builtin("short")
    short.save(tmp_path / "short.json")
    by_name = make(affinity_matrix="short").compute_score(cands, refs)
    by_path = make(affinity_matrix=str(tmp_path / "short.json")).compute_score(cands, refs)
    by_dict = make(affinity_matrix=short.to_official()).compute_score(cands, refs)
    assert by_name == by_path == by_dict
    uniform = AffinityMatrix.uniform(1.0, penalty=0.5)
    official = make(affinity_matrix=uniform, penalty="official").score(cands, refs, explain=True)
    paper = make(affinity_matrix=uniform, penalty="paper").score(cands, refs, explain=True)
    for o, p in zip(official, paper):  # the paper penalises a superset of pairs: never scores higher
        assert p.precision <= o.precision + 1e-12 and p.recall <= o.recall + 1e-12
        for r in p.matches["candidate"]:
            assert r["penalised"] == (r["type"] != r["matched_type"])
    with pytest.raises(ValueError, match="unknown penalty mode"):
        make(penalty="strict")


def test_pooling_and_splitter_options(make):
    cands, refs = _pairs()
    cls_scores = make(pooling="cls").compute_score(cands, refs)
    mean_scores = make(pooling="mean").compute_score(cands, refs)
    assert cls_scores != mean_scores
    with pytest.raises(ValueError, match="unknown pooling"):
        make(pooling="max")
    seen = []
    one_sentence = make(splitter=lambda t: seen.append(t) or [t])
    one_sentence.compute_score(cands[:2], refs[:2])
    assert set(seen) == set(cands[:2] + refs[:2])  # each distinct report split once
    with pytest.raises(ValueError, match="unknown splitter"):
        make(splitter="nltk")


def test_pyrush_without_medspacy_says_what_to_do(make):
    try:
        import medspacy  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="needs medspacy"):
            make(splitter="pyrush")
    else:
        pytest.skip("medspacy is installed here")


def test_span_export_scores(tmp_path):
    folder = build_tiny_span_export(tmp_path / "span")
    s = RaTEScore(folder)  # the default encoder: the packaged all-MiniLM-L6-v2
    assert s.ner.kind == "ner-span"
    got = s.score(REPORTS, REPORTS)
    assert len(got) == len(REPORTS) and all(math.isfinite(p.f1) for p in got)


def test_device_and_signature(scorer):
    import torch

    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert scorer.ner.device.type == expected and scorer.encoder.device.type == expected
    sig = scorer.signature()
    assert sig["ner_kind"] == "ner-iob" and sig["penalty"] == "official" and sig["splitter"] == "rush"
    assert sig["splitter_rules"].startswith(("medspacy ", "file "))
    json.dumps(sig)


def test_splitter_names(make):
    """"rush" is the default with any NER; "builtin" is the old name of "radiology" and is recorded
    under the new one; "radiology" splits differently from the released package."""
    assert make().splitter_name == "rush"
    old, new = make(splitter="builtin"), make(splitter="radiology")
    assert old.splitter_name == new.splitter_name == "radiology" and old.signature()["splitter_rules"] is None
    text = "Lungs clear\nheart normal. Stable."
    assert make().sentences(text) == ["Lungs clear\nheart normal.", "Stable."]  # as the released package
    assert new.sentences(text) == ["Lungs clear", "heart normal.", "Stable."]


def test_bf16_precision_runs_both_models_in_bfloat16_and_stays_close(make):
    import numpy as np
    import torch

    fp32, bf16 = make(), make(precision="bf16")
    seen = []
    for model in (bf16.ner.model, bf16.encoder.model):
        linear = next(m for m in model.modules() if isinstance(m, torch.nn.Linear))
        linear.register_forward_hook(lambda mod, inp, out: seen.append(out.dtype))
    cands, refs = _pairs()
    a, b = np.array(fp32.compute_score(cands, refs)), np.array(bf16.compute_score(cands, refs))
    assert seen.count(torch.bfloat16) == len(seen) and len(seen) >= 2  # NER and encoder passes
    assert np.all((b >= 0) & (b <= 1)) and np.abs(a - b).max() < 0.1
    assert bf16.signature()["precision"] == "bf16" and fp32.signature()["precision"] == "fp32"
    with pytest.raises(ValueError, match="unknown precision 'fp16'"):
        make(precision="fp16")


def test_caches_and_with_matrix_rescore_without_running_the_models(make, monkeypatch):
    """cache_size keeps sentence -> entities and entity text -> vector across calls; with_matrix
    shares them, so rescoring seen texts with another W and p runs no model, with the same scores
    as a fresh scorer built with that matrix."""
    cands, refs = _pairs()
    plain = np.array(make(batch_size=4).compute_score(cands, refs))
    cached = make(batch_size=4, cache_size=1000)
    assert cached.cache_info()["sentences"]["entries"] == 0
    assert np.allclose(cached.compute_score(cands, refs), plain, atol=1e-6)
    first = cached.cache_info()
    assert first["sentences"]["entries"] > 0 and first["entity_vectors"]["entries"] > 0

    calls = {"ner": 0, "encoder": 0}
    for name, obj in (("ner", cached.ner), ("encoder", cached.encoder)):
        original = type(obj).__call__
        monkeypatch.setattr(type(obj), "__call__",
                            lambda self, *a, _o=original, _n=name, **k: (calls.__setitem__(_n, calls[_n] + 1),
                                                                          _o(self, *a, **k))[1])
    short = cached.with_matrix("short", penalty="paper")
    got = np.array(short.compute_score(cands, refs))
    assert calls == {"ner": 0, "encoder": 0}, "with_matrix on seen texts ran a model"
    assert cached.matrix == AffinityMatrix.builtin("long") and cached.penalty_mode == "official"
    monkeypatch.undo()
    fresh = np.array(make(batch_size=4, affinity_matrix="short", penalty="paper").compute_score(cands, refs))
    assert np.allclose(got, fresh, atol=1e-6) and not np.allclose(got, plain)
    assert short.cache_info()["sentences"]["hits"] > first["sentences"]["hits"]


def test_the_cache_is_bounded(make):
    scorer = make(batch_size=4, cache_size=3)
    scorer.compute_score(REPORTS, REPORTS[::-1])
    info = scorer.cache_info()
    assert info["sentences"]["entries"] <= 3 and info["entity_vectors"]["entries"] <= 3
    with pytest.raises(ValueError, match="cache_size"):
        make(cache_size=-1)
    assert make().cache_info() is None

"""The precomputed tables score exactly as radscore.RaTEScore, in both penalty modes, and cache."""

import numpy as np
import pytest

from radscore import RaTEScore
from radscore.scoring import AffinityMatrix, rate_score
from tests.train.tune_fixtures import tiny_ner
from train.tune.precompute import (N_TYPE_PAIRS, EmbeddingCache, PairTables, ScorerSettings, build_tables,
                                   penalised_type_pairs, precompute)

REPORTS = [
    "No pleural effusion or pneumothorax. Heart size is normal.",
    "Small left pleural effusion.\nMild bibasilar atelectasis.",
    "The liver is enlarged with diffuse fatty infiltration. No focal lesion.",
    "Endotracheal tube terminates 4 cm above the carina. Lungs are clear.",
    "Degenerative changes of the lumbar spine. No fracture.",
    "Effusion. Effusion. No effusion. Pneumonia in the left lower lobe.",
]
EMPTY = ["", "ok", "   \n "]  # no kept sentence: no entity, so empty_score


def _pairs():
    refs = REPORTS + [REPORTS[0], EMPTY[0], REPORTS[2], EMPTY[1], REPORTS[5]]
    cands = REPORTS[1:] + REPORTS[:1] + [EMPTY[2], REPORTS[3], REPORTS[2], EMPTY[1], REPORTS[5]]
    return refs, cands


@pytest.fixture(scope="module")
def ner(tmp_path_factory):
    return tiny_ner(tmp_path_factory.mktemp("tiny_ner"))


@pytest.fixture(scope="module")
def settings(ner, tiny_backbone):
    return ScorerSettings(ner=ner, encoder=tiny_backbone, batch_size=8)


@pytest.fixture(scope="module")
def computed(settings, tmp_path_factory):
    refs, cands = _pairs()
    cache = tmp_path_factory.mktemp("cache")
    tables, info = precompute(refs, cands, settings, cache, progress=False)
    return tables, info, cache


def _random_matrices(k, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(0, 1, (5, 5)), float(rng.uniform(0, 1))) for _ in range(k)]


@pytest.mark.parametrize("mode", ["official", "paper"])
def test_tables_equal_ratescore_in_both_penalty_modes(computed, ner, tiny_backbone, mode):
    tables, info, _ = computed
    tables = tables.with_penalty_mode(mode)
    refs, cands = _pairs()
    assert info["empty_pairs"] >= 3 and info["entities_scored"] > 20  # both kinds of pair are covered
    for weights, penalty in _random_matrices(3) + [(np.ones((5, 5)), 1.0), (AffinityMatrix.builtin("long").as_array())]:
        matrix = AffinityMatrix(weights, penalty)
        scorer = RaTEScore(ner, encoder=tiny_backbone, affinity_matrix=matrix, penalty=mode, batch_size=8)
        direct = scorer.score(cands, refs)
        prec, rec = tables.directions(weights, penalty)
        np.testing.assert_allclose(tables.scores(weights, penalty), [p.f1 for p in direct], atol=1e-6, rtol=0)
        np.testing.assert_allclose(prec, [p.precision for p in direct], atol=1e-6, rtol=0)
        np.testing.assert_allclose(rec, [p.recall for p in direct], atol=1e-6, rtol=0)
        assert [s for s, p in zip(tables.scores(weights, penalty), direct) if not p.candidate_entities
                or not p.reference_entities] == [0.5] * int(tables.empty.sum())


def test_the_modes_differ_where_the_paper_penalises_more(computed):
    tables, _, _ = computed
    weights, penalty = _random_matrices(1, seed=3)[0]
    official = tables.with_penalty_mode("official").scores(weights, 0.1)
    paper = tables.with_penalty_mode("paper").scores(weights, 0.1)
    assert np.all(paper <= official + 1e-12) and np.any(paper < official - 1e-6)
    assert penalised_type_pairs("official").sum() == 8 and penalised_type_pairs("paper").sum() == 20


def test_batched_scores_and_empty_score_and_zero_weights(computed, settings, tmp_path):
    tables, _, cache = computed
    mats = _random_matrices(4, seed=1)
    stacked = tables.scores(np.stack([w for w, _ in mats]), np.array([p for _, p in mats]))
    for row, (w, p) in zip(stacked, mats):
        np.testing.assert_allclose(row, tables.scores(w, p), atol=1e-12, rtol=0)
    zero = tables.scores(np.zeros((5, 5)), 0.5)  # every weight 0: S = 0 both ways, f1 = 0
    assert set(zero[~tables.empty]) == {0.0} and set(zero[tables.empty]) == {0.5}
    refs, cands = _pairs()
    other = ScorerSettings(**{**settings.__dict__, "empty_score": 0.0})
    zero_empty, _ = precompute(refs, cands, other, cache, progress=False)
    assert set(zero_empty.scores(*mats[0])[zero_empty.empty]) == {0.0}


def test_second_run_reads_the_cache_and_loads_no_model(computed, settings, monkeypatch):
    tables, info, cache = computed
    assert info["reports_tagged"] > 0 and info["entity_texts_encoded"] > 0

    def no_models(self):
        raise AssertionError("a model was loaded although everything was cached")

    monkeypatch.setattr(ScorerSettings, "scorer", no_models)
    refs, cands = _pairs()
    again, info2 = precompute(refs, cands, settings, cache, progress=False)
    assert info2["reports_tagged"] == 0 and info2["entity_texts_encoded"] == 0
    np.testing.assert_array_equal(again.cos_sum, tables.cos_sum)
    np.testing.assert_array_equal(again.count, tables.count)


def test_another_model_gets_another_cache_key(computed, settings, tmp_path):
    _, info, cache = computed
    other_ner = tiny_ner(tmp_path / "other")  # same architecture, but we change a weight file byte
    weights = tmp_path / "other" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    refs, cands = _pairs()
    _, info2 = precompute(refs[:2], cands[:2], ScorerSettings(**{**settings.__dict__, "ner": other_ner}), cache,
                          progress=False)
    assert info2["entity_cache"] != info["entity_cache"] and info2["reports_tagged"] > 0
    assert info2["embedding_cache"] == info["embedding_cache"]  # same encoder: shared


def test_subset_and_save_load_round_trip(computed, tmp_path):
    tables, _, _ = computed
    w, p = _random_matrices(1, seed=2)[0]
    idx = [4, 0, 7, 2]
    np.testing.assert_array_equal(tables.subset(idx).scores(w, p), tables.scores(w, p)[idx])
    sub = tables.subset(idx)
    assert np.allclose(np.bincount(sub.entity_segment * N_TYPE_PAIRS + sub.entity_type_pair,
                                   weights=sub.entity_cosine, minlength=sub.cos_sum.size), sub.cos_sum.ravel())
    tables.save(tmp_path / "t.npz")
    loaded = PairTables.load(tmp_path / "t.npz")
    np.testing.assert_array_equal(loaded.scores(w, p), tables.scores(w, p))
    assert loaded.penalty_mode == tables.penalty_mode


def test_build_tables_matches_rate_score_and_the_first_copy_wins():
    rng = np.random.default_rng(0)
    texts = ["effusion", "pneumonia", "lobe", "atelectasis"]
    table = rng.normal(size=(len(texts), 8)).astype(np.float32)
    index = {t: k for k, t in enumerate(texts)}
    cand = [("effusion", "NON-ABNORMALITY"), ("lobe", "ANATOMY"), ("pneumonia", "DISEASE")]
    ref = [("effusion", "ABNORMALITY"), ("atelectasis", "ABNORMALITY"), ("lobe", "ANATOMY")]
    copies = [("effusion", "ABNORMALITY"), ("effusion", "NON-ABNORMALITY"), ("lobe", "ANATOMY")]
    tables = build_tables([(cand, ref), ([], ref), (cand, copies)], index, table, "official", 0.5)
    matrix = AffinityMatrix(rng.uniform(size=(5, 5)), 0.3)
    vec = lambda side: table[[index[t] for t, _ in side]]
    expected = rate_score(vec(ref), [t for _, t in ref], vec(cand), [t for _, t in cand], matrix, "official")
    w, p = matrix.as_array()
    got = tables.scores(w, p)
    assert got[0] == pytest.approx(expected[2], abs=1e-12) and got[1] == 0.5
    prec, rec = tables.directions(w, p)
    assert (prec[0], rec[0]) == pytest.approx(expected[:2], abs=1e-12)
    # pair 2: "effusion" (NON-ABNORMALITY) ties between the two copies; the first (ABNORMALITY) wins
    first = np.flatnonzero(tables.entity_segment == 4)[0]  # pair 2, precision, first candidate entity
    assert tables.entity_type_pair[first] == 5 * 1 + 0 and tables.entity_cosine[first] == pytest.approx(1.0)


def test_embedding_cache_refuses_another_identity(tmp_path):
    cache = EmbeddingCache(tmp_path / "e.npz", {"encoder": "a"})
    cache.add({"x": 0}, np.ones((1, 4), np.float32))
    cache.save()
    assert EmbeddingCache(tmp_path / "e.npz", {"encoder": "a"}).index == {"x": 0}
    with pytest.raises(ValueError, match="another encoder"):
        EmbeddingCache(tmp_path / "e.npz", {"encoder": "b"})

"""RaTEScore arithmetic against values computed by hand (the arithmetic is in the comments)."""

import json
import math

import numpy as np
import pytest
import torch

from radscore.labels import ENTITY_TYPES
from radscore.scoring import (
    OFFICIAL_PENALISED_PAIRS,
    AffinityMatrix,
    best_matches,
    cosine_matrix,
    directional_score,
    explain_direction,
    f1,
    penalty_mask,
    rate_score,
    resolve_matrix,
    weighted_score,
)

# The released matrices exactly as SPEC §1.6 prints them.
SPEC_MATRICES = json.loads(
    '{"long": {"abnormality_abnormality": 0.4276119164393705, '
    '"abnormality_anatomy": 0.6240929990607657, "abnormality_disease": 0.0034478181112993847, '
    '"abnormality_non-abnormality": 0.5431049700217344, '
    '"abnormality_non-disease": 0.27005425386213877, "anatomy_abnormality": 0.7487824274337533, '
    '"anatomy_anatomy": 0.2856134859160784, "anatomy_disease": 0.4592143222158069, '
    '"anatomy_non-abnormality": 0.02097055139911715, '
    '"anatomy_non-disease": 0.00013736314126696204, "disease_abnormality": 0.8396510075734789, '
    '"disease_anatomy": 0.9950209388542061, "disease_disease": 0.8460555030578727, '
    '"disease_non-abnormality": 0.9820689020512646, "disease_non-disease": 0.3789136708096537, '
    '"non-abnormality_abnormality": 0.16546764653692908, '
    '"non-abnormality_anatomy": 0.018670610691852826, '
    '"non-abnormality_disease": 0.719397354576018, '
    '"non-abnormality_non-abnormality": 0.0009357166071730684, '
    '"non-abnormality_non-disease": 0.0927333564267591, '
    '"non-disease_abnormality": 0.7759420231214385, "non-disease_anatomy": 0.1839139293714062, '
    '"non-disease_disease": 0.10073046076318157, '
    '"non-disease_non-abnormality": 0.03860183811876373, '
    '"non-disease_non-disease": 0.34065681486566446, "neg_weight": 0.8716553966489615}, '
    ' "short": {"abnormality_abnormality": 0.4070293318365468, '
    '"abnormality_anatomy": 0.6952639610605605, "abnormality_disease": 0.28342529466226446, '
    '"abnormality_non-abnormality": 0.9479148658006686, '
    '"abnormality_non-disease": 0.23875064111146294, "anatomy_abnormality": 0.5829759950441763, '
    '"anatomy_anatomy": 0.7709590751917746, "anatomy_disease": 0.0006059634829551632, '
    '"anatomy_non-abnormality": 0.794672584951181, "anatomy_non-disease": 0.27982942400798977, '
    '"disease_abnormality": 0.8840397619834857, "disease_anatomy": 0.9637659445696822, '
    '"disease_disease": 0.19018958438059513, "disease_non-abnormality": 0.6962283914800402, '
    '"disease_non-disease": 0.943727057946997, "non-abnormality_abnormality": 0.1712744286898638, '
    '"non-abnormality_anatomy": 0.4485149671497294, '
    '"non-abnormality_disease": 0.00045065329822896076, '
    '"non-abnormality_non-abnormality": 0.0007887930317199857, '
    '"non-abnormality_non-disease": 0.8555432840895761, '
    '"non-disease_abnormality": 0.9555801066212176, "non-disease_anatomy": 0.13122106162635216, '
    '"non-disease_disease": 0.6072996585919443, '
    '"non-disease_non-abnormality": 0.05650711141169969, '
    '"non-disease_non-disease": 0.3214769399791204, "neg_weight": 0.3611577852354489}}')


def simple_matrix() -> AffinityMatrix:
    """W = 1 everywhere except W(NON-DISEASE, DISEASE) = 0.5 and W(ANATOMY, ANATOMY) = 2; p = 0.5."""
    data = {f"{a.lower()}_{b.lower()}": 1.0 for a in ENTITY_TYPES for b in ENTITY_TYPES}
    data.update({"non-disease_disease": 0.5, "anatomy_anatomy": 2.0, "neg_weight": 0.5})
    return AffinityMatrix.from_official(data)


# Reference: r0 = (1, 0) DISEASE, r1 = (0, 1) ANATOMY.
# Candidate: c0 = (1, 0) NON-DISEASE, c1 = (3, 4) ANATOMY, c2 = (-3, -4) ABNORMALITY.
# cos(candidate, reference):  c0: [1, 0]   c1: [0.6, 0.8]   c2: [-0.6, -0.8]
REF = np.array([[1.0, 0.0], [0.0, 1.0]])
REF_T = ["DISEASE", "ANATOMY"]
CAND = np.array([[1.0, 0.0], [3.0, 4.0], [-3.0, -4.0]])
CAND_T = ["NON-DISEASE", "ANATOMY", "ABNORMALITY"]
# Precision (candidate entities, each matched into the reference):
#   c0 -> r0, cos 1,    W(NON-DISEASE, DISEASE) = 0.5, penalised in both modes: 0.5 * 1 * 0.5 = 0.25
#   c1 -> r1, cos 0.8,  W(ANATOMY, ANATOMY) = 2, never penalised:               2 * 0.8     = 1.6
#   c2 -> r0, cos -0.6 (best of -0.6 and -0.8), W(ABNORMALITY, DISEASE) = 1:
#        official: pair not penalised -> -0.6;   paper: types differ -> -0.6 * 0.5 = -0.3
#   sum W = 0.5 + 2 + 1 = 3.5 (the penalty is not in the denominator)
#   official P = (0.25 + 1.6 - 0.6) / 3.5 = 1.25 / 3.5 = 5/14;  paper P = 1.55 / 3.5 = 31/70
# Recall (reference entities, each matched into the candidate):
#   r0 -> c0 (cos 1 > 0.6 > -0.6), W(DISEASE, NON-DISEASE) = 1, penalised in both: 1 * 1 * 0.5 = 0.5
#   r1 -> c1 (cos 0.8 > 0 > -0.8), W(ANATOMY, ANATOMY) = 2:                         2 * 0.8    = 1.6
#   R = 2.1 / 3 = 7/10 in both modes
# F1 official = 2 * 5/14 * 7/10 / (5/14 + 7/10) = 0.5 / (74/70) = 35/74
# F1 paper    = 2 * 31/70 * 7/10 / (31/70 + 7/10) = 0.62 / (80/70) = 0.5425


def test_cosine_matrix_by_hand():
    expected = [[1.0, 0.0], [0.6, 0.8], [-0.6, -0.8]]
    np.testing.assert_allclose(cosine_matrix(CAND, REF), expected, atol=1e-15)
    # a zero vector has cosine 0 with everything (norms are floored at 1e-12, as torch does)
    assert cosine_matrix([[0.0, 0.0]], [[1.0, 0.0]]).tolist() == [[0.0]]


def test_best_matches_ignore_types_and_take_the_first_on_a_tie():
    idx, val = best_matches(np.array([[0.5, 0.9, 0.9], [-0.6, -0.8, -0.7]]))
    assert idx.tolist() == [1, 0] and val.tolist() == [0.9, -0.6]
    with pytest.raises(ValueError, match="no entity"):
        best_matches(np.zeros((2, 0)))


def test_rate_score_official_by_hand():
    p, r, f = rate_score(REF, REF_T, CAND, CAND_T, simple_matrix(), penalty="official")
    assert p == pytest.approx(5 / 14, abs=1e-12)
    assert r == pytest.approx(7 / 10, abs=1e-12)
    assert f == pytest.approx(35 / 74, abs=1e-12)


def test_rate_score_paper_by_hand():
    p, r, f = rate_score(REF, REF_T, CAND, CAND_T, simple_matrix(), penalty="paper")
    assert p == pytest.approx(31 / 70, abs=1e-12)
    assert r == pytest.approx(7 / 10, abs=1e-12)
    assert f == pytest.approx(0.5425, abs=1e-12)


def test_directional_score_matches_rate_score_sides():
    m = simple_matrix()
    assert directional_score(CAND, CAND_T, REF, REF_T, m) == pytest.approx(5 / 14, abs=1e-12)
    assert directional_score(REF, REF_T, CAND, CAND_T, m) == pytest.approx(7 / 10, abs=1e-12)


def test_penalty_modes_differ_on_a_pair():
    # (ABNORMALITY, DISEASE): types differ, so the paper penalises it; the released code does not.
    scored, matched = ["ABNORMALITY", "NON-DISEASE", "ANATOMY"], ["DISEASE", "DISEASE", "ANATOMY"]
    assert penalty_mask(scored, matched, "official").tolist() == [False, True, False]
    assert penalty_mask(scored, matched, "paper").tolist() == [True, True, False]


def test_official_pairs_are_a_strict_subset_of_the_paper_rule():
    # Every officially penalised pair has two different types, so no pair is penalised in official
    # mode and spared in paper mode; the other way round there are 20 - 8 = 12 pairs.
    pairs = [(a, b) for a in ENTITY_TYPES for b in ENTITY_TYPES]
    s, m = [a for a, _ in pairs], [b for _, b in pairs]
    official, paper = penalty_mask(s, m, "official"), penalty_mask(s, m, "paper")
    assert official.sum() == 8 and paper.sum() == 20
    assert not np.any(official & ~paper)
    assert {pairs[k] for k in np.flatnonzero(official)} == OFFICIAL_PENALISED_PAIRS
    assert ("NON-DISEASE", "NON-ABNORMALITY") not in OFFICIAL_PENALISED_PAIRS
    assert ("DISEASE", "ABNORMALITY") not in OFFICIAL_PENALISED_PAIRS
    with pytest.raises(ValueError, match="penalty mode"):
        penalty_mask(s, m, "always")


def test_weight_key_is_scored_then_matched_with_the_long_matrix():
    # Reference r0 = (1, 0) DISEASE; candidate c0 = (1, 0) ANATOMY, c1 = (0, 1) ABNORMALITY.
    # P: c0 -> r0 cos 1, W(ANATOMY, DISEASE) = a = 0.4592143222158069;
    #    c1 -> r0 cos 0, W(ABNORMALITY, DISEASE) = b = 0.0034478181112993847; P = a / (a + b).
    #    (Swapping the key would use W(DISEASE, ANATOMY) = 0.995 and W(DISEASE, ABNORMALITY) = 0.840.)
    # R: r0 -> c0 cos 1, W(DISEASE, ANATOMY), not penalised: R = 1.  F1 = 2P / (P + 1).
    a, b = 0.4592143222158069, 0.0034478181112993847
    p, r, f = rate_score([[1.0, 0.0]], ["DISEASE"], [[1.0, 0.0], [0.0, 1.0]], ["ANATOMY", "ABNORMALITY"], "long")
    assert p == pytest.approx(a / (a + b), abs=1e-12)
    assert r == pytest.approx(1.0, abs=1e-12)
    assert f == pytest.approx(2 * p / (p + 1), abs=1e-12)


def test_single_negated_pair_scores_p_times_cosine():
    # One entity a side: W cancels, so P = R = F1 = p * cos = 0.8716553966489615 / sqrt(2).
    expected = 0.8716553966489615 / math.sqrt(2)
    for mode in ("official", "paper"):
        got = rate_score([[1.0, 0.0]], ["DISEASE"], [[1.0, 1.0]], ["NON-DISEASE"], "long", penalty=mode)
        assert got == pytest.approx((expected,) * 3, abs=1e-12)


def test_negative_cosine_is_not_clipped():
    # ref (1, 0) ABNORMALITY vs cand (-1, 0) NON-ABNORMALITY, uniform W = 1, p = 0.5:
    # cos = -1, penalised: P = R = -1 * 0.5 = -0.5; F1 = 2 * 0.25 / -1 = -0.5.
    m = AffinityMatrix.uniform(1.0, 0.5)
    got = rate_score([[1.0, 0.0]], ["ABNORMALITY"], [[-1.0, 0.0]], ["NON-ABNORMALITY"], m)
    assert got == pytest.approx((-0.5, -0.5, -0.5), abs=1e-12)


def test_penalty_is_not_in_the_denominator():
    # (1 * 1 * 0.5 + 1 * 1 * 1) / (1 + 1) = 0.75, not 1.5 / 1.5
    assert weighted_score([1.0, 1.0], [1.0, 1.0], [True, False], 0.5) == 0.75


def test_zero_total_weight_scores_zero():
    m = AffinityMatrix.from_array(np.zeros((5, 5)), 0.5)
    assert rate_score(REF, REF_T, CAND, CAND_T, m) == (0.0, 0.0, 0.0)
    assert weighted_score([], [], [], 0.5) == 0.0


@pytest.mark.parametrize("empty", [np.zeros((0, 2)), torch.empty(0, 2), []])
def test_empty_side_gives_the_empty_score(empty):
    assert rate_score(empty, [], CAND, CAND_T, "long") == (0.5, 0.5, 0.5)
    assert rate_score(REF, REF_T, empty, [], "long") == (0.5, 0.5, 0.5)
    assert rate_score(empty, [], empty, [], "long", empty_score=0.0) == (0.0, 0.0, 0.0)


def test_f1_arithmetic():
    assert f1(0.0, 0.0) == 0.0
    assert f1(0.5, 0.25) == pytest.approx(1 / 3, abs=1e-15)  # 2 * 0.125 / 0.75
    assert f1(0.3, -0.3) == 0.0  # P + R == 0 although neither is 0, as released
    # The released code names the directions the other way round and computes 2*R*P/(R+P):
    # the same bits as ours for any values, so its F1 is reproduced exactly.
    rng = np.random.default_rng(0)
    for p, r in rng.uniform(-1, 1, size=(1000, 2)).tolist():
        assert f1(p, r) == f1(r, p) == 2 * r * p / (r + p)


def test_torch_and_numpy_inputs_agree():
    ref32, cand32 = torch.tensor(REF, dtype=torch.float32), torch.tensor(CAND, dtype=torch.float32)
    assert rate_score(ref32, REF_T, cand32, CAND_T, "short") == rate_score(REF, REF_T, CAND, CAND_T, "short")


def test_explain_direction_records():
    rows = explain_direction(CAND, CAND_T, REF, REF_T, simple_matrix(), penalty="official")
    assert [(d["index"], d["matched_index"], d["type"], d["matched_type"], d["weight"], d["penalised"])
            for d in rows] == [
        (0, 0, "NON-DISEASE", "DISEASE", 0.5, True),
        (1, 1, "ANATOMY", "ANATOMY", 2.0, False),
        (2, 0, "ABNORMALITY", "DISEASE", 1.0, False),
    ]
    assert [d["cosine"] for d in rows] == pytest.approx([1.0, 0.8, -0.6], abs=1e-15)
    json.dumps(rows)  # plain Python values only
    assert explain_direction(CAND, CAND_T, REF, REF_T, simple_matrix(), penalty="paper")[2]["penalised"]


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="2 embeddings but 1 types"):
        rate_score(REF, ["DISEASE"], CAND, CAND_T, "long")
    with pytest.raises(ValueError, match="unknown entity type"):
        rate_score(REF, ["DISEASE", "anatomy"], CAND, CAND_T, "long")
    with pytest.raises(ValueError, match="penalty mode"):
        rate_score(REF, REF_T, CAND, CAND_T, "long", penalty="sometimes")
    with pytest.raises(ValueError, match="embedding sizes differ"):
        rate_score(REF, REF_T, np.ones((3, 4)), CAND_T, "long")


# ---- the affinity matrix ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["long", "short"])
def test_builtin_matrices_equal_spec(name):
    official = AffinityMatrix.builtin(name).to_official()
    assert official == SPEC_MATRICES[name]
    assert list(official) == list(SPEC_MATRICES[name])  # same key order as the released files


@pytest.mark.parametrize("name", ["long", "short"])
def test_official_json_round_trip(tmp_path, name):
    m = AffinityMatrix.builtin(name)
    path = tmp_path / f"{name}.json"
    m.save(path)
    assert json.loads(path.read_text()) == SPEC_MATRICES[name]
    loaded = AffinityMatrix.load(path)
    assert loaded == m and loaded.to_official() == SPEC_MATRICES[name]
    w, p = m.as_array()
    assert AffinityMatrix.from_array(w, p) == m
    assert AffinityMatrix.from_official(m.to_official()) == m


def test_array_layout_and_copy():
    w, p = AffinityMatrix.builtin("long").as_array()
    k = {t: i for i, t in enumerate(ENTITY_TYPES)}
    assert w[k["ANATOMY"], k["DISEASE"]] == 0.4592143222158069
    assert w[k["DISEASE"], k["ANATOMY"]] == 0.9950209388542061
    assert p == 0.8716553966489615
    w[:] = 0  # a copy: the matrix is unchanged
    assert AffinityMatrix.builtin("long").weight("ANATOMY", "DISEASE") == 0.4592143222158069
    u = AffinityMatrix.uniform(0.3, 0.9)
    assert u.as_array()[0].tolist() == [[0.3] * 5] * 5 and u.penalty == 0.9


def test_resolve_matrix(tmp_path):
    long = AffinityMatrix.builtin("long")
    path = tmp_path / "m.json"
    long.save(path)
    for spec in ["long", "LONG", str(path), path, long.to_official(), long]:
        assert resolve_matrix(spec) == long
    assert resolve_matrix("short") == AffinityMatrix.builtin("short")
    with pytest.raises(FileNotFoundError, match="neither a built-in name"):
        resolve_matrix("medium")
    with pytest.raises(TypeError, match="cannot make an affinity matrix"):
        resolve_matrix(3)
    with pytest.raises(ValueError, match="unknown built-in"):
        AffinityMatrix.builtin("medium")


def _official(**changes):
    data = AffinityMatrix.builtin("long").to_official()
    for key, value in changes.items():
        key = key.replace("__", "-")
        if value is None:
            del data[key]
        else:
            data[key] = value
    return data


@pytest.mark.parametrize(
    "data, message",
    [
        (_official(anatomy_anatomy=None), r"missing key\(s\) \['anatomy_anatomy'\]"),
        (_official(neg_weight=None), r"missing key\(s\) \['neg_weight'\]"),
        (_official(extra=1.0), "unexpected key 'extra'"),
        (_official(ANATOMY_ANATOMY=0.1), "unexpected key 'ANATOMY_ANATOMY'"),
        (_official(tumor_anatomy=0.1), r"unknown entity type\(s\) \['tumor'\]"),
        (_official(anatomy_anatomy="0.5"), "'anatomy_anatomy': expected a number, got '0.5'"),
        (_official(anatomy_anatomy=True), "expected a number"),
        (_official(neg_weight=[0.5]), "'neg_weight': expected a number"),
        (_official(disease_non__disease=float("nan")), "'disease_non-disease': expected a finite number"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_bad_official_dicts_raise(data, message):
    with pytest.raises(ValueError, match=message):
        AffinityMatrix.from_official(data)


def test_bad_files_and_arrays_raise(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: not valid JSON"):
        AffinityMatrix.load(path)
    path.write_text(json.dumps(_official(neg_weight=None)))
    with pytest.raises(ValueError, match=r"bad.json: missing key"):
        resolve_matrix(path)
    with pytest.raises(ValueError, match="must be 5x5"):
        AffinityMatrix.from_array(np.ones((4, 5)), 0.5)
    with pytest.raises(ValueError, match="non-finite"):
        AffinityMatrix.from_array(np.full((5, 5), np.inf), 0.5)

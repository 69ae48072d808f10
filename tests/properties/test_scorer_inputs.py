"""Property-based tests of the three scorers' inputs (tiny local exports): arbitrary unicode,
empty and whitespace-only reports, huge reports and wrong types. A bad input is a ``ValueError``
naming the argument and index; any list of strings gets exactly one score per pair, in place,
equal to the score of that pair scored alone (nothing shifted, dropped or mixed up by batching).
"""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from radscore import ER2Score, RaTEScore
from radscore.bleurt import ClinicalBLEURT
from radscore.inputs import check_reports
from radscore.systems import RADCLIQ
from train.rehearsal.tiny import build_tiny_bleurt_export, build_tiny_iob_export, build_tiny_reward_export

SCALE = 40 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 4
CHARS = st.characters(exclude_categories=("Cs",))
REPORT = st.one_of(st.text(CHARS, max_size=60), st.just(""), st.just(" \n\t "),
                   st.just("Small left pleural effusion. No pneumothorax. " * 60),
                   st.sampled_from(["No acute cardiopulmonary process.", "Right lower lobe pneumonia.",
                                    "Heart size is normal. Lungs are clear."]))
PAIRS = st.integers(1, 4).flatmap(lambda n: st.tuples(st.lists(REPORT, min_size=n, max_size=n),
                                                     st.lists(REPORT, min_size=n, max_size=n)))
NOT_A_LIST = st.one_of(st.none(), st.text(max_size=5), st.integers(), st.tuples(st.text(max_size=3)),
                       st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=2))
BAD_ITEM = st.one_of(st.none(), st.integers(), st.floats(), st.binary(max_size=4), st.lists(st.text(max_size=2), max_size=2))


def examples(n: int):
    return settings(max_examples=n * SCALE, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def scorers(tmp_path_factory, tiny_backbone):
    root = tmp_path_factory.mktemp("scorers")
    ner = build_tiny_iob_export(root / "ner", seed=0, head_std=0.3, o_bias=2.5)
    build_tiny_reward_export(root / "reward", tiny_backbone, RADCLIQ, max_length=48)
    return {"ratescore": RaTEScore(ner, tiny_backbone, batch_size=3),
            "bleurt": ClinicalBLEURT(build_tiny_bleurt_export(root / "bleurt", tiny_backbone), batch_size=3),
            "er2": ER2Score(root / "reward", batch_size=3, progress=False)}


def _values(name: str, scorer, cands: list[str], refs: list[str]) -> list[float]:
    if name == "ratescore":
        return [s.f1 for s in scorer.iter_score(cands, refs, progress=False)]
    if name == "bleurt":
        return [s.score for s in scorer.score(cands, refs, progress=False)]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # long prompts are cut and counted: see the ER2Score tests
        return [s.total for s in scorer.score(cands, refs)]


@examples(60)
@given(st.one_of(NOT_A_LIST, st.lists(st.one_of(st.text(max_size=5), BAD_ITEM), max_size=4)),
       st.lists(st.text(max_size=5), max_size=4))
def test_input_checks_name_the_argument_and_index(candidates, references):
    try:
        cands, refs = check_reports(candidates, references)
    except ValueError as err:
        message = str(err)
        assert "candidates" in message or "references" in message, message
        if isinstance(candidates, (list, tuple)) and any(not isinstance(c, str) for c in candidates):
            first = next(k for k, c in enumerate(candidates) if not isinstance(c, str))
            assert f"candidates[{first}]" in message, message
        return
    # accepted: an ordered collection of strings (a tuple too), returned as a list in its order
    assert not isinstance(candidates, (str, dict)) and cands == list(candidates) and refs == references
    assert all(isinstance(c, str) for c in cands) and len(cands) == len(refs)


@pytest.mark.parametrize("name", ["ratescore", "bleurt", "er2"])
def test_one_score_per_pair_in_place_for_any_text(name, scorers):
    scorer = scorers[name]

    @examples(12)
    @given(PAIRS)
    def check(pairs):
        cands, refs = pairs
        together = _values(name, scorer, cands, refs)
        assert len(together) == len(cands)
        assert all(math.isfinite(v) for v in together)
        alone = [_values(name, scorer, [c], [r])[0] for c, r in zip(cands, refs)]
        assert together == pytest.approx(alone, abs=1e-5)

    check()

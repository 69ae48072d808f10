"""Text alone must not solve the SYNTHETIC benchmark (the bars), on seed 0 at the default sizes and on
seeds 1 and 2 as replicates.

Every trivial baseline of :mod:`train.evaluation.baselines` (and BLEU-4) stays at |Kendall| <= 0.40
against the ReXVal-layout error counts (all and significant), the Task 2 test scores and the ER²
RadCliQ test totals, and between 35% and 65% on the Task 3 triads (ties as misses, two-sided: a
counter far below chance has found a signal too). Beside them, cue-word and word-count heuristics
that the project does not use as baselines (an audit: a deleted "no", an inserted antonym-lexicon
word, reference words lost, tokens changed, the length difference, a character similarity) are held
to the same |Kendall| limit; on the triads they are judged with ties counted as half, since a
counter that is 0 for most members ties most triads and would sit "below chance" with no signal.

Before generator v3 this test failed: the difflib hunk counter reached 0.27 / 0.21 on the triads of
seeds 0 / 1, unigram F1 and BLEU-4 0.44 / 0.43 Kendall on the Task 2 scores of seed 1, and the
sentence counter ``sentences_changed`` 0.53 on the ER² totals of seed 0.
Seed 0 is the default sets, shared with the other tests that read them. Seeds 1 and 2 are generated
without Task 1 and ClinicalBLEURT rows, which no bar reads, and with a third of the ER² rows
(:data:`REPLICATE_SIZES`: about 110 RadCliQ test rows each, against about 290 at the default size; the ER²
set is three quarters of a seed's generation time). Each set has its own seeded stream, so their other
sets are the default-size sets of their seed.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

import numpy as np
import pytest
from rapidfuzz.distance import Indel
from scipy.stats import kendalltau

from data.rate_eval import read_rate_eval_task2, read_rate_eval_task3
from data.ratings import read_er2_jsonl
from data.rexval import read_rexval
from data.synth import generate
from data.synth.lexicon import load_lexicon
from train.evaluation.baselines import TRIVIAL, pair_baselines, rating_baselines, tokenize

pytestmark = pytest.mark.slow  # every test reads three seeds of default-size sets
SEEDS = (0, 1, 2)
BASELINES = (*TRIVIAL, "bleu4")
KENDALL_LIMIT = 0.40
TRIADS = (0.35, 0.65)
REPLICATE_SIZES = {"task1": 0, "bleurt": 0, "er2": 600}  # seeds 1 and 2 (module doc)


@lru_cache(maxsize=None)
def _ops(ref: str, cand: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The reference tokens that difflib's word alignment deletes or replaces, and the candidate tokens it
    inserts; kept per pair, since three heuristics read them and the ReXVal-layout pairs are read twice."""
    a, b = tokenize(ref), tokenize(cand)
    gone, came = [], []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op in ("delete", "replace"):
            gone += a[i1:i2]
        if op in ("insert", "replace"):
            came += b[j1:j2]
    return tuple(gone), tuple(came)


def _character_ratio(ref: str, cand: str) -> float:
    """The character similarity 2·LCS / (len(ref) + len(cand)): the ratio that difflib's ``ratio()``
    approximates with its longest-block matching, computed exactly by rapidfuzz's Indel distance."""
    return Indel.normalized_similarity(ref, cand)


def _antonym_words() -> set[str]:
    return {w for pair in load_lexicon().antonyms for side in pair for w in re.findall(r"[a-z]+", side.lower())}


ANTONYMS = _antonym_words() - {"in", "normal", "size", "of"}
AUDIT = {
    "no_deleted": lambda r, c: -sum(t == "no" for t in _ops(r, c)[0]),
    "antonym_inserted": lambda r, c: -sum(t in ANTONYMS for t in _ops(r, c)[1]),
    "words_lost": lambda r, c: -len(set(tokenize(r)) - set(tokenize(c))),
    "words_new": lambda r, c: -len(set(tokenize(c)) - set(tokenize(r))),
    "tokens_changed": lambda r, c: -sum(map(len, _ops(r, c))),
    "length_difference": lambda r, c: -abs(len(tokenize(r)) - len(tokenize(c))),
    "character_ratio": _character_ratio,
}


@pytest.fixture(scope="module")
def sets(tmp_path_factory, default_synthetic):
    out = {}
    for seed in SEEDS:
        if seed == 0:  # the default sets (tests/conftest.py), which other tests read too
            folder = default_synthetic
        else:
            folder = tmp_path_factory.mktemp(f"bars{seed}")
            generate(folder, seed=seed, sizes=REPLICATE_SIZES)
        rated = {}
        for name, significant in (("ReXVal-layout errors", False), ("ReXVal-layout significant errors", True)):
            pairs = read_rexval(folder / "synthetic_rexval", significant_only=significant)
            rated[name] = ([p.reference for p in pairs], [p.candidate for p in pairs], [-p.rating for p in pairs])
        t2 = read_rate_eval_task2(folder / "synthetic_rate_eval", "test")
        rated["Task 2 test scores"] = ([p.reference for p in t2], [p.candidate for p in t2], [p.rating for p in t2])
        er2 = [p for p in read_er2_jsonl(folder / "synthetic_er2" / "radcliq_synthetic.jsonl")
               if p.meta.get("split") == "test"]
        rated["ER² RadCliQ test totals"] = ([p.reference for p in er2], [p.candidate for p in er2],
                                            [-p.total for p in er2])
        triads = read_rate_eval_task3(folder / "synthetic_rate_eval")
        out[seed] = rated, ([t.original for t in triads], [t.synonym for t in triads], [t.opposite for t in triads])
    return out


def test_trivial_baselines_stay_within_the_bars_on_every_rated_set(sets):
    bad = []
    for seed, (rated, _) in sets.items():
        for name, (refs, cands, target) in rated.items():
            assert len(refs) >= 80, (seed, name, len(refs))
            for baseline, stats in rating_baselines(refs, cands, target, BASELINES).items():
                if not abs(stats["kendall"]) <= KENDALL_LIMIT:
                    bad.append(f"seed {seed}, {name}: {baseline} Kendall {stats['kendall']:.3f}")
    assert not bad, bad


def test_trivial_baselines_stay_near_chance_on_the_triads(sets):
    bad = []
    for seed, (_, (refs, syn, opp)) in sets.items():
        assert len(refs) >= 100
        for baseline, acc in pair_baselines(refs, syn, opp, BASELINES).items():
            if not TRIADS[0] <= acc <= TRIADS[1]:
                bad.append(f"seed {seed}: {baseline} triad accuracy {acc:.3f}")
    assert not bad, bad


def test_audit_heuristics_stay_within_the_bars(sets):
    bad = []
    for seed, (rated, (refs, syn, opp)) in sets.items():
        for heuristic, fn in AUDIT.items():
            for name, (r, c, target) in rated.items():
                tau = kendalltau([fn(a, b) for a, b in zip(r, c)], target).statistic
                if not abs(tau) <= KENDALL_LIMIT:
                    bad.append(f"seed {seed}, {name}: {heuristic} Kendall {tau:.3f}")
            s = np.array([fn(a, b) for a, b in zip(refs, syn)])
            o = np.array([fn(a, b) for a, b in zip(refs, opp)])
            half = float(np.mean(s > o) + 0.5 * np.mean(s == o))
            if not TRIADS[0] <= half <= TRIADS[1]:
                bad.append(f"seed {seed}: {heuristic} triad accuracy (ties as half) {half:.3f}")
    assert not bad, bad

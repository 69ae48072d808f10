"""Labels computed from a candidate's list of edits: every number here is traceable to edits.

Rules (also stated in ``SYNTHETIC_README.md`` of every generated set):

- **RadCliQ sub-scores** (ER²Score, SPEC §3.1): the count of edits in each ReXVal category
  (significant or not); total = their sum; fewer is better.
- **MRScore items** (weights 30/20/20/10/10/5/5; ``S_i`` = 1 when the item has an error):
  impression_consistency: a clinically significant category 1-6 error in the impression;
  impression_organs: a location error (category 3) in the impression, or a whole sentence
  inserted into or removed from the impression (its organs appear or vanish);
  lesion_description: a significant error of category 1, 3, 4 or 5 in the findings;
  clinical_history: never: no edit determines it (the corpus has no history section), S = 0;
  completeness: any omission (category 2 or 6) anywhere, significant or not;
  grammar: a grammar edit, or a spelling edit outside entity spans;
  terminology: a spelling edit inside an entity span (a misspelt medical term).
  Sub-score = points kept ``W_i * (1 - S_i)``; total = their sum = ``100 - sum(S_i W_i)``.
- **ClinicalBLEURT** (SPEC §4): critical = significant category 1-6 errors; non-critical = the
  insignificant ones; spelling/grammar = spelling and grammar edits; the score is
  :func:`data.clinical_bleurt.clinical_bleurt_quality` (the project's one implementation).
- **RaTE-Eval Task 1** (sentence pairs): errors = category 1-6 edits (significant or not);
  potential errors = max(entities in the reference sentence, entities in the candidate sentence)
  + the number of comparison edits (categories 5-6: comparisons are not entities), and never
  fewer than the errors or 1; rating = ``1 - errors / potential``.
- **RaTE-Eval Task 2** (paragraph pairs): the clinical weights of :mod:`data.synth.edits` decide
  the score, not the number of findings or the amount of changed text. Each category 1-6 error
  independently takes away a share of the report's value, ``HARM`` by weight: minor 0.05, major
  0.25, critical 0.70 (our choice: one critical error costs more than four major ones, and twenty
  minor ones cost about as much as one critical); kept = the product of ``1 - HARM`` over the
  errors; score = ``round(20 * kept) / 4`` (0-5 in steps of 0.25; 5 = no error). So one critical
  error gives 1.5, one major 3.75, one minor 4.75, and the score is the same for a short and a
  long report with the same errors. Rewrites and typos (weight 0) cost nothing.
- **Simulated ReXVal raters** (:class:`RaterNoise`): each rater sees every true error and misses
  it with probability ``miss``; a counted error's significance is flipped with probability
  ``flip_significance``; with probability ``spurious`` the rater adds one error of a uniformly
  drawn category whose significance is a fair coin. Readers then average over raters (ReXVal).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from data.clinical_bleurt import BLEURT_WEIGHTS, clinical_bleurt_quality  # noqa: F401 (re-exported)
from data.ratings import MRSCORE, RADCLIQ
from data.synth.draft import CRITICAL, MAJOR, MINOR

TYPO_KINDS = ("spelling", "grammar")


def errors_of(edits) -> list[dict]:
    """The edits that are ReXVal errors (category 1-6)."""
    return [e for e in edits if e["category"] is not None]


def radcliq_subscores(edits) -> dict[str, int]:
    counts = {name: 0 for name in RADCLIQ.items}
    for e in errors_of(edits):
        counts[RADCLIQ.items[e["category"] - 1]] += 1
    return counts


def mrscore_items(edits) -> tuple[dict[str, int], dict[str, float], float]:
    """``(S_i errors, sub-scores as points kept, total)`` of the MRScore system."""
    errs = errors_of(edits)
    imp = [e for e in errs if e["section"] == "impression"]
    fnd = [e for e in errs if e["section"] == "findings"]
    whole_sentence = ("insert_finding", "remove_finding", "insert_contradiction")
    s = {
        "impression_consistency": any(e["significant"] for e in imp),
        "impression_organs": any(e["category"] == 3 or e["kind"] in whole_sentence for e in imp),
        "lesion_description": any(e["significant"] and e["category"] in (1, 3, 4, 5) for e in fnd),
        "clinical_history": False,
        "completeness": any(e["category"] in (2, 6) for e in errs),
        "grammar": any(e["kind"] == "grammar"
                       or e["kind"] == "spelling" and not e["detail"].get("in_entity") for e in edits),
        "terminology": any(e["kind"] == "spelling" and e["detail"].get("in_entity") for e in edits),
    }
    s = {k: int(v) for k, v in s.items()}
    subs = {k: w * (1 - s[k]) for k, w in zip(MRSCORE.items, MRSCORE.weights)}
    return s, subs, float(sum(subs.values()))


def bleurt_counts(edits) -> dict[str, int]:
    errs = errors_of(edits)
    return {
        "critical": sum(1 for e in errs if e["significant"]),
        "non_critical": sum(1 for e in errs if not e["significant"]),
        "spelling_grammar": sum(1 for e in edits if e["kind"] in TYPO_KINDS),
    }


def task1_rating(n_ref_entities: int, n_cand_entities: int, edits) -> tuple[int, int, float]:
    """``(errors, potential errors, rating)`` of a sentence pair (rule in the module doc)."""
    errs = errors_of(edits)
    comparisons = sum(1 for e in errs if e["category"] in (5, 6))
    potential = max(max(n_ref_entities, n_cand_entities) + comparisons, len(errs), 1)
    return len(errs), potential, 1.0 - len(errs) / potential


# Task 2: the share of a report's value that one error of each clinical weight takes away.
HARM = {MINOR: 0.05, MAJOR: 0.25, CRITICAL: 0.70}


def task2_score(edits) -> tuple[float, float]:
    """``(kept share of the report's value, 0-5 score in steps of 0.25)`` (rule in the module
    doc): the product of ``1 - HARM[weight]`` over the errors."""
    kept = 1.0
    for e in errors_of(edits):
        kept *= 1.0 - HARM[e["weight"]]
    return kept, round(20 * kept) / 4


@dataclass(frozen=True)
class RaterNoise:
    """The simulated radiologists of the synthetic ReXVal set (see the module doc)."""

    n_raters: int = 6
    miss: float = 0.15
    spurious: float = 0.10
    flip_significance: float = 0.05


def simulate_raters(edits, rng: random.Random, noise: RaterNoise) -> list[dict]:
    """Per rater, ``{(category, significant): count}`` for the 12 combinations."""
    out = []
    for _ in range(noise.n_raters):
        counts = {(c, s): 0 for c in range(1, 7) for s in (True, False)}
        for e in errors_of(edits):
            if rng.random() < noise.miss:
                continue
            sig = e["significant"]
            if rng.random() < noise.flip_significance:
                sig = not sig
            counts[(e["category"], sig)] += 1
        if rng.random() < noise.spurious:
            counts[(rng.randint(1, 6), rng.random() < 0.5)] += 1
        out.append(counts)
    return out

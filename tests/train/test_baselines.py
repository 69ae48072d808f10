"""Baseline metrics (BLEU, ROUGE-L, BERTScore, METEOR) against hand-computed values."""

import math

import numpy as np
import pytest

from train.evaluation.baselines import (BaselineUnavailable, bertscore, bleu, meteor, meteor_unavailable_reason, rouge_l,
                             score_baselines, tokenize)


def test_tokenize_keeps_hyphenated_words_and_numbers_and_splits_punctuation():
    assert tokenize("Mild left-sided effusion, 2.5 cm.") == ["mild", "left-sided", "effusion", ",", "2.5", "cm", "."]


def test_bleu_matches_hand_computed_values():
    refs, cands = ["a b c d"], ["a b c e"]
    # unigram precision 3/4, bigram 2/3, equal lengths (no brevity penalty)
    assert bleu(refs, cands, 2)[0] == pytest.approx(math.sqrt(3 / 4 * 2 / 3))
    # 3-grams 1/2, 4-grams 0/1 -> smoothing method1 puts epsilon 0.1 over the one 4-gram
    assert bleu(refs, cands, 4)[0] == pytest.approx((3 / 4 * 2 / 3 * 1 / 2 * 0.1) ** 0.25)
    assert bleu(["no acute cardiopulmonary process"], ["no acute cardiopulmonary process"])[0] == pytest.approx(1.0)
    assert bleu(["effusion"], [""])[0] == 0.0  # an empty candidate scores 0, defined


def test_rouge_l_is_the_lcs_f_measure():
    assert rouge_l(["a b c d"], ["a c d e"])[0] == pytest.approx(0.75)  # LCS 3 of 4 and 4
    assert rouge_l(["left effusion"], ["left effusion"])[0] == pytest.approx(1.0)


def test_mismatched_inputs_are_refused_naming_the_pair():
    with pytest.raises(ValueError, match="2 references and 1 candidates"):
        bleu(["a", "b"], ["a"])
    with pytest.raises(TypeError, match="pair 1"):
        rouge_l(["a", "b"], ["a", None])


def test_bertscore_with_the_packaged_model_orders_paraphrase_above_unrelated_text():
    refs = ["Small left pleural effusion."] * 3
    cands = ["Small left pleural effusion.", "Minor effusion in the left pleural space.",
             "The knee joint is normal without fracture."]
    f1 = bertscore(refs, cands)
    assert f1.shape == (3,) and f1[0] == pytest.approx(1.0, abs=1e-4)
    assert f1[0] > f1[1] > f1[2]


def test_meteor_runs_or_is_reported_unavailable_never_faked():
    reason = meteor_unavailable_reason()
    scores, unavailable = score_baselines(["left effusion"], ["left effusion"], names=["bleu2", "meteor"])
    assert "bleu2" in scores
    if reason is None:
        assert meteor(["left effusion"], ["left effusion"])[0] > 0.9 and "meteor" in scores
    else:
        with pytest.raises(BaselineUnavailable, match="WordNet|nltk"):
            meteor(["a"], ["a"])
        assert "meteor" not in scores and ("WordNet" in unavailable["meteor"] or "nltk" in unavailable["meteor"])


def test_an_unknown_baseline_is_refused():
    with pytest.raises(ValueError, match="unknown baseline 'cider'"):
        score_baselines(["a"], ["a"], names=["cider"])


def test_trivial_baselines_count_hunks_negations_and_unigrams():
    from train.evaluation.baselines import diff_hunks, negation_keywords, score_baselines, unigram_f1

    ref = "No pleural effusion. Heart size is normal."
    same, negflip = ref, "Small pleural effusion. Heart size is normal."
    two_edits = "Small pleural effusion. Heart size is enlarged."
    assert diff_hunks([ref, ref, ref], [same, negflip, two_edits]).tolist() == [0.0, -1.0, -2.0]
    assert negation_keywords([ref, ref, ref], [same, negflip, "No effusion, no pneumothorax, not enlarged."]).tolist() \
        == [0.0, -1.0, -2.0]
    # 9 tokens each ("no pleural effusion . heart size is normal ."), 8 shared after the edit
    assert unigram_f1([ref], [negflip])[0] == pytest.approx(2 * 8 / 18)
    assert unigram_f1([""], [""])[0] == 1.0 and unigram_f1(["a"], [""])[0] == 0.0
    scores, unavailable = score_baselines([ref], [negflip], ("diff_hunks", "negation_keywords", "unigram_f1"))
    assert not unavailable and set(scores) == {"diff_hunks", "negation_keywords", "unigram_f1"}


def test_pair_and_rating_baselines_beside_a_model():
    """What the training CLI prints beside a model's test figures: a tie is a miss, undefined is nan."""
    from train.evaluation.baselines import BESIDE_MODEL, beside_baselines_table, pair_baselines, rating_baselines

    ref = "No pleural effusion. Heart size is normal."
    better, worse = "No pleural effusion. Heart size is enlarged.", "Small pleural effusion. Heart is enlarged."
    acc = pair_baselines([ref, ref], [better, ref], [worse, ref])  # the second pair ties on every baseline
    assert set(acc) == set(BESIDE_MODEL)
    # the first pair is ranked right by each (1 hunk vs 2, keeps the "no", more shared words and
    # 4-grams); the second is a tie everywhere, which counts as a miss
    assert acc == {name: 0.5 for name in BESIDE_MODEL}
    assert all(math.isnan(v) for v in pair_baselines([], [], []).values())

    refs, cands = [ref] * 3, [ref, better, worse]
    corr = rating_baselines(refs, cands, [2.0, 1.0, 0.0])
    assert corr["diff_hunks"]["kendall"] == pytest.approx(1.0) and corr["unigram_f1"]["pearson"] > 0.9
    assert math.isnan(rating_baselines(refs, cands, [1.0, 1.0, 1.0])["bleu4"]["pearson"])  # constant target

    table = beside_baselines_table("title", {"pearson": 0.5, "kendall": 0.25}, corr)
    lines = table.splitlines()
    assert lines[0] == "title" and lines[2].startswith("this model") and lines[2].endswith("0.500      0.250")
    assert len(lines) == 3 + len(BESIDE_MODEL) and any(line.startswith("trivial: unigram F1") for line in lines)


# --- the shallow learner (ridge on diff tokens) ------------------------------------------------------
def _toy(n: int, seed: int):
    """SYNTHETIC toy: the target is minus the number of 'no' tokens the candidate deletes."""
    import random

    rng = random.Random(seed)
    words = ["effusion", "pneumothorax", "consolidation", "edema", "fracture", "mass", "nodule"]
    refs, cands, y = [], [], []
    for _ in range(n):
        sents = [f"{'no' if rng.random() < 0.6 else 'mild'} {rng.choice(words)} ." for _ in range(rng.randint(2, 6))]
        kept = [s.replace("no ", "", 1) if s.startswith("no ") and rng.random() < 0.5 else s for s in sents]
        if rng.random() < 0.3:  # a distractor edit the target ignores
            kept.append(f"{rng.choice(words)} is stable .")
        refs.append(" ".join(sents))
        cands.append(" ".join(kept))
        y.append(-float(sum(a != b for a, b in zip(sents, kept))))
    return refs, cands, y


def test_diff_features_count_deleted_and_inserted_tokens_and_hunks():
    from train.evaluation.baselines import diff_features

    f = diff_features("No effusion. No edema.", "Effusion. No edema, stable.")
    assert f["DEL_no"] == 1 and f["INS_,"] == 1 and f["INS_stable"] == 1 and "DEL_." not in f
    assert f["#log_hunks"] == pytest.approx(np.log1p(2))
    assert diff_features("a b", "a b") == {"#log_deleted": 0.0, "#log_inserted": 0.0, "#log_replaced": 0.0,
                                          "#log_hunks": 0.0}


def test_shallow_learner_learns_a_planted_signal_on_held_out_rows():
    from scipy.stats import pearsonr

    from train.evaluation.baselines import SHALLOW_NAME, shallow_learner, shallow_rating_baseline

    refs, cands, y = _toy(300, 0)
    er, ec, ey = _toy(100, 1)
    model = shallow_learner(refs, cands, y)
    assert pearsonr(model.predict(er, ec), ey).statistic > 0.95
    got = shallow_rating_baseline(refs, cands, y, er, ec, ey)
    assert set(got) == {SHALLOW_NAME}
    assert set(got[SHALLOW_NAME]) == {"pearson", "kendall", "alpha", "char_weight", "count_weight"}
    assert got[SHALLOW_NAME]["alpha"] == model.selection["alpha"]  # the validation choice, recorded
    assert got[SHALLOW_NAME]["pearson"] > 0.95


def test_shallow_learner_uses_the_train_rows_only():
    from train.evaluation.baselines import shallow_learner, shallow_rating_baseline

    refs, cands, y = _toy(200, 0)
    er, ec, ey = _toy(80, 1)
    a = shallow_learner(refs, cands, y).predict(er, ec)
    b = shallow_learner(refs, cands, y).predict(er, ec)
    np.testing.assert_array_equal(a, b)
    # the evaluated rows' targets never reach the fit: permuting them changes no prediction, and the
    # statistic is that of the same predictions against the permuted targets
    perm = list(np.random.default_rng(0).permutation(ey))
    got = shallow_rating_baseline(refs, cands, y, er, ec, perm)
    from scipy.stats import pearsonr

    assert got["shallow_ridge"]["pearson"] == pytest.approx(pearsonr(a, perm).statistic)
    # nor do the evaluated texts: predictions of a row do not depend on which other rows are evaluated
    np.testing.assert_array_equal(shallow_learner(refs, cands, y).predict(er[:10], ec[:10]), a[:10])


def test_shallow_pair_baseline_orders_the_better_candidate_first():
    from train.evaluation.baselines import shallow_pair_baseline

    def pairs(n, seed):
        refs, cands, y = _toy(n, seed)
        out = ([], [], [])
        for r, c, t in zip(refs, cands, y):
            if t != 0:  # the reference itself is better than a candidate that deleted a 'no'
                out[0].append(r), out[1].append(r + " "), out[2].append(c)
        return out

    tr, te = pairs(200, 0), pairs(100, 1)
    acc = shallow_pair_baseline(*tr, *te)["shallow_ridge"]
    assert acc > 0.95
    assert np.isnan(shallow_pair_baseline(*tr, [], [], [])["shallow_ridge"])


def test_count_features_and_diff_texts_of_one_pair():
    from train.evaluation.baselines import COUNT_FEATURES, count_features, diff_texts

    ref, cand = "FINDINGS: No effusion. Heart is normal. No 3 mm nodule.", "Effusion. Heart is normal. No 5 mm nodule."
    assert diff_texts(ref, cand) == ("findings : no | 3", "5")
    row = dict(zip(COUNT_FEATURES, count_features([ref], [cand])[0]))
    assert row["ref_sentences"] == 3 and row["cand_sentences"] == 3 and row["ref_sentences_kept"] == 1
    assert row["negation_cues_deleted"] == 1 and row["negation_cues_inserted"] == 0
    assert row["number_tokens_changed"] == 2 and row["altered_with_negation_change"] == 1
    assert row["length_difference"] == -3 and row["diff_hunks"] == -2
    assert count_features([], []).shape == (0, len(COUNT_FEATURES))


def test_the_validation_part_holds_whole_references_of_the_train_rows():
    from train.evaluation.baselines import SHALLOW_VALIDATION_SHARE, _group_holdout

    groups = [f"ref {k % 40}" for k in range(200)]
    fit, val = _group_holdout(groups, SHALLOW_VALIDATION_SHARE, 0)
    assert not {groups[i] for i in fit} & {groups[i] for i in val}
    assert len(val) == pytest.approx(SHALLOW_VALIDATION_SHARE * len(groups), abs=10)


def test_the_penalty_and_block_weights_are_chosen_on_validation_and_recorded(monkeypatch):
    import train.evaluation.baselines as b

    refs, cands, y = _toy(300, 0)
    model = b.ShallowLearner("ridge").fit(refs, cands, y)
    sel = model.selection
    assert sel["alpha"] in b.SHALLOW_ALPHAS and sel["criterion"] == "validation Kendall tau-b"
    assert sel["char_weight"] in b.SHALLOW_BLOCK_WEIGHTS["char_weight"]
    assert sel["validation_rows"] + sel["fit_rows"] == len(refs) and sel["validation_rows"] > 0
    assert model.chosen() == {"alpha": sel["alpha"], "char_weight": sel["char_weight"],
                              "count_weight": sel["count_weight"]}
    # a one-point grid is what it picks; a given alpha skips the search
    monkeypatch.setattr(b, "SHALLOW_ALPHAS", (30.0,))
    monkeypatch.setattr(b, "SHALLOW_BLOCK_WEIGHTS", {"char_weight": (0.5,), "count_weight": (2.0,)})
    assert b.ShallowLearner("ridge").fit(refs, cands, y).chosen() == {"alpha": 30.0, "char_weight": 0.5,
                                                                      "count_weight": 2.0}
    assert b.ShallowLearner("ridge", alpha=3.0).fit(refs, cands, y).selection["criterion"] == "given"
    chosen = {}
    b.shallow_pair_baseline(refs, refs, cands, refs[:5], refs[:5], cands[:5], chosen=chosen)
    assert chosen == {"alpha": 30.0, "char_weight": 0.5, "count_weight": 2.0}


def _suffix_toy(n: int, seed: int, stems: list[str]):
    """SYNTHETIC: two words are inserted; one ending in -itis is an error (-1), one ending in -ment
    is not; the stems at test time are words the train rows never had, so only their characters tell."""
    import random

    rng = random.Random(seed)
    refs, cands, y = [], [], []
    for _ in range(n):
        ref = f"the lungs are clear . no acute process . study {rng.randint(0, 10 ** 6)} ."
        words = [rng.choice(stems) + ("itis" if rng.random() < 0.5 else "ment") for _ in range(2)]
        refs.append(ref)
        cands.append(ref + "".join(f" {w} ." for w in words))
        y.append(-float(sum(w.endswith("itis") for w in words)))
    return refs, cands, y


def test_character_ngrams_carry_a_signal_to_words_never_seen_in_training(monkeypatch):
    from scipy.stats import pearsonr

    import train.evaluation.baselines as b

    train = _suffix_toy(300, 0, ["gastr", "nephr", "arthr", "derm", "hepat", "col"])
    test = _suffix_toy(100, 1, ["mening", "pancreat", "oste", "vascul"])
    full = b.shallow_learner(*train)
    assert pearsonr(full.predict(*test[:2]), test[2]).statistic > 0.8
    # the v1 learner (word diff tokens only, alpha 1) cannot: the test words have no feature
    monkeypatch.setattr(b, "SHALLOW_ALPHAS", (1.0,))
    monkeypatch.setattr(b, "SHALLOW_BLOCK_WEIGHTS", {"char_weight": (0.0,), "count_weight": (0.0,)})
    words_only = b.shallow_learner(*train).predict(*test[:2])
    assert np.ptp(words_only) < 1e-6 or abs(pearsonr(words_only, test[2]).statistic) < 0.3

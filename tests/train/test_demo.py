"""``python -m train demo`` end to end on tiny models and a small SYNTHETIC set: the table, the
report, the plots, and the held-out RaTEScore of the tuned matrix scored by radscore equal to the
value the tune report computed from its precomputed tables."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from train.demo import main, run
from train.rehearsal.tiny import build_tiny_iob_export


@pytest.fixture(scope="module")
def world(tmp_path_factory, tiny_backbone):
    from data.synth import generate

    root = tmp_path_factory.mktemp("demo")
    generate(root / "synthetic", seed=0, sizes={"rexval": 0, "task1": 0, "task2": 50, "task3": 40, "er2": 0,
                                                "bleurt": 0})
    ner = build_tiny_iob_export(root / "ner", seed=0, head_std=0.3, o_bias=2.5)
    cfg = {"data": {"format": "rate_eval_task2", "path": str(root / "synthetic" / "synthetic_rate_eval"),
                    "synthetic": True},
           "scorer": {"ner": "set by the demo", "encoder": tiny_backbone, "batch_size": 16},
           "objective": {"correlation": "pearson", "higher_rating_is_better": True},
           "split": {"by": "group", "test_fraction": 0.2, "seed": 0},
           "search": {"n_trials": 8, "sampler_seed": 0, "enqueue": ["uniform"]},
           "report": {"bootstrap_resamples": 30, "confidence": 0.95, "seed": 0}}
    tune_cfg = root / "demo_tune.yaml"
    tune_cfg.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return {"root": root, "ner": ner, "tune_config": str(tune_cfg)}


def test_demo_writes_a_synthetic_table_report_and_plots(world, capsys):
    out = world["root"] / "out"
    rc = main(["--out", str(out), "--ner-export", world["ner"], "--tune-config", world["tune_config"],
               "--resamples", "20", "--no-progress"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "SYNTHETIC" in printed and "not RaTE-Eval results" in printed
    for label in ("RaTEScore (released long W)", "RaTEScore (released short W)", "RaTEScore (tuned W, this run)",
                  "BLEU-4", "BLEU-2", "ROUGE-L", "BERTScore (MiniLM)", "METEOR", "trivial: difflib change hunks",
                  "trivial: negation-cue count difference", "trivial: unigram F1",
                  "trivial: sentences not kept word for word", "shallow learner (ridge on word and character diff n-grams"):
        assert label in printed
    report = json.loads((out / "demo_report.json").read_text())
    assert report["synthetic"] is True
    from radscore.environment import REQUIRED

    assert set(REQUIRED) <= set(report["environment"]) and report["environment"]["threads"] >= 1
    metrics = report["metrics"]
    assert set(metrics) == {"ratescore_long", "ratescore_short", "ratescore_tuned", "bleu4", "bleu2", "rougeL",
                            "bertscore", "diff_hunks", "negation_keywords", "unigram_f1", "sentences_changed",
                            "shallow_ridge"} | (
                                {"meteor"} if "meteor" not in report["unavailable"] else set())
    for name, res in metrics.items():
        for method in ("kendall", "pearson"):
            r = res[method]
            assert r["n_pairs"] == report["held_out"]["pairs"] > 0
            assert r["low"] <= r["value"] <= r["high"] or not np.isfinite(r["value"])
            assert 0.0 <= r["p_value"] <= 1.0 or not np.isfinite(r["value"])
        assert 0.0 <= res["triad_accuracy"] <= 1.0
        assert (out / f"scatter_{name}.png").stat().st_size > 1000
    assert (out / "W_heatmap.png").stat().st_size > 1000
    assert (out / "demo_table.md").read_text().startswith("### demo:")
    # per held-out pair, every metric's score: the report's figures recomputed from it
    from train.evaluation.metaeval import correlation

    lines = [json.loads(x) for x in (out / "demo_predictions.jsonl").read_text().splitlines()]
    assert len(lines) == report["held_out"]["pairs"] and set(lines[0]["scores"]) == set(metrics)
    for name in ("ratescore_tuned", "shallow_ridge", "bleu4"):
        assert correlation([x["scores"][name] for x in lines], [x["target"] for x in lines], "kendall") == (
            pytest.approx(metrics[name]["kendall"]["value"], abs=1e-9))
    # the thin package and the search's precomputed tables agree on the tuned matrix's held-out value
    check = report["check_tuned_vs_tune_report"]
    assert check["demo"] == pytest.approx(check["tune_report"], abs=1e-6)
    # an identical synonym rewrite must win every triad for a string-overlap metric at least sometimes
    assert metrics["rougeL"]["triad_accuracy"] > 0.0
    # the shallow row is the ridge learner fitted on the search's train pairs alone, scored on the held-out ones
    from train.demo import fitted_side, held_out
    from train.evaluation.baselines import shallow_learner
    from train.tune.config import load_config
    cfg = load_config(world["tune_config"])
    train, (test, _) = fitted_side(cfg), held_out(cfg)
    assert {p.candidate for p in train}.isdisjoint({p.candidate for p in test})
    model = shallow_learner([p.reference for p in train], [p.candidate for p in train],
                            [cfg.objective.sign * p.rating for p in train])
    from scipy.stats import kendalltau
    direct = kendalltau(model.predict([p.reference for p in test], [p.candidate for p in test]),
                        [cfg.objective.sign * p.rating for p in test]).statistic
    assert metrics["shallow_ridge"]["kendall"]["value"] == pytest.approx(direct, abs=1e-9)


def test_a_second_demo_run_reuses_the_finished_search(world):
    out = world["root"] / "out"
    report = run(out, "unused", world["tune_config"], None, None, 20, ["rougeL"], world["ner"], progress=False)
    tune = json.loads((out / "tune" / "report.json").read_text())
    assert tune["search"]["trials_run"] == {"0": 0}  # the study already held its 8 trials
    assert set(report["metrics"]) == {"ratescore_long", "ratescore_short", "ratescore_tuned", "rougeL", "shallow_ridge"}


def test_a_demo_on_another_ner_starts_a_new_search_and_keeps_the_old_one(world, capsys):
    """The demo's own study from an earlier run on another setup is moved aside, not reused (it
    used to stop the demo with the study-mismatch error)."""
    out = world["root"] / "out"
    other = build_tiny_iob_export(world["root"] / "ner_other", seed=5, head_std=0.3, o_bias=2.5)
    run(out, "unused", world["tune_config"], None, None, 20, ["rougeL"], other, progress=False)
    assert "starting a new one" in capsys.readouterr().out
    assert (out / "tune" / "study.previous.db").is_file()
    tune = json.loads((out / "tune" / "report.json").read_text())
    assert tune["search"]["trials_run"] == {"0": 8}  # a new search ran its trials


def test_a_missing_tune_config_is_a_clear_error(world, capsys):
    rc = main(["--out", str(world["root"] / "bad"), "--ner-export", world["ner"], "--tune-config",
               str(world["root"] / "nope.yaml"), "--no-progress"])
    assert rc == 2 and "nope.yaml" in capsys.readouterr().err


def test_the_demo_scores_with_the_configured_splitter(world, tiny_backbone):
    """The tune config's scorer.splitter reaches the demo's RaTEScore (it was ignored)."""
    from types import SimpleNamespace

    from radscore.scoring import resolve_matrix
    from train.demo import score_metrics

    seen = []

    def splitter(text):
        seen.append(text)
        return [text]

    settings = SimpleNamespace(penalty="official", pooling="cls", empty_score=0.5, batch_size=8, splitter=splitter)
    refs, cands = ["Small left effusion. No pneumothorax.", "Normal heart."], ["No effusion.", "Enlarged heart."]
    scores, _ = score_metrics(refs, cands, world["ner"], tiny_backbone, {"long": resolve_matrix("long")}, settings,
                              [], progress=False)
    assert sorted(seen) == sorted(refs + cands)
    assert len(scores["ratescore_long"]) == 2


def _report(tuned_kendall: float) -> dict:
    res = lambda v: {"value": v, "low": v - 0.1, "high": v + 0.1}  # noqa: E731
    return {"metrics": {"ratescore_tuned": {"kendall": res(tuned_kendall), "pearson": res(0.5), "triad_accuracy": 0.75},
                        "bleu4": {"kendall": res(0.087), "pearson": res(float("nan")), "triad_accuracy": 0.5}},
            "ner_config": "configs/ner/iob_sample.yaml", "tune_seed": 0,
            "environment": {"cpu": "some CPU", "hardware_class": "avx2", "native_bf16": False, "threads": 2,
                            "precision": "32-true", "seed": 42, "versions": {"torch": "x"}, "git_commit": "abc"}}


def test_the_demo_says_whether_its_table_matches_the_committed_report(tmp_path):
    from train.demo import compare_with_reference

    reference = tmp_path / "demo_report.json"
    reference.write_text(json.dumps(_report(0.3381)))
    same, text = compare_with_reference(_report(0.33808), reference)  # equal at the third decimal
    assert same["matches"] and same["compared"] == 14 and not same["differences"]
    assert "matches the committed demo report" in text and "precision 32-true" in text

    moved, text = compare_with_reference({**_report(0.431), "tune_seed": 1}, reference)
    assert not moved["matches"]
    assert {(d["metric"], d["figure"]) for d in moved["differences"]} == {
        ("ratescore_tuned", "kendall"), ("ratescore_tuned", "kendall CI low"), ("ratescore_tuned", "kendall CI high")}
    assert "RaTEScore (tuned W, this run) kendall: 0.431 here, 0.338 committed (+0.093)" in text
    assert "settings that differ from the committed run: tune_seed" in text

    assert compare_with_reference(_report(0.3), tmp_path / "missing.json")[0] is None
    assert compare_with_reference(_report(0.3), None) == (None, "")

"""tune-weights end to end on tiny random models and small SYNTHETIC rating sets: outputs, the
exported matrix in radscore, resume after a kill, two workers on one study, refusals."""

import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import optuna
import pandas as pd
import pytest

from radscore import RaTEScore
from radscore.scoring import AffinityMatrix
from tests.train.tune_fixtures import small_synthetic, tiny_ner, write_config
from train.tune.cli import main, run
from train.tune.config import TuneConfigError, load_config
from train.tune.data import read_pairs, split_pairs
from train.tune.precompute import precompute
from train.tune.search import PARAM_NAMES, StudyMismatchError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world(tmp_path_factory, tiny_backbone):
    """Tiny models, a small synthetic set (Task 2 layout: 40 pairs; ReXVal layout: 10 studies) and
    one entity/embedding cache for every run of the module."""
    root = tmp_path_factory.mktemp("tune")
    return {"ner": tiny_ner(root / "ner"), "encoder": tiny_backbone,
            "synthetic": small_synthetic(root / "synthetic", task2=40, rexval=40), "cache": root / "cache"}


def _config(world, tmp_path, name="run", fmt="rate_eval_task2", **kw):
    if fmt == "rate_eval_task2":
        data = {"format": fmt, "path": str(world["synthetic"] / "synthetic_rate_eval")}
    else:
        data = {"format": "rexval", "path": str(world["synthetic"] / "synthetic_rexval")}
    path = write_config(tmp_path / f"{name}.yaml", data=data, ner=world["ner"], encoder=world["encoder"],
                        run_dir=tmp_path / name, **kw)
    raw = path.read_text() + f"cache_dir: {world['cache']}\n"
    path.write_text(raw)
    return path


def _study(cfg_path):
    cfg = load_config(cfg_path)
    return optuna.load_study(study_name=cfg.study_name, storage=cfg.storage_url)


def test_config_errors_name_the_file_and_the_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("data: {format: rate_eval_task2, path: x}\nscorer: {ner: y, encoderr: z}\n")
    with pytest.raises(TuneConfigError, match=r"bad.yaml.*scorer.*encoderr"):
        load_config(bad)
    bad.write_text("data: {format: rexval, path: x}\nscorer: {ner: y}\nsplit: {by: published}\n")
    with pytest.raises(TuneConfigError, match="published"):
        load_config(bad)


def test_run_writes_outputs_and_the_json_loads_into_radscore(world, tmp_path, capsys):
    cfg_path = _config(world, tmp_path, n_trials=20, resamples=100)
    report = run(load_config(cfg_path), progress=False)
    out = tmp_path / "run"
    for name in ("affinity_matrix.json", "report.json", "W_heatmap.png", "history.png", "study.db"):
        assert (out / name).is_file(), name
    printed = capsys.readouterr().out
    assert "SYNTHETIC" in printed and "tuned" in printed and "uniform" in printed
    results = json.loads((out / "report.json").read_text())["results"]
    assert set(results) == {"tuned", "long", "short", "uniform", "diff_hunks", "negation_keywords", "unigram_f1",
                            "sentences_changed", "shallow_ridge"}
    assert "diff_hunks" in printed and "trivial baselines" in printed
    # a trivial row is the baseline's own correlation on the same test pairs
    from train.evaluation.baselines import diff_hunks
    from train.evaluation.metaeval import correlation_with_ci
    from train.tune.data import read_pairs, split_pairs

    cfg = load_config(cfg_path)
    pairs = read_pairs(cfg.data)
    test = [pairs[i] for i in split_pairs(pairs, cfg.split).test]
    direct = correlation_with_ci(diff_hunks([p.reference for p in test], [p.candidate for p in test]),
                                 np.array([p.rating for p in test]), [p.group for p in test], cfg.objective.correlation,
                                 10, 0.95, 0, cfg.objective.sign)
    assert results["diff_hunks"]["test"]["value"] == pytest.approx(direct.value)
    # the shallow row: the ridge learner fitted on the train pairs only, scored on the test pairs
    from train.evaluation.baselines import shallow_learner
    train = [pairs[i] for i in split_pairs(pairs, cfg.split).train]
    model = shallow_learner([p.reference for p in train], [p.candidate for p in train],
                            [cfg.objective.sign * p.rating for p in train])
    direct = correlation_with_ci(model.predict([p.reference for p in test], [p.candidate for p in test]),
                                 np.array([p.rating for p in test]), [p.group for p in test], cfg.objective.correlation,
                                 10, 0.95, 0, cfg.objective.sign)
    assert results["shallow_ridge"]["test"]["value"] == pytest.approx(direct.value)
    for name in results:
        for split in ("train", "test"):
            r = results[name][split]
            assert r["low"] <= r["value"] <= r["high"] and r["n_pairs"] == report["data"]["split"][split]["pairs"]
    # the enqueued uniform matrix is trial 0, so the tuned one is at least as good on train
    assert results["tuned"]["train"]["value"] >= results["uniform"]["train"]["value"]
    assert report["data"]["split"]["groups_on_both_sides"] == 0 and report["synthetic"] is True
    assert report["search"]["complete_trials"] == 20

    # The exported file is an official matrix: radscore scores with it as the tables do.
    matrix = AffinityMatrix.load(out / "affinity_matrix.json")
    assert set(json.loads((out / "affinity_matrix.json").read_text())) == {*PARAM_NAMES, "neg_weight"}
    assert matrix == AffinityMatrix.from_official(report["affinity_matrix"])
    scorer = RaTEScore(world["ner"], encoder=world["encoder"], affinity_matrix=str(out / "affinity_matrix.json"))
    pairs = read_pairs(load_config(cfg_path).data)[:12]
    direct = scorer.compute_score([p.candidate for p in pairs], [p.reference for p in pairs])
    tables, _ = precompute([p.reference for p in pairs], [p.candidate for p in pairs],
                           load_config(cfg_path).scorer, world["cache"], progress=False)
    np.testing.assert_allclose(tables.score_matrix(matrix), direct, atol=1e-6, rtol=0)

    # ... and the scorer bundle beside it is that scorer in one line, ready to publish
    bundled = RaTEScore.from_bundle(str(out / "bundle"))
    assert bundled.compute_score([p.candidate for p in pairs], [p.reference for p in pairs]) == direct
    assert bundled.matrix == matrix and (out / "bundle" / "ner" / "radscore_manifest.json").is_file()
    from train.release.publish import PublishError, publish

    with pytest.raises(PublishError, match="training data not known"):  # the ratings live in a temp folder
        publish(out / "bundle", "you/ratescore-tuned", dry_run=True, echo=lambda *_: None)
    dry = publish(out / "bundle", "you/ratescore-tuned", dry_run=True, echo=lambda *_: None,
                  license="apache-2.0", datasets=["test ratings"])
    assert 'RaTEScore.from_bundle("you/ratescore-tuned")' in dry["card"]
    assert any(name == "ner/radscore_manifest.json" for name, _ in dry["files"])


def test_the_search_beats_uniform_on_planted_ratings(world, tmp_path):
    """Ratings made by RaTEScore with a planted random W and p = 0.2 (plus noise) on the synthetic
    pairs and on mismatched ones: TPE must find a matrix that agrees better than the uniform one.
    (With the synthetic generator's own ratings the tiny random NER tags nearly every word, each
    entity finds an identical copy (cosine 1), and the uniform matrix, a corner of the box, is not
    beaten within a few hundred TPE trials; the sample run with the trained NER does beat it.)"""
    pairs = read_pairs(load_config(_config(world, tmp_path, name="src")).data)
    half = len(pairs) // 2
    refs = [p.reference for p in pairs] + [p.reference for p in pairs[:half]]
    cands = [p.candidate for p in pairs] + [p.candidate for p in pairs[half:]][::-1][:half]
    groups = [p.group for p in pairs] + [p.group for p in pairs[:half]]
    tables, _ = precompute(refs, cands, load_config(_config(world, tmp_path, name="src")).scorer, world["cache"],
                           progress=False)
    rng = np.random.default_rng(0)
    planted = rng.uniform(size=(5, 5))
    ratings = tables.scores(planted, 0.2) + rng.normal(scale=0.01, size=len(refs))
    csv = tmp_path / "planted_synthetic.csv"
    pd.DataFrame({"reference": refs, "candidate": cands, "rating": ratings, "group": groups}).to_csv(csv, index=False)
    cfg_path = write_config(tmp_path / "planted.yaml", data={"format": "csv", "path": str(csv), "columns": {"group": "group"}},
                            ner=world["ner"], encoder=world["encoder"], run_dir=tmp_path / "planted",
                            n_trials=60, resamples=50)
    cfg_path.write_text(cfg_path.read_text() + f"cache_dir: {world['cache']}\n")
    results = run(load_config(cfg_path), progress=False)["results"]
    assert results["tuned"]["train"]["value"] > results["uniform"]["train"]["value"] + 0.01
    assert results["tuned"]["test"]["value"] > results["uniform"]["test"]["value"]


def test_a_killed_search_resumes_with_every_finished_trial(world, tmp_path):
    cfg_path = _config(world, tmp_path, name="resume", n_trials=15, resamples=20)
    killed = subprocess.run([sys.executable, str(ROOT / "tests" / "helpers" / "tune_killer.py"), "6",
                             "--config", str(cfg_path), "--no-progress"], cwd=ROOT, capture_output=True,
                            text=True, timeout=600)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    study = _study(cfg_path)
    finished = {t.number: (t.params, t.value) for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE}
    assert sorted(finished) == list(range(6))
    assert [t.state for t in study.trials if t.number == 6] == [optuna.trial.TrialState.RUNNING]
    assert not (tmp_path / "resume" / "report.json").exists()

    assert main(["--config", str(cfg_path), "--no-progress"]) == 0
    study = _study(cfg_path)
    complete = {t.number: (t.params, t.value) for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE}
    assert len(complete) == 15
    assert all(complete[n] == finished[n] for n in finished)  # kept as they were
    report = json.loads((tmp_path / "resume" / "report.json").read_text())
    assert report["search"]["complete_trials_before"] == 6 and report["search"]["complete_trials_after"] == 15

    # the trials equal an uninterrupted search's, one by one: the sampler resumed from the random state the
    # last complete trial left (the trial the kill cut short stays RUNNING and is left out)
    whole = _config(world, tmp_path, name="whole", n_trials=15, resamples=20)
    assert main(["--config", str(whole), "--no-progress"]) == 0
    def in_order(study):
        return [(t.params, t.value) for t in sorted(study.trials, key=lambda t: t.number)
                if t.state == optuna.trial.TrialState.COMPLETE]
    assert in_order(_study(cfg_path)) == in_order(_study(whole))


def test_two_workers_share_one_study_on_rexval_split_by_study(world, tmp_path):
    cfg_path = _config(world, tmp_path, name="workers", fmt="rexval", n_trials=16, resamples=20,
                       correlation="kendall", higher_is_better=False)
    assert main(["--config", str(cfg_path), "--workers", "2", "--no-progress"]) == 0
    report = json.loads((tmp_path / "workers" / "report.json").read_text())
    ran = report["search"]["trials_run"]
    assert sorted(ran) == ["0", "1"] and all(n > 0 for n in ran.values())
    assert 16 <= report["search"]["complete_trials_after"] <= 17  # each worker may finish its last trial
    assert len(_study(cfg_path).trials) == sum(ran.values())
    cfg = load_config(cfg_path)
    pairs = read_pairs(cfg.data)
    split = split_pairs(pairs, cfg.split)
    assert {pairs[i].group for i in split.train}.isdisjoint({pairs[i].group for i in split.test})
    assert report["data"]["split"]["test"]["groups"] == 2 and report["objective"]["sign"] == -1.0


def test_a_study_is_not_resumed_on_another_setup(world, tmp_path, capsys):
    cfg_path = _config(world, tmp_path, name="mismatch", n_trials=3, resamples=10)
    assert main(["--config", str(cfg_path), "--no-progress"]) == 0
    changed = _config(world, tmp_path, name="mismatch", n_trials=5, resamples=10, correlation="spearman")
    with pytest.raises(StudyMismatchError, match="correlation"):
        run(load_config(changed), progress=False)
    assert main(["--config", str(changed), "--no-progress"]) == 2
    assert "started on another setup (differs in: correlation)" in capsys.readouterr().err
    more = _config(world, tmp_path, name="mismatch", n_trials=5, resamples=10)  # more trials: fine
    assert main(["--config", str(more), "--no-progress"]) == 0
    assert len(_study(more).trials) == 5

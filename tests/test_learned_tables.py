"""benchmarks/quality/learned_tables.py: per-metric tables from the runs' per-row test predictions,
each figure with its bootstrap CI over reference reports and the paired bootstrap p-value of learned
minus shallow. Small SYNTHETIC fixture predictions; no model is trained here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.quality import learned_tables as lt
from benchmarks.quality.learned_vs_shallow import UNSEEN_ROWS

ROOT = Path(__file__).resolve().parents[1]


def _world(seed: int, n_groups: int = 40, per_group: int = 4):
    rng = np.random.default_rng(seed)
    groups = [f"ref{g}" for g in range(n_groups) for _ in range(per_group)]
    target = rng.integers(0, 6, size=len(groups)).astype(float)
    return rng, groups, target


def test_ci_holds_the_estimate_and_p_is_small_when_learned_is_clearly_better():
    rng, groups, target = _world(0)
    systems = {"learned": {s: target + rng.normal(0, 0.3, len(target)) for s in ("kendall", "pair_accuracy")},
               "shallow": {s: target + rng.normal(0, 3.0, len(target)) for s in ("kendall", "pair_accuracy")}}
    got = lt.paired_bootstrap(target, groups, systems, ("pair_accuracy", "kendall"), resamples=300, seed=1)
    for system in ("learned", "shallow"):
        for stat in ("pair_accuracy", "kendall"):
            f = got[system][stat]
            assert f["low"] <= f["value"] <= f["high"] and f["low"] < f["high"]
    assert got["learned"]["kendall"]["value"] > got["shallow"]["kendall"]["value"] + 0.2
    for stat in ("pair_accuracy", "kendall"):
        assert got["learned"]["p_vs_shallow"][stat] == pytest.approx(2 / 301)  # the floor: every delta* > 0


def test_p_is_one_for_the_same_system_and_large_for_two_of_equal_quality():
    rng, groups, target = _world(1)
    same = target + rng.normal(0, 1.0, len(target))
    got = lt.paired_bootstrap(target, groups, {"learned": {"kendall": same}, "shallow": {"kendall": same.copy()}},
                              ("kendall",), resamples=200, seed=0)
    assert got["learned"]["p_vs_shallow"]["kendall"] == 1.0
    # two independent systems of the same noise level: p spreads over (0, 1], rarely small
    ps = []
    for k in range(12):
        rng = np.random.default_rng(100 + k)
        a, b = target + rng.normal(0, 1.0, len(target)), target + rng.normal(0, 1.0, len(target))
        ps.append(lt.paired_bootstrap(target, groups, {"learned": {"kendall": a}, "shallow": {"kendall": b}},
                                      ("kendall",), resamples=200, seed=0)["learned"]["p_vs_shallow"]["kendall"])
    assert np.median(ps) > 0.2 and sum(p < 0.05 for p in ps) <= 3


def test_the_bootstrap_is_seeded_and_resamples_whole_reference_reports():
    from train.evaluation.metaeval import bootstrap_ci

    rng, groups, target = _world(2)
    scores = target + rng.normal(0, 1.0, len(target))
    systems = {"learned": {"kendall": scores}, "shallow": {"kendall": scores[::-1].copy()}}
    a = lt.paired_bootstrap(target, groups, systems, ("kendall",), resamples=100, seed=5)
    assert a == lt.paired_bootstrap(target, groups, systems, ("kendall",), resamples=100, seed=5)
    assert a != lt.paired_bootstrap(target, groups, systems, ("kendall",), resamples=100, seed=6)
    # the same resamples as metaeval's grouped CI (one bootstrap over reference reports, reused)
    assert (a["learned"]["kendall"]["low"], a["learned"]["kendall"]["high"]) == pytest.approx(
        bootstrap_ci(scores, target, groups, "kendall", n_resamples=100, seed=5))


def test_pairs_are_the_rows_of_one_reference_with_different_targets():
    pairs = lt.group_pairs(["a", "a", "a", "b", "b"], np.array([1.0, 3.0, 1.0, 2.0, 2.0]))
    assert sorted(map(tuple, pairs["a"].tolist())) == [(1, 0), (1, 2)] and len(pairs["b"]) == 0


# --- end to end on fixture run folders ------------------------------------------------------------------
def _run_folder(path: Path, seed: int, config: str, *overrides: str, lines: list[dict]) -> Path:
    """A finished run of ``config`` at ``seed`` with ``overrides``: its saved config and its per-row predictions."""
    import yaml

    from tests.test_learned_vs_shallow import saved_config

    resolved = saved_config((config,), seed, *overrides, run_dir=path)
    (path / "logs" / "version_0").mkdir(parents=True)
    (path / "logs" / "version_0" / "config.yaml").write_text(yaml.safe_dump(resolved))
    (path / "test_predictions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _er2_lines(seed: int, noise: float) -> list[dict]:
    rng, groups, target = _world(seed, n_groups=15, per_group=3)
    rng = np.random.default_rng(seed + 10)
    out = []
    for k, (g, t) in enumerate(zip(groups, target)):
        total = float(t + rng.normal(0, noise))
        out.append({"id": f"r{k}", "group": g, "reward_total": total, "rewards": {"a": total},
                    "label_total": float(t), "baselines": {
                        "bleu4": float(rng.random()), "diff_hunks": float(t + rng.normal(0, 2)),
                        "negation_keywords": 0.0, "unigram_f1": float(rng.random()), "sentences_changed": 0.0,
                        "shallow_ridge": float(t + rng.normal(0, 1)), "shallow_ridge_pair": float(t + rng.normal(0, 1))}})
    return out


def test_tables_from_runs_and_a_demo_are_written_labelled_and_reproducible(tmp_path):
    cfg = "configs/reward/sample.yaml"
    lines = _er2_lines(0, 0.5)
    r42 = _run_folder(tmp_path / "r42", 42, cfg, lines=lines)
    r43 = _run_folder(tmp_path / "r43", 43, cfg, lines=[{**x, "reward_total": -x["reward_total"]} for x in lines])
    unseen = _run_folder(tmp_path / "u42", 42, cfg, f"--data.rows={UNSEEN_ROWS['er2score'][1]}",
                         lines=_er2_lines(1, 2.0))
    demo = tmp_path / "demo"
    demo.mkdir()
    rng, groups, target = _world(3, n_groups=12, per_group=3)
    (demo / "demo_predictions.jsonl").write_text("".join(json.dumps({
        "id": f"p{k}", "group": g, "rating": t, "target": t, "scores": {
            "ratescore_tuned": t + rng.normal(0, 1), "shallow_ridge": t + rng.normal(0, 1), "bleu4": rng.random(),
            "diff_hunks": -rng.random(), "unigram_f1": rng.random(), "negation_keywords": 0.0,
            "sentences_changed": 0.0}}) + "\n" for k, (g, t) in enumerate(zip(groups, target))))
    (demo / "demo_report.json").write_text(json.dumps({"tune_seed": 0, "held_out": {"pairs": 36, "groups": 12}}))
    out, md = tmp_path / "t.json", tmp_path / "t.md"
    args = ["--run", f"er2score={r42}", "--run", f"er2score={r43}", "--run-unseen", f"er2score={unseen}",
            "--demo", str(demo), "--resamples", "50", "--out", str(out), "--markdown", str(md)]
    assert lt.main(args) == 0
    data = json.loads(out.read_text())
    assert data["synthetic"] is True and "SYNTHETIC" in data["note"] and data["command"].startswith(
        "python -m benchmarks.quality.learned_tables --run")
    er2 = data["metrics"]["er2score"]["sides"]
    assert set(er2) == {"test", "test_unseen"} and set(er2["test"]["learned"]) == {"42", "43"}
    assert set(er2["test_unseen"]["learned"]) == {"42"}
    # the sample config with the unseen rows is the sample config and its overlay: the command names both
    assert "--config configs/reward/sample.yaml --config configs/unseen/reward.yaml " in er2["test_unseen"]["learned"][
        "42"]["command"]
    assert er2["test"]["learned"]["43"]["command"] == ("python -m train fit --config configs/reward/sample.yaml "
                                                       f"--seed_everything 43 --run_dir {r43}")
    assert er2["test"]["pairs"] == sum(1 for g in set(x["group"] for x in lines) for a in lines for b in lines
                                       if a["group"] == b["group"] == g and a["id"] < b["id"]
                                       and a["label_total"] != b["label_total"])
    # seed 43 predicts the reverse: its Kendall is minus seed 42's
    assert er2["test"]["learned"]["43"]["kendall"]["value"] == pytest.approx(-er2["test"]["learned"]["42"]["kendall"]["value"])
    assert er2["test"]["best_trivial"]["which"] in ("diff_hunks", "unigram_f1", "negation_keywords", "sentences_changed")
    assert data["metrics"]["ratescore_tuned"]["sides"]["test"]["learned"]["sampler_seed 0"]["p_vs_shallow"]["kendall"] > 0
    text = md.read_text()
    assert "ER²Score (SYNTHETIC)" in text and "tuned RaTEScore (SYNTHETIC)" in text
    for side in ("test", "test_unseen"):
        f = er2[side]["learned"]["42"]["kendall"]
        assert f"{f['value']:.3f} [{f['low']:.3f}, {f['high']:.3f}]" in text
    # seeded: the same command gives the same JSON; the markdown is rendered from the JSON alone
    first = out.read_text()
    assert lt.main(args) == 0 and out.read_text() == first
    md.unlink()
    assert lt.main(["--from-json", "--out", str(out), "--markdown", str(md)]) == 0 and md.read_text() == text


def test_a_run_without_predictions_or_unlike_its_command_is_refused_by_name(tmp_path):
    run = _run_folder(tmp_path / "r", 42, "configs/reward/sample.yaml", lines=_er2_lines(0, 1.0))
    (run / "test_predictions.jsonl").unlink()
    with pytest.raises(SystemExit, match="test_predictions.jsonl: missing"):
        lt.main(["--run", f"er2score={run}", "--out", str(tmp_path / "x.json"), "--markdown", str(tmp_path / "x.md")])
    lr = _run_folder(tmp_path / "lr", 42, "configs/reward/sample.yaml", "--model.lr=1.0e-3", lines=_er2_lines(0, 1.0))
    with pytest.raises(SystemExit, match="would not reproduce it"):
        lt.main(["--run", f"er2score={lr}", "--out", str(tmp_path / "x.json"), "--markdown", str(tmp_path / "x.md")])
    # a setting the config leaves to its default, changed on the run's command line: not the config's run either
    marked = _run_folder(tmp_path / "marked", 42, "configs/reward/sample.yaml", "--model.init_args.candidate_format=diff_marked",
                         lines=_er2_lines(0, 1.0))
    with pytest.raises(SystemExit, match="candidate_format: run has 'diff_marked', config says 'plain'"):
        lt.main(["--run", f"er2score={marked}", "--out", str(tmp_path / "x.json"), "--markdown", str(tmp_path / "x.md")])
    bad = _run_folder(tmp_path / "bad", 42, "configs/reward/sample.yaml",
                      lines=[{k: v for k, v in x.items() if k != "label_total"} for x in _er2_lines(0, 1.0)])
    with pytest.raises(SystemExit, match="row 'r0' lacks \\['label_total'\\]"):
        lt.main(["--run", f"er2score={bad}", "--out", str(tmp_path / "x.json"), "--markdown", str(tmp_path / "x.md")])


def test_the_committed_tables_are_the_jsons():
    """benchmarks/results/learned_tables.md is the JSON's tables (the results page shows them)."""
    data = json.loads(lt.OUT.read_text()) if lt.OUT.is_file() else None
    section = lt.MARKDOWN.read_text().strip("\n")
    assert section == lt.render(data)
    if data is not None:
        for table in data["metrics"].values():
            for side in table["sides"].values():
                for entry in side["learned"].values():
                    for stat in table["statistics"]:
                        assert f"{entry[stat]['value']:.3f} [{entry[stat]['low']:.3f}" in section


def test_a_demo_without_per_pair_scores_gives_its_report_figures_and_no_p_value(tmp_path):
    demo = tmp_path / "demo"
    demo.mkdir()
    fig = lambda v: {"kendall": {"value": v, "low": v - 0.1, "high": v + 0.1}}  # noqa: E731
    (demo / "demo_report.json").write_text(json.dumps({
        "tune_seed": 0, "held_out": {"pairs": 90, "groups": 30},
        "metrics": {"ratescore_tuned": fig(0.41), "shallow_ridge": fig(0.33), "bleu4": fig(0.2),
                    "diff_hunks": fig(0.25), "unigram_f1": fig(0.27)}}))
    out, md = tmp_path / "t.json", tmp_path / "t.md"
    assert lt.main(["--demo-unseen", str(demo), "--out", str(out), "--markdown", str(md)]) == 0
    side = json.loads(out.read_text())["metrics"]["ratescore_tuned"]["sides"]["test_unseen"]
    assert side["learned"]["sampler_seed 0"]["kendall"]["value"] == 0.41
    assert side["learned"]["sampler_seed 0"]["command"] == f"python -m train demo --out {demo}"  # the default configs
    assert side["learned"]["sampler_seed 0"]["p_vs_shallow"]["kendall"] is None and "no paired" in side["note"]
    assert side["best_trivial"]["which"] == "unigram_f1"
    assert "0.410 [0.310, 0.510]; p vs shallow n/a" in md.read_text()
    # the command names the configs the demo ran with: the NER run's in order (a report that gives the unseen NER
    # overlay alone, as one path, ran it over its base)
    report = json.loads((demo / "demo_report.json").read_text())
    want = (f"python -m train demo --out {demo} --ner-config configs/ner/iob_sample.yaml configs/unseen/ner.yaml "
            "--tune-config configs/tune/sample.yaml configs/unseen/tune.yaml")
    for ner in ("configs/ner/iob_sample.yaml configs/unseen/ner.yaml", "configs/unseen/ner.yaml"):
        (demo / "demo_report.json").write_text(json.dumps({**report, "ner_config": ner,
                                                           "tune_config": "configs/unseen/tune.yaml"}))
        assert lt.main(["--demo-unseen", str(demo), "--out", str(out), "--markdown", str(md)]) == 0
        side = json.loads(out.read_text())["metrics"]["ratescore_tuned"]["sides"]["test_unseen"]
        assert side["learned"]["sampler_seed 0"]["command"] == want, ner

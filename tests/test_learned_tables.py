"""benchmarks/quality/learned_tables.py (issue #46): per-metric tables from the runs' per-row test predictions,
each figure with its bootstrap CI over reference reports and the paired bootstrap p-value of learned
minus shallow. Small SYNTHETIC fixture predictions; no model is trained here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.benchmark_scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "quality" / "learned_tables.py"


@pytest.fixture(scope="module")
def lt():
    return load_benchmark(SCRIPT)


def _world(seed: int, n_groups: int = 40, per_group: int = 4):
    rng = np.random.default_rng(seed)
    groups = [f"ref{g}" for g in range(n_groups) for _ in range(per_group)]
    target = rng.integers(0, 6, size=len(groups)).astype(float)
    return rng, groups, target


def test_ci_holds_the_estimate_and_p_is_small_when_learned_is_clearly_better(lt):
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


def test_p_is_one_for_the_same_system_and_large_for_two_of_equal_quality(lt):
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


def test_the_bootstrap_is_seeded_and_resamples_whole_reference_reports(lt):
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


def test_pairs_are_the_rows_of_one_reference_with_different_targets(lt):
    pairs = lt.group_pairs(["a", "a", "a", "b", "b"], np.array([1.0, 3.0, 1.0, 2.0, 2.0]))
    assert sorted(map(tuple, pairs["a"].tolist())) == [(1, 0), (1, 2)] and len(pairs["b"]) == 0


# --- end to end on fixture run folders ------------------------------------------------------------------
def _run_folder(path: Path, seed: int, config: str, *overrides: str, lines: list[dict]) -> Path:
    import yaml

    from train.ablations.profile import RunSpec
    from train.ablations.runs import merged_config

    resolved = merged_config(RunSpec((str(ROOT / config),), overrides), (f"--seed_everything={seed}",))
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


def test_tables_from_runs_and_a_demo_are_written_labelled_and_reproducible(lt, tmp_path):
    from learned_vs_shallow import UNSEEN_ROWS

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
    docs = tmp_path / "docs.md"
    docs.write_text(f"# title\n\n{lt.BEGIN}\nold\n{lt.END}\n\nafter\n")
    out, md = tmp_path / "t.json", tmp_path / "t.md"
    args = ["--run", f"er2score={r42}", "--run", f"er2score={r43}", "--run-unseen", f"er2score={unseen}",
            "--demo", str(demo), "--resamples", "50", "--out", str(out), "--markdown", str(md), "--docs", str(docs)]
    assert lt.main(args) == 0
    data = json.loads(out.read_text())
    assert data["synthetic"] is True and "SYNTHETIC" in data["note"] and data["command"].startswith(
        "python benchmarks/quality/learned_tables.py --run")
    er2 = data["metrics"]["er2score"]["sides"]
    assert set(er2) == {"test", "test_unseen"} and set(er2["test"]["learned"]) == {"42", "43"}
    assert set(er2["test_unseen"]["learned"]) == {"42"}
    assert "--config configs/unseen/reward.yaml " in er2["test_unseen"]["learned"]["42"]["command"]  # its overlay
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
    assert lt.docs_section(docs) == text.strip("\n") and docs.read_text().endswith("\nafter\n")
    # seeded: the same command gives the same JSON; the markdown is rendered from the JSON alone
    first = out.read_text()
    assert lt.main(args) == 0 and out.read_text() == first
    md.unlink()
    assert lt.main(["--from-json", "--out", str(out), "--markdown", str(md)]) == 0 and md.read_text() == text


def test_a_run_without_predictions_or_unlike_its_command_is_refused_by_name(lt, tmp_path):
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


def test_docs_carry_the_tables_of_the_json(lt):
    """docs/synthetic.md's generated section is the JSON's tables (or the placeholder until it exists)."""
    data = json.loads(lt.OUT.read_text()) if lt.OUT.is_file() else None
    section = lt.docs_section(ROOT / "docs" / "synthetic.md")
    assert section == lt.render(data)
    if data is not None:
        assert lt.MARKDOWN.read_text().strip("\n") == section
        for table in data["metrics"].values():
            for side in table["sides"].values():
                for entry in side["learned"].values():
                    for stat in table["statistics"]:
                        assert f"{entry[stat]['value']:.3f} [{entry[stat]['low']:.3f}" in section


def test_a_demo_without_per_pair_scores_gives_its_report_figures_and_no_p_value(lt, tmp_path):
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
    assert side["learned"]["sampler_seed 0"]["p_vs_shallow"]["kendall"] is None and "no paired" in side["note"]
    assert side["best_trivial"]["which"] == "unigram_f1"
    assert "0.410 [0.310, 0.510]; p vs shallow n/a" in md.read_text()


# --- a GPU session's fits: predictions without the shallow learner, its column fitted here ------------------------
def _gpu_session(tmp_path: Path, lines: list[dict]) -> tuple[Path, Path]:
    """A session folder as runs 3/4 bring it back (fixture files: the 1x and unseen 1x fits of seed 42, a
    rehearsal fit on 3 batches, an unfinished 2x fit) and a sets folder whose generator notes match."""
    import yaml

    session, sets = tmp_path / "session", tmp_path / "sets"
    (session / "curve" / "sets").mkdir(parents=True)
    (session / "gpu_session.log").write_text("gpu NVIDIA H100 80GB HBM3 79.2 GiB\n")
    machine = [{**x, "baselines": {k: v for k, v in x["baselines"].items() if not k.startswith("shallow_ridge")}}
               for x in lines]
    for name, limit, finished in (("1x", None, True), ("1x_unseen", None, True), ("1x", 3, True), ("2x", None, False)):
        note = {"fingerprint": f"fp-{name}", "seed": 0, "sizes": {"er2": 1}}
        (session / "curve" / "sets" / f"{name}.json").write_text(json.dumps(note))
        (sets / name).mkdir(parents=True, exist_ok=True)
        (sets / name / "generator_synthetic.json").write_text(json.dumps(note))
        run = session / "curve" / "runs" / (f"er2score_{name}_seed42" + ("_limit" if limit else ""))
        (run / "logs" / "version_0").mkdir(parents=True)
        (run / "logs" / "version_0" / "config.yaml").write_text(yaml.safe_dump(
            {"seed_everything": 42, "data": {"rows": f"/tmp/gpu_session/sets/{name}/x.jsonl"}}))
        (run / "test_predictions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in machine))
        (run / "run.json").write_text(json.dumps({
            "name": run.name, "metric": "er2score", "seed": 42, "set": name, "limit_batches": limit,
            "finished": finished, "returncode": 0 if finished else "stopped by signal 15",
            "command": "python -m train reward fit --config configs/reward/sample.yaml --seed_everything 42 "
                       "--trainer.accelerator gpu --test_baselines false"}))
    return session, sets


def test_a_gpu_sessions_fits_get_the_shallow_learner_fitted_here_and_their_own_rows(lt, tmp_path, monkeypatch):
    import learning_curve

    lines = _er2_lines(0, 0.5)
    session, sets = _gpu_session(tmp_path, lines)
    fitted = []

    def here(metric, cfg, folder):  # what the data module on the local set gives: every baseline, shallow included
        fitted.append(Path(folder).name)
        return {x["id"]: dict(x["baselines"]) for x in lines}

    monkeypatch.setattr(learning_curve, "shallow_test_rows", here)
    out, md = tmp_path / "t.json", tmp_path / "t.md"
    args = ["--gpu-session", str(session), "--sets", str(sets), "--resamples", "40", "--out", str(out),
            "--markdown", str(md)]
    assert lt.main(args) == 0
    assert sorted(fitted) == ["1x", "1x_unseen"]  # the rehearsal's and the unfinished fit's sets: not fitted
    er2 = json.loads(out.read_text())["metrics"]["er2score"]["sides"]
    assert set(er2) == {"test", "test_unseen"}
    row = er2["test"]["learned"]["seed 42, H100 80GB HBM3"]
    assert "--trainer.accelerator gpu" in row["command"] and "NVIDIA H100" in row["command"]
    # the shallow learner's column is the one fitted here, joined by row id: same figures as a file that had it
    assert lt.main(["--run", f"er2score={_run_folder(tmp_path / 'cpu', 42, 'configs/reward/sample.yaml', lines=lines)}",
                    "--resamples", "40", "--out", str(tmp_path / "c.json"), "--markdown", str(tmp_path / "c.md")]) == 0
    cpu = json.loads((tmp_path / "c.json").read_text())["metrics"]["er2score"]["sides"]["test"]
    assert er2["test"]["shallow"] == cpu["shallow"] and row["kendall"] == cpu["learned"]["42"]["kendall"]
    assert row["p_vs_shallow"] == cpu["learned"]["42"]["p_vs_shallow"]
    shallow_file = session / "curve" / "runs" / "er2score_1x_seed42" / learning_curve.SHALLOW_ROWS
    assert sorted(json.loads(shallow_file.read_text().splitlines()[0])) == ["id", "shallow_ridge", "shallow_ridge_pair"]
    # made once: a second build reads the files
    fitted.clear()
    assert lt.main(args) == 0 and fitted == []


def test_a_gpu_fit_on_other_rows_than_the_set_here_is_refused_by_row(lt, tmp_path, monkeypatch):
    import learning_curve

    lines = _er2_lines(0, 0.5)
    session, sets = _gpu_session(tmp_path, lines)
    changed = {x["id"]: dict(x["baselines"]) for x in lines}
    changed["r3"]["bleu4"] += 0.01  # the set here is not the machine's: one row's BLEU-4 differs
    monkeypatch.setattr(learning_curve, "shallow_test_rows", lambda metric, cfg, folder: changed)
    with pytest.raises(SystemExit, match="row 'r3': baseline bleu4 is"):
        lt.main(["--gpu-session", str(session), "--sets", str(sets), "--out", str(tmp_path / "x.json"),
                 "--markdown", str(tmp_path / "x.md")])
    monkeypatch.setattr(learning_curve, "shallow_test_rows",
                        lambda metric, cfg, folder: {k: v for k, v in changed.items() if k != "r5"})
    with pytest.raises(SystemExit, match="not those of set 1x here"):
        lt.main(["--gpu-session", str(session), "--sets", str(sets), "--out", str(tmp_path / "x.json"),
                 "--markdown", str(tmp_path / "x.md")])

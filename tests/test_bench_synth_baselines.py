"""benchmarks/quality/bench_synth_baselines.py --folders: the baselines measured on sets made already (the learning
curve's larger sets), each with its generator note. A tiny SYNTHETIC set generated here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.quality import bench_synth_baselines as bench

ROOT = Path(__file__).resolve().parents[1]


def test_folders_are_measured_as_made_and_named_by_their_generator(tmp_path, monkeypatch):
    from data.synth import generate

    folder = tmp_path / "2x"
    generate(folder, seed=0, sizes={"rexval": 10, "task1": 0, "task2": 30, "task3": 12, "er2": 60, "bleurt": 60})
    out = tmp_path / "b.json"
    bench.main(["--folders", str(folder), "--out", str(out)])
    data = json.loads(out.read_text())
    assert "SYNTHETIC" in data["data"]
    assert data["generators"]["2x"] == {**json.loads((folder / "generator_synthetic.json").read_text()), "not_generated": []}
    assert data["runs"]["2x"] == bench.measure(folder)  # the same rows as a generated run measures
    assert data["runs"]["2x"]["er2_radcliq_test_total"]["n"] > 0
    # a folder without some sets (the curve sets: ER² and ClinicalBLEURT only) measures what it holds, says what not
    part = tmp_path / "part"
    generate(part, seed=0, sizes={"rexval": 0, "task1": 0, "task2": 0, "task3": 0, "er2": 60, "bleurt": 60})
    bench.main(["--folders", str(part), "--out", str(out)])
    data = json.loads(out.read_text())
    assert sorted(data["runs"]["part"]) == ["bleurt_test", "er2_radcliq_test_pair_accuracy", "er2_radcliq_test_total"]
    assert data["generators"]["part"]["not_generated"] == ["rexval", "task2", "task3"]
    assert "2x" in data["runs"]  # merged: the first folder's rows are kept
    # a folder already measured under the same generator note is not measured again (a killed run goes on)
    monkeypatch.setattr(bench, "measure", lambda *a, **k: pytest.fail("measured again"))
    bench.main(["--folders", str(folder), str(part), "--out", str(out)])
    with pytest.raises(SystemExit, match="no generator_synthetic.json"):
        bench.main(["--folders", str(tmp_path), "--out", str(out)])


def test_the_pair_learner_can_be_left_out_above_a_number_of_training_pairs(tmp_path, monkeypatch):
    from data.synth import generate

    folder = tmp_path / "8x"
    generate(folder, seed=0, sizes={"rexval": 0, "task1": 0, "task2": 0, "task3": 0, "er2": 60, "bleurt": 0})
    out = tmp_path / "b.json"
    full = bench.measure(folder, frozenset({"rexval", "task2", "task3", "bleurt"}))["er2_radcliq_test_pair_accuracy"]
    assert full["shallow_ridge"] is not None and full["n_train"] > 5
    monkeypatch.setattr(bench, "shallow_pair_baseline", lambda *a, **k: pytest.fail("pair learner fitted"))
    bench.main(["--folders", str(folder), "--out", str(out), "--max-pair-learner-pairs", "5"])
    data = json.loads(out.read_text())
    pairs = data["runs"]["8x"]["er2_radcliq_test_pair_accuracy"]
    assert pairs["shallow_ridge"] is None and "--max-pair-learner-pairs 5" in pairs["shallow_skipped"]
    assert {k: v for k, v in pairs.items() if k not in ("shallow_ridge", "shallow_skipped")} == \
        {k: v for k, v in full.items() if k != "shallow_ridge"}  # the trivial baselines as without the limit
    assert data["runs"]["8x"]["er2_radcliq_test_total"]["shallow_ridge"] is not None  # the ridge is kept
    assert data["generators"]["8x"]["max_pair_learner_pairs"] == 5
    monkeypatch.undo()
    bench.main(["--folders", str(folder), "--out", str(out)])  # without the limit: measured again, in full
    assert json.loads(out.read_text())["runs"]["8x"]["er2_radcliq_test_pair_accuracy"] == full
    with pytest.raises(SystemExit):
        bench.main(["--max-pair-learner-pairs", "5", "--out", str(out)])


def test_trivial_baselines_stay_within_the_bars_on_the_larger_sets():
    """The 0.40 Kendall bar holds on the learning curve's larger sets (2x, 4x, 8x the default
    ER² and ClinicalBLEURT rows), and the 0.40 bar and the 35-65% triad band on sets of 2x, 4x, 8x the
    default ReXVal-layout, Task 2 and Task 3 rows (``rate_<k>x``: the curve sets hold none), as
    benchmarks/quality/bench_synth_baselines.py --folders measured them (a committed result: regenerate it
    with that command when the generator changes; the fingerprint check below then fails)."""
    from data.synth.generate import DEFAULT_SIZES, corpus_paths, fingerprint
    from tests.data.test_synth_bars import BASELINES, KENDALL_LIMIT, TRIADS

    data = json.loads((ROOT / "benchmarks" / "results" / "synth_baselines_curve_sets.json").read_text())
    assert "SYNTHETIC" in data["data"]
    bad = []
    for multiple in (2, 4, 8):
        name = f"{multiple}x"
        assert name in data["runs"], f"{name} not measured"
        note = data["generators"][name]
        assert note["fingerprint"] == fingerprint(corpus_paths(None)), f"{name}: measured on another generator's sets"
        sizes = note["sizes"]
        assert sizes["er2"] == DEFAULT_SIZES["er2"] * multiple and sizes["bleurt"] == DEFAULT_SIZES["bleurt"] * multiple
        totals = data["runs"][name]["er2_radcliq_test_total"]
        assert totals["statistic"] == "kendall" and totals["n"] >= 250 * multiple, totals
        for baseline in BASELINES:
            if not abs(totals[baseline]) <= KENDALL_LIMIT:
                bad.append(f"{name}: {baseline} Kendall {totals[baseline]:.3f}")
        name = f"rate_{multiple}x"
        assert name in data["runs"], f"{name} not measured"
        note = data["generators"][name]
        assert note["fingerprint"] == fingerprint(corpus_paths(None)), f"{name}: measured on another generator's sets"
        assert all(note["sizes"][s] == DEFAULT_SIZES[s] * multiple for s in ("rexval", "task2", "task3")), note
        runs = data["runs"][name]
        assert runs["task3_triads"]["n"] == DEFAULT_SIZES["task3"] * multiple
        for key in ("rexval_mean_errors", "rexval_mean_significant_errors", "task2_test"):
            assert runs[key]["statistic"] == "kendall" and runs[key]["n"] >= 80 * multiple, (name, key, runs[key])
            bad += [f"{name} {key}: {b} Kendall {runs[key][b]:.3f}" for b in BASELINES
                    if not abs(runs[key][b]) <= KENDALL_LIMIT]
        bad += [f"{name} triads: {b} accuracy {runs['task3_triads'][b]:.3f}" for b in BASELINES
                if not TRIADS[0] <= runs["task3_triads"][b] <= TRIADS[1]]
    assert not bad, bad

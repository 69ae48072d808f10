"""<run>/test_predictions.jsonl: after a test the reward and bleurt tasks write one line per test row (id,
reference group, the model's prediction, the label(s), the baselines' scores on it: the callback
``RatedTestReport``), and the logged test statistics are recomputed from it. ``python -m train test
--ckpt_path`` writes it too. Tiny random backbones, SYNTHETIC rows."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr

from train.__main__ import main as train_main
from train.evaluation.baselines import BESIDE_MODEL, SHALLOW_NAME

ROOT = Path(__file__).resolve().parents[2]
CPU = ["--trainer.accelerator=cpu", "--trainer.devices=1", "--trainer.precision=32-true"]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from data.synth.generate import generate

    out = tmp_path_factory.mktemp("synthetic")
    generate(out, 0, {"rexval": 0, "task1": 0, "task2": 0, "task3": 0, "er2": 150, "bleurt": 60})
    return out


def _pair_accuracy(lines: list[dict], score) -> float:
    """Every two rows of one reference with different labelled totals are a pair (SPEC §3.2)."""
    right = []
    by_group: dict[str, list[dict]] = {}
    for line in lines:
        by_group.setdefault(line["group"], []).append(line)
    for members in by_group.values():
        for a, b in combinations(members, 2):
            if a["label_total"] != b["label_total"]:
                w, l = (a, b) if a["label_total"] > b["label_total"] else (b, a)  # noqa: E741
                right.append(score(w) > score(l))
    return float(np.mean(right))


def test_reward_fit_writes_predictions_that_give_the_logged_figures(synthetic, tiny_backbone, tmp_path, monkeypatch):
    rows = synthetic / "synthetic_er2" / "radcliq_synthetic.jsonl"
    run = tmp_path / "run"
    assert train_main(["fit", "--config", str(ROOT / "configs/reward/sample.yaml"), f"--data.rows={rows}",
                       f"--model.init_args.backbone={tiny_backbone}", "--model.init_args.max_length=256", f"--run_dir={run}",
                       "--trainer.max_epochs=1", "--trainer.limit_train_batches=2",
                       *CPU]) == 0
    metrics = json.loads((run / "test_metrics.json").read_text())
    lines = _lines(run / "test_predictions.jsonl")
    test_ids = {json.loads(x)["id"] for x in rows.read_text().splitlines() if json.loads(x).get("split") == "test"}
    assert {line["id"] for line in lines} <= test_ids and len(lines) == len({line["id"] for line in lines}) > 3
    first = lines[0]
    assert set(first["rewards"]) == {"false_prediction", "omission", "incorrect_location", "incorrect_severity",
                                     "added_comparison", "omitted_comparison"}
    assert first["reward_total"] == pytest.approx(sum(first["rewards"].values()), abs=1e-5)
    assert set(first["baselines"]) == {*BESIDE_MODEL, SHALLOW_NAME, f"{SHALLOW_NAME}_pair"}
    # the logged statistics, recomputed from the file
    pred, gold = [x["reward_total"] for x in lines], [x["label_total"] for x in lines]
    assert kendalltau(pred, gold).statistic == pytest.approx(metrics["test/kendall"], abs=1e-6)
    assert _pair_accuracy(lines, lambda x: x["reward_total"]) == pytest.approx(metrics["test/pair_acc"], abs=1e-6)
    for name in BESIDE_MODEL:
        assert _pair_accuracy(lines, lambda x: x["baselines"][name]) == pytest.approx(
            metrics[f"test/baseline/{name}/pair_acc"])
        assert kendalltau([x["baselines"][name] for x in lines], gold).statistic == pytest.approx(
            metrics[f"test/baseline/{name}/kendall"])
    assert _pair_accuracy(lines, lambda x: x["baselines"][f"{SHALLOW_NAME}_pair"]) == pytest.approx(
        metrics[f"test/baseline/{SHALLOW_NAME}/pair_acc"])
    assert kendalltau([x["baselines"][SHALLOW_NAME] for x in lines], gold).statistic == pytest.approx(
        metrics[f"test/baseline/{SHALLOW_NAME}/kendall"])

    # a finished run gets the file again from `test --ckpt_path` (into the checkpoint's run folder; its
    # logs go to test_logs/, so logs/version_0/config.yaml stays the training config; nothing elsewhere)
    (run / "test_predictions.jsonl").unlink()
    ckpt = sorted((run / "ckpt").glob("best-*.ckpt"))[-1]
    monkeypatch.chdir(tmp_path)
    assert train_main(["test", "--config", str(ROOT / "configs/reward/sample.yaml"), f"--data.rows={rows}",
                       f"--model.init_args.backbone={tiny_backbone}", "--model.init_args.max_length=256", f"--ckpt_path={ckpt}",
                       *CPU]) == 0
    again = _lines(run / "test_predictions.jsonl")
    assert [p.name for p in (run / "logs").iterdir()] == ["version_0"] and (run / "test_logs").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    assert [x["id"] for x in again] == [x["id"] for x in lines]
    assert [x["reward_total"] for x in again] == pytest.approx(pred, abs=1e-5)


def test_bleurt_fit_writes_predictions_that_give_the_logged_figures(synthetic, tiny_backbone, tmp_path, monkeypatch):
    rows = synthetic / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl"
    run = tmp_path / "run"
    assert train_main(["fit", "--config", str(ROOT / "configs/bleurt/sample.yaml"),
                       f"--data.train_path={rows}", f"--model.init_args.backbone={tiny_backbone}",
                       "--model.init_args.max_length=128", "--trainer.max_epochs=1", "--trainer.limit_train_batches=2", f"--run_dir={run}", *CPU]) == 0
    metrics = json.loads((run / "test_metrics.json").read_text())
    lines = _lines(run / "test_predictions.jsonl")
    assert len(lines) == len({x["id"] for x in lines}) > 3 and all(x["group"] for x in lines)
    pred, gold = [x["prediction"] for x in lines], [x["label"] for x in lines]
    assert pearsonr(pred, gold).statistic == pytest.approx(metrics["test/pearson"], abs=1e-5)
    assert kendalltau(pred, gold).statistic == pytest.approx(metrics["test/kendall"], abs=1e-6)
    for name in (*BESIDE_MODEL, SHALLOW_NAME):
        assert kendalltau([x["baselines"][name] for x in lines], gold).statistic == pytest.approx(
            metrics[f"test/baseline/{name}/kendall"])
    (run / "test_predictions.jsonl").unlink()
    ckpt = sorted((run / "ckpt").glob("best-*.ckpt"))[-1]
    monkeypatch.chdir(tmp_path)
    assert train_main(["test", "--config", str(ROOT / "configs/bleurt/sample.yaml"),
                       f"--data.train_path={rows}", f"--model.init_args.backbone={tiny_backbone}",
                       "--model.init_args.max_length=128", f"--ckpt_path={ckpt}", *CPU]) == 0
    assert [x["prediction"] for x in _lines(run / "test_predictions.jsonl")] == pytest.approx(pred, abs=1e-5)
    assert [p.name for p in (run / "logs").iterdir()] == ["version_0"] and (run / "test_logs").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_test_limited_to_its_first_batches_writes_the_rows_it_scored(synthetic, tiny_backbone, tmp_path, no_shallow):
    """--trainer.limit_test_batches (as the rehearsal tests): the predictions of the rows the test scored, no
    error; without the limit every test row must have its prediction. Without the shallow learner
    (``RatedTestReport(shallow: false)``) the lines carry every other baseline."""
    rows = synthetic / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl"
    run = tmp_path / "run"
    assert train_main(["fit", "--config", str(ROOT / "configs/bleurt/sample.yaml"), "--config", no_shallow,
                       f"--data.train_path={rows}", f"--model.init_args.backbone={tiny_backbone}",
                       "--model.init_args.max_length=128", "--trainer.max_epochs=1", "--trainer.limit_train_batches=2",
                       "--data.eval_batch_size=2", "--trainer.limit_test_batches=1",
                       f"--run_dir={run}", *CPU]) == 0
    lines = _lines(run / "test_predictions.jsonl")
    assert len(lines) == 2 and json.loads((run / "test_metrics.json").read_text())
    assert all(SHALLOW_NAME not in x["baselines"] and set(x["baselines"]) == set(BESIDE_MODEL) for x in lines)

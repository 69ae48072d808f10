"""A reward fit tested without the shallow learner (a config overlay with ``RatedTestReport(shallow: false)``):
the test figures and the trivial baselines' beside them, no shallow-learner figures and no shallow fit, and
per-row predictions that carry every baseline but the shallow learner. Tiny random backbone, SYNTHETIC rows."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_fit_without_the_shallow_learner_fits_none(tiny_backbone, no_shallow, tmp_path, monkeypatch):
    from data.synth.generate import generate
    from train.__main__ import main as train_main
    from train.evaluation import baselines, beside

    generate(tmp_path / "sets", 0, {"rexval": 0, "task1": 0, "task2": 0, "task3": 0, "er2": 90, "bleurt": 0})
    fitted = []

    def refuse(*a, **k):
        fitted.append(a)
        raise AssertionError("the shallow learner was fitted")

    for module in (baselines, beside):  # beside.py holds its own references to the learner's functions
        monkeypatch.setattr(module, "shallow_rating_scores", refuse)
        monkeypatch.setattr(module, "shallow_pair_scores", refuse)
    run = tmp_path / "run"
    assert train_main(["fit", "--config", str(ROOT / "configs/reward/sample.yaml"), "--config", no_shallow,
                       f"--data.rows={tmp_path / 'sets' / 'synthetic_er2' / 'radcliq_synthetic.jsonl'}",
                       f"--model.init_args.backbone={tiny_backbone}", "--model.init_args.max_length=128",
                       f"--run_dir={run}", "--trainer.max_epochs=1", "--trainer.limit_train_batches=2",
                       "--trainer.accelerator=cpu", "--trainer.precision=32-true"]) == 0
    metrics = json.loads((run / "test_metrics.json").read_text())
    assert "test/kendall" in metrics and "test/pair_acc" in metrics
    assert fitted == []
    assert not [k for k in metrics if k.startswith(f"test/baseline/{baselines.SHALLOW_NAME}")]
    assert "test/baseline/bleu4/kendall" in metrics  # the trivial baselines are still measured beside the model
    # the model's per-row predictions still travel (for bootstrap CIs), with every baseline but the shallow learner
    lines = [json.loads(x) for x in (run / "test_predictions.jsonl").read_text().splitlines()]
    assert lines and all("reward_total" in x and "label_total" in x for x in lines)
    assert all("bleu4" in x["baselines"] and not any(k.startswith("shallow") for k in x["baselines"]) for x in lines)

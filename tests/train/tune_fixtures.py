"""Builders shared by the tune-weights tests: tiny models, a small synthetic rating set, configs."""

from __future__ import annotations

from pathlib import Path

import yaml

from train.rehearsal.tiny import build_tiny_iob_export


def tiny_ner(folder: Path) -> str:
    """A random 2-layer token classifier that tags many entities of every type (fast)."""
    return build_tiny_iob_export(folder, seed=0)


def small_synthetic(folder: Path, task2: int = 60, rexval: int = 40) -> Path:
    """data.synth's writers at small sizes: RaTE-Eval Task 2 and ReXVal layouts (SYNTHETIC)."""
    from data.synth import generate

    sizes = {"rexval": rexval, "task1": 0, "task2": task2, "task3": 0, "er2": 0, "bleurt": 0}
    generate(folder, seed=0, sizes=sizes)
    return Path(folder)


def write_config(path: Path, *, data: dict, ner: str, encoder: str, run_dir: Path, n_trials: int = 20,
                 correlation: str = "pearson", higher_is_better: bool = True, penalty: str = "official",
                 resamples: int = 50, **search) -> Path:
    cfg = {
        "data": {**data, "synthetic": True},
        "scorer": {"ner": ner, "encoder": encoder, "penalty": penalty, "batch_size": 16},
        "objective": {"correlation": correlation, "higher_rating_is_better": higher_is_better},
        "split": {"by": "group", "test_fraction": 0.2, "seed": 0},
        "search": {"n_trials": n_trials, "sampler_seed": 0, **search},
        "report": {"bootstrap_resamples": resamples, "confidence": 0.95, "seed": 0},
        "run_dir": str(run_dir),
    }
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path

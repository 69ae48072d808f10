"""``python -m train export <run folder or .ckpt> [--out DIR]``: export whatever task a checkpoint
belongs to into a self-contained folder that ``radscore`` loads.

A run folder exports its best checkpoint (``ckpt/best-*.ckpt``; ``ckpt/last.ckpt`` when no best
exists) into ``<run>/export``. The exporters live with their tasks (:mod:`train.ner.export`,
:mod:`train.bleurt.export`, :mod:`train.reward.export`) and share :mod:`train.release.base`
(safe checkpoint loading; an export replaces only an empty folder or a previous export, atomically).
"""

from __future__ import annotations

import json
from pathlib import Path

from train.bleurt.export import export_bleurt
from train.release.base import find_checkpoint, load_checkpoint_dict
from train.ner.export import export_ner
from train.reward.export import export_reward

EXPORTERS = {"ner-iob": export_ner, "ner-span": export_ner, "bleurt": export_bleurt, "reward": export_reward}

__all__ = ["EXPORTERS", "export_any", "export_bleurt", "export_ner", "export_reward", "find_checkpoint"]


def export_any(run_or_ckpt: str | Path, out_dir: str | Path | None = None) -> Path:
    """Export whatever task a checkpoint belongs to (``python -m train export``)."""
    ckpt = find_checkpoint(run_or_ckpt)
    task = (load_checkpoint_dict(ckpt).get("radscore") or {}).get("task")
    if task not in EXPORTERS:
        raise ValueError(f"{ckpt}: no exporter for checkpoint task {task!r}; expected one of {list(EXPORTERS)}")
    run = ckpt.parent.parent
    out_dir = Path(out_dir) if out_dir else run / "export"
    metrics_file = run / "test_metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    return EXPORTERS[task](ckpt, out_dir, metrics)

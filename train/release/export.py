"""``python -m train export <run folder or .ckpt> [--out DIR]``: export whatever task a checkpoint
belongs to into a self-contained folder that ``radscore`` loads.

A run folder exports its best checkpoint (``ckpt/best-*.ckpt``; ``ckpt/last.ckpt`` when no best
exists: :class:`train.lightning.run_folder.RunFolder`) into ``<run>/export``. The exporters live
with their tasks and are found through the task table (:data:`train.tasks.TRAINING_TASKS`, by the
checkpoint's ``radscore.task``); they share :mod:`train.release.base` (safe checkpoint loading; an
export replaces only an empty folder or a previous export, atomically).
"""

from __future__ import annotations

import sys
from pathlib import Path

from train.lightning.run_folder import RunFolder
from train.release.base import find_checkpoint, load_checkpoint_dict
from train.tasks import TASK_OF_KIND


#: checkpoint task kind -> exporter ``(ckpt, out_dir, metrics) -> folder``, from the task table
EXPORTERS = {kind: task.export() for kind, task in TASK_OF_KIND.items()}

__all__ = ["EXPORTERS", "export_any", "find_checkpoint", "main"]


def export_any(run_or_ckpt: str | Path, out_dir: str | Path | None = None) -> Path:
    """Export whatever task a checkpoint belongs to (``python -m train export``)."""
    ckpt = find_checkpoint(run_or_ckpt)
    task = (load_checkpoint_dict(ckpt).get("radscore") or {}).get("task")
    if task not in EXPORTERS:
        raise ValueError(f"{ckpt}: no exporter for checkpoint task {task!r}; expected one of {list(EXPORTERS)}")
    run = RunFolder.of_checkpoint(ckpt)
    out_dir = Path(out_dir) if out_dir else run.export
    return EXPORTERS[task](ckpt, out_dir, run.read_test_metrics())


def main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m train export")
    p.add_argument("run_or_ckpt")
    p.add_argument("--out", default=None,
                   help="new, empty, or previous-export folder (default: <run>/export); "
                        "any other folder is refused")
    a = p.parse_args(argv)
    try:
        print(f"exported to {export_any(a.run_or_ckpt, a.out)}")
    except (FileNotFoundError, ValueError) as exc:  # ExportTargetError, UnsafeCheckpointError, bad task
        print(f"python -m train export: error: {exc}", file=sys.stderr)
        return 2
    return 0

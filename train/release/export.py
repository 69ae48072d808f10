"""``python -m train export <run folder or .ckpt> [--out DIR]``: export a checkpoint of any task into
a self-contained folder that ``radscore`` loads.

A run folder exports its best checkpoint (``ckpt/best-*.ckpt``; ``ckpt/last.ckpt`` when no best
exists) into ``<run>/export`` with the run's ``test_metrics.json``
(:func:`train.release.base.export_checkpoint`: safe checkpoint loading; an export replaces only an
empty folder or a previous export, atomically).
"""

from __future__ import annotations

import sys
from pathlib import Path

from train.lightning.run_folder import RunFolder
from train.release.base import export_checkpoint, find_checkpoint


def export_any(run_or_ckpt: str | Path, out_dir: str | Path | None = None) -> Path:
    """Export the checkpoint of a run folder (or a checkpoint file) with the run's test metrics."""
    ckpt = find_checkpoint(run_or_ckpt)
    run = RunFolder.of_checkpoint(ckpt)
    return export_checkpoint(ckpt, Path(out_dir) if out_dir else run.export, run.read_test_metrics())


def main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m train export")
    p.add_argument("run_or_ckpt")
    p.add_argument("--out", default=None,
                   help="new, empty, or previous-export folder (default: <run>/export); any other folder is refused")
    a = p.parse_args(argv)
    try:
        print(f"exported to {export_any(a.run_or_ckpt, a.out)}")
    except (FileNotFoundError, ValueError) as exc:  # ExportTargetError, UnsafeCheckpointError, not a radscore checkpoint
        print(f"python -m train export: error: {exc}", file=sys.stderr)
        return 2
    return 0

"""What every exporter shares: reading a checkpoint safely and writing the export folder safely.

:func:`export_checkpoint` exports a checkpoint of any task: the module class is named in the
checkpoint, and each training module writes its own model files (``export_files``).

Safety rules:
- checkpoints are read with ``torch.load(..., weights_only=True)``: a ``.ckpt`` that carries code
  (a pickled callable) is refused instead of executed;
- an export replaces only a folder that is missing, empty, or a previous radscore export (it holds
  ``radscore_manifest.json``); anything else (``--out .``, ``--out ~``, a project folder) is refused
  with :class:`ExportTargetError`;
- the export is written into a hidden sibling folder and renamed into place only when complete, so
  an export killed half-way leaves the previous export as it was (the unfinished sibling is removed
  by the next export to the same place; a kill in the instant between the two renames that swap
  the folders leaves the previous export beside its place, and the next export puts it back first).
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import torch

from radscore.export import MANIFEST, write_manifest
from train.lightning.run_folder import RunFolder

STAGING_PREFIX = ".radscore-export-"


class ExportTargetError(ValueError):
    """The output folder of an export is not one an export may replace."""


class UnsafeCheckpointError(ValueError):
    """A checkpoint that cannot be read with ``weights_only=True`` (it would run code when loaded)."""


def load_checkpoint_dict(path: str | Path) -> dict:
    """A Lightning checkpoint as a dict, read with ``weights_only=True``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such checkpoint")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UnsafeCheckpointError(
            f"{path}: refused to load: the checkpoint holds objects other than tensors and plain "
            f"containers, which torch.load(weights_only=True) does not execute ({first}). "
            "radscore's own checkpoints never need that; load it only if you trust its source and "
            "re-save its state_dict."
        ) from None


def find_checkpoint(run_or_ckpt: str | Path) -> Path:
    """A checkpoint file, or the best (else last) checkpoint of a run folder."""
    path = Path(run_or_ckpt)
    return path if path.is_file() else RunFolder(path).checkpoint()


def training_config(ckpt: Path) -> Path | None:
    """The resolved config that LightningCLI saved in the run's newest log folder."""
    return RunFolder.of_checkpoint(ckpt).training_config


def finish_export(out_dir: Path, ckpt: Path, metrics: dict | None) -> Path:
    """The end of every export: ``metrics.json`` and the run's ``training_config.yaml`` (when the
    run saved one) beside the model files and the manifest."""
    (out_dir / "metrics.json").write_text(json.dumps(metrics or {}, indent=1, sort_keys=True) + "\n")
    cfg = training_config(ckpt)
    if cfg is not None:
        shutil.copyfile(cfg, out_dir / "training_config.yaml")
    return out_dir


def module_class(state: dict, ckpt: Path) -> type:
    """The LightningModule class that made a checkpoint: named in its ``radscore`` entry, else in the
    resolved config its run saved (``model.class_path``)."""
    import importlib

    info = state.get("radscore")
    if info is None:
        raise ValueError(f"{ckpt}: not a radscore checkpoint (no 'radscore' entry)")
    path = info.get("class_path")
    if not path:
        cfg = training_config(ckpt)
        if cfg is not None:
            import yaml

            path = ((yaml.safe_load(cfg.read_text(encoding="utf-8")) or {}).get("model") or {}).get("class_path")
    if not path:
        raise ValueError(f"{ckpt}: the checkpoint names no model class and its run folder holds no "
                         "logs/version_*/config.yaml that does")
    module, _, name = str(path).rpartition(".")
    return getattr(importlib.import_module(module), name)


def export_checkpoint(ckpt: str | Path, out_dir: str | Path, metrics: dict | None = None) -> Path:
    """Export a checkpoint of any task: read it safely (:func:`load_checkpoint_dict`), load its
    LightningModule on the CPU in eval mode (which checks the checkpoint's task and settings), then in
    a staging folder (:func:`staged_export`) let the module write its model files
    (``export_files(folder, state)``, returning the task's manifest fields) and add the manifest
    (kind, the checkpoint relative to its run folder, epoch and global step), ``metrics.json`` and
    ``training_config.yaml`` (:func:`finish_export`)."""
    ckpt = Path(ckpt)
    state = load_checkpoint_dict(ckpt)
    cls = module_class(state, ckpt)
    module = cls.load_from_checkpoint(str(ckpt), map_location="cpu", weights_only=True)
    module.eval()
    with staged_export(out_dir) as folder:
        fields = module.export_files(folder, state)
        write_manifest(folder, state["radscore"]["task"], checkpoint=RunFolder.checkpoint_name(ckpt),
                       epoch=state.get("epoch"), global_step=state.get("global_step"), **fields)
        finish_export(folder, ckpt, metrics)
    return Path(out_dir)


def check_export_target(out_dir: str | Path) -> Path:
    """``out_dir`` made absolute, or :class:`ExportTargetError` when an export may not replace it."""
    out = Path(out_dir).expanduser().absolute()
    if out.exists() or out.is_symlink():
        if out.is_symlink() or not out.is_dir():
            raise ExportTargetError(f"{out_dir}: exists and is not a folder; refusing to replace it")
        if any(out.iterdir()) and not (out / MANIFEST).is_file():
            raise ExportTargetError(
                f"{out_dir}: exists, is not empty and is not a radscore export (no {MANIFEST}); "
                "refusing to replace it. Give --out a new or empty folder, or a previous export."
            )
    if out == Path(out.anchor) or out == Path.home().absolute() or out == Path.cwd().absolute():
        raise ExportTargetError(f"{out_dir}: refusing to export into the root, home or current folder")
    return out


def _remove_stale_staging(out: Path) -> None:
    """Clean up after a killed export: a previous export moved aside (``-old-``) goes back into
    place when nothing replaced it; unfinished staging folders are removed."""
    for old in sorted(out.parent.glob(f"{STAGING_PREFIX}{out.name}-old-*")):
        if not out.exists() and (old / MANIFEST).is_file():
            os.replace(old, out)
        else:
            shutil.rmtree(old, ignore_errors=True)
    for stale in out.parent.glob(f"{STAGING_PREFIX}{out.name}-*"):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)


@contextmanager
def staged_export(out_dir: str | Path) -> Iterator[Path]:
    """Yield an empty staging folder beside ``out_dir``; on success it replaces ``out_dir``.

    The target is checked first (:func:`check_export_target`). On an exception the staging folder
    is removed and ``out_dir`` is untouched; after a kill it stays behind, hidden, and the next
    export to the same place removes it."""
    out = Path(out_dir).expanduser().absolute()
    if out.parent.is_dir():
        _remove_stale_staging(out)
    out = check_export_target(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{out.name}-", dir=out.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    old = None
    if out.exists():
        old = out.parent / f"{STAGING_PREFIX}{out.name}-old-{os.getpid()}"
        os.replace(out, old)
    os.replace(staging, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)

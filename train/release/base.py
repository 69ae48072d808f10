"""What every exporter shares: reading a checkpoint safely and writing the export folder safely.

:func:`export_checkpoint` exports a checkpoint of any task: the module class is named in the
checkpoint, and each training module writes its own model files (``export_files``).

Safety rules:
- checkpoints are read with ``torch.load(..., weights_only=True)``: a ``.ckpt`` that carries code
  (a pickled callable) is refused instead of executed;
- an export replaces only a folder that is missing, empty, or a previous radscore export (it holds
  ``radscore_manifest.json``); anything else (``--out .``, ``--out ~``, a project folder) is refused
  with :class:`ExportTargetError`;
- the export is written into a hidden sibling folder, synced to the disk and put in place only when
  complete (every file of it, the manifest included, is there before the folder takes its name), so
  an export killed half-way leaves the previous export as it was (the unfinished sibling is removed
  by the next export to the same place). The previous export and the new one trade places in one
  step (``renameat2`` with ``RENAME_EXCHANGE``), so the folder's name always holds a whole export;
  where the file system cannot exchange, two renames are used, and a kill in the instant between
  them leaves the previous export beside its place: :func:`refuse_unfinished_export` names it, and
  the next export puts it back first.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import pickle
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import torch

from radscore.atomic import TMP_SUFFIX, fsync_folder, write_text_atomic
from radscore.export import MANIFEST, read_manifest, write_manifest
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
    write_text_atomic(out_dir / "metrics.json", json.dumps(metrics or {}, indent=1, sort_keys=True) + "\n")
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


def check_export_target(out_dir: str | Path, marker: str = MANIFEST) -> Path:
    """``out_dir`` made absolute, or :class:`ExportTargetError` when an export may not replace it
    (a non-empty folder without ``marker``, the file that says what wrote it)."""
    out = Path(out_dir).expanduser().absolute()
    if out.exists() or out.is_symlink():
        if out.is_symlink() or not out.is_dir():
            raise ExportTargetError(f"{out_dir}: exists and is not a folder; refusing to replace it")
        if any(out.iterdir()) and not (out / marker).is_file():
            raise ExportTargetError(
                f"{out_dir}: exists, is not empty and is not a radscore "
                f"{'export' if marker == MANIFEST else 'model folder'} (no {marker}); "
                "refusing to replace it. Give --out a new or empty folder, or a previous export."
            )
    if out == Path(out.anchor) or out == Path.home().absolute() or out == Path.cwd().absolute():
        raise ExportTargetError(f"{out_dir}: refusing to export into the root, home or current folder")
    return out


def _remove_stale_staging(out: Path, marker: str = MANIFEST) -> None:
    """Clean up after a killed export: a previous export moved aside (``-old-``) goes back into
    place when nothing replaced it; unfinished staging folders are removed."""
    for old in sorted(out.parent.glob(f"{STAGING_PREFIX}{out.name}-old-*")):
        if not out.exists() and (old / marker).is_file():
            os.replace(old, out)
        else:
            shutil.rmtree(old, ignore_errors=True)
    for stale in out.parent.glob(f"{STAGING_PREFIX}{out.name}-*"):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)


@contextmanager
def staged_export(out_dir: str | Path, marker: str = MANIFEST) -> Iterator[Path]:
    """Yield an empty staging folder beside ``out_dir``; on success it replaces ``out_dir``.

    The target is checked first (:func:`check_export_target`; ``marker`` is the file a folder it
    may replace holds: the manifest of an export, the ``config.json`` of a converted model). On an
    exception the staging folder is removed and ``out_dir`` is untouched; after a kill it stays
    behind, hidden, and the next export to the same place removes it."""
    out = Path(out_dir).expanduser().absolute()
    if out.parent.is_dir():
        _remove_stale_staging(out, marker)
    out = check_export_target(out_dir, marker)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{out.name}-", dir=out.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        sync_tree(staging)
        old = None
        if out.exists():
            old = out.parent / f"{STAGING_PREFIX}{out.name}-old-{os.getpid()}"
            if exchange(staging, out):
                os.replace(staging, old)  # the staging name now holds the previous export
            else:
                os.replace(out, old)
                os.replace(staging, out)
        else:
            os.replace(staging, out)
        fsync_folder(out.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def sync_tree(folder: Path) -> None:
    """Every file under ``folder``, then every folder, reaches the disk (before the rename that
    publishes them)."""
    for root, dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as fh:
                os.fsync(fh.fileno())
    for root, _, _ in os.walk(folder, topdown=False):
        fsync_folder(root)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False,
    with nothing changed, where the C library or the file system does not offer it."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), f"{a} <-> {b}")


def refuse_unfinished_export(folder: str | Path) -> None:
    """A one-line ValueError naming what an export killed half-way left in place of ``folder``: the
    previous export moved aside, an unfinished staging folder where no export is, or a manifest that
    never took its name; nothing when there is no such trace (a Hub id, a plain model folder)."""
    folder = Path(folder)
    if (folder / MANIFEST).is_file() or not folder.parent.is_dir():
        return
    aside = sorted(folder.parent.glob(f"{STAGING_PREFIX}{folder.name}-old-*"))
    if aside:
        raise ValueError(f"{folder}: an export was killed while replacing this one; the previous export is "
                         f"{aside[0]} (the next export to {folder} puts it back); not loading it")
    unfinished = sorted(p for p in folder.parent.glob(f"{STAGING_PREFIX}{folder.name}-*") if p.is_dir())
    if unfinished and not folder.exists():
        raise ValueError(f"{folder}: a half-written export ({unfinished[0]} was never completed); not loading it")
    torn = sorted(folder.glob(f"{MANIFEST}.*{TMP_SUFFIX}")) if folder.is_dir() else []
    if torn:
        raise ValueError(f"{folder}: a half-written export ({torn[0].name} was never completed; no {MANIFEST}); "
                         "not loading it")


def check_export_folder(folder: str | Path, expected_kind: str | tuple[str, ...] | None = None) -> dict:
    """The manifest of an export folder (``read_manifest`` of ``radscore.export``), after
    :func:`refuse_unfinished_export`."""
    refuse_unfinished_export(folder)
    return read_manifest(folder, expected_kind)

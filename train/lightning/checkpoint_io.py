"""Checkpoints written whole or not at all, in the checkpoint's own folder.

Lightning's ``TorchCheckpointIO`` (``_atomic_save`` of ``lightning_fabric.utilities.cloud_io``)
serialises a checkpoint to memory, writes it to a file from ``tempfile.mkstemp()`` (the system's
temporary folder, not the checkpoint's) and moves that file to its final name with
``shutil.move``. The move is one rename only when the temporary folder and the checkpoint folder
are on the same file system; where they are not (``/tmp`` on tmpfs or a node-local disk, the run
on another disk) ``shutil.move`` copies into ``last.ckpt`` itself, so a kill during the copy leaves
a truncated ``last.ckpt`` under its final name, the file ``--ckpt_path last`` resumes from. Nothing
is synced before the move, and a killed write leaves a checkpoint-sized file in the temporary
folder.

:class:`AtomicCheckpointIO` writes to ``<name>.<pid>.tmp`` beside the checkpoint, syncs it and
renames it into place (``atomic_path`` of ``radscore.atomic``): the final name holds the previous
checkpoint or the new one, whatever the file systems. A temporary file a killed write left beside
the checkpoint is removed by the next write of the same checkpoint. The training CLI sets it on
every trainer it builds (``RadscoreCLI.instantiate_trainer`` of ``train.lightning.cli``).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from lightning_fabric.utilities.cloud_io import get_filesystem
from pytorch_lightning.plugins.io import TorchCheckpointIO

from radscore.atomic import TMP_SUFFIX, atomic_path


class AtomicCheckpointIO(TorchCheckpointIO):
    """``TorchCheckpointIO`` whose local writes go to a temporary name in the checkpoint's folder and
    take the final name with one ``os.replace`` (remote paths: Lightning's own write)."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path, storage_options: Any | None = None) -> None:
        from fsspec.implementations.local import LocalFileSystem

        if storage_options is not None or not isinstance(get_filesystem(path), LocalFileSystem):
            return super().save_checkpoint(checkpoint, path, storage_options)
        import torch

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob(f"{path.name}.*{TMP_SUFFIX}"):  # what a killed write left
            with contextlib.suppress(OSError):
                stale.unlink()
        with atomic_path(path) as tmp:
            torch.save(checkpoint, tmp)

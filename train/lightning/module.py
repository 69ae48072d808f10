"""What the NER, ClinicalBLEURT and ER²Score LightningModules share: the validation/test hooks, the
parameter counts logged at fit start, and the optimiser (AdamW in parameter groups with a linear warm-up and decay per step)."""

from __future__ import annotations

import random

import torch


class EvalStages:
    """Routes ``validation_step``/``test_step`` to ``self._eval_step(stage, batch)`` and the epoch
    ends to ``self._eval_end(stage)``; a module collects its predictions in the first and logs the
    split's metrics in the second."""

    def validation_step(self, batch, batch_idx):
        self._eval_step("val", batch)

    def test_step(self, batch, batch_idx):
        self._eval_step("test", batch)

    def on_validation_epoch_end(self):
        self._eval_end("val")

    def on_test_epoch_end(self):
        self._eval_end("test")


PURE_HALF_PRECISIONS = ("bf16-true", "16-true")  # Lightning's precisions that train 16-bit weights on purpose


class ParameterCounts:
    """Logs the module's parameter counts (``params/total``, ``params/trainable``) as hyper-parameters
    to every logger when fitting starts, and warns when trainable parameters are 16-bit under a
    precision that is not pure 16-bit: AdamW then updates them with no float32 copy and rounds away
    every update below half a unit in their last place (a backbone loaded with a 16-bit ``dtype``
    and trained in full; LoRA's trained parameters are float32, ``radscore.reward_model.trainable_in_float32``).
    A module that adds its own ``on_fit_start`` calls ``super().on_fit_start()``."""

    def on_fit_start(self) -> None:
        from pytorch_lightning.utilities import rank_zero_warn

        total = sum(p.numel() for p in self.parameters())
        trainable = sum(p.numel() for p in self.parameters() if p.requires_grad)
        for logger in self.loggers:
            logger.log_hyperparams({"params/total": total, "params/trainable": trainable})
        half = sum(p.numel() for p in self.parameters() if p.requires_grad and p.is_floating_point()
                   and torch.finfo(p.dtype).bits == 16)
        precision = str(getattr(self.trainer, "precision", ""))
        if half and precision not in PURE_HALF_PRECISIONS:
            rank_zero_warn(f"{half:,} of the {trainable:,} trainable parameters are 16-bit under precision "
                           f"{precision!r}: AdamW updates them with no float32 copy and rounds away updates "
                           "below half a unit in their last place (2^-9 of a bfloat16 weight); load the "
                           "model in float32 (dtype: null), or choose bf16-true to train in 16 bits on purpose")


FUSED_DEVICES = ("cpu", "cuda")


def fused_adamw_supported(params: list) -> bool:
    """Whether torch's fused AdamW kernel takes these parameters: all floating point, on the CPU or
    on CUDA. It is the same update as the default (multi-tensor) one, in one kernel: on a 2-core CPU
    the optimizer step of MiniLM (22M parameters) drops from 0.128 s to 0.020 s, 20% of a training
    step (measured with benchmarks/training/bench_train_step.py)."""
    return bool(params) and all(p.is_floating_point() and p.device.type in FUSED_DEVICES for p in params)


def fused_adamw_allowed(trainer) -> bool:
    """Whether the trainer lets a fused optimiser run: Lightning's mixed-precision plugin (``bf16-mixed``,
    ``16-mixed``) refuses gradient clipping with an optimiser that unscales gradients itself, which is
    how it sees every fused one. A CPU with native bf16 keeps ``bf16-mixed`` (:mod:`train.lightning.precision`),
    so a config that clips gradients there gets the default multi-tensor AdamW (the same update)."""
    from pytorch_lightning.plugins.precision import MixedPrecision

    clipping = bool(getattr(trainer, "gradient_clip_val", None))
    return not (clipping and isinstance(getattr(trainer, "precision_plugin", None), MixedPrecision))


def adamw_kernel(device: str, gradient_clip_val=None, precision: str | None = None) -> str:
    """Which AdamW kernel ``adamw_linear_warmup`` runs on ``device`` for a config, as the memory model
    names them: ``fused`` where torch has the kernel, unless the config clips gradients under a
    mixed-precision plugin (``fused_adamw_allowed``); then torch's default, ``foreach`` (multi-tensor)
    on CUDA and ``single`` (one tensor at a time) elsewhere."""
    if device in FUSED_DEVICES and not (gradient_clip_val and str(precision or "").endswith("-mixed")):
        return "fused"
    return "foreach" if device == "cuda" else "single"


def enable_activation_checkpointing(model) -> None:
    """Recompute each layer's activations in the backward pass (a transformers model): through
    ``activation_checkpointing_enable`` where the installed transformers has it (the later 5.x, which
    deprecate ``gradient_checkpointing_enable`` and warn at every call), else the older name. Both
    switch on the same per-layer checkpointing."""
    enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
    enable()


def adamw_linear_warmup(module, body: list, head: list) -> dict:
    """AdamW with ``hparams.weight_decay`` over two groups, ``body`` at ``hparams.lr`` and ``head``
    at ``hparams.head_lr`` (``hparams.lr`` when unset), empty groups left out, and a linear
    schedule: ``hparams.warmup_ratio`` of the steps up, the rest down to 0."""
    from transformers import get_linear_schedule_with_warmup

    hp = module.hparams
    groups = [{"params": body, "lr": hp.lr}, {"params": head, "lr": hp.head_lr or hp.lr}]
    params = [p for g in groups for p in g["params"]]
    optimizer = torch.optim.AdamW([g for g in groups if g["params"]], weight_decay=hp.weight_decay,
                                  fused=(fused_adamw_supported(params) and fused_adamw_allowed(module.trainer)) or None)
    total = max(1, int(module.trainer.estimated_stepping_batches))
    scheduler = get_linear_schedule_with_warmup(optimizer, int(hp.warmup_ratio * total), total)
    return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


SIDE_NAMES = {"train": "train", "dev": "val", "val": "val", "test": "test"}


SPLIT_BY = ("auto", "column", "group")


def resolve_split_by(split_by: str, rows: list, source: str) -> str:
    """``column`` or ``group`` for a datamodule's ``split_by``: ``auto`` (the default) is ``column``
    when every row carries a ``split`` key and ``group`` (the seeded random split by reference
    group) when none does; when only some rows carry one, an error names a row without it (a mix
    is never split silently). ``column`` and ``group`` are returned as given."""
    if split_by not in SPLIT_BY:
        raise ValueError(f"split_by={split_by!r}; expected one of {list(SPLIT_BY)}")
    if split_by != "auto":
        return split_by
    carry = [row.meta.get("split") is not None for row in rows]
    if rows and all(carry):
        return "column"
    if any(carry):
        missing = next(row for row, c in zip(rows, carry) if not c)
        raise ValueError(f"{source}: {sum(carry)} of {len(rows)} rows carry a `split` key but row {missing.id!r} "
                         "does not; split_by 'auto' needs it in every row or in none (or set split_by: "
                         "column or group)")
    return "group"


def split_by_column(rows: list, source: str) -> dict[str, list]:
    """Rows by the side written in their ``split`` key (``train``, ``dev``/``val``, ``test``), as
    the SYNTHETIC sets carry the corpus split (:mod:`data.split`). A row without a known side is
    an error naming it: nothing is dropped or guessed."""
    out = {"train": [], "val": [], "test": []}
    for row in rows:
        side = SIDE_NAMES.get(str(row.meta.get("split")))
        if side is None:
            raise ValueError(f"{source}: row {row.id!r} has split={row.meta.get('split')!r}; split_by 'column' "
                             "needs train, dev (or val) or test in every row")
        out[side].append(row)
    return out


def keep_train_groups(rows: list, fraction: float, seed: int, source: str) -> list:
    """The rows of a seeded share ``fraction`` of the reference groups of ``rows`` (a training split),
    in file order: what a learning curve trains on (``data.train_fraction``; val and test stay whole).
    ``fraction`` 1 returns ``rows`` as they are; at least one group is kept. The groups are kept in a
    seeded order, so a smaller fraction's groups are a subset of a larger one's (same seed)."""
    fraction = float(fraction)
    if not 0 < fraction <= 1:
        raise ValueError(f"{source}: train_fraction={fraction}; expected a share in (0, 1]")
    if fraction == 1:
        return rows
    groups = sorted({r.group for r in rows})
    random.Random(seed).shuffle(groups)
    kept = set(groups[:max(1, round(fraction * len(groups)))])
    return [r for r in rows if r.group in kept]


def datamodule_from_run_config(cfg: dict):
    """The data module a run built, from its resolved config (``logs/version_N/config.yaml`` or the
    export's ``training_config.yaml``): ``data.class_path`` with its ``init_args`` and the model
    settings the CLI links into it (the saved ``data`` section leaves them out)."""
    import importlib
    import inspect

    from train.lightning.cli import LINKED

    data = dict(cfg.get("data") or {})
    module, _, name = str(data.get("class_path") or "").rpartition(".")
    if not module:
        raise ValueError("the run's config names no data.class_path")
    cls = getattr(importlib.import_module(module), name)
    args = dict(data.get("init_args") or {})
    model = (cfg.get("model") or {}).get("init_args") or {}
    accepted = inspect.signature(cls).parameters
    args.update({k: model[k] for k in LINKED if k in model and k in accepted})
    return cls(**args)


def class_path(module) -> str:
    """``module.Class`` of a LightningModule, recorded in its checkpoints so that an export knows what to load."""
    return f"{type(module).__module__}.{type(module).__qualname__}"


def checkpoint_info(checkpoint: dict, expected_task: str) -> dict:
    """The ``radscore`` entry of a Lightning checkpoint of ``expected_task``, or a ValueError saying
    what the checkpoint is instead; each task's ``check_checkpoint`` adds its own checks on it."""
    info = checkpoint.get("radscore")
    if info is None:
        raise ValueError(f"not a radscore checkpoint (no 'radscore' entry); expected a {expected_task} checkpoint")
    if info.get("task") != expected_task:
        raise ValueError(f"checkpoint of task {info.get('task')!r}, expected {expected_task!r}")
    return info

"""``python -m train fit|validate|test|predict --config configs/<task>/<name>.yaml [--config OVERLAY …]``.

One LightningCLI for every training task: the config names the model and the data module by
``class_path``. What it adds to LightningCLI:

- the run folder, ``--run_dir`` or :func:`~train.lightning.run_folder.default_run_dir` of the last
  config: Lightning checkpoints in ``ckpt/`` (the best on the model's ``monitor`` key, and
  ``last.ckpt`` after every validation, so a killed run resumes with ``--ckpt_path last``; every
  checkpoint written to a temporary name beside it and renamed, :mod:`train.lightning.checkpoint_io`;
  a resume with another model, data or seed is refused in one line), CSV logs
  in ``logs/`` (a ``test`` of a finished run logs in ``test_logs/``) and the resolved config;
- the model's settings that its data module needs too (:data:`LINKED`) are given once, in the model
  (:func:`share_model_settings`);
- Weights & Biases beside the CSV logs with ``--wandb true`` (offline without an account);
- ``bf16-mixed`` on a CPU without native bfloat16 becomes ``32-true``, said aloud;
- ``environment.json`` in the run folder: every start's environment record (commit, versions, CPU,
  threads, the precision actually used, the seed);
- after ``fit``: a test of the best checkpoint. What follows a test (baselines, per-row predictions,
  ``test_metrics.json``, the export) is done by the callbacks the config lists
  (:mod:`train.callbacks`).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint
from pytorch_lightning.cli import LightningArgumentParser, LightningCLI
from pytorch_lightning.loggers import CSVLogger

from train.lightning.run_folder import BEST_FILENAME, RunFolder, default_run_dir

#: model settings that a data module taking an argument of the same name receives from the model
LINKED = ("backbone", "system", "prompt_template", "max_length", "candidate_format")
SUBCOMMANDS = ("fit", "validate", "test", "predict")
LIMITS = ("limit_train_batches", "limit_val_batches", "limit_test_batches", "limit_predict_batches")


def integer_limits(trainer: dict, argv: list[str]) -> dict:
    """``--trainer.limit_*_batches=N`` written as a whole number on the command line means N batches
    (Lightning reads an int as a count and a float as a fraction): the command line's own spelling
    decides, since a value can reach the Trainer as ``1.0`` on some library versions."""
    for k, arg in enumerate(argv):
        for key in LIMITS:
            flag = f"--trainer.{key}"
            if arg.startswith(flag + "="):
                text = arg.split("=", 1)[1]
            elif arg == flag and k + 1 < len(argv):
                text = argv[k + 1]
            else:
                continue
            if re.fullmatch(r"\s*\d+\s*", text):
                trainer[key] = int(text)
    return trainer


def rng_states() -> dict:
    """The global random states of torch (and CUDA), numpy and Python as tensors and plain values
    (a checkpoint stays loadable with ``weights_only=True``)."""
    import random

    import numpy as np
    import torch

    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    version, state, gauss_next = random.getstate()
    return {"torch": torch.get_rng_state(),
            "cuda": list(torch.cuda.get_rng_state_all()) if torch.cuda.is_available() else [],
            "numpy": [str(kind), torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss), float(gauss)],
            "python": [int(version), list(state), gauss_next]}


def set_rng_states(states: dict) -> None:
    """Put back what :func:`rng_states` returned."""
    import random

    import numpy as np
    import torch

    torch.set_rng_state(states["torch"])
    if states.get("cuda") and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
    kind, keys, pos, has_gauss, gauss = states["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, gauss))
    version, state, gauss_next = states["python"]
    random.setstate((version, tuple(state), gauss_next))


class ResumeRefused(ValueError):
    """A fit asked to resume from a checkpoint trained with another config."""


#: the config sections a resumed fit must share with the checkpoint's run (the trainer's may change:
#: more epochs, another device)
RUN_SETTINGS = ("seed_everything", "model", "data")


def run_settings(cfg) -> dict:
    """The settings of :data:`RUN_SETTINGS` in a parsed config, flattened to dotted keys."""
    def plain(value):
        return value.as_dict() if hasattr(value, "as_dict") else value

    flat: dict = {}

    def walk(prefix, value):
        value = plain(value)
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{prefix}.{key}", item)
        else:
            flat[prefix] = json.loads(json.dumps(value, default=str))

    for section in RUN_SETTINGS:
        walk(section, cfg.get(section))
    return flat


class RunCheckpoint(ModelCheckpoint):
    """``ModelCheckpoint`` whose ``last.ckpt`` is rewritten after every validation.

    Lightning writes ``last.ckpt`` only when a top-k checkpoint was saved in the same step, so a
    run killed after epochs that did not improve the monitored key would resume from an older
    epoch and lose finished work. Its state in a checkpoint holds the run's settings
    (:func:`run_settings`, set by the CLI before ``fit``), and a fit resuming from a checkpoint whose
    settings differ is refused (:class:`ResumeRefused`, one line naming the checkpoint and the keys).

    It also holds the random states of torch, numpy and Python at the save (Lightning's checkpoint
    does not). A resumed fit puts them back as it loads the checkpoint, before Lightning makes the
    training DataLoader's iterator (which draws a seed from torch's RNG): checkpoints are saved at an
    epoch's end, and the uninterrupted run makes the next epoch's iterator right after, so the
    resumed run draws the shuffles and dropout masks the uninterrupted run drew and ends with the
    same weights. A ``test`` or ``validate`` of a checkpoint leaves the random states alone."""

    run_settings: dict | None = None

    def state_dict(self) -> dict:
        return {**super().state_dict(), "run_settings": self.run_settings, "rng": rng_states()}

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        super().on_train_epoch_end(trainer, pl_module)  # top-k first, when saving at epoch end
        if self._should_save_on_train_epoch_end(trainer):
            self._ensure_last(trainer)

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        super().on_validation_end(trainer, pl_module)
        if not self._should_save_on_train_epoch_end(trainer):
            self._ensure_last(trainer)

    def _ensure_last(self, trainer: pl.Trainer) -> None:
        from pytorch_lightning.trainer.states import TrainerFn

        if (not self.save_last or trainer.fast_dev_run or trainer.sanity_checking
                or trainer.state.fn != TrainerFn.FITTING):
            return
        if getattr(self, "_last_written_step", None) != trainer.global_step:
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))

    def _save_last_checkpoint(self, trainer, monitor_candidates) -> None:
        super()._save_last_checkpoint(trainer, monitor_candidates)
        self._last_written_step = trainer.global_step

    def on_load_checkpoint(self, trainer: pl.Trainer, pl_module: pl.LightningModule, checkpoint: dict) -> None:
        """A resumed fit refuses another config, says where it resumes (what a killed run kept) and puts
        back the random states of the save."""
        from pytorch_lightning.trainer.states import TrainerFn

        if trainer.state.fn != TrainerFn.FITTING:
            return
        stored = ((checkpoint.get("callbacks") or {}).get(self.state_key) or {}).get("run_settings")
        if stored is not None and self.run_settings is not None and stored != self.run_settings:
            differ = sorted(k for k in set(stored) | set(self.run_settings) if stored.get(k) != self.run_settings.get(k))
            raise ResumeRefused(f"cannot resume from {trainer.ckpt_path}: it was trained with another config "
                                f"(differs in: {', '.join(differ)}); resume with the same config, or give a new "
                                "--run_dir to start anew")
        print(f"resuming from {trainer.ckpt_path} at step {checkpoint.get('global_step')} "
              f"(epoch {checkpoint.get('epoch')})", flush=True)
        states = ((checkpoint.get("callbacks") or {}).get(self.state_key) or {}).get("rng")
        if states is not None:
            set_rng_states(states)


def _class(cfg, section: str) -> type | None:
    import importlib

    path = (cfg.get(section) or {}).get("class_path")
    if not path:
        return None
    module, _, name = str(path).rpartition(".")
    return getattr(importlib.import_module(module), name)


def model_class(cfg) -> type | None:
    """The LightningModule class a parsed config names (``model.class_path``), or None."""
    return _class(cfg, "model")


def complete(cfg) -> None:
    """What the CLI fills into a parsed config before it builds anything: the model's shared settings
    in the data module (:func:`share_model_settings`) and the checkpoint's monitored key, named once
    by the model class (``monitor``, ``monitor_mode``) unless the config names one."""
    share_model_settings(cfg)
    module, checkpoint = model_class(cfg), cfg.get("checkpoint")
    if module is not None and checkpoint is not None and checkpoint.get("monitor") is None:
        checkpoint["monitor"], checkpoint["mode"] = module.monitor, module.monitor_mode


def share_model_settings(cfg) -> None:
    """The model's settings of :data:`LINKED` copied into the data module's ``init_args`` where its
    class takes an argument of the same name (the model's value is the one used), so that a config
    states them once, in the model, and the saved config holds what both were built with."""
    import inspect

    data = _class(cfg, "data")
    model = (cfg.get("model") or {}).get("init_args")
    if data is None or not model:
        return
    accepted = inspect.signature(data).parameters
    for name in LINKED:
        if name in model and name in accepted:
            cfg["data"]["init_args"][name] = model[name]


class RadscoreCLI(LightningCLI):
    def __init__(self, args=None, **kwargs):
        super().__init__(None, None, subclass_mode_model=True, subclass_mode_data=True, args=args,
                         save_config_kwargs={"overwrite": True}, **kwargs)

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_argument("--run_dir", type=str | None, default=None,
                            help="run folder (default: checkpoints/<last config's path under configs/>)")
        parser.add_argument("--wandb", type=bool, default=False,
                            help="also log to Weights & Biases (online with a configured account, else offline; "
                                 "WANDB_MODE wins)")
        parser.add_lightning_class_args(RunCheckpoint, "checkpoint")
        parser.set_defaults({"checkpoint.save_last": True, "checkpoint.filename": BEST_FILENAME})

    # --- run folder ----------------------------------------------------------------------------
    @property
    def _cfg(self):
        return self.config[self.subcommand] if self.subcommand else self.config

    def run_folder(self) -> RunFolder:
        cfg = self._cfg
        if cfg.get("run_dir"):
            return RunFolder(cfg["run_dir"])
        ckpt = cfg.get("ckpt_path") if self.subcommand == "test" else None
        if ckpt and Path(str(ckpt)).parent.name == RunFolder("").ckpt.name:  # <run>/ckpt/X.ckpt: that run's folder
            return RunFolder.of_checkpoint(ckpt)
        configs = cfg.get("config") or []
        return RunFolder(default_run_dir(str(configs[-1]) if configs else None))

    def before_instantiate_classes(self) -> None:
        from train.lightning.precision import effective_precision

        cfg, run = self._cfg, self.run_folder()
        trainer, checkpoint = cfg["trainer"], cfg["checkpoint"]
        if trainer.get("default_root_dir") is None:
            trainer["default_root_dir"] = str(run.path)
        if checkpoint.get("dirpath") is None:
            checkpoint["dirpath"] = str(run.ckpt)
        complete(cfg)
        integer_limits(trainer, list(self._args or []))
        precision, reason = effective_precision(trainer.get("precision"), trainer.get("accelerator"))
        if reason:
            trainer["precision"] = precision
            print(reason, flush=True)

    def parse_arguments(self, parser, args) -> None:
        self._args = list(args) if isinstance(args, (list, tuple)) else list(sys.argv[1:] if args is None else [])
        super().parse_arguments(parser, args)

    def instantiate_trainer(self, **kwargs) -> pl.Trainer:
        from pytorch_lightning.plugins.io import CheckpointIO

        from train.lightning.checkpoint_io import AtomicCheckpointIO

        trainer_cfg = self._get(self.config_init, "trainer", default={})
        plugins = trainer_cfg.get("plugins")
        plugins = list(plugins) if isinstance(plugins, (list, tuple)) else [] if plugins is None else [plugins]
        if not any(isinstance(p, CheckpointIO) for p in plugins):  # checkpoints written whole (checkpoint_io.py)
            kwargs["plugins"] = [*plugins, AtomicCheckpointIO()]
        if trainer_cfg.get("logger") in (None, True) and "logger" not in kwargs:
            run = self.run_folder()
            # a test of a finished run logs beside its training logs: logs/version_*/config.yaml stays the training config
            name = run.test_logs.name if self.subcommand == "test" else run.logs.name
            loggers = [CSVLogger(str(run.path), name=name)]
            if self._cfg.get("wandb"):
                from pytorch_lightning.loggers import WandbLogger

                from train.lightning import wandb_mode

                wandb_mode.apply()
                loggers.append(WandbLogger(project="radscore", name=run.name, save_dir=str(run.path)))
            kwargs["logger"] = loggers
        trainer = super().instantiate_trainer(**kwargs)
        if self.subcommand and trainer.is_global_zero:
            from radscore.environment import environment

            env = environment(precision=trainer.precision, seed=self._cfg.get("seed_everything"))
            self.run_folder().record_environment(self.subcommand, env, self._cfg.get("ckpt_path"))
        return trainer

    def before_fit(self) -> None:
        cb = self.trainer.checkpoint_callback
        if isinstance(cb, RunCheckpoint):
            cb.run_settings = run_settings(self._cfg)

    def after_fit(self) -> None:
        """The best checkpoint tested on the test split (the callbacks write what follows)."""
        trainer = self.trainer
        if trainer.fast_dev_run or getattr(trainer, "interrupted", False):
            return
        cb = trainer.checkpoint_callback
        ckpt = (cb.best_model_path or cb.last_model_path) if cb is not None else None
        trainer.test(self.model, datamodule=self.datamodule, ckpt_path=ckpt or None, weights_only=True)


def parse_cli(args: list[str]) -> RadscoreCLI:
    """The training CLI after parsing ``args`` (``--config …`` and overrides, no subcommand) as
    ``python -m train fit`` does, with nothing instantiated and nothing run."""
    import warnings

    class Parse(RadscoreCLI):
        def before_instantiate_classes(self) -> None:
            pass

        def instantiate_classes(self) -> None:
            pass

    with warnings.catch_warnings():  # "args and sys.argv[1:] both given": args are the point here
        warnings.filterwarnings("ignore", message="LightningCLI's args parameter", category=UserWarning)
        return Parse(args=list(args), run=False)


def resolve(*paths: str | Path, args=()) -> dict:
    """The config a training run of ``paths`` (and ``args``) would use and save, defaults filled in
    and :func:`complete`d, as a plain mapping (without the ``config`` key)."""
    import yaml

    from train.lightning.configs import config_args

    cli = parse_cli([*config_args(paths), *args])
    complete(cli.config)
    out = yaml.safe_load(cli.parser.dump(cli.config, skip_none=False, skip_check=True))
    out.pop("config", None)
    return out


def fit_args(configs, run_dir: str | Path | None = None, overrides=()) -> list[str]:
    """The arguments of ``python -m train fit`` for ``configs`` in order, ``overrides`` and a run
    folder: what make, the demo, the ablations and the rehearsal each run."""
    from train.lightning.configs import config_args

    return ["fit", *config_args(configs), *overrides, *([f"--run_dir={run_dir}"] if run_dir else [])]


def check_overlay(argv: list[str]) -> str | None:
    """Why the command line cannot run when its first config is an overlay given without its base."""
    from train.lightning.configs import ConfigError, overlay_base, read_yaml

    first = next((argv[k + 1] for k, a in enumerate(argv[:-1]) if a == "--config"),
                 next((a.split("=", 1)[1] for a in argv if a.startswith("--config=")), None))
    if first is None or not Path(first).is_file():
        return None
    try:
        named = (read_yaml(first).get("model") or {}).get("class_path")
    except ConfigError as err:
        return str(err)
    base = overlay_base(first)
    if named or base is None:
        return None
    return f"{first} is an overlay of {base}: give its base first: --config {base} --config {first}"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    problem = check_overlay(argv)
    if problem:
        print(f"python -m train: error: {problem}", file=sys.stderr)
        return 2
    try:
        RadscoreCLI(args=argv)
    except ResumeRefused as err:
        print(f"python -m train: error: {err}", file=sys.stderr)
        return 2
    return 0

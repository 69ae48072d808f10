"""The LightningCLI shared by every training task (``python -m train <task> {fit,validate,test,predict}``).

What it adds to LightningCLI:
- config files as overlays on a base (``base: paper_llama3.yaml``, :mod:`train.lightning.configs`):
  each ``--config X`` of the command line becomes ``--config BASE … --config X`` before parsing, so
  jsonargparse composes the chain (mappings merge key by key, ``model.init_args`` included);
- the run folder ``checkpoints/<config file stem>/`` (``--run_dir`` overrides it): Lightning
  checkpoints in ``ckpt/`` (the best on the task's monitored key, and ``last.ckpt``, so a killed
  run resumes with ``--ckpt_path last``), CSV logs in ``logs/`` and the resolved config;
- CSV logging always, plus Weights & Biases when ``--wandb true`` (online when the user has an
  account configured, offline otherwise, ``WANDB_MODE`` when set: :mod:`train.lightning.wandb_mode`);
- ``bf16-mixed`` on a CPU without native bfloat16 becomes ``32-true``, said aloud
  (:mod:`train.lightning.precision`);
- after ``fit``: a test on the test split with the best checkpoint, ``test_metrics.json`` in the
  run folder, and the export in ``<run>/export/`` (rank 0 only);
- after a test, for tasks rated by people (ClinicalBLEURT, ER²Score; unless ``--test_baselines false``), the text-only baselines of
  :data:`train.evaluation.baselines.BESIDE_MODEL` and the shallow learner (ridge on diff n-grams and counts, fitted on
  the train rows only) on the same test rows, printed beside the model's figures
  and written as ``test/baseline/<name>/<statistic>`` into ``test_metrics.json``;
- after a test of those tasks, ``<run>/test_predictions.jsonl`` (rank 0): one line per test row with
  its id, reference group, the model's prediction, the label(s) and the baselines' scores on it
  (the data module's ``prediction_lines``), so that a statistic and its bootstrap CI can be recomputed
  (``benchmarks/quality/learned_tables.py``). ``python -m train <task> test --ckpt_path <run>/ckpt/X.ckpt``
  writes it into the checkpoint's run folder (a run trained before this file existed gets one without
  retraining);
- ``test``'s run folder is ``--run_dir``, else the checkpoint's (``<run>/ckpt/X.ckpt``), else the config's;
  a test logs into ``<run>/test_logs/``, so that ``<run>/logs/version_*/config.yaml`` stays the
  training config.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint
from pytorch_lightning.cli import LightningArgumentParser, LightningCLI
from pytorch_lightning.loggers import CSVLogger

from train.lightning.run_folder import BEST_FILENAME, RunFolder, default_run_name

CHECKPOINTS_ROOT = Path("checkpoints")


LIMITS = ("limit_train_batches", "limit_val_batches", "limit_test_batches", "limit_predict_batches")


def integer_limits(trainer: dict, argv: list[str]) -> dict:
    """``--trainer.limit_*_batches=N`` written as a whole number on the command line means N batches
    (Lightning reads an int as a count and a float as a fraction, so ``1.0`` is every batch). Here
    jsonargparse keeps ``1`` an int, but a run with Lightning 2.6.6 and jsonargparse 4.53 on a GPU
    host handed the Trainer ``1.0`` (issue #30): the command line's own spelling decides, for every
    task's CLI. ``1.0`` or ``0.5`` stay fractions; config files keep YAML's own int/float."""
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


class RunCheckpoint(ModelCheckpoint):
    """``ModelCheckpoint`` whose ``last.ckpt`` is rewritten after every validation.

    Lightning 2.6 writes ``last.ckpt`` only when a top-k checkpoint was saved in the same step,
    so a run killed after epochs that did not improve the monitored key would resume from an
    older epoch and lose finished work. This writes ``last.ckpt`` every time.
    """

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


class RadscoreCLI(LightningCLI):
    """Subclasses set ``task`` (the task's name in :data:`train.tasks.TRAINING_TASKS`, which gives
    its exporter and run-folder prefix), ``monitor`` (the task's monitored key) and ``monitor_mode``."""

    task: str | None = None
    monitor = "val/loss"
    monitor_mode = "min"
    link_backbone = True

    def __init__(self, model_class, datamodule_class, args=None, **kwargs):
        from train.lightning.configs import expand_config_args

        if args is None or isinstance(args, (list, tuple)):  # a dict or Namespace has no --config to expand
            args = expand_config_args(list(sys.argv[1:] if args is None else args))
        self._argv = list(args) if isinstance(args, list) else []
        super().__init__(
            model_class, datamodule_class, subclass_mode_model=True, args=args,
            save_config_kwargs={"overwrite": True}, **kwargs,
        )

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_argument("--run_dir", type=str | None, default=None,
                            help="run folder (default: checkpoints/<config file stem>)")
        parser.add_argument("--wandb", type=bool, default=False,
                            help="also log to Weights & Biases (online with a configured account, else offline; WANDB_MODE wins)")
        parser.add_argument("--test_baselines", type=bool, default=True,
                            help="after fit's test, the text-only baselines and the shallow learner beside the model "
                                 "(false: left out of test_metrics.json, and test_predictions.jsonl's lines carry every baseline's "
                                 "score but the shallow learner's; e.g. on a GPU host where the shallow learner's CPU fit would "
                                 "cost more than the training: benchmarks/quality/learning_curve.py fits it elsewhere on the "
                                 "same rows)")
        # ``base:`` of an overlay config: read by expand_config_args, which puts the base's --config first;
        # accepted here so that the overlay parses, and left out of --help and of the saved config
        # (help=SUPPRESS), so that an overlay's resolved config prints as a full copy's did
        parser.add_argument("--base", type=str | None, default=None, help=argparse.SUPPRESS)
        parser.add_lightning_class_args(RunCheckpoint, "checkpoint")
        parser.set_defaults({"checkpoint.monitor": self.monitor, "checkpoint.mode": self.monitor_mode,
                             "checkpoint.save_last": True, "checkpoint.filename": BEST_FILENAME})
        if self.link_backbone:
            parser.link_arguments("model.init_args.backbone", "data.backbone")

    # --- run folder ----------------------------------------------------------------------------
    @property
    def _cfg(self):
        return self.config[self.subcommand] if self.subcommand else self.config

    @property
    def training_task(self):
        from train.tasks import TRAINING_TASKS

        return TRAINING_TASKS.get(self.task or "")

    def run_dir(self) -> Path:
        cfg = self._cfg
        if cfg.get("run_dir"):
            return Path(cfg["run_dir"])
        ckpt = cfg.get("ckpt_path") if self.subcommand == "test" else None
        if ckpt and Path(str(ckpt)).parent.name == RunFolder("").ckpt.name:  # <run>/ckpt/X.ckpt: that run's folder
            return RunFolder.of_checkpoint(ckpt).path
        configs = cfg.get("config") or []
        stem = Path(str(configs[-1])).stem if configs else f"{type(self).__name__.lower()}_run"
        return CHECKPOINTS_ROOT / default_run_name(self.training_task.run_prefix if self.training_task else "", stem)

    def run_folder(self) -> RunFolder:
        return RunFolder(self.run_dir())

    def before_instantiate_classes(self) -> None:
        cfg, run = self._cfg, self.run_folder()
        if cfg["trainer"].get("default_root_dir") is None:
            cfg["trainer"]["default_root_dir"] = str(run.path)
        if cfg["checkpoint"].get("dirpath") is None:
            cfg["checkpoint"]["dirpath"] = str(run.ckpt)
        from train.lightning.precision import effective_precision

        trainer = cfg["trainer"]
        integer_limits(trainer, self._argv)
        precision, reason = effective_precision(trainer.get("precision"), trainer.get("accelerator"))
        if reason:
            trainer["precision"] = precision
            print(reason, flush=True)

    def instantiate_trainer(self, **kwargs) -> pl.Trainer:
        trainer_cfg = self._get(self.config_init, "trainer", default={})
        if trainer_cfg.get("logger") in (None, True) and "logger" not in kwargs:
            run = self.run_folder()
            # a test of a finished run logs beside its training logs, not among them: logs/version_*/config.yaml
            # stays the training config (RunFolder.training_config)
            name = run.test_logs.name if self.subcommand == "test" else run.logs.name
            loggers = [CSVLogger(str(run.path), name=name)]
            if self._cfg.get("wandb"):
                from pytorch_lightning.loggers import WandbLogger

                from train.lightning import wandb_mode

                wandb_mode.apply()
                loggers.append(WandbLogger(project="radscore", name=run.name, save_dir=str(run.path)))
            kwargs["logger"] = loggers
        return super().instantiate_trainer(**kwargs)

    # --- after fit: test, metrics, export -------------------------------------------------------
    def after_fit(self) -> None:
        trainer = self.trainer
        if trainer.fast_dev_run or getattr(trainer, "interrupted", False):
            return
        ckpt = self.best_checkpoint()
        results = trainer.test(self.model, datamodule=self.datamodule, ckpt_path=ckpt, weights_only=True)
        metrics = {k: float(v) for k, v in (results[0] if results else {}).items()}
        if trainer.is_global_zero:
            baselines = self._cfg.get("test_baselines", True)
            if baselines:
                metrics.update(self.beside_baselines(metrics))
            run = self.run_folder()
            run.path.mkdir(parents=True, exist_ok=True)
            run.test_metrics.write_text(json.dumps(metrics, indent=1, sort_keys=True) + "\n")
            # its lines carry the baselines' scores; without the baselines, all but the shallow learner's (whose
            # fit is what --test_baselines false saves): the model's predictions still travel, for bootstrap CIs
            self.write_test_predictions(run, shallow=bool(baselines))
            if self.training_task is not None and ckpt is not None:
                out = self.training_task.export()(ckpt, run.export, metrics)
                print(f"exported to {out}")
        trainer.strategy.barrier()

    def after_test(self) -> None:
        """``python -m train <task> test``: the baselines beside the metrics just printed."""
        if self.trainer.is_global_zero:
            self.beside_baselines({k: float(v) for k, v in self.trainer.callback_metrics.items()})
            self.write_test_predictions(self.run_folder())

    def write_test_predictions(self, run: RunFolder, shallow: bool = True) -> Path | None:
        """``<run>/test_predictions.jsonl`` from the model's per-row test predictions (gathered over the
        ranks by the model) and the data module's labels and baseline scores; nothing for a task
        without them."""
        predictions = getattr(self.model, "test_predictions", None)
        lines = getattr(self.datamodule, "prediction_lines", None)
        if not predictions or lines is None:
            return None
        # a test cut short by --trainer.limit_test_batches (the GPU session's CPU rehearsal) has predictions
        # for its first batches only: the file then holds those rows, as the test metrics cover only them
        limit = getattr(self.trainer, "limit_test_batches", 1.0)
        partial = not (isinstance(limit, float) and limit == 1.0)
        rows = lines(predictions, "test", shallow, scored_only=partial)  # all before the file: a failure leaves none
        run.path.mkdir(parents=True, exist_ok=True)
        path = run.test_predictions
        with path.open("w", encoding="utf-8") as f:
            for line in rows:
                f.write(json.dumps(line) + "\n")
        print(f"per-row test predictions: {path}", flush=True)
        return path

    def beside_baselines(self, metrics: dict[str, float], split: str = "test") -> dict[str, float]:
        """What text alone reaches on the rows the model was just tested on, printed beside the
        model's own figures and returned as ``test/baseline/<name>/<statistic>``; for datamodules with
        ratings (they define ``baseline_metrics``), else nothing. A metric means little on a set
        that a diff counter solves (issue #14)."""
        fn = getattr(self.datamodule, "baseline_metrics", None)
        if fn is None or f"{split}/kendall" not in metrics:
            return {}
        from train.evaluation.baselines import beside_baselines_table

        table = fn(split)
        model = {c: metrics[f"{split}/{c}"] for c in next(iter(table.values()))}
        print(beside_baselines_table(f"{split} split: the model beside text-only baselines (no pretrained model; "
                                     "the shallow learner is fitted on the train rows) on the same rows",
                                     model, table), flush=True)
        return {f"{split}/baseline/{n}/{c}": v for n, values in table.items() for c, v in values.items()}

    def best_checkpoint(self) -> str | None:
        cb = self.trainer.checkpoint_callback
        if cb is not None and cb.best_model_path:
            return cb.best_model_path
        if cb is not None and cb.last_model_path:
            return cb.last_model_path
        return None

"""What follows a test, as Lightning callbacks a training config lists under ``trainer.callbacks``:

- :class:`RatedTestReport` (tasks rated by people: ER²Score, ClinicalBLEURT): the text-only
  baselines and the shallow learner on the rows the model was just tested on, printed beside the
  model's figures and added to the test metrics (``test/baseline/<name>/<statistic>``), and
  ``<run>/test_predictions.jsonl``: one line per test row with its id, reference group, the model's
  prediction, its labels and every baseline's score, so that a statistic and its bootstrap CI can
  be recomputed later;
- :class:`Export` (every task): after ``fit``'s test, ``<run>/test_metrics.json`` and the export of
  the tested checkpoint in ``<run>/export`` (rank 0), the folder ``radscore`` loads;
- :class:`NERPredictionWriter`: ``python -m train predict`` of an NER model writes
  ``<run>/predictions.jsonl`` (one sentence a line, word tags and entities).

List :class:`RatedTestReport` before :class:`Export`, so that the export's metrics hold the baselines.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytorch_lightning as pl
from pytorch_lightning.callbacks import BasePredictionWriter, Callback

from radscore.atomic import atomic_open, write_text_atomic
from train.lightning.run_folder import RunFolder


def run_folder(trainer: pl.Trainer) -> RunFolder:
    """The run folder of a trainer built by the training CLI (its ``default_root_dir``)."""
    return RunFolder(trainer.default_root_dir)


def _write_lines(path: Path, lines) -> None:
    """JSON lines, written whole or not at all (``atomic_open`` of ``radscore.atomic``): a kill
    leaves the previous file, never part of the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


class RatedTestReport(Callback):
    """Baselines beside the model and per-row test predictions, for a data module with
    ``rated_split(split) -> data.rated.RatedSplit`` and a model with ``test_predictions``
    (row id -> its prediction's fields) after a test.

    Args:
        shallow: fit the shallow learner on the train rows (false: the trivial baselines only, e.g.
            where its CPU fit would cost more than the training; the predictions file still holds
            the model's scores and every other baseline's).
    """

    def __init__(self, shallow: bool = True):
        self.shallow = bool(shallow)

    def on_test_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        predictions = getattr(pl_module, "test_predictions", None)
        dm = trainer.datamodule
        if not trainer.is_global_zero or not predictions or not hasattr(dm, "rated_split"):
            return
        from train.evaluation.baselines import beside_baselines_table
        from train.evaluation.beside import split_baselines

        test = dm.rated_split("test")
        repeated = sorted({row for row in test.ids if test.ids.count(row) > 1})
        if repeated:
            raise ValueError(f"test: row ids must be unique for per-row predictions; repeated: {repeated[:5]}")
        limit = trainer.limit_test_batches
        partial = not (isinstance(limit, float) and limit == 1.0)  # a test cut short: only the rows it scored
        missing = sorted(set(test.ids) - set(predictions))
        if missing and not partial:
            raise ValueError(f"test: the model scored no prediction for row(s) {missing[:5]}")
        found = split_baselines(dm.rated_split("train"), test, shallow=self.shallow)
        metrics = {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("test/")}
        if found.metrics and "test/kendall" in metrics:
            model = {c: metrics[f"test/{c}"] for c in next(iter(found.metrics.values()))
                     if f"test/{c}" in metrics}
            print(beside_baselines_table("test split: the model beside text-only baselines (no pretrained model; "
                                         "the shallow learner is fitted on the train rows) on the same rows",
                                         model, found.metrics), flush=True)
            import torch

            for name, values in found.metrics.items():
                for stat, value in values.items():
                    trainer.callback_metrics[f"test/baseline/{name}/{stat}"] = torch.tensor(float(value))
        lines = [{"id": row, "group": test.groups[k], **predictions[row], **test.labels[k],
                  "baselines": {n: float(v[k]) for n, v in found.scores.items()}}
                 for k, row in enumerate(test.ids) if row in predictions]
        path = run_folder(trainer).test_predictions
        _write_lines(path, lines)
        print(f"per-row test predictions: {path}", flush=True)


class Export(Callback):
    """After ``fit``'s test: ``<run>/test_metrics.json`` (every ``test/`` metric) and the tested
    checkpoint exported to ``<run>/export`` (:func:`train.release.base.export_checkpoint`). A
    ``test`` of a finished run exports nothing."""

    def __init__(self):
        self._fitted = False

    def setup(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        mine = trainer.callbacks.index(self)
        late = [type(cb).__name__ for cb in trainer.callbacks[mine + 1:] if isinstance(cb, RatedTestReport)]
        if late:
            raise ValueError("trainer.callbacks: list RatedTestReport before Export, so that the export's metrics "
                             "hold the baselines")

    def on_fit_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._fitted = not trainer.fast_dev_run and not trainer.interrupted

    def on_test_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if not self._fitted:
            return
        self._fitted = False
        if trainer.is_global_zero:
            from train.release.base import export_checkpoint

            run = run_folder(trainer)
            metrics = {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("test/")}
            run.path.mkdir(parents=True, exist_ok=True)
            write_text_atomic(run.test_metrics, json.dumps(metrics, indent=1, sort_keys=True) + "\n")
            if trainer.ckpt_path:
                print(f"exported to {export_checkpoint(trainer.ckpt_path, run.export, metrics)}", flush=True)
        trainer.strategy.barrier()


class NERPredictionWriter(BasePredictionWriter):
    """``<run>/predictions.jsonl`` after ``predict``: one sentence a line (rank 0 writes every rank's)."""

    def __init__(self):
        super().__init__(write_interval="epoch")

    def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices) -> None:
        from train.lightning.distributed import gather_objects

        rows = gather_objects([row for batch in predictions for row in batch])
        if trainer.is_global_zero:
            path = run_folder(trainer).predictions
            _write_lines(path, rows)
            print(f"wrote {path}", flush=True)

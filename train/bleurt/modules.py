"""The ClinicalBLEURT LightningModule: a cross-encoder regressor trained with squared error (SPEC §4).

``[CLS] reference [SEP] candidate [SEP]`` -> encoder -> pooled state -> one linear output, loss
= mean squared error against the quality target. Any HF encoder works through
``AutoModelForSequenceClassification(num_labels=1)``; BLEURT checkpoints (bleurt-pytorch layout,
e.g. ``lucadiliello/BLEURT-20-D12``) are converted on load (:mod:`train.bleurt.convert`).

Validation and test gather every rank's predictions before computing MSE, Pearson and Kendall,
so the figures are those of the whole split under DDP too (the distributed sampler may repeat up
to ``world_size - 1`` pairs to even out the shards).
"""

from __future__ import annotations

from typing import Literal

import pytorch_lightning as pl
import torch
import torch.nn.functional as F

from radscore.models import PACKAGED_MINILM
from radscore.text import check_candidate_format
from train.bleurt.convert import load_regressor
from train.bleurt.metrics import regression_metrics
from train.lightning.distributed import gather_objects
from train.lightning.module import EvalStages, ParameterCounts, adamw_linear_warmup, checkpoint_info, class_path

TASK = "bleurt"
MONITOR = "val/pearson"  # the ClinicalBLEURT task's monitored key (higher is better), defined once
MONITOR_MODE = "max"


class ClinicalBLEURTRegressor(ParameterCounts, EvalStages, pl.LightningModule):
    """Fine-tunes a sequence regressor on quality targets.

    Args:
        backbone: HF model id/folder, ``packaged:all-MiniLM-L6-v2``, or a BLEURT checkpoint.
        lr: learning rate of the encoder (AdamW, linear decay after warm-up).
        head_lr: learning rate of the pooler and output layer (default: ``lr``).
        weight_decay: AdamW weight decay (biases and LayerNorms included, as BLEURT's optimiser).
        warmup_ratio: share of the optimiser steps with a linear warm-up.
        max_length: longest pair in pieces (given to the data module too by the CLI); longer pairs
            follow the longest-first rule of :mod:`radscore.bleurt` and are counted.
        classifier_dropout: dropout before the output layer (default: the backbone's).
        candidate_format: ``plain`` (ClinicalBLEURT's input), ``diff_marked`` (our opt-in: the candidate's
            differences from the reference marked, :func:`radscore.text.mark_differences`) or ``diff_only``
            (our opt-in: an empty reference paired with the marked candidate); recorded in the export's manifest, which scores with the same format. Linked into the data module.
    """

    monitor, monitor_mode = MONITOR, MONITOR_MODE

    def __init__(self, backbone: str = PACKAGED_MINILM, lr: float = 1e-5, head_lr: float | None = None,
                 weight_decay: float = 0.01, warmup_ratio: float = 0.1, max_length: int = 512,
                 classifier_dropout: float | None = None,
                 candidate_format: Literal["plain", "diff_marked", "diff_only"] = "plain"):
        super().__init__()
        check_candidate_format(candidate_format)
        self.save_hyperparameters()
        self.model = load_regressor(backbone, classifier_dropout)
        self.model.train()  # from_pretrained returns eval mode; Lightning keeps submodule modes
        self._eval: dict[str, list] = {}
        #: after a test: row id -> ``{"prediction": the model's score}``
        self.test_predictions: dict[str, dict] = {}

    def head_parameters(self) -> list[torch.nn.Parameter]:
        """The output layer and, when the model has one, the pooler: new or task-specific weights."""
        base = getattr(self.model, self.model.base_model_prefix, None)
        pooler = getattr(base, "pooler", None)
        head = [p for name, p in self.model.named_parameters()
                if not name.startswith(self.model.base_model_prefix + ".")]
        return head + (list(pooler.parameters()) if pooler is not None else [])

    def forward(self, batch: dict) -> torch.Tensor:
        inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in batch}
        return self.model(**inputs).logits.squeeze(-1).float()

    def training_step(self, batch, batch_idx):
        loss = F.mse_loss(self(batch), batch["target"])
        self.log("train/loss", loss, prog_bar=True, batch_size=len(batch["target"]))
        return loss

    def _eval_step(self, stage: str, batch) -> None:
        pred = self(batch)
        loss = F.mse_loss(pred, batch["target"])
        self.log(f"{stage}/loss", loss, batch_size=len(batch["target"]), sync_dist=True)
        ids = batch.get("ids") or [None] * len(pred)
        self._eval.setdefault(stage, []).extend(zip(pred.tolist(), batch["target"].tolist(), ids))

    def _eval_end(self, stage: str) -> None:
        pairs = gather_objects(self._eval.pop(stage, []))
        if not pairs:
            return
        metrics = regression_metrics([p for p, _, _ in pairs], [t for _, t, _ in pairs])
        for key in ("mse", "pearson", "kendall"):
            self.log(f"{stage}/{key}", metrics[key], prog_bar=key == "pearson", rank_zero_only=False)
        if stage == "test":  # per row, every rank's (a row repeated by the distributed sampler once)
            self.test_predictions = {}
            for p, _, row in pairs:
                if row is not None:
                    self.test_predictions.setdefault(row, {"prediction": float(p)})

    def predict_step(self, batch, batch_idx):
        raise ValueError("ClinicalBLEURT has no predict step: score with radscore (radscore.ClinicalBLEURT, or "
                         "radscore score --metric bleurt --model <export>)")

    def configure_optimizers(self):
        head = {id(p) for p in self.head_parameters()}
        return adamw_linear_warmup(self, [p for p in self.parameters() if id(p) not in head],
                                   [p for p in self.parameters() if id(p) in head])

    # --- checkpoints: refuse a checkpoint of another task -------------------------------------
    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["radscore"] = {"task": TASK, "class_path": class_path(self)}

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        check_checkpoint(checkpoint)


    # --- export: the folder radscore.ClinicalBLEURT loads ---------------------------------------------
    def export_files(self, folder, state: dict) -> dict:
        """A standard ``*ForSequenceClassification`` model with one output and its tokenizer; the
        manifest fields say how it reads its input (``max_length`` and the length rule, the template,
        the candidate format) and the target it was trained on (formula and weights).
        ``folder`` is the hidden staging folder of ``staged_export`` of ``train.release.base``, which takes
        the export's place whole once the manifest is written."""
        from data.clinical_bleurt import check_weights
        from train.bleurt.convert import load_tokenizer

        self.model.config.problem_type = "regression"
        data_hp = state.get("datamodule_hyper_parameters") or {}
        target = {"formula": "1 - error_score / max_sentlen", "weights": check_weights(data_hp.get("weights")),
                  "prefer": data_hp.get("prefer", "counts"), "note": "rows with only a score were trained on that score"}
        self.model.save_pretrained(folder)
        load_tokenizer(self.hparams.backbone).save_pretrained(folder)
        return {"backbone": self.hparams.backbone,
                "max_length": int(data_hp.get("max_length", self.hparams.max_length)),
                "length_rule": "longest_first", "input": "[CLS] reference [SEP] candidate [SEP]", "target": target,
                "candidate_format": data_hp.get("candidate_format", self.hparams.get("candidate_format", "plain"))}


def check_checkpoint(checkpoint: dict) -> None:
    checkpoint_info(checkpoint, TASK)

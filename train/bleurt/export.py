"""Export a ClinicalBLEURT checkpoint: the folder ``radscore.ClinicalBLEURT`` loads.

The folder is a standard ``*ForSequenceClassification`` model with one output (``config.json``,
``model.safetensors``), its tokenizer, ``radscore_manifest.json`` (kind ``bleurt``: backbone,
``max_length`` and the length rule, the input template, the target's formula and weights),
``metrics.json`` (test MSE, Pearson, Kendall) and ``training_config.yaml`` when known
(:func:`train.release.base.export_checkpoint`).
"""

from __future__ import annotations

from pathlib import Path

from train.release.base import export_checkpoint


def _write_bleurt(folder: Path, module, state: dict, task: str) -> dict:
    from data.clinical_bleurt import check_weights
    from train.bleurt.convert import load_tokenizer

    module.model.config.problem_type = "regression"
    data_hp = state.get("datamodule_hyper_parameters") or {}
    target = {"formula": "1 - error_score / max_sentlen",
              "weights": check_weights(data_hp.get("weights")),
              "prefer": data_hp.get("prefer", "counts"),
              "note": "rows with only a score were trained on that score"}
    module.model.save_pretrained(folder)
    load_tokenizer(module.hparams.backbone).save_pretrained(folder)
    return {"backbone": module.hparams.backbone,
            "max_length": int(data_hp.get("max_length", module.hparams.max_length)),
            "length_rule": "longest_first", "input": "[CLS] reference [SEP] candidate [SEP]", "target": target,
            "candidate_format": data_hp.get("candidate_format", module.hparams.get("candidate_format", "plain"))}


def export_bleurt(ckpt: str | Path, out_dir: str | Path, metrics: dict | None = None) -> Path:
    from train.bleurt.modules import TASK, ClinicalBLEURTRegressor, check_checkpoint

    return export_checkpoint(ckpt, out_dir, metrics, {TASK: ClinicalBLEURTRegressor},
                             lambda state, task: check_checkpoint(state), _write_bleurt)

"""Export a ClinicalBLEURT checkpoint: the folder ``radscore.ClinicalBLEURT`` loads.

The folder is a standard ``*ForSequenceClassification`` model with one output (``config.json``,
``model.safetensors``), its tokenizer, ``radscore_manifest.json`` (kind ``bleurt``: backbone,
``max_length`` and the length rule, the input template, the target's formula and weights),
``metrics.json`` (test MSE, Pearson, Kendall) and ``training_config.yaml`` when known.
"""

from __future__ import annotations

from pathlib import Path

from radscore.export import write_manifest
from train.release.base import finish_export, load_checkpoint_dict, staged_export


def export_bleurt(ckpt: str | Path, out_dir: str | Path, metrics: dict | None = None) -> Path:
    from train.bleurt.convert import load_tokenizer
    from train.bleurt.modules import ClinicalBLEURTRegressor, check_checkpoint

    ckpt = Path(ckpt)
    state = load_checkpoint_dict(ckpt)
    check_checkpoint(state)
    module = ClinicalBLEURTRegressor.load_from_checkpoint(str(ckpt), map_location="cpu", weights_only=True)
    module.eval()
    module.model.config.problem_type = "regression"
    data_hp = state.get("datamodule_hyper_parameters") or {}
    from data.clinical_bleurt import check_weights

    target = {"formula": "1 - error_score / max_sentlen",
              "weights": check_weights(data_hp.get("weights")),
              "prefer": data_hp.get("prefer", "counts"),
              "note": "rows with only a score were trained on that score"}
    with staged_export(out_dir) as folder:
        module.model.save_pretrained(folder)
        load_tokenizer(module.hparams.backbone).save_pretrained(folder)
        write_manifest(folder, "bleurt", backbone=module.hparams.backbone,
                       max_length=int(data_hp.get("max_length", module.hparams.max_length)),
                       length_rule="longest_first", input="[CLS] reference [SEP] candidate [SEP]",
                       target=target, checkpoint=str(ckpt), epoch=state.get("epoch"),
                       global_step=state.get("global_step"))
        finish_export(folder, ckpt, metrics)
    return Path(out_dir)

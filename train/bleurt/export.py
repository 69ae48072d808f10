"""Export a ClinicalBLEURT checkpoint: the folder ``radscore.ClinicalBLEURT`` loads.

The folder is a standard ``*ForSequenceClassification`` model with one output (``config.json``,
``model.safetensors``), its tokenizer, ``radscore_manifest.json`` (kind ``bleurt``: backbone,
``max_length`` and the length rule, the input template, the target's formula and weights),
``metrics.json`` (test MSE, Pearson, Kendall) and ``training_config.yaml`` when known.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from radscore.export import write_manifest


def export_bleurt(ckpt: str | Path, out_dir: str | Path, metrics: dict | None = None) -> Path:
    from train.bleurt.convert import load_tokenizer
    from train.bleurt.modules import ClinicalBLEURTRegressor, check_checkpoint
    from train.export import finish_export, load_checkpoint_dict

    ckpt, out_dir = Path(ckpt), Path(out_dir)
    state = load_checkpoint_dict(ckpt)
    check_checkpoint(state)
    module = ClinicalBLEURTRegressor.load_from_checkpoint(str(ckpt), map_location="cpu")
    module.eval()
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    module.model.config.problem_type = "regression"
    module.model.save_pretrained(out_dir)
    load_tokenizer(module.hparams.backbone).save_pretrained(out_dir)
    data_hp = state.get("datamodule_hyper_parameters") or {}
    from data.clinical_bleurt import check_weights

    target = {"formula": "1 - error_score / max_sentlen",
              "weights": check_weights(data_hp.get("weights")),
              "prefer": data_hp.get("prefer", "counts"),
              "note": "rows with only a score were trained on that score"}
    write_manifest(out_dir, "bleurt", backbone=module.hparams.backbone,
                   max_length=int(data_hp.get("max_length", module.hparams.max_length)),
                   length_rule="longest_first", input="[CLS] reference [SEP] candidate [SEP]",
                   target=target, checkpoint=str(ckpt), epoch=state.get("epoch"),
                   global_step=state.get("global_step"))
    return finish_export(out_dir, ckpt, metrics)

"""Export an NER checkpoint (IOB or span) into the folder ``radscore`` loads.

- IOB: a standard token-classification folder (``config.json`` with the SPEC ``id2label``,
  ``model.safetensors``, tokenizer) that the released ``ratescore`` package also loads unchanged;
- span: the encoder folder plus ``span_head.safetensors`` and ``span_head.json``.
Both add ``radscore_manifest.json``, ``metrics.json`` and ``training_config.yaml`` when known
(:func:`train.release.base.export_checkpoint`).
"""

from __future__ import annotations

import json
from pathlib import Path

from radscore.labels import ID2LABEL, IOB_LABELS
from train.release.base import export_checkpoint


def _write_ner(folder: Path, module, state: dict, task: str) -> dict:
    from transformers import AutoTokenizer

    from radscore.models import resolve_model_path

    module.model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(resolve_model_path(module.hparams.backbone)).save_pretrained(folder)
    if task == "ner-iob":  # the released scorer reads id2label from config.json
        cfg = json.loads((folder / "config.json").read_text())
        if {int(k): v for k, v in cfg["id2label"].items()} != ID2LABEL:
            raise AssertionError("exported config.json lost the SPEC id2label")
    extra = {"max_span_width": module.hparams.max_span_width} if task == "ner-span" else {}
    return {"backbone": module.hparams.backbone, "labels": list(IOB_LABELS), **extra}


def export_ner(ckpt: str | Path, out_dir: str | Path, metrics: dict | None = None) -> Path:
    """Export an NER checkpoint (IOB or span) to ``out_dir`` (see :func:`train.release.base.staged_export`
    for which folders it may replace)."""
    from train.ner.modules import IOBTagger, SpanTagger, check_checkpoint

    return export_checkpoint(ckpt, out_dir, metrics, {"ner-iob": IOBTagger, "ner-span": SpanTagger},
                             check_checkpoint, _write_ner)

"""Export an NER checkpoint (IOB or span) into the folder ``radscore`` loads.

- IOB: a standard token-classification folder (``config.json`` with the SPEC ``id2label``,
  ``model.safetensors``, tokenizer) that the released ``ratescore`` package also loads unchanged;
- span: the encoder folder plus ``span_head.safetensors`` and ``span_head.json``.
Both add ``radscore_manifest.json``, ``metrics.json`` and ``training_config.yaml`` when known.
"""

from __future__ import annotations

import json
from pathlib import Path

from radscore.export import write_manifest
from radscore.labels import ID2LABEL, IOB_LABELS
from train.release.base import finish_export, load_checkpoint_dict, staged_export


def export_ner(ckpt: str | Path, out_dir: str | Path, metrics: dict | None = None) -> Path:
    """Export an NER checkpoint (IOB or span) to ``out_dir`` (see :func:`train.release.base.staged_export`
    for which folders it may replace)."""
    from transformers import AutoTokenizer

    from radscore.models import resolve_model_path
    from train.ner.modules import IOBTagger, SpanTagger, check_checkpoint

    ckpt = Path(ckpt)
    state = load_checkpoint_dict(ckpt)
    task = (state.get("radscore") or {}).get("task")
    classes = {"ner-iob": IOBTagger, "ner-span": SpanTagger}
    if task not in classes:
        raise ValueError(f"{ckpt}: checkpoint of task {task!r}; expected one of {list(classes)}")
    check_checkpoint(state, task)
    module = classes[task].load_from_checkpoint(str(ckpt), map_location="cpu", weights_only=True)
    module.eval()
    with staged_export(out_dir) as folder:
        module.model.save_pretrained(folder)
        AutoTokenizer.from_pretrained(resolve_model_path(module.hparams.backbone)).save_pretrained(folder)
        if task == "ner-iob":  # the released scorer reads id2label from config.json
            cfg = json.loads((folder / "config.json").read_text())
            if {int(k): v for k, v in cfg["id2label"].items()} != ID2LABEL:
                raise AssertionError("exported config.json lost the SPEC id2label")
        extra = {}
        if task == "ner-span":
            extra["max_span_width"] = module.hparams.max_span_width
        write_manifest(folder, task, backbone=module.hparams.backbone, labels=list(IOB_LABELS),
                       checkpoint=str(ckpt), epoch=state.get("epoch"), global_step=state.get("global_step"),
                       **extra)
        finish_export(folder, ckpt, metrics)
    return Path(out_dir)

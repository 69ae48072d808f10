"""Export a trained checkpoint into a self-contained folder that ``radscore`` loads.

``python -m train export <run folder or .ckpt> [--out DIR]``. A run folder exports its best
checkpoint (``ckpt/best-*.ckpt``; ``ckpt/last.ckpt`` when no best exists) into ``<run>/export``.

NER exports:
- IOB: a standard token-classification folder (``config.json`` with the SPEC ``id2label``,
  ``model.safetensors``, tokenizer) that the released ``ratescore`` package also loads unchanged;
- span: the encoder folder plus ``span_head.safetensors`` and ``span_head.json``.
Both add ``radscore_manifest.json``, ``metrics.json`` and ``training_config.yaml`` when known.
ClinicalBLEURT exports: :func:`train.bleurt.export.export_bleurt`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch

from radscore.export import write_manifest
from radscore.labels import ID2LABEL, IOB_LABELS


def load_checkpoint_dict(path: str | Path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such checkpoint")
    return torch.load(path, map_location="cpu", weights_only=False)


def find_checkpoint(run_or_ckpt: str | Path) -> Path:
    path = Path(run_or_ckpt)
    if path.is_file():
        return path
    ckpt_dir = path / "ckpt"
    best = sorted(ckpt_dir.glob("best-*.ckpt"), key=lambda p: p.stat().st_mtime)
    if best:
        return best[-1]
    if (ckpt_dir / "last.ckpt").is_file():
        return ckpt_dir / "last.ckpt"
    raise FileNotFoundError(f"{path}: neither a checkpoint file nor a run folder with ckpt/*.ckpt")


def _training_config(ckpt: Path) -> Path | None:
    """The resolved config that LightningCLI saved in the run's newest log folder."""
    run = ckpt.parent.parent
    found = sorted(run.glob("logs/version_*/config.yaml"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def finish_export(out_dir: Path, ckpt: Path, metrics: dict | None) -> Path:
    """The end of every export: ``metrics.json`` and the run's ``training_config.yaml`` (when the
    run saved one) beside the model files and the manifest."""
    (out_dir / "metrics.json").write_text(json.dumps(metrics or {}, indent=1, sort_keys=True) + "\n")
    cfg = _training_config(ckpt)
    if cfg is not None:
        shutil.copyfile(cfg, out_dir / "training_config.yaml")
    return out_dir


def export_ner(ckpt: str | Path, out_dir: str | Path, metrics: dict | None = None) -> Path:
    """Export an NER checkpoint (IOB or span) to ``out_dir``."""
    from train.ner.modules import IOBTagger, SpanTagger, check_checkpoint

    ckpt, out_dir = Path(ckpt), Path(out_dir)
    state = load_checkpoint_dict(ckpt)
    task = (state.get("radscore") or {}).get("task")
    classes = {"ner-iob": IOBTagger, "ner-span": SpanTagger}
    if task not in classes:
        raise ValueError(f"{ckpt}: checkpoint of task {task!r}; expected one of {list(classes)}")
    check_checkpoint(state, task)
    module = classes[task].load_from_checkpoint(str(ckpt), map_location="cpu")
    module.eval()
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    module.model.save_pretrained(out_dir)
    from transformers import AutoTokenizer
    from radscore.models import resolve_model_path

    AutoTokenizer.from_pretrained(resolve_model_path(module.hparams.backbone)).save_pretrained(out_dir)
    if task == "ner-iob":  # the released scorer reads id2label from config.json
        cfg = json.loads((out_dir / "config.json").read_text())
        if {int(k): v for k, v in cfg["id2label"].items()} != ID2LABEL:
            raise AssertionError("exported config.json lost the SPEC id2label")
    extra = {}
    if task == "ner-span":
        extra["max_span_width"] = module.hparams.max_span_width
    write_manifest(out_dir, task, backbone=module.hparams.backbone, labels=list(IOB_LABELS),
                   checkpoint=str(ckpt), epoch=state.get("epoch"), global_step=state.get("global_step"),
                   **extra)
    return finish_export(out_dir, ckpt, metrics)


def export_any(run_or_ckpt: str | Path, out_dir: str | Path | None = None) -> Path:
    """Export whatever task a checkpoint belongs to (``python -m train export``)."""
    ckpt = find_checkpoint(run_or_ckpt)
    task = (load_checkpoint_dict(ckpt).get("radscore") or {}).get("task")
    run = ckpt.parent.parent
    out_dir = Path(out_dir) if out_dir else run / "export"
    metrics_file = run / "test_metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    if task in ("ner-iob", "ner-span"):
        return export_ner(ckpt, out_dir, metrics)
    if task == "bleurt":
        from train.bleurt.export import export_bleurt

        return export_bleurt(ckpt, out_dir, metrics)
    if task == "reward":
        from train.reward.export import export_reward

        return export_reward(ckpt, out_dir, metrics)
    raise ValueError(f"{ckpt}: no exporter for checkpoint task {task!r}")

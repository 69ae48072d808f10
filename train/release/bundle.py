"""Write a RaTEScore scorer bundle (:mod:`radscore.bundle`): the NER export, the encoder, W and p,
and the scoring options in one folder that ``RaTEScore.from_bundle`` loads and ``python -m train
publish`` uploads. Written safely (:func:`train.release.base.staged_export`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from radscore.atomic import TMP_SUFFIX, write_text_atomic
from radscore.bundle import KIND, MATRIX_FILE
from radscore.export import write_manifest
from radscore.models import PACKAGED_MINILM
from radscore.scoring import AffinityMatrix
from train.release.base import refuse_unfinished_export, staged_export


def _include(source: str, staging: Path, name: str) -> str:
    """A local folder is copied into the bundle (its name is recorded); anything else is a Hub id or
    the packaged MiniLM, recorded as it is. What an export killed half-way left is refused
    (``refuse_unfinished_export`` of ``train.release.base``), never copied."""
    refuse_unfinished_export(source)
    if source != PACKAGED_MINILM and Path(source).is_dir():
        shutil.copytree(source, staging / name, ignore=shutil.ignore_patterns(".radscore-export-*", f"*{TMP_SUFFIX}"))
        return name
    return source


def write_bundle(out: str | Path, ner: str, encoder: str, matrix: AffinityMatrix, penalty: str = "official",
                 splitter: str = "rush", pooling: str = "cls", empty_score: float = 0.5,
                 data_sources: list[str] | None = None, metrics: dict | None = None) -> Path:
    """The bundle folder ``out``; ``data_sources`` (what the NER model and the W search were trained
    on) and ``metrics`` (``test/...`` values) feed the model card."""
    with staged_export(out) as staging:
        ner_entry = _include(str(ner), staging, "ner")
        encoder_entry = _include(str(encoder), staging, "encoder")
        matrix.save(staging / MATRIX_FILE)
        write_text_atomic(staging / "metrics.json", json.dumps(metrics or {}, indent=1, sort_keys=True) + "\n")
        # a local encoder is copied in and named by its folder: no local path in the manifest (publish uploads it)
        write_manifest(staging, KIND, ner=ner_entry, encoder=encoder_entry, base_model=encoder_entry,
                       affinity_matrix=MATRIX_FILE, penalty=penalty, splitter=splitter, pooling=pooling,
                       empty_score=float(empty_score), data_sources=list(data_sources or []))
    return Path(out)

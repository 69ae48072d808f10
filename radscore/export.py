"""The export format: a self-contained folder that ``radscore`` loads with nothing else.

Every export holds ``radscore_manifest.json``::

    {"kind": "ner-iob" | "ner-span" | ..., "format_version": 1, "radscore_version": "...",
     "libraries": {"torch": "...", "transformers": "...", ...}, ...task-specific fields}

next to the weights (safetensors), the tokenizer, the resolved training config and
``metrics.json``. The manifest format is defined here, once; ``train/`` writes it, last and
atomically (:mod:`radscore.atomic`), so a folder without it is not (yet) an export.
"""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from radscore.atomic import TMP_SUFFIX, write_text_atomic

MANIFEST = "radscore_manifest.json"
FORMAT_VERSION = 1
KINDS = ("ner-iob", "ner-span", "reward", "bleurt", "ratescore")  # ratescore: a scorer bundle (radscore.bundle)


def library_versions(names=("radscore", "torch", "transformers", "pytorch-lightning", "peft",
                            "safetensors", "numpy")) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def write_manifest(folder: str | Path, kind: str, **fields) -> dict:
    if kind not in KINDS:
        raise ValueError(f"unknown export kind {kind!r}; expected one of {list(KINDS)}")
    manifest = {"kind": kind, "format_version": FORMAT_VERSION,
                "radscore_version": library_versions(("radscore",)).get("radscore", "unknown"),
                "libraries": library_versions(), **fields}
    write_text_atomic(Path(folder, MANIFEST), json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def read_manifest(folder: str | Path, expected_kind: str | tuple[str, ...] | None = None) -> dict:
    """The manifest of an export folder; a clear error when it is missing or of another kind."""
    path = Path(folder, MANIFEST)
    if not path.is_file():
        torn = sorted(Path(folder).glob(f"{MANIFEST}.*{TMP_SUFFIX}")) if Path(folder).is_dir() else []
        if torn:
            raise ValueError(f"{folder}: a half-written export ({torn[0].name} was never completed; no {MANIFEST})")
        raise ValueError(f"{folder}: not a radscore export (no {MANIFEST})")
    manifest = json.loads(path.read_text())
    kinds = (expected_kind,) if isinstance(expected_kind, str) else expected_kind
    if kinds and manifest.get("kind") not in kinds:
        raise ValueError(
            f"{folder}: export of kind {manifest.get('kind')!r}, expected {' or '.join(kinds)}"
        )
    if manifest.get("format_version", 0) > FORMAT_VERSION:
        raise ValueError(
            f"{folder}: export format {manifest['format_version']} is newer than this radscore "
            f"understands ({FORMAT_VERSION}); upgrade radscore"
        )
    return manifest

"""A RaTEScore scorer bundle: one folder (or one Hub repository) holding everything a RaTEScore
variant needs, so that a tuned scorer is one line to use::

    scorer = RaTEScore.from_bundle("you/ratescore-tuned")      # or a local folder

Layout (written by ``python -m train tune-weights``, in ``<run>/bundle``; ``python -m train
publish`` uploads it)::

    radscore_manifest.json   kind "ratescore": ner, encoder, penalty, splitter, pooling, empty_score
    affinity_matrix.json     W and p in the official format
    ner/                     the NER export (when it was a local folder; else "ner" is its Hub id)
    encoder/                 the encoder (when it was a local folder; else a Hub id or the packaged MiniLM)

Paths in the manifest are relative to the bundle; anything else is a Hub id or
``packaged:all-MiniLM-L6-v2``.
"""

from __future__ import annotations

from pathlib import Path

from radscore.export import read_manifest

KIND = "ratescore"
MATRIX_FILE = "affinity_matrix.json"
OPTIONS = ("penalty", "splitter", "pooling", "empty_score")


def bundle_options(folder: str | Path) -> dict:
    """The :class:`radscore.RaTEScore` arguments a bundle folder stands for."""
    folder = Path(folder)
    manifest = read_manifest(folder, KIND)
    out = {}
    for key in ("ner", "encoder"):
        value = manifest[key]
        out[key] = str(folder / value) if (folder / value).is_dir() else value
    out["affinity_matrix"] = str(folder / manifest.get("affinity_matrix", MATRIX_FILE))
    out.update({k: manifest[k] for k in OPTIONS if k in manifest})
    return out

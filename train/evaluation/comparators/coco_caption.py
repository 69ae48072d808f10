"""Adapter of pycocoevalcap (the COCO caption evaluation, PyPI ``pycocoevalcap``): CIDEr and SPICE.

- ``cider``: ``pycocoevalcap.cider.cider.Cider`` (n-grams 1-4, sigma 6: the clipped, length-penalised
  variant the COCO evaluation reports as CIDEr, scaled by 10). Its document frequencies come from the
  references of the pairs scored together, so a pair's score depends on the set it is scored in: the
  tables score each data set in one call. Pure Python; the text is tokenised here
  (:func:`train.evaluation.baselines.tokenize`, as for the BLEU rows beside it: lower case, words and
  punctuation marks), not with the Java PTB tokenizer the COCO scripts use.
- ``spice``: ``pycocoevalcap.spice.spice.Spice`` (its ``All`` F-score per pair). It runs
  ``java -jar spice-1.0.jar`` and needs the Stanford CoreNLP 3.6.0 jars in the package's
  ``spice/lib`` folder, which pycocoevalcap downloads from nlp.stanford.edu on first use (not
  reachable here); the adapter checks both before calling it, so that a missing one is a
  ``skipped: needs …`` status rather than a download attempt.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from train.evaluation.comparators import package_version

DIST = "pycocoevalcap"
CORENLP_JARS = ("stanford-corenlp-3.6.0.jar", "stanford-corenlp-3.6.0-models.jar")
INSTALL = "pip install pycocoevalcap (part of radscore's train extra)"


def _package_dir() -> Path | None:
    try:
        from pycocoevalcap.cider import cider
    except ImportError:
        return None
    return Path(cider.__file__).resolve().parents[1]


def needs(name: str) -> str | None:
    root = _package_dir()
    if root is None:
        return f"skipped: needs the pycocoevalcap package ({INSTALL})"
    if name == "spice":
        if shutil.which("java") is None:
            return "skipped: needs Java for SPICE (a JRE 8 or later on PATH, e.g. apt-get install default-jre-headless)"
        lib = root / "spice" / "lib"
        missing = [j for j in CORENLP_JARS if not (lib / j).is_file()]
        if missing:
            return (f"skipped: needs Stanford CoreNLP 3.6.0 for SPICE ({', '.join(missing)} in {lib}; pycocoevalcap "
                    "downloads them from nlp.stanford.edu on first use) (offline)")
    return None


def implementation(name: str) -> str:
    what = {"cider": "Cider (n=4, sigma=6), tokenised by train.evaluation.baselines.tokenize",
            "spice": "Spice (All F-score), Java"}[name]
    return f"pycocoevalcap {package_version(DIST) or '(version unknown)'} {what}"


def _joined(texts: list[str]) -> list[str]:
    from train.evaluation.baselines import tokenize

    return [" ".join(tokenize(t)) for t in texts]


def cider(refs: list[str], cands: list[str]) -> np.ndarray:
    """CIDEr of each candidate against its one reference, document frequencies over ``refs``."""
    from pycocoevalcap.cider.cider import Cider

    if not refs:
        return np.zeros(0)
    gts = {k: [r] for k, r in enumerate(_joined(refs))}
    res = {k: [c] for k, c in enumerate(_joined(cands))}
    if not any(gts[k][0] for k in gts):  # no reference n-gram: pycocoevalcap's idf is undefined
        return np.zeros(len(refs))
    _, scores = Cider().compute_score(gts, res)
    return np.asarray(scores, dtype=np.float64)


def spice(refs: list[str], cands: list[str]) -> np.ndarray:
    from pycocoevalcap.spice.spice import Spice

    if not refs:
        return np.zeros(0)
    gts = {k: [r] for k, r in enumerate(refs)}
    res = {k: [c] for k, c in enumerate(cands)}
    _, per_pair = Spice().compute_score(gts, res)
    return np.array([s["All"]["f"] for s in per_pair], dtype=np.float64)


def score(name: str, refs: list[str], cands: list[str]) -> np.ndarray:
    return {"cider": cider, "spice": spice}[name](refs, cands)

"""The papers' comparator metrics, computed by the packages that maintain them.

One adapter module per source; each is called only when its package is importable and the model
it loads is on this machine, and otherwise says what it needs:

============  ===========================================  ===============================================
name          computed by                                   needs
============  ===========================================  ===============================================
``cider``     pycocoevalcap's ``Cider`` (CIDEr-D)          pycocoevalcap (train extra); no model
``spice``     pycocoevalcap's ``Spice``                    Java and the Stanford CoreNLP 3.6.0 jars
``radgraph``  RadEval 2.x ``radgraph`` (RadGraph-XL F1)     radeval extra; StanfordAIMI/RRG_scorers
``chexbert``  RadEval 2.x ``f1chexbert``                    radeval extra; StanfordAIMI/RRG_scorers and
                                                            google-bert/bert-base-uncased
``semb``      RadEval 2.x CheXbert embeddings' cosine       as ``chexbert``
``radcliq``   RadEval 2.x ``radcliq`` (RadCliQ-v1)          the two above and distilroberta-base
``green``     RadEval 2.x ``green``                         radeval extra; StanfordAIMI/GREEN-radllama2-7b
============  ===========================================  ===============================================

:data:`COMPARATORS` maps a name to its adapter. Every adapter has ``needs(name) -> str | None``
(``None`` when it can run here, else a row status ``skipped: needs …``), ``score(name, refs, cands)
-> float64 array`` (higher is better for every name but ``radcliq``, whose score is a predicted error
count: :data:`LOWER_IS_BETTER`) and ``implementation(name) -> str`` (the package and its version, for
the table's provenance).
"""

from __future__ import annotations

from importlib import import_module
from typing import Sequence

import numpy as np

SKIPPED = "skipped"
ADAPTERS = {"cider": "coco_caption", "spice": "coco_caption",
            **{name: "radeval_metrics" for name in ("radgraph", "chexbert", "semb", "radcliq", "green")}}
COMPARATORS = tuple(ADAPTERS)
LOWER_IS_BETTER = frozenset({"radcliq"})  # RadCliQ-v1 predicts an error count


class ComparatorSkipped(RuntimeError):
    """A comparator that cannot run here; the message is the row status (``skipped: needs …``)."""


def adapter(name: str):
    if name not in ADAPTERS:
        raise ValueError(f"unknown comparator {name!r}; expected one of {list(COMPARATORS)}")
    return import_module(f"{__name__}.{ADAPTERS[name]}")


def needs(name: str) -> str | None:
    """``None`` when ``name`` can run here, else its status ``skipped: needs …``."""
    return adapter(name).needs(name)


def implementation(name: str) -> str:
    return adapter(name).implementation(name)


def score(name: str, refs: Sequence[str], cands: Sequence[str]) -> np.ndarray:
    """Per-pair scores of ``name``, higher is better (RadCliQ-v1's sign is flipped here); raises
    :class:`ComparatorSkipped` when it cannot run on this machine."""
    check_pairs(refs, cands)
    reason = needs(name)
    if reason is not None:
        raise ComparatorSkipped(reason)
    out = np.asarray(adapter(name).score(name, list(refs), list(cands)), dtype=np.float64)
    if out.shape != (len(refs),):
        raise RuntimeError(f"{implementation(name)} returned {out.shape[0] if out.ndim else 'one'} score(s) "
                           f"for {len(refs)} pairs")
    return -out if name in LOWER_IS_BETTER else out


def check_pairs(refs: Sequence[str], cands: Sequence[str]) -> None:
    """Equal lengths and strings on both sides, as every baseline requires (one check for all)."""
    from train.evaluation.baselines import _check

    _check(refs, cands)


def package_version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None

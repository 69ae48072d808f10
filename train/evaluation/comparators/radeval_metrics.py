"""Adapter of RadEval 2.x (PyPI ``radeval``, radscore's ``radeval`` extra): RadGraph F1, CheXbert,
RadCliQ-v1 and GREEN, each through the class RadEval's own registry names for it.

=============  ===================================  ===================================================
name           RadEval class, per-pair output        what it loads from the Hub
=============  ===================================  ===================================================
``radgraph``   ``radgraph`` metric, ``radgraph_      StanfordAIMI/RRG_scorers ``radgraph-xl.tar.gz``
               partial`` (entities and relations)    (RadEval's own cache, ~/.cache/radgraph)
``chexbert``   ``F1CheXbert`` labels: the share of   StanfordAIMI/RRG_scorers ``chexbert.pth``,
               the 14 labels the two reports share   bert-base-uncased (config, vocabulary)
``semb``       ``semantic_embedding_scores``: cosine  as ``chexbert``
               of the CheXbert embeddings
``radcliq``    ``radcliq`` metric (``radcliq_v1``):  ``radgraph.tar.gz``, ``chexbert.pth``,
               RadCliQ-v1's predicted error count    bert-base-uncased, distilroberta-base
``green``      ``green`` metric: GREEN per pair      StanfordAIMI/GREEN-radllama2-7b (a 7B LLM: a GPU)
=============  ===================================  ===================================================

:func:`needs` checks the package and each file before anything loads: a file in the local cache is
enough; otherwise the Hub is asked whether it has it (nothing is downloaded); where the Hub cannot
be reached (``HF_HUB_OFFLINE``, no network) the status is ``skipped: needs <model id> (offline)``.
The models that RadGraph's archives name inside themselves are fetched by RadEval when it loads them.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module

import numpy as np

from train.evaluation.comparators import package_version

DIST = "radeval"
INSTALL = "pip install 'radscore[radeval]'"
RRG = "StanfordAIMI/RRG_scorers"
# name -> (repo id, file, RadEval's cache folder or None for the Hugging Face cache)
_RADGRAPH_CACHE = ("radgraph", "0.1.18")  # appdirs' user_cache_dir("radgraph")/0.1.18, as RadEval pins it
_CHEXBERT_CACHE = ("chexbert", None)


def _cache(spec) -> str | None:
    if spec is None:
        return None
    try:  # RadEval's dependency; where it is missing, RadEval cannot load either (its Linux default here)
        from appdirs import user_cache_dir
    except ImportError:
        def user_cache_dir(app: str) -> str:
            return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), app)

    name, sub = spec
    return os.path.join(user_cache_dir(name), sub) if sub else user_cache_dir(name)


FILES = {
    "radgraph": [(RRG, "radgraph-xl.tar.gz", _RADGRAPH_CACHE)],
    "chexbert": [(RRG, "chexbert.pth", _CHEXBERT_CACHE), ("bert-base-uncased", "config.json", None),
                 ("bert-base-uncased", "vocab.txt", None)],
    "radcliq": [(RRG, "radgraph.tar.gz", _RADGRAPH_CACHE), (RRG, "chexbert.pth", _CHEXBERT_CACHE),
                ("bert-base-uncased", "config.json", None), ("bert-base-uncased", "vocab.txt", None),
                ("distilroberta-base", "config.json", None)],
    "green": [("StanfordAIMI/GREEN-radllama2-7b", "config.json", None)],
}
FILES["semb"] = FILES["chexbert"]
REGISTRY_NAME = {"radgraph": "radgraph", "chexbert": "f1chexbert", "semb": "f1chexbert", "radcliq": "radcliq",
                 "green": "green"}
PER_PAIR = {"radgraph": "radgraph_partial", "chexbert": "labels agreeing (get_labels)",
            "semb": "semantic_embedding_scores", "radcliq": "radcliq_v1", "green": "green"}
GPU_MEMORY = {"radgraph": "about 2 GB", "chexbert": "about 1 GB", "radcliq": "about 2 GB",
              "green": "about 16 GB (7B parameters in bf16)"}


def importable() -> bool:
    try:
        from radeval.metrics._registry import get_metric_class  # noqa: F401
    except ImportError:
        return False
    return True


def _cached(repo: str, filename: str, cache_dir: str | None) -> bool:
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo, filename, cache_dir=cache_dir)
    if isinstance(found, str):
        return True
    if filename.endswith(".tar.gz") and cache_dir:  # RadGraph keeps the extracted archive
        folder = os.path.join(cache_dir, filename.removesuffix(".tar.gz"))
        return os.path.isdir(folder) and bool(os.listdir(folder))
    return False


def _on_hub(repo: str, filename: str) -> bool:
    from huggingface_hub import constants, file_exists

    if constants.HF_HUB_OFFLINE:
        return False
    try:
        return bool(file_exists(repo, filename))
    except Exception:  # connection errors, gating: the Hub cannot give it here
        return False


def needs(name: str) -> str | None:
    if not importable():
        return f"skipped: needs the radeval package ({INSTALL})"
    try:
        load(name)
    except ImportError as err:  # RadEval is there, but not what its metric imports
        return f"skipped: needs RadEval's dependencies for {REGISTRY_NAME[name]!r} ({INSTALL}; {err})"
    for repo, filename, cache in FILES[name]:
        if not _cached(repo, filename, _cache(cache)) and not _on_hub(repo, filename):
            return f"skipped: needs {repo} (offline)"
    return None


def implementation(name: str) -> str:
    return (f"RadEval {package_version(DIST) or '(version unknown)'} {REGISTRY_NAME[name]!r} "
            f"({PER_PAIR[name]} per pair)")


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


# The module each registry class imports when it is built (its own file imports nothing of it).
BUILDS = {"radgraph": "radeval.metrics.radgraph", "radcliq": "radeval.metrics.RadCliQv1.radcliq",
          "green": "radeval.metrics.green_score.green"}


def alias_radeval() -> None:
    """RadEval 2.2.1's vendored RadGraph (``radeval/metrics/radgraph/_vendor``, 201 files) imports
    itself as ``RadEval.metrics.radgraph._vendor…`` while its wheel installs the package ``radeval``:
    on a case-sensitive file system (Linux) that import fails, so RadGraph F1 and RadCliQ-v1 cannot
    be built at all (found by the rehearsal's RadGraph stand-in). Where ``RadEval`` does not import,
    the name is bound to the installed ``radeval`` package; a release that fixes it imports as is."""
    if "RadEval" in sys.modules:
        return
    try:
        import_module("RadEval")
    except ImportError:
        sys.modules["RadEval"] = import_module("radeval")


def load(name: str):
    """What :func:`score` calls for ``name``, imported (RadEval's registry class, or for ``chexbert``
    and ``semb`` the functions behind it) with the modules the class imports when it is built: the
    imports a real run makes, without its models."""
    if name in ("radgraph", "radcliq"):
        alias_radeval()
    if name in BUILDS:
        import_module(BUILDS[name])
    if name == "semb":
        from radeval.metrics.RadCliQv1.semb_score import semantic_embedding_scores

        return semantic_embedding_scores
    if name == "chexbert":  # RadEval's metric class builds F1CheXbert on CUDA unconditionally
        from radeval.metrics.f1chexbert.f1chexbert import F1CheXbert

        return F1CheXbert
    from radeval.metrics._registry import get_metric_class

    return get_metric_class(REGISTRY_NAME[name])


def score(name: str, refs: list[str], cands: list[str]) -> np.ndarray:
    """Per-pair scores as RadEval gives them (RadCliQ-v1: a predicted error count, lower is better)."""
    if name == "semb":
        return np.asarray(load(name)(refs, cands, device=_device()), dtype=np.float64)
    if name == "chexbert":
        # RadEval's labels of each report, compared here: F1CheXbert.forward (RadEval 2.2.1) goes
        # through sklearn's private _check_targets, which fails with scikit-learn 1.9 (found by the
        # rehearsal's stand-in); the share of the 14 labels that agree is its sample_acc_full.
        labeller = load(name)(device=_device())
        ref_labels = np.asarray(labeller.get_labels(refs), dtype=np.int64).reshape(len(refs), -1)
        cand_labels = np.asarray(labeller.get_labels(cands), dtype=np.int64).reshape(len(cands), -1)
        return (ref_labels == cand_labels).mean(axis=1)
    result = load(name)().compute(refs, cands, per_sample=True)
    return np.asarray(result[PER_PAIR[name]], dtype=np.float64)

"""radscore: score radiology and clinical reports with trained RaTEScore, ER²Score and
ClinicalBLEURT models."""

from radscore.version import __version__

__all__ = ["ClinicalBLEURT", "ER2Score", "RaTEScore", "__version__"]


def __getattr__(name: str):
    # The scorer classes of radscore.registry, imported on first use, so `import radscore.labels`
    # (used by data/ and train/) stays light.
    import importlib

    for spec in importlib.import_module("radscore.registry").specs():
        if spec.scorer.startswith("radscore.") and spec.scorer.rpartition(":")[2] == name:
            return spec.scorer_class()
    raise AttributeError(f"module 'radscore' has no attribute {name!r}")

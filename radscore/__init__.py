"""radscore: score radiology and clinical reports with trained RaTEScore, ER²Score and
ClinicalBLEURT models."""

from radscore.version import __version__

__all__ = ["ClinicalBLEURT", "ER2Score", "RaTEScore", "__version__"]


def __getattr__(name: str):
    # Imported on first use, so `import radscore.labels` (used by data/ and train/) stays light.
    if name == "RaTEScore":
        from radscore.ratescore import RaTEScore

        return RaTEScore
    if name == "ClinicalBLEURT":
        from radscore.bleurt import ClinicalBLEURT

        return ClinicalBLEURT
    if name == "ER2Score":
        from radscore.er2score import ER2Score

        return ER2Score
    raise AttributeError(f"module 'radscore' has no attribute {name!r}")

"""radscore: score radiology and clinical reports with trained RaTEScore, ER²Score and
ClinicalBLEURT models."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("radscore")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"

"""Fixtures shared by the tests of radscore's integrations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

RADEVAL_LIB = Path(sys.prefix) / "radeval-lib"  # where the Makefile installs radeval (see there)


@pytest.fixture
def radeval_on_path(monkeypatch, nltk_errors_to_stderr):
    """RadEval from its own folder, after everything else on sys.path (its wheel ships a top-level
    ``tests`` package, which must not shadow ours)."""
    if RADEVAL_LIB.is_dir():
        monkeypatch.setattr(sys, "path", [*sys.path, str(RADEVAL_LIB)])
    return pytest.importorskip("radeval")

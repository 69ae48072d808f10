"""Fixtures shared by the tests of radscore's integrations."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

RADEVAL_LIB = Path(sys.prefix) / "radeval-lib"  # where the Makefile installs radeval (see there)


@pytest.fixture
def radeval_on_path(monkeypatch):
    """RadEval from its own folder, after everything else on sys.path (its wheel ships a top-level
    ``tests`` package, which must not shadow ours)."""
    if RADEVAL_LIB.is_dir():
        monkeypatch.setattr(sys, "path", [*sys.path, str(RADEVAL_LIB)])
    # radeval's import calls nltk.download (which fails offline and says so); nltk writes that to
    # the sys.stderr of when nltk.downloader was first imported, which may be an earlier test's
    # capture, closed since: point it at today's
    nltk = pytest.importorskip("nltk")
    monkeypatch.setattr(nltk, "download", functools.partial(nltk.download, print_error_to=sys.stderr))
    return pytest.importorskip("radeval")

"""Import a script of benchmarks/ (not a package) as a module, for the tests of those scripts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_benchmark(path: str | Path):
    """The module of ``path`` (absolute, or relative to ``benchmarks/``), registered in ``sys.modules`` under its
    file name (dataclasses and pickling look their module up there); each call executes the file afresh."""
    path = Path(path) if Path(path).is_absolute() else ROOT / "benchmarks" / path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module

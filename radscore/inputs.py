"""Input checks shared by every scorer of the package (RaTEScore, ER2Score, ClinicalBLEURT)."""

from __future__ import annotations

from typing import Any


def check_reports(candidates: Any, references: Any, names: tuple[str, str] = ("candidates", "references")) -> None:
    """``ValueError`` naming the argument, the index and the problem, for bad input."""
    for value, name in zip((candidates, references), names):
        if not isinstance(value, list):
            raise ValueError(f"{name} must be a list of strings, got {type(value).__name__}"
                             + (" (convert it with list(...))" if isinstance(value, (tuple, range)) or
                                hasattr(value, "tolist") else ""))
        for i, item in enumerate(value):
            if not isinstance(item, str):
                what = "None" if item is None else f"a {type(item).__name__} ({item!r:.40})"
                raise ValueError(f"{name}[{i}] is {what}; every report must be a string")
    if len(candidates) != len(references):
        raise ValueError(f"{names[0]} has {len(candidates)} reports but {names[1]} has {len(references)}; "
                         "they must pair up one to one")

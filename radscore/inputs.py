"""Input checks shared by every scorer of the package (RaTEScore, ER2Score, ClinicalBLEURT).

A batch of reports may be any ordered collection of strings: a list, a tuple, a pandas Series
(its values in order; the index is ignored), a numpy array of strings, a generator. A single
string, bytes, a dict or a set is refused (a string is not a batch; dicts and sets have no pair
order). Keyword names: ``candidates=``/``references=``, the released package's
``candidate_list=``/``reference_list=`` and RadEval's/GREEN's ``hyps=``/``refs=``
(:func:`pair_arguments`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Set
from typing import Any

# the names under which other tools pass the two sides of a pair
CANDIDATE_ALIASES = ("candidates", "candidate_list", "hyps")
REFERENCE_ALIASES = ("references", "reference_list", "refs")


def as_reports(value: Any, name: str) -> list[str]:
    """``value`` as a list of strings; ``ValueError`` naming ``name``, the index and the problem."""
    if isinstance(value, (str, bytes)) or isinstance(value, (Mapping, Set)) or not isinstance(value, Iterable):
        what = "a single string" if isinstance(value, str) else type(value).__name__
        raise ValueError(f"{name} must be a sequence of strings (list, tuple, pandas Series, ...), got {what}")
    items = value.tolist() if hasattr(value, "tolist") else list(value)
    if not isinstance(items, list):  # a 0-d numpy array
        raise ValueError(f"{name} must be a sequence of strings, got a scalar {type(value).__name__}")
    for i, item in enumerate(items):
        if not isinstance(item, str):
            if item is None:
                what = "None"
            elif isinstance(item, float) and math.isnan(item):
                what = "a missing value (NaN)"
            else:
                what = f"a {type(item).__name__} ({item!r:.40})"
            raise ValueError(f"{name}[{i}] is {what}; every report must be a string")
    return items


def check_reports(candidates: Any, references: Any,
                  names: tuple[str, str] = ("candidates", "references")) -> tuple[list[str], list[str]]:
    """Both sides as lists of strings of the same length, or a ``ValueError`` naming the argument,
    the index and the problem."""
    cands, refs = as_reports(candidates, names[0]), as_reports(references, names[1])
    if len(cands) != len(refs):
        raise ValueError(f"{names[0]} has {len(cands)} reports but {names[1]} has {len(refs)}; "
                         "they must pair up one to one")
    return cands, refs


def pair_arguments(candidates: Any = None, references: Any = None,
                   names: tuple[str, str] = ("candidates", "references"), /,
                   **aliases: Any) -> tuple[list[str], list[str]]:
    """The two sides of a call, given positionally or under any accepted name (module doc), checked
    with :func:`check_reports` under the names the caller used; a ``TypeError`` for a side given
    twice, a missing side or an unknown keyword."""
    sides = {"candidates": [] if candidates is None else [(names[0], candidates)],
             "references": [] if references is None else [(names[1], references)]}
    for key, value in aliases.items():
        if key in CANDIDATE_ALIASES:
            sides["candidates"].append((key, value))
        elif key in REFERENCE_ALIASES:
            sides["references"].append((key, value))
        else:
            raise TypeError(f"unexpected keyword argument {key!r}; the two sides are "
                            f"{'/'.join(CANDIDATE_ALIASES)} and {'/'.join(REFERENCE_ALIASES)}")
    given = []
    for side, found in sides.items():
        if len(found) > 1:
            raise TypeError(f"the {side} are given twice: {', '.join(k for k, _ in found)}")
        if not found:
            raise TypeError(f"missing the {side} (accepted names: "
                            f"{', '.join(CANDIDATE_ALIASES if side == 'candidates' else REFERENCE_ALIASES)})")
        given.append(found[0])
    return check_reports(given[0][1], given[1][1], (given[0][0], given[1][0]))

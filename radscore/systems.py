"""ER²Score scoring systems as data (SPEC §3.1): names, weights, direction and the total rule.

A :class:`ScoringSystem` says what the N reward heads of an ER²Score model stand for:

- ``items``: the sub-score names, one reward head each, in head order;
- ``weights``: the items' weights as the system states them (MRScore's W_i), or None;
- ``higher_is_better``: the direction of the total and of every sub-score;
- ``total_rule``: ``"sum"`` (total = Σ s_j) or ``"weighted_sum"`` (total = Σ W_j·s_j);
- ``lower``/``upper``/``integer``/``binary``: the native range of each sub-score (``upper``
  None = unbounded; ``binary``: each sub-score is either its lower or its upper value), used to
  validate LLM replies and data rows;
- ``tiers``: the quality tiers (total ranges) the training-data prompts ask for (SPEC §3.2);
- ``descriptions``: what each item means (used in prompts).

Built in: :data:`RADCLIQ` (six ReXVal error counts, total = their sum, fewer is better) and
:data:`MRSCORE` (seven yes/no items with weights 30/20/20/10/10/5/5; ``total = 100 - Σ S_i·W_i``,
higher is better). MRScore rows store each item as the points it keeps, ``W_i·(1 - S_i)`` (0 or
W_i), so its total is the plain sum of the sub-scores; :meth:`ScoringSystem.error_flags` gives
back ``S_i``.

Internal units ("higher is better"): the reward model and the MRE loss see every sub-score as
``r_j = d·k_j·s_j`` with ``d = +1`` for a higher-is-better system and ``-1`` otherwise, and
``k_j = W_j`` under ``weighted_sum``, else 1; so the internal total is ``d·total`` = Σ_j r_j,
the sum of the heads (SPEC §3.3). :meth:`~ScoringSystem.to_internal` and
:meth:`~ScoringSystem.to_native` convert exactly between the two.

User systems come from YAML or JSON (:func:`load_system`)::

    name: mysystem
    higher_is_better: false
    total_rule: sum              # or weighted_sum
    tiers: [[0, 1], [2, 4], [5, 8]]
    items:
      - {name: missed_finding, description: "a finding of the reference is absent", upper: 5, integer: true}
      - {name: wrong_side, description: "left/right confused", weight: 2, upper: 3, integer: true}
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

TOTAL_RULES = ("sum", "weighted_sum")


class ScoringSystemError(ValueError):
    """A scoring-system definition or a sub-score record that does not fit its system."""


@dataclass(frozen=True)
class ScoringSystem:
    name: str
    items: tuple[str, ...]
    weights: tuple[float, ...] | None
    higher_is_better: bool
    total_rule: str = "sum"
    lower: tuple[float, ...] | None = None   # default 0 for every item
    upper: tuple[float | None, ...] | None = None  # default unbounded
    integer: bool = False
    binary: bool = False
    tiers: tuple[tuple[float, float], ...] | None = None
    descriptions: tuple[str, ...] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        where = f"scoring system {self.name!r}"
        # explicit bounds, so that equal systems compare equal however they were written
        n = len(self.items)
        object.__setattr__(self, "lower", tuple(float(x) for x in self.lower) if self.lower is not None else (0.0,) * n)
        object.__setattr__(self, "upper", tuple(None if x is None else float(x) for x in self.upper)
                           if self.upper is not None else (None,) * n)
        if self.tiers is not None:
            object.__setattr__(self, "tiers", tuple((float(a), float(b)) for a, b in self.tiers))
        if len(set(self.items)) != len(self.items):
            raise ScoringSystemError(f"{where}: item names repeat: {list(self.items)}")
        for attr in ("weights", "lower", "upper", "descriptions"):
            value = getattr(self, attr)
            if value is not None and len(value) != len(self.items):
                raise ScoringSystemError(f"{where}: {len(value)} {attr} for {len(self.items)} items")
        if self.total_rule not in TOTAL_RULES:
            raise ScoringSystemError(f"{where}: total_rule {self.total_rule!r}; expected one of {list(TOTAL_RULES)}")
        if self.total_rule == "weighted_sum":
            if self.weights is None or any(w == 0 for w in self.weights):
                raise ScoringSystemError(f"{where}: total_rule 'weighted_sum' needs a non-zero weight per item")
        if self.binary and any(u is None for u in self.upper):
            raise ScoringSystemError(f"{where}: binary items need an upper value each")
        for lo, hi, name in zip(self.lower_bounds, self.upper_bounds, self.items):
            if hi is not None and hi < lo:
                raise ScoringSystemError(f"{where}: item {name!r} has upper {hi} < lower {lo}")

    # --- ranges ---------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.items)

    @property
    def sign(self) -> float:
        return 1.0 if self.higher_is_better else -1.0

    @property
    def lower_bounds(self) -> tuple[float, ...]:
        return tuple(self.lower) if self.lower is not None else (0.0,) * len(self.items)

    @property
    def upper_bounds(self) -> tuple[float | None, ...]:
        return tuple(self.upper) if self.upper is not None else (None,) * len(self.items)

    @property
    def coefficients(self) -> tuple[float, ...]:
        """``k_j``: the factor of sub-score j in the total."""
        if self.total_rule == "weighted_sum":
            return tuple(float(w) for w in self.weights)
        return (1.0,) * len(self.items)

    def check_subscores(self, subscores: dict, where: str = "") -> None:
        """``ScoringSystemError`` unless ``subscores`` has exactly the items, each in range."""
        where = f"{where}: " if where else ""
        if sorted(subscores) != sorted(self.items):
            raise ScoringSystemError(f"{where}sub-scores {sorted(subscores)} do not match system "
                                     f"{self.name!r}: expected {sorted(self.items)}")
        for name, lo, hi in zip(self.items, self.lower_bounds, self.upper_bounds):
            v = subscores[name]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ScoringSystemError(f"{where}sub-score {name!r} must be a finite number, got {v!r}")
            if self.binary and v not in (lo, hi):
                raise ScoringSystemError(f"{where}sub-score {name!r} must be {lo:g} or {hi:g}, got {v!r}")
            if v < lo or (hi is not None and v > hi):
                rng = f"[{lo:g}, {hi:g}]" if hi is not None else f">= {lo:g}"
                raise ScoringSystemError(f"{where}sub-score {name!r} = {v!r} is outside {rng}")
            if self.integer and float(v) != int(v):
                raise ScoringSystemError(f"{where}sub-score {name!r} must be a whole number, got {v!r}")

    # --- totals and conversions -------------------------------------------------------------------
    def total(self, subscores: dict) -> float:
        """The native total by the system's rule."""
        return float(sum(k * subscores[name] for name, k in zip(self.items, self.coefficients)))

    def to_internal(self, subscores: dict) -> list[float]:
        """Native sub-scores (a dict) -> internal higher-is-better values in head order."""
        return [self.sign * k * float(subscores[name]) + 0.0 for name, k in zip(self.items, self.coefficients)]

    def total_to_internal(self, total: float) -> float:
        return self.sign * float(total) + 0.0

    def to_native(self, internal: Sequence[float]) -> dict[str, float]:
        """Internal values (rewards, head order) -> native sub-scores by name."""
        if len(internal) != len(self.items):
            raise ScoringSystemError(f"system {self.name!r} has {len(self.items)} items, got {len(internal)} values")
        return {name: self.sign * float(r) / k + 0.0 for name, r, k in zip(self.items, internal, self.coefficients)}

    def total_to_native(self, internal: Sequence[float]) -> float:
        """Internal values (head order) -> the native total (``d · Σ r_j``)."""
        return self.sign * float(sum(float(r) for r in internal)) + 0.0

    def error_flags(self, subscores: dict) -> dict[str, float]:
        """Binary systems: ``S_i`` = 1 where the item scored its lower value (an error), else 0.
        For non-binary values (model outputs) the linear interpolation ``(upper - s)/(upper - lower)``."""
        if not self.binary:
            raise ScoringSystemError(f"system {self.name!r} has no yes/no items")
        return {n: (hi - subscores[n]) / (hi - lo) if hi != lo else 0.0
                for n, lo, hi in zip(self.items, self.lower_bounds, self.upper_bounds)}

    def tier_of(self, total: float) -> int | None:
        """Index of the first tier whose [lo, hi] range holds ``total``."""
        for k, (lo, hi) in enumerate(self.tiers or ()):
            if lo <= total <= hi:
                return k
        return None

    # --- (de)serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict:
        out = asdict(self)
        out["items"] = [
            {"name": name, **({"description": self.descriptions[j]} if self.descriptions else {}),
             **({"weight": self.weights[j]} if self.weights else {}),
             "lower": self.lower_bounds[j], "upper": self.upper_bounds[j]}
            for j, name in enumerate(self.items)]
        for key in ("weights", "lower", "upper", "descriptions"):
            out.pop(key)
        out["tiers"] = [list(t) for t in self.tiers] if self.tiers else None
        return out

    @classmethod
    def from_dict(cls, spec: dict, where: str = "scoring system") -> "ScoringSystem":
        if not isinstance(spec, dict):
            raise ScoringSystemError(f"{where}: expected a mapping, got {type(spec).__name__}")
        known = {"name", "items", "higher_is_better", "total_rule", "integer", "binary", "tiers"}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise ScoringSystemError(f"{where}: unknown key(s) {unknown}; expected {sorted(known)}")
        for key in ("name", "items", "higher_is_better"):
            if key not in spec:
                raise ScoringSystemError(f"{where}: missing key {key!r}")
        if not isinstance(spec["higher_is_better"], bool):
            raise ScoringSystemError(f"{where}: 'higher_is_better' must be true or false")
        items = spec["items"]
        if not isinstance(items, list) or not items:
            raise ScoringSystemError(f"{where}: 'items' must be a non-empty list")
        rows = []
        for j, item in enumerate(items):
            item = {"name": item} if isinstance(item, str) else item
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
                raise ScoringSystemError(f"{where}: items[{j}] needs a non-empty 'name'")
            extra = sorted(set(item) - {"name", "description", "weight", "lower", "upper"})
            if extra:
                raise ScoringSystemError(f"{where}: items[{j}] has unknown key(s) {extra}")
            rows.append(item)
        has_w = [("weight" in r) for r in rows]
        if any(has_w) and not all(has_w):
            raise ScoringSystemError(f"{where}: give a weight for every item or for none")
        tiers = spec.get("tiers")
        if tiers is not None:
            if not isinstance(tiers, list) or not all(isinstance(t, (list, tuple)) and len(t) == 2 for t in tiers):
                raise ScoringSystemError(f"{where}: 'tiers' must be a list of [low, high] totals")
            tiers = tuple((float(a), float(b)) for a, b in tiers)

        def num(value, name, j):
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ScoringSystemError(f"{where}: items[{j}].{name} must be a number, got {value!r}")
            return float(value)

        return cls(
            name=str(spec["name"]), items=tuple(r["name"] for r in rows),
            weights=tuple(num(r["weight"], "weight", j) for j, r in enumerate(rows)) if all(has_w) else None,
            higher_is_better=spec["higher_is_better"], total_rule=spec.get("total_rule", "sum"),
            lower=tuple(num(r.get("lower", 0.0), "lower", j) for j, r in enumerate(rows)),
            upper=tuple(num(r.get("upper"), "upper", j) for j, r in enumerate(rows)),
            integer=bool(spec.get("integer", False)), binary=bool(spec.get("binary", False)), tiers=tiers,
            descriptions=tuple(str(r.get("description", "")) for r in rows)
            if any("description" in r for r in rows) else None)


RADCLIQ = ScoringSystem(
    "radcliq",
    ("false_prediction", "omission", "incorrect_location", "incorrect_severity",
     "added_comparison", "omitted_comparison"),
    None, higher_is_better=False, integer=True,
    tiers=((0, 2), (3, 4), (5, 6)),
    descriptions=(
        "false prediction of a finding (a finding stated that the reference does not support)",
        "omission of a finding present in the reference",
        "incorrect location or position of a finding",
        "incorrect severity of a finding",
        "mention of a comparison (change from a prior study) that is not in the reference",
        "omission of a comparison stated in the reference",
    ),
)
MRSCORE = ScoringSystem(
    "mrscore",
    ("impression_consistency", "impression_organs", "lesion_description", "clinical_history",
     "completeness", "grammar", "terminology"),
    (30.0, 20.0, 20.0, 10.0, 10.0, 5.0, 5.0), higher_is_better=True,
    upper=(30.0, 20.0, 20.0, 10.0, 10.0, 5.0, 5.0), binary=True,
    tiers=((0, 40), (40, 70), (70, 100)),
    descriptions=(
        "the impression is consistent with the reference's impression",
        "the impression names the same organs as the reference",
        "lesions are described correctly (presence, location, size, severity)",
        "the clinical history is reflected correctly",
        "the report is complete: nothing of the reference is omitted",
        "grammar and spelling are correct",
        "medical terminology is used and spelt correctly",
    ),
)
BUILTIN_SYSTEMS = {RADCLIQ.name: RADCLIQ, MRSCORE.name: MRSCORE}


def load_system(spec: "str | Path | dict | ScoringSystem") -> ScoringSystem:
    """A system by built-in name (``radcliq``, ``mrscore``), a YAML/JSON file path, or a dict."""
    if isinstance(spec, ScoringSystem):
        return spec
    if isinstance(spec, dict):
        return ScoringSystem.from_dict(spec)
    text = str(spec)
    if text in BUILTIN_SYSTEMS:
        return BUILTIN_SYSTEMS[text]
    path = Path(text)
    if not path.is_file():
        raise ScoringSystemError(f"unknown scoring system {text!r}: neither a built-in "
                                 f"({', '.join(BUILTIN_SYSTEMS)}) nor a YAML/JSON file")
    raw = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        data = json.loads(raw)
    else:
        import yaml

        try:
            data = yaml.safe_load(raw)
        except yaml.YAMLError as err:
            raise ScoringSystemError(f"{path}: not valid YAML ({err})") from None
    return ScoringSystem.from_dict(data, str(path))

"""The arithmetic of RaTEScore, without any model: numpy, float64 throughout.

Given the entities of a reference and of a candidate (an embedding and a type each), RaTEScore
scores each side against the other and combines the two directions with a harmonic mean.

One direction ("scoring side A against side B"), for the entities ``j`` of A:

1. ``cos[j, i]``: cosine similarity of A's entity ``j`` and B's entity ``i``. Each row is divided
   by ``max(norm, 1e-12)`` (a zero vector has cosine 0 with everything); no clipping, so cosines
   may be negative.
2. ``m(j) = argmax_i cos[j, i]``: the best match, types ignored; on a tie the lowest index wins.
3. ``w_j = W[type_j, type_m(j)]``: the affinity of (scored type, matched type).
4. ``f_j = p`` when the pair (type_j, type_m(j)) is penalised, else ``1.0`` (see
   :func:`penalty_mask`).
5. ``S = sum_j ((w_j * cos_j) * f_j) / sum_j w_j``: the penalty scales the numerator only.
   When ``sum_j w_j == 0`` (including when A has no entity) ``S = 0.0``, as in the released code.

Combination (:func:`rate_score`): precision scores the candidate's entities against the
reference, recall the reference's entities against the candidate, and the result is
``f1 = 2 * P * R / (P + R)``, or ``0.0`` when ``P + R == 0``. When either report has no entity,
all three values are ``empty_score`` (0.5 in the released package).

The released package (``ratescore`` 0.6.0) computes cosines in the embeddings' own dtype (usually
float32) with torch and sums the terms left to right in Python floats; here everything is float64
and sums use ``numpy.sum``, so results agree to float32 rounding (about 1e-7), not bit for bit.
Ties in step 2 are resolved by ``torch.topk`` there, whose choice is not specified.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from numbers import Real
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from radscore.atomic import refuse_unfinished, write_text_atomic
from radscore.labels import ENTITY_TYPES

PENALTY_KEY = "neg_weight"
PENALTY_MODES = ("official", "paper")
_TYPE_INDEX = {t: k for k, t in enumerate(ENTITY_TYPES)}
_EPS = 1e-12  # the norm floor, as torch.nn.functional.normalize uses

# The ordered (scored type, matched type) pairs the released code penalises: a negated finding or
# diagnosis matched to a present one, in both directions; ANATOMY is never penalised.
OFFICIAL_PENALISED_PAIRS: frozenset[tuple[str, str]] = frozenset(
    pair
    for a, b in [("NON-DISEASE", "DISEASE"), ("NON-ABNORMALITY", "ABNORMALITY"),
                 ("NON-DISEASE", "ABNORMALITY"), ("NON-ABNORMALITY", "DISEASE")]
    for pair in [(a, b), (b, a)]
)

# The released "long" (paragraph-level) and "short" (sentence-level) matrices, SPEC §1.6.
_BUILTIN: dict[str, dict[str, float]] = {
    "long": {
        "abnormality_abnormality": 0.4276119164393705, "abnormality_anatomy": 0.6240929990607657,
        "abnormality_disease": 0.0034478181112993847, "abnormality_non-abnormality": 0.5431049700217344,
        "abnormality_non-disease": 0.27005425386213877, "anatomy_abnormality": 0.7487824274337533,
        "anatomy_anatomy": 0.2856134859160784, "anatomy_disease": 0.4592143222158069,
        "anatomy_non-abnormality": 0.02097055139911715, "anatomy_non-disease": 0.00013736314126696204,
        "disease_abnormality": 0.8396510075734789, "disease_anatomy": 0.9950209388542061,
        "disease_disease": 0.8460555030578727, "disease_non-abnormality": 0.9820689020512646,
        "disease_non-disease": 0.3789136708096537, "non-abnormality_abnormality": 0.16546764653692908,
        "non-abnormality_anatomy": 0.018670610691852826, "non-abnormality_disease": 0.719397354576018,
        "non-abnormality_non-abnormality": 0.0009357166071730684,
        "non-abnormality_non-disease": 0.0927333564267591, "non-disease_abnormality": 0.7759420231214385,
        "non-disease_anatomy": 0.1839139293714062, "non-disease_disease": 0.10073046076318157,
        "non-disease_non-abnormality": 0.03860183811876373, "non-disease_non-disease": 0.34065681486566446,
        "neg_weight": 0.8716553966489615,
    },
    "short": {
        "abnormality_abnormality": 0.4070293318365468, "abnormality_anatomy": 0.6952639610605605,
        "abnormality_disease": 0.28342529466226446, "abnormality_non-abnormality": 0.9479148658006686,
        "abnormality_non-disease": 0.23875064111146294, "anatomy_abnormality": 0.5829759950441763,
        "anatomy_anatomy": 0.7709590751917746, "anatomy_disease": 0.0006059634829551632,
        "anatomy_non-abnormality": 0.794672584951181, "anatomy_non-disease": 0.27982942400798977,
        "disease_abnormality": 0.8840397619834857, "disease_anatomy": 0.9637659445696822,
        "disease_disease": 0.19018958438059513, "disease_non-abnormality": 0.6962283914800402,
        "disease_non-disease": 0.943727057946997, "non-abnormality_abnormality": 0.1712744286898638,
        "non-abnormality_anatomy": 0.4485149671497294, "non-abnormality_disease": 0.00045065329822896076,
        "non-abnormality_non-abnormality": 0.0007887930317199857,
        "non-abnormality_non-disease": 0.8555432840895761, "non-disease_abnormality": 0.9555801066212176,
        "non-disease_anatomy": 0.13122106162635216, "non-disease_disease": 0.6072996585919443,
        "non-disease_non-abnormality": 0.05650711141169969, "non-disease_non-disease": 0.3214769399791204,
        "neg_weight": 0.3611577852354489,
    },
}


def official_key(scored: str, matched: str) -> str:
    """The official JSON key of a type pair: ``("NON-DISEASE", "ANATOMY")`` -> ``"non-disease_anatomy"``."""
    return f"{scored.lower()}_{matched.lower()}"


def _check_number(value: Any, where: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.number)):
        raise ValueError(f"{where}: expected a number, got {value!r} ({type(value).__name__})")
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{where}: expected a finite number, got {out}")
    return out


class AffinityMatrix:
    """The 5x5 type-affinity matrix ``W`` and the penalty ``p`` of RaTEScore.

    ``W[k, l]`` is the weight of a scored entity of type ``ENTITY_TYPES[k]`` whose best match has
    type ``ENTITY_TYPES[l]``. Any finite values are accepted (the released ones lie in [0, 1]).
    """

    __slots__ = ("_w", "_p")

    def __init__(self, weights: np.ndarray, penalty: float):
        w = np.array(weights, dtype=np.float64)  # a private copy
        if w.shape != (len(ENTITY_TYPES),) * 2:
            raise ValueError(f"the affinity matrix must be 5x5 in ENTITY_TYPES order, got shape {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError("the affinity matrix holds a non-finite value")
        w.flags.writeable = False
        self._w = w
        self._p = _check_number(penalty, "penalty (neg_weight)")

    # ---- constructors -------------------------------------------------------------------------
    @classmethod
    def from_array(cls, weights: Any, penalty: float) -> AffinityMatrix:
        """From a 5x5 array (rows: scored type, columns: matched type, ENTITY_TYPES order) and p."""
        return cls(np.asarray(weights, dtype=np.float64), penalty)

    @classmethod
    def uniform(cls, weight: float = 1.0, penalty: float = 1.0) -> AffinityMatrix:
        """Every type pair weighted alike; with the defaults, S is the plain mean best cosine."""
        return cls(np.full((len(ENTITY_TYPES),) * 2, _check_number(weight, "weight")), penalty)

    @classmethod
    def builtin(cls, name: str) -> AffinityMatrix:
        """The released ``"long"`` (paragraph-level) or ``"short"`` (sentence-level) matrix."""
        key = name.lower() if isinstance(name, str) else name
        if key not in _BUILTIN:
            raise ValueError(f"unknown built-in affinity matrix {name!r}; expected one of {sorted(_BUILTIN)}")
        return cls.from_official(_BUILTIN[key])

    @classmethod
    def from_official(cls, data: dict, source: str = "affinity matrix") -> AffinityMatrix:
        """From the official dict: the 25 ``"<scored>_<matched>"`` keys plus ``"neg_weight"``."""
        if not isinstance(data, dict):
            raise ValueError(f"{source}: expected a JSON object, got {type(data).__name__}")
        expected = {official_key(a, b) for a in ENTITY_TYPES for b in ENTITY_TYPES} | {PENALTY_KEY}
        for key in data:
            if key in expected:
                continue
            parts = key.split("_") if isinstance(key, str) else []
            bad = [p for p in parts if p.upper() not in _TYPE_INDEX]
            if len(parts) == 2 and bad:
                raise ValueError(f"{source}: key {key!r} names unknown entity type(s) {bad}; "
                                 f"types are {[t.lower() for t in ENTITY_TYPES]}")
            raise ValueError(f"{source}: unexpected key {key!r}; expected '<scored>_<matched>' "
                             f"in lower case, or {PENALTY_KEY!r}")
        missing = sorted(expected - set(data))
        if missing:
            raise ValueError(f"{source}: missing key(s) {missing}")
        w = np.empty((len(ENTITY_TYPES),) * 2)
        for a, ta in enumerate(ENTITY_TYPES):
            for b, tb in enumerate(ENTITY_TYPES):
                key = official_key(ta, tb)
                w[a, b] = _check_number(data[key], f"{source}, key {key!r}")
        return cls(w, _check_number(data[PENALTY_KEY], f"{source}, key {PENALTY_KEY!r}"))

    @classmethod
    def load(cls, path: str | os.PathLike) -> AffinityMatrix:
        """From an official JSON file."""
        path = Path(path)
        refuse_unfinished(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not valid JSON ({err})") from err
        return cls.from_official(data, source=str(path))

    # ---- views --------------------------------------------------------------------------------
    @property
    def penalty(self) -> float:
        """The penalty ``p`` (``neg_weight``)."""
        return self._p

    def weight(self, scored: str, matched: str) -> float:
        """``W(scored type, matched type)``."""
        return float(self._w[type_indices([scored])[0], type_indices([matched])[0]])

    def as_array(self) -> tuple[np.ndarray, float]:
        """``(W, p)``: a writable copy of W (5x5, ENTITY_TYPES order) and p."""
        return self._w.copy(), self._p

    def to_official(self) -> dict[str, float]:
        """The official dict: keys in lower-case alphabetical type order, then ``neg_weight``."""
        order = sorted(range(len(ENTITY_TYPES)), key=lambda k: ENTITY_TYPES[k].lower())
        out = {official_key(ENTITY_TYPES[a], ENTITY_TYPES[b]): float(self._w[a, b]) for a in order for b in order}
        out[PENALTY_KEY] = self._p
        return out

    def save(self, path: str | os.PathLike) -> None:
        """Write the official JSON file (floats are written exactly, so load() gives them back)."""
        write_text_atomic(path, json.dumps(self.to_official(), indent=1) + "\n")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffinityMatrix):
            return NotImplemented
        return self._p == other._p and bool(np.array_equal(self._w, other._w))

    def __hash__(self) -> int:
        return hash((self._p, self._w.tobytes()))

    def __repr__(self) -> str:
        return f"AffinityMatrix(W={self._w.tolist()}, penalty={self._p})"


def resolve_matrix(spec: Any) -> AffinityMatrix:
    """One entry point: ``"long"``/``"short"`` (any case), a JSON path, an official dict or an
    :class:`AffinityMatrix`."""
    if isinstance(spec, AffinityMatrix):
        return spec
    if isinstance(spec, dict):
        return AffinityMatrix.from_official(spec)
    if isinstance(spec, str) and spec.lower() in _BUILTIN:
        return AffinityMatrix.builtin(spec)
    if isinstance(spec, (str, os.PathLike)):
        if not Path(spec).is_file():
            raise FileNotFoundError(f"affinity matrix {str(spec)!r} is neither a built-in name "
                                    f"({sorted(_BUILTIN)}) nor an existing JSON file")
        return AffinityMatrix.load(spec)
    raise TypeError(f"cannot make an affinity matrix from {type(spec).__name__}; give 'long', 'short', "
                    "a JSON path, an official dict or an AffinityMatrix")


# ---- the formulas -----------------------------------------------------------------------------
def as_embeddings(x: Any, name: str = "embeddings") -> np.ndarray:
    """A numpy array or torch tensor of shape (n, d) as float64; an empty input gives (0, 0)."""
    if hasattr(x, "detach"):  # a torch tensor; float64 holds every torch float exactly
        x = x.detach().cpu().double().numpy()
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1 and arr.size == 0:  # [] or torch.tensor([]): no entity
        return arr.reshape(0, 0)
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected shape (n, d), got {arr.shape}")
    return arr


def type_indices(types: Sequence[str]) -> np.ndarray:
    """Indices into ``ENTITY_TYPES`` of upper-case type names; ``ValueError`` on an unknown one."""
    try:
        return np.array([_TYPE_INDEX[t] for t in types], dtype=np.intp)
    except (KeyError, TypeError):
        bad = [t for t in types if not isinstance(t, str) or t not in _TYPE_INDEX]
        raise ValueError(f"unknown entity type(s) {bad}; expected upper-case names from {list(ENTITY_TYPES)}") from None


def cosine_matrix(a: Any, b: Any) -> np.ndarray:
    """``cos[j, i]`` between rows of ``a`` (n, d) and ``b`` (m, d): rows divided by
    ``max(norm, 1e-12)``, then one matrix product. Not clipped."""
    a, b = as_embeddings(a, "a"), as_embeddings(b, "b")
    if a.shape[0] and b.shape[0] and a.shape[1] != b.shape[1]:
        raise ValueError(f"embedding sizes differ: {a.shape[1]} vs {b.shape[1]}")
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), _EPS)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), _EPS)
    if not (a.shape[0] and b.shape[0]):
        return np.zeros((a.shape[0], b.shape[0]))
    return a @ b.T


def best_matches(sim: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row (a scored entity): the column of its highest cosine (first on a tie) and that
    cosine. Types play no part."""
    sim = np.asarray(sim, dtype=np.float64)
    if sim.ndim != 2:
        raise ValueError(f"expected a 2-d similarity matrix, got shape {sim.shape}")
    if sim.shape[0] and not sim.shape[1]:
        raise ValueError("cannot match: the other side has no entity")
    idx = np.argmax(sim, axis=1) if sim.shape[0] else np.zeros(0, dtype=np.intp)
    return idx, sim[np.arange(sim.shape[0]), idx]


def _official_table() -> np.ndarray:
    table = np.zeros((len(ENTITY_TYPES),) * 2, dtype=bool)
    for a, b in OFFICIAL_PENALISED_PAIRS:
        table[_TYPE_INDEX[a], _TYPE_INDEX[b]] = True
    table.flags.writeable = False
    return table


_OFFICIAL_TABLE = _official_table()


def _penalised(scored: np.ndarray, matched: np.ndarray, mode: str) -> np.ndarray:
    """:func:`penalty_mask` on type indices."""
    if mode == "paper":
        return scored != matched
    if mode == "official":
        return _OFFICIAL_TABLE[scored, matched]
    raise ValueError(f"unknown penalty mode {mode!r}; expected one of {list(PENALTY_MODES)}")


def penalty_mask(scored_types: Sequence[str], matched_types: Sequence[str], mode: str = "official") -> np.ndarray:
    """Whether each (scored type, matched type) pair is penalised.

    ``"official"`` (the released code): only the 8 ordered pairs in ``OFFICIAL_PENALISED_PAIRS``.
    ``"paper"``: whenever the two types differ. Every official pair has two different types, so
    the official set is a strict subset of the paper's.
    """
    s, m = type_indices(scored_types), type_indices(matched_types)
    if s.shape != m.shape:
        raise ValueError(f"{len(s)} scored types but {len(m)} matched types")
    return _penalised(s, m, mode)


def weighted_score(cosines: np.ndarray, weights: np.ndarray, penalised: np.ndarray, penalty: float) -> float:
    """``sum((w * cos) * f) / sum(w)`` with ``f = penalty`` where penalised else 1; 0.0 when
    ``sum(w) == 0``. The penalty does not enter the denominator."""
    cosines, weights = np.asarray(cosines, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    factors = np.where(np.asarray(penalised, dtype=bool), float(penalty), 1.0)
    total_weight = float(np.sum(weights))
    if total_weight == 0.0:
        return 0.0
    return float(np.sum((weights * cosines) * factors)) / total_weight


@dataclass(frozen=True)
class Direction:
    """The per-entity pieces of one direction (arrays of length n_scored)."""

    matched: np.ndarray  # index of the best match on the other side
    cosine: np.ndarray
    weight: np.ndarray  # W(scored type, matched type)
    penalised: np.ndarray  # bool
    penalty: float

    @property
    def score(self) -> float:
        return weighted_score(self.cosine, self.weight, self.penalised, self.penalty)


def direction_from_similarity(sim: np.ndarray, scored_types: Sequence[str], other_types: Sequence[str],
                              matrix: Any, penalty: str = "official") -> Direction:
    """One direction from a cosine matrix whose rows are the scored side's entities."""
    m = resolve_matrix(matrix)
    sim = np.asarray(sim, dtype=np.float64)
    s_idx, o_idx = type_indices(scored_types), type_indices(other_types)
    if sim.shape != (len(s_idx), len(o_idx)):
        raise ValueError(f"similarity shape {sim.shape} does not match {len(s_idx)} scored and "
                         f"{len(o_idx)} other types")
    matched, cos = best_matches(sim)
    w, p = m.as_array()
    m_idx = o_idx[matched]
    return Direction(matched=matched, cosine=cos, weight=w[s_idx, m_idx],
                     penalised=_penalised(s_idx, m_idx, penalty), penalty=p)


def directional_score(scored_embeddings: Any, scored_types: Sequence[str], other_embeddings: Any,
                      other_types: Sequence[str], matrix: Any, penalty: str = "official") -> float:
    """S for the scored side's entities, each matched into the other side (SPEC §1.4)."""
    sim = cosine_matrix(scored_embeddings, other_embeddings)
    return direction_from_similarity(sim, scored_types, other_types, matrix, penalty).score


def explain_direction(scored_embeddings: Any, scored_types: Sequence[str], other_embeddings: Any,
                      other_types: Sequence[str], matrix: Any, penalty: str = "official") -> list[dict]:
    """One JSON-ready record per scored entity: ``index``, ``matched_index``, ``type``,
    ``matched_type``, ``cosine``, ``weight``, ``penalised``."""
    sim = cosine_matrix(scored_embeddings, other_embeddings)
    d = direction_from_similarity(sim, scored_types, other_types, matrix, penalty)
    return [
        {"index": j, "matched_index": int(d.matched[j]), "type": scored_types[j],
         "matched_type": other_types[int(d.matched[j])], "cosine": float(d.cosine[j]),
         "weight": float(d.weight[j]), "penalised": bool(d.penalised[j])}
        for j in range(len(scored_types))
    ]


def f1(precision: float, recall: float) -> float:
    """``2 * precision * recall / (precision + recall)``; 0.0 when ``precision + recall == 0``
    (as released, this also covers ``precision == -recall != 0``, possible with negative
    cosines). Symmetric bit for bit, so the released code's swapped P/R naming gives the same F1."""
    if precision + recall == 0:
        return 0.0
    return 2.0 * precision * recall / (precision + recall)


def rate_score(ref_embeddings: Any, ref_types: Sequence[str], cand_embeddings: Any,
               cand_types: Sequence[str], matrix: Any, penalty: str = "official",
               empty_score: float = 0.5) -> tuple[float, float, float]:
    """``(precision, recall, f1)`` of one candidate against one reference.

    Precision scores the candidate's entities (each matched into the reference), recall the
    reference's entities (each matched into the candidate). One cosine matrix serves both.
    When either side has no entity the result is ``(empty_score,) * 3``.
    """
    ref, cand = as_embeddings(ref_embeddings, "ref_embeddings"), as_embeddings(cand_embeddings, "cand_embeddings")
    for arr, types, name in [(ref, ref_types, "reference"), (cand, cand_types, "candidate")]:
        if arr.shape[0] != len(types):
            raise ValueError(f"{name}: {arr.shape[0]} embeddings but {len(types)} types")
    type_indices(ref_types), type_indices(cand_types)  # validate even when one side is empty
    if penalty not in PENALTY_MODES:
        raise ValueError(f"unknown penalty mode {penalty!r}; expected one of {list(PENALTY_MODES)}")
    m = resolve_matrix(matrix)
    if ref.shape[0] == 0 or cand.shape[0] == 0:
        return (float(empty_score),) * 3
    sim = cosine_matrix(cand, ref)  # rows: candidate entities, columns: reference entities
    precision = direction_from_similarity(sim, cand_types, ref_types, m, penalty).score
    recall = direction_from_similarity(sim.T, ref_types, cand_types, m, penalty).score
    return precision, recall, f1(precision, recall)

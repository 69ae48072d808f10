"""Everything of RaTEScore that does not depend on ``W`` or ``p``, computed once per rating set.

1. The entities of every distinct report (``RaTEScore.entities``) and the embedding of every
   distinct entity text (``RaTEScore.encoder``), cached on disk in ``<cache>/entities-<key>.json``
   and ``<cache>/embeddings-<key>.npz``. A key hashes the model's identity (the content of a local
   model folder, or a Hub id) with the options that change the output (splitter; pooling and
   maximum length), so a retrained model never reads stale entries. Models load only on a miss.
2. For every pair and both directions, as ``RaTEScore._score_pair`` does: cosines between the
   distinct entity texts repeated over copies (copies tie exactly, the first wins), then
   :func:`radscore.scoring.direction_from_similarity` for the best match of each scored entity.
   Kept per entity: the direction's segment (``2 * pair`` for precision, the candidate's entities
   matched into the reference; ``2 * pair + 1`` for recall), the type pair
   ``5 * scored type + matched type`` and the cosine.
3. Per segment and type pair: the sum of cosines and the count. Since the weight and the penalty
   factor depend on the type pair only, a direction's score is
   ``S = sum_tp cos_sum[tp] * W[tp] * f[tp] / sum_tp count[tp] * W[tp]`` (0 when the denominator
   is 0), two matrix products per trial for all pairs at once (:meth:`PairTables.scores`).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Sequence

import numpy as np

from radscore.atomic import atomic_path
from radscore.labels import ENTITY_TYPES
from radscore.scoring import (PENALTY_MODES, AffinityMatrix, cosine_matrix, direction_from_similarity,
                              penalty_mask, resolve_matrix, type_indices)

N_TYPES = len(ENTITY_TYPES)
N_TYPE_PAIRS = N_TYPES * N_TYPES
_UNIFORM = AffinityMatrix.uniform()  # only the matches are used: they ignore W


# ---- model identities and the on-disk cache ----------------------------------------------------
def model_identity(source: str) -> str:
    """A hash of what a model is: the bytes of every file of a local folder (the packaged MiniLM
    resolves to its folder), or the Hub id itself."""
    from radscore.models import resolve_model_path

    path = Path(resolve_model_path(str(source)))
    if not path.is_dir():
        return "hub:" + str(source)
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        with file.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return "sha256:" + digest.hexdigest()


def cache_key(**parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def _atomic_write(path: Path, write) -> None:
    """``write(tmp)`` to a temporary name beside ``path``, renamed to ``path`` when it returns
    (``atomic_path`` of ``radscore.atomic``): a killed precomputation leaves the previous cache."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        write(tmp)


class EntityCache:
    """``report text -> [(entity text, type), ...]`` in one JSON file."""

    def __init__(self, path: Path, identity: dict):
        self.path, self.identity = Path(path), identity
        self.entries: dict[str, list[tuple[str, str]]] = {}
        if self.path.is_file():
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("identity") != identity:
                raise ValueError(f"{self.path}: made for {data.get('identity')}, not {identity}; delete it")
            self.entries = {k: [tuple(e) for e in v] for k, v in data["entities"].items()}

    def save(self) -> None:
        text = json.dumps({"identity": self.identity, "entities": self.entries}, ensure_ascii=False)
        _atomic_write(self.path, lambda p: p.write_text(text, encoding="utf-8"))


class EmbeddingCache:
    """``entity text -> float32 vector`` in one ``.npz`` (``texts``, ``vectors``)."""

    def __init__(self, path: Path, identity: dict):
        self.path, self.identity = Path(path), identity
        self.index: dict[str, int] = {}
        self.vectors = np.zeros((0, 0), dtype=np.float32)
        if self.path.is_file():
            with np.load(self.path, allow_pickle=False) as data:
                if json.loads(str(data["identity"])) != identity:
                    raise ValueError(f"{self.path}: made for another encoder; delete it")
                self.index = {str(t): k for k, t in enumerate(data["texts"])}
                self.vectors = data["vectors"]

    def add(self, index: dict[str, int], table: np.ndarray) -> None:
        new = [t for t in index if t not in self.index]
        if not new:
            return
        rows = table[[index[t] for t in new]].astype(np.float32)
        self.vectors = rows if not len(self.index) else np.concatenate([self.vectors, rows])
        for t in new:
            self.index[t] = len(self.index)

    def save(self) -> None:
        texts = np.array(list(self.index), dtype=str)

        def write(p: Path) -> None:
            with p.open("wb") as fh:
                np.savez(fh, texts=texts, vectors=self.vectors, identity=json.dumps(self.identity))

        _atomic_write(self.path, write)


# ---- the tables -----------------------------------------------------------------------------
def penalised_type_pairs(mode: str) -> np.ndarray:
    """(25,) bool: whether each type pair ``5 * scored + matched`` is penalised in ``mode``."""
    scored = [t for t in ENTITY_TYPES for _ in ENTITY_TYPES]
    matched = [t for _ in ENTITY_TYPES for t in ENTITY_TYPES]
    return penalty_mask(scored, matched, mode)


@dataclass
class PairTables:
    """The W- and p-free part of RaTEScore for ``n`` pairs (see the module doc)."""

    cos_sum: np.ndarray  # (2n, 25) float64: per segment and type pair, the sum of best cosines
    count: np.ndarray  # (2n, 25) float64: per segment and type pair, the number of entities
    empty: np.ndarray  # (n,) bool: either report has no entity -> empty_score
    penalty_mode: str
    empty_score: float
    entity_segment: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    entity_type_pair: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    entity_cosine: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self):
        if self.penalty_mode not in PENALTY_MODES:
            raise ValueError(f"unknown penalty mode {self.penalty_mode!r}; expected one of {list(PENALTY_MODES)}")
        self.penalised = penalised_type_pairs(self.penalty_mode)

    def __len__(self) -> int:
        return len(self.empty)

    def with_penalty_mode(self, mode: str) -> PairTables:
        return PairTables(self.cos_sum, self.count, self.empty, mode, self.empty_score,
                          self.entity_segment, self.entity_type_pair, self.entity_cosine)

    def directions(self, weights, penalty) -> tuple[np.ndarray, np.ndarray]:
        """``(precision, recall)``, each (n,) for one matrix or (k, n) for k matrices stacked
        (``weights`` (k, 5, 5), ``penalty`` (k,)); empty pairs hold ``empty_score``."""
        w = np.asarray(weights, dtype=np.float64)
        single = w.ndim == 2
        w = w.reshape(-1, N_TYPE_PAIRS)  # (k, 25), row-major: 5 * scored + matched
        p = np.broadcast_to(np.asarray(penalty, dtype=np.float64).reshape(-1, 1), (len(w), 1))
        factor = np.where(self.penalised[None, :], p, 1.0)
        num = self.cos_sum @ (w * factor).T  # (2n, k)
        den = self.count @ w.T
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(den == 0.0, 0.0, num / den).T  # (k, 2n)
        prec, rec = s[:, 0::2].copy(), s[:, 1::2].copy()
        prec[:, self.empty] = self.empty_score
        rec[:, self.empty] = self.empty_score
        return (prec[0], rec[0]) if single else (prec, rec)

    def scores(self, weights, penalty) -> np.ndarray:
        """RaTEScore (the F1 of both directions) of every pair, as :func:`radscore.scoring.f1`."""
        prec, rec = self.directions(weights, penalty)
        total = prec + rec
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(total == 0.0, 0.0, 2.0 * prec * rec / total)
        out[..., self.empty] = self.empty_score
        return out

    def score_matrix(self, matrix) -> np.ndarray:
        """Scores with one matrix: ``"long"``, ``"short"``, a JSON path, a dict or an AffinityMatrix."""
        w, p = resolve_matrix(matrix).as_array()
        return self.scores(w, p)

    def subset(self, pair_indices: Sequence[int]) -> PairTables:
        idx = np.asarray(pair_indices, dtype=np.intp)
        rows = np.stack([2 * idx, 2 * idx + 1], axis=1).ravel()
        new_segment = np.full(2 * len(self), -1, dtype=np.int64)
        new_segment[rows] = np.arange(len(rows))
        keep = new_segment[self.entity_segment] >= 0 if len(self.entity_segment) else np.zeros(0, bool)
        return PairTables(self.cos_sum[rows], self.count[rows], self.empty[idx], self.penalty_mode,
                          self.empty_score, new_segment[self.entity_segment[keep]],
                          self.entity_type_pair[keep], self.entity_cosine[keep])

    def save(self, path: str | Path) -> None:
        def write(p: Path) -> None:
            with p.open("wb") as fh:
                np.savez(fh, cos_sum=self.cos_sum, count=self.count, empty=self.empty,
                         penalty_mode=self.penalty_mode, empty_score=self.empty_score,
                         entity_segment=self.entity_segment, entity_type_pair=self.entity_type_pair,
                         entity_cosine=self.entity_cosine)

        _atomic_write(Path(path), write)

    @classmethod
    def load(cls, path: str | Path) -> PairTables:
        with np.load(path, allow_pickle=False) as d:
            return cls(d["cos_sum"], d["count"], d["empty"], str(d["penalty_mode"]), float(d["empty_score"]),
                       d["entity_segment"], d["entity_type_pair"], d["entity_cosine"])


def build_tables(pair_entities: Sequence[tuple[list, list]], index: dict[str, int], table: np.ndarray,
                 penalty_mode: str, empty_score: float) -> PairTables:
    """Tables from each pair's ``(candidate entities, reference entities)`` (``(text, type)``
    tuples) and the embedding ``table`` with its ``index`` of texts."""
    n = len(pair_entities)
    segments, type_pairs, cosines = [], [], []
    empty = np.zeros(n, dtype=bool)
    for i, (cand, ref) in enumerate(pair_entities):
        if not cand or not ref:
            empty[i] = True
            continue
        c_rows, c_inv = np.unique([index[t] for t, _ in cand], return_inverse=True)
        r_rows, r_inv = np.unique([index[t] for t, _ in ref], return_inverse=True)
        sim = cosine_matrix(table[c_rows], table[r_rows])[c_inv][:, r_inv]  # candidate x reference
        c_types, r_types = [e[1] for e in cand], [e[1] for e in ref]
        for d, (s, scored, other) in enumerate([(sim, c_types, r_types), (sim.T, r_types, c_types)]):
            found = direction_from_similarity(s, scored, other, _UNIFORM, penalty_mode)
            matched_types = type_indices(other)[found.matched]
            segments.append(np.full(len(scored), 2 * i + d, dtype=np.int64))
            type_pairs.append((N_TYPES * type_indices(scored) + matched_types).astype(np.int8))
            cosines.append(found.cosine)
    seg = np.concatenate(segments) if segments else np.zeros(0, np.int64)
    tp = np.concatenate(type_pairs) if type_pairs else np.zeros(0, np.int8)
    cos = np.concatenate(cosines) if cosines else np.zeros(0)
    flat = seg * N_TYPE_PAIRS + tp
    size = 2 * n * N_TYPE_PAIRS
    cos_sum = np.bincount(flat, weights=cos, minlength=size).reshape(2 * n, N_TYPE_PAIRS)
    count = np.bincount(flat, minlength=size).astype(np.float64).reshape(2 * n, N_TYPE_PAIRS)
    return PairTables(cos_sum, count, empty, penalty_mode, float(empty_score), seg, tp, cos)


# ---- the whole precomputation ------------------------------------------------------------------
@dataclass
class ScorerSettings:
    """How RaTEScore reads the reports (everything but W and p)."""

    ner: str
    encoder: str = "packaged:all-MiniLM-L6-v2"
    pooling: Literal["cls", "mean"] = "cls"
    splitter: Literal["rush", "radiology", "pyrush"] = "rush"  # RaTEScore's default
    penalty: Literal["official", "paper"] = "official"
    empty_score: float = 0.5
    batch_size: int = 64
    device: str | None = None
    trust_remote_code: bool = False  # the encoder's own Hub code (CXR-BERT, BioViL-T); opt-in

    def scorer(self):
        from radscore import RaTEScore

        return RaTEScore(self.ner, encoder=self.encoder, affinity_matrix=_UNIFORM, penalty=self.penalty,
                         splitter=self.splitter, pooling=self.pooling, empty_score=self.empty_score,
                         batch_size=self.batch_size, device=self.device,
                         trust_remote_code=self.trust_remote_code)


def _chunks(items: list, size: int):
    for lo in range(0, len(items), size):
        yield items[lo : lo + size]


def precompute(references: Sequence[str], candidates: Sequence[str], settings: ScorerSettings,
               cache_dir: str | Path, progress: bool = True, chunk: int = 256) -> tuple[PairTables, dict]:
    """The tables of every (candidate, reference) pair, and what it took (seconds, counts, keys)."""
    from radscore.encoder import ENTITY_MAX_LENGTH
    from tqdm.auto import tqdm

    t0 = time.perf_counter()
    cache_dir = Path(cache_dir)
    from radscore.splitter import splitter_name

    from train.release.base import refuse_unfinished_export

    refuse_unfinished_export(settings.ner)  # a half-written NER export is neither hashed nor loaded
    ner_identity = {"ner": model_identity(settings.ner), "splitter": splitter_name(settings.splitter)}
    enc_identity = {"encoder": model_identity(settings.encoder), "pooling": settings.pooling,
                    "max_length": ENTITY_MAX_LENGTH}
    ner_key, enc_key = cache_key(**ner_identity), cache_key(**enc_identity)
    entity_cache = EntityCache(cache_dir / f"entities-{ner_key}.json", ner_identity)
    embedding_cache = EmbeddingCache(cache_dir / f"embeddings-{enc_key}.npz", enc_identity)
    scorer = None

    reports = list(dict.fromkeys([*references, *candidates]))
    missing = [r for r in reports if r not in entity_cache.entries]
    if missing:
        scorer = settings.scorer()
        with tqdm(total=len(missing), desc="entities", unit="report", disable=not progress) as bar:
            for part in _chunks(missing, chunk):
                for r, ents in zip(part, scorer.entities(part)):
                    entity_cache.entries[r] = [(e.text, e.type) for e in ents]
                bar.update(len(part))
        entity_cache.save()
    texts = list(dict.fromkeys(t for r in reports for t, _ in entity_cache.entries[r]))
    missing_texts = [t for t in texts if t not in embedding_cache.index]
    if missing_texts:
        scorer = scorer or settings.scorer()
        with tqdm(total=len(missing_texts), desc="embeddings", unit="entity", disable=not progress) as bar:
            for part in _chunks(missing_texts, 4 * chunk):
                embedding_cache.add(*scorer.encoder(part))
                bar.update(len(part))
        embedding_cache.save()
    t_models = time.perf_counter() - t0
    pair_entities = [(entity_cache.entries[c], entity_cache.entries[r]) for r, c in zip(references, candidates)]
    tables = build_tables(pair_entities, embedding_cache.index, embedding_cache.vectors,
                          settings.penalty, settings.empty_score)
    info = {"seconds_models": round(t_models, 3), "seconds_total": round(time.perf_counter() - t0, 3),
            "distinct_reports": len(reports), "reports_tagged": len(missing),
            "distinct_entity_texts": len(texts), "entity_texts_encoded": len(missing_texts),
            "entities_scored": int(len(tables.entity_cosine)), "empty_pairs": int(tables.empty.sum()),
            "entity_cache": str(entity_cache.path), "embedding_cache": str(embedding_cache.path),
            "ner_identity": ner_identity, "encoder_identity": enc_identity}
    return tables, info

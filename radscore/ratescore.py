"""``RaTEScore``: score candidate radiology reports against references (SPEC §1).

Pipeline per call, in chunks of ``chunk_size`` pairs so memory stays bounded on large inputs:
split every report into sentences (each distinct report once), run the NER model over every
distinct sentence of the chunk in batches sorted by length, embed every distinct entity text
once, then score each pair with :func:`radscore.scoring.rate_score` (one cosine matrix per pair,
both directions).

Differences from the released ``ratescore`` 0.6.0 package, all deliberate:
- every input pair gets its own score in its own position: a report with no usable sentence, or
  with no entity, gets ``empty_score`` (the released code drops such reports and shifts every
  later score by one);
- a sentence longer than the NER model's maximum is read in windows, not truncated;
- ``device=None`` uses CUDA only when present; CUDA asked for where there is none is an error, not
  a silent CPU run (:mod:`radscore.device`), and ``batch_size=None`` takes a batch size for the device;
- the default sentence splitter, ``"rush"`` (:mod:`radscore.rush`), is radscore's own
  reimplementation of the released package's (medspacy's PyRuSH on spaCy's English tokens) and
  gives the same sentences without medspacy; ``splitter="pyrush"`` runs medspacy itself (where it
  is installed). With either, ``pooling="cls", penalty="official"`` and the same models and
  matrix, scores equal the released package's (to float32 rounding) on every pair it keeps
  aligned. ``splitter="radiology"`` (formerly ``"builtin"``, still accepted) is a different,
  simpler radiology splitter (:mod:`radscore.splitter`): its scores differ from the released ones.
Sentences are stripped and dropped when they hold no word or fewer than 3 characters, whatever
the splitter (the released rule).

Ties: when the other report holds an entity's best match several times (the same text twice,
say once as ABNORMALITY and once as NON-ABNORMALITY), radscore matches the first copy. Cosines are
computed between distinct texts and then repeated, so copies tie exactly and the choice never
depends on the rounding of a matrix product. The released code compares float32 dot products
whose last bit differs between copies at different positions, so its choice among copies is
rounding noise; pairs where the copies' types differ can therefore score differently there (see
``tests/radscore/test_parity.py``).
"""

from __future__ import annotations

import contextlib
import copy
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch

from radscore.device import resolve_batch_size, resolve_device
from radscore.encoder import EntityEncoder
from radscore.export import read_manifest
from radscore.models import PACKAGED_MINILM
from radscore.ner import Entity, load_ner
from radscore.scoring import (PENALTY_MODES, Direction, cosine_matrix, direction_from_similarity, f1,
                              resolve_matrix)
from radscore.inputs import check_reports, pair_arguments
from radscore.scorer import Scorer
from radscore.splitter import RELEASED_SPLITTERS, resolve_splitter, splitter_name
from radscore.text import clean_sentences

BACKENDS = ("torch", "openvino")

# The official recipe (SPEC §1.5-1.6 and the released package's defaults): what RaTEScore() scores with.
OFFICIAL_NER = "Angelakeke/RaTE-NER-Deberta"
OFFICIAL_ENCODER = "FremyCompany/BioLORD-2023-C"
OFFICIAL = {"ner": OFFICIAL_NER, "encoder": OFFICIAL_ENCODER, "affinity_matrix": "long",
            "penalty": "official", "splitter": "rush", "pooling": "cls"}
_warned_pairings: set[tuple[str, str]] = set()


def _warn_mixed_pairing(ner: str, encoder: str) -> None:
    """Warn once per pairing when exactly one of the two models is the official one."""
    if (ner == OFFICIAL_NER) == (encoder == OFFICIAL_ENCODER) or (ner, encoder) in _warned_pairings:
        return
    _warned_pairings.add((ner, encoder))
    import warnings

    official, other = ("NER", "encoder") if ner == OFFICIAL_NER else ("encoder", "NER")
    warnings.warn(f"RaTEScore: the official {official} is paired with a non-official {other} "
                  f"(ner={ner!r}, encoder={encoder!r}); these scores are not comparable with published "
                  f"RaTEScore numbers, which use ner={OFFICIAL_NER!r} with encoder={OFFICIAL_ENCODER!r}",
                  stacklevel=3)


def _one_blas_thread():
    """Numpy's BLAS on one thread for the pairs' cosine matrices (``threadpoolctl``, a dependency of
    radscore). Each pair's product is small (tens of entities by tens), and
    a multi-threaded BLAS wakes its threads for each one above a size threshold: on a busy 2-core
    host a 40 x 384 by 384 x 50 product took 1.6 ms on 2 threads and 0.07 ms on one, and pair
    scoring is host time that a GPU waits for. One thread also makes the cosines independent of the
    host's core count (OpenBLAS's threaded path rounds differently in the last bits: cosines moved by up
    to 1.1e-15 and scores by 2.2e-16 on the benchmark's long workload, no match changed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # radscore's source run without its dependencies (the released package's venv, in the
        return contextlib.nullcontext()  # parity tests): the cosines then round as the host's BLAS threads do
    return threadpool_limits(limits=1, user_api="blas")


@dataclass
class PairScore:
    """The score of one candidate against one reference.

    ``precision`` scores the candidate's entities (each matched into the reference), ``recall``
    the reference's entities (each matched into the candidate); ``f1`` is RaTEScore. ``matches``
    (with ``explain=True``) holds one record per entity and direction.
    """

    precision: float
    recall: float
    f1: float
    candidate_entities: list[Entity]
    reference_entities: list[Entity]
    matches: dict[str, list[dict]] | None = field(default=None)

    def to_dict(self) -> dict:
        out = {"precision": self.precision, "recall": self.recall, "f1": self.f1,
               "candidate_entities": [e._asdict() for e in self.candidate_entities],
               "reference_entities": [e._asdict() for e in self.reference_entities]}
        if self.matches is not None:
            out["matches"] = self.matches
        return out

    def to_record(self) -> dict:
        """The pair's record (:class:`radscore.scorer.Scorer`): :meth:`to_dict`."""
        return self.to_dict()


class LRUCache:
    """A bounded mapping that forgets the least recently used entry beyond ``size`` entries, with
    hit and miss counts. Shared by scorers made with :meth:`RaTEScore.with_matrix`."""

    def __init__(self, size: int):
        self.size = int(size)
        self.data: OrderedDict = OrderedDict()
        self.hits = self.misses = 0

    def lookup(self, keys) -> dict:
        found = {}
        for k in keys:
            if k in self.data:
                self.data.move_to_end(k)
                found[k] = self.data[k]
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def store(self, items) -> None:
        for k, v in items:
            self.data[k] = v
            self.data.move_to_end(k)
        while len(self.data) > self.size:
            self.data.popitem(last=False)

    def info(self) -> dict:
        return {"size": self.size, "entries": len(self.data), "hits": self.hits, "misses": self.misses}


class RaTEScore(Scorer):
    """RaTEScore with a trained NER export, an entity encoder and an affinity matrix.

    ``RaTEScore()`` is the official recipe (:data:`OFFICIAL`): the released NER
    ``Angelakeke/RaTE-NER-Deberta``, the encoder ``FremyCompany/BioLORD-2023-C``, the long matrix,
    the released package's sentence splitting (``"rush"``), ``[CLS]`` pooling and the official
    penalty; it gives the published package's scores. It downloads both models (and, unless
    medspacy is installed, medspacy's sentence rules) on first use; offline, a clear error names
    what could not be loaded.

    Args:
        ner: NER export folder (IOB or span) or Hub id of a token-classification model whose
            labels are the SPEC set; default (None) the official NER.
        encoder: entity encoder folder or Hub id; default (None) the official BioLORD encoder when
            ``ner`` is the official NER, else the packaged all-MiniLM-L6-v2 (the sample
            profile's encoder). Pairing the official NER with another encoder, or the reverse,
            warns once: such scores are not comparable with published ones.
        affinity_matrix: ``"long"``, ``"short"``, an official JSON path, an official dict or an
            :class:`~radscore.scoring.AffinityMatrix`.
        penalty: ``"official"`` (the released code's 8 penalised type pairs) or ``"paper"``
            (every pair of different types).
        splitter: ``"rush"`` (default: the released package's sentences, by radscore's own code;
            :mod:`radscore.rush`), ``"pyrush"`` (the same by medspacy itself, which must be
            installed), ``"radiology"`` (radscore's simpler radiology splitter,
            :mod:`radscore.splitter`; ``"builtin"`` is its old name; scores differ from the
            released ones) or a callable text -> sentences.
        pooling: entity vector, ``"cls"`` (released) or ``"mean"``.
        empty_score: the score of a pair where either report has no entity.
        batch_size: sentences per NER forward pass (entity texts per encoder pass: 4x); ``None``
            (default): the device's default, 64 on the CPU and 256 on CUDA
            (:data:`radscore.device.DEFAULT_BATCH_SIZES`).
        device: ``None`` picks CUDA when present, else the CPU (``"openvino"`` backend: the CPU);
            ``"cpu"``, ``"cuda"``, ``"cuda:1"`` or a :class:`torch.device`. Both models and every
            input go there; CUDA where torch sees none is a ``ValueError``.
        chunk_size: pairs processed together; bounds memory on large inputs.
        precision: ``"fp32"`` (default: the released package's arithmetic, identical scores) or
            ``"bf16"`` (opt-in: the models run in bfloat16 (torch autocast, or OpenVINO's bf16
            inference precision), faster on CPUs with AMX or AVX512-BF16 and on GPUs; entity types
            and cosines change a little, so scores differ from fp32 (measured in
            ``benchmarks/results/ratescore.json``) and are not comparable with fp32 scores).
        backend: ``"torch"`` (default) or ``"openvino"`` (opt-in, CPU only, ``radscore[openvino]``):
            both model passes run by OpenVINO from IR converted once and kept next to the export
            or in ``$RADSCORE_CACHE/openvino`` (:mod:`radscore.openvino_backend`); in fp32 its
            scores equal the torch backend's to float32 rounding (measured max |Δ| in the benchmark).
        trust_remote_code: let an encoder that ships its own modelling code on the Hub (CXR-BERT,
            BioViL-T) run it; off by default, as it executes that repository's Python code.
        cache_size: entries kept in each of two bounded caches that live on the scorer across
            calls: sentence -> entities and entity text -> vector (least recently used ones are
            dropped). 0 (default) keeps none, for memory. With a cache, a sentence or entity text
            seen before is not run through the models again, and :meth:`with_matrix` rescores
            with another W and p without running them at all. Cached vectors were computed in
            other batches, so scores can differ from an uncached run by float32 rounding (1e-6).
    """

    def __init__(self, ner: str | None = None, encoder: str | None = None, affinity_matrix: Any = "long",
                 penalty: str = "official", splitter: str | Callable | None = None, pooling: str = "cls",
                 empty_score: float = 0.5, batch_size: int | None = None, device=None, chunk_size: int = 2048,
                 precision: str = "fp32", trust_remote_code: bool = False, cache_size: int = 0,
                 backend: str = "torch"):
        if penalty not in PENALTY_MODES:
            raise ValueError(f"unknown penalty mode {penalty!r}; expected one of {list(PENALTY_MODES)}")
        if precision not in ("fp32", "bf16"):
            raise ValueError(f"unknown precision {precision!r}; expected 'fp32' or 'bf16'")
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; expected one of {list(BACKENDS)}")
        self.precision, self.backend = precision, backend
        if device is None and backend == "openvino":
            device = "cpu"
        device = resolve_device(device, "RaTEScore")
        batch_size = resolve_batch_size(batch_size, "RaTEScore", device)
        ner = OFFICIAL_NER if ner is None else str(ner)
        if encoder is None:
            encoder = OFFICIAL_ENCODER if ner == OFFICIAL_NER else PACKAGED_MINILM
        encoder = str(encoder)
        _warn_mixed_pairing(ner, encoder)
        if splitter is None:
            splitter = OFFICIAL["splitter"]
        self.matrix = resolve_matrix(affinity_matrix)
        self.penalty_mode, self.empty_score = penalty, float(empty_score)
        self.splitter_name = (splitter_name(splitter) if isinstance(splitter, str)
                              else getattr(splitter, "__name__", "callable"))
        self.split = resolve_splitter(splitter)
        self.chunk_size = max(1, int(chunk_size))
        if int(cache_size) < 0:
            raise ValueError(f"cache_size must be >= 0, got {cache_size}")
        self.sentence_cache = LRUCache(cache_size) if cache_size else None
        self.vector_cache = LRUCache(cache_size) if cache_size else None
        from radscore.hub import not_found

        try:
            self.ner = load_ner(ner, device, batch_size)
        except OSError as err:  # transformers / huggingface_hub: not a folder, not reachable
            raise not_found(ner, "NER model", err) from None
        try:
            self.encoder = EntityEncoder(encoder, pooling, self.ner.device, 4 * batch_size,
                                         trust_remote_code=trust_remote_code)
        except OSError as err:
            raise not_found(encoder, "entity encoder", err) from None
        self.backend_precision = precision
        if backend == "openvino":
            if self.ner.device.type != "cpu":
                raise ValueError(f"backend='openvino' runs on the CPU; got device {self.ner.device}")
            from radscore.openvino_backend import accelerate_encoder, accelerate_ner

            ran = {accelerate_ner(self.ner, precision).precision,
                   accelerate_encoder(self.encoder, precision).precision}
            self.backend_precision = ran.pop() if len(ran) == 1 else "mixed"

    @classmethod
    def from_bundle(cls, source: str, **overrides) -> "RaTEScore":
        """The scorer a bundle stands for (:mod:`radscore.bundle`): a folder or the Hub id it was
        published under; ``overrides`` replace its settings (e.g. ``device="cuda"``)."""
        from radscore.bundle import bundle_options
        from radscore.hub import snapshot

        folder = snapshot(str(source), "RaTEScore bundle")
        scorer = cls(**{**bundle_options(folder), **overrides})
        scorer.bundle = str(source)
        return scorer

    @classmethod
    def from_export(cls, source: str, **options) -> "RaTEScore":
        """The scorer of an export: a RaTEScore bundle (:meth:`from_bundle`) or a NER export
        (``ner=source``), a folder or a Hub id; ``options`` are the other arguments."""
        from radscore.bundle import KIND
        from radscore.export import MANIFEST
        from radscore.hub import snapshot

        folder = snapshot(str(source), "RaTEScore export")
        if Path(folder, MANIFEST).is_file() and read_manifest(folder).get("kind") == KIND:
            return cls.from_bundle(source, **options)
        return cls(ner=source, **options)

    @property
    def subscore_names(self) -> tuple[str, ...]:
        return ("precision", "recall")

    def with_matrix(self, affinity_matrix: Any, penalty: str | None = None) -> "RaTEScore":
        """The same scorer (models, splitter, caches shared, nothing reloaded) with another affinity
        matrix and, optionally, penalty mode. With ``cache_size > 0`` rescoring texts the scorer
        has seen runs no model: only the cosines and the matrix."""
        if penalty is not None and penalty not in PENALTY_MODES:
            raise ValueError(f"unknown penalty mode {penalty!r}; expected one of {list(PENALTY_MODES)}")
        other = copy.copy(self)
        other.matrix = resolve_matrix(affinity_matrix)
        other.penalty_mode = penalty or self.penalty_mode
        other.__dict__.pop("bundle", None)  # a bundle names its own matrix
        return other

    def clear_cache(self) -> None:
        """Empty both caches (their hit and miss counts stay)."""
        for cache in (self.sentence_cache, self.vector_cache):
            if cache is not None:
                cache.data.clear()

    def cache_info(self) -> dict | None:
        """Entries, hits and misses of the two caches (None without a cache)."""
        if self.sentence_cache is None:
            return None
        return {"sentences": self.sentence_cache.info(), "entity_vectors": self.vector_cache.info()}

    def signature(self) -> dict:
        """What produced the scores: models (with Hub revision or weights hash), matrix, modes,
        whether this is the official recipe, and the radscore version."""
        from radscore.hub import fingerprint
        from radscore.version import __version__

        official = (self.ner.source == OFFICIAL_NER and self.encoder.source == OFFICIAL_ENCODER
                    and self.splitter_name in RELEASED_SPLITTERS and self.encoder.pooling == "cls"
                    and self.penalty_mode == "official" and self.matrix == resolve_matrix("long"))
        return {"metric": "RaTEScore", "official_recipe": official, "bundle": getattr(self, "bundle", None),
                "radscore": __version__, "ner": fingerprint(self.ner.source), "ner_kind": self.ner.kind,
                "encoder": fingerprint(self.encoder.source), "pooling": self.encoder.pooling,
                "splitter": self.splitter_name, "splitter_rules": self._splitter_rules(),
                "penalty": self.penalty_mode, "precision": self.precision, "backend": self.backend,
                "backend_precision": self.backend_precision, "device": str(self.ner.device),
                "batch_size": self.ner.batch_size,
                "empty_score": self.empty_score, "affinity_matrix": self.matrix.to_official()}

    def _splitter_rules(self) -> str | None:
        """Where the ``"rush"`` splitter's rules came from (``"medspacy 1.3.1"``), else None."""
        source = getattr(self.split, "source", None)
        if source is None or self.splitter_name != "rush":
            return None
        return f"medspacy {source.medspacy_version}" if source.medspacy_version else f"file {source.path}"

    # ---- NER over reports ---------------------------------------------------------------------
    def sentences(self, report: str) -> list[str]:
        """The scored sentences of one report (split, stripped, too-short ones dropped)."""
        return clean_sentences(self.split(report))

    def entities(self, reports: Sequence[str]) -> list[list[Entity]]:
        """The entities of each report, sentence by sentence; each distinct sentence is tagged once."""
        split = {r: self.sentences(r) for r in dict.fromkeys(reports)}
        distinct = list(dict.fromkeys(s for sents in split.values() for s in sents))
        tagged = self.sentence_cache.lookup(distinct) if self.sentence_cache is not None else {}
        missing = [s for s in distinct if s not in tagged]
        if missing:
            with self._autocast():
                new = {s: tuple(ents) for s, ents in zip(missing, self.ner(missing))}
            tagged.update(new)
            if self.sentence_cache is not None:
                self.sentence_cache.store(new.items())
        return [[e for s in split[r] for e in tagged[s]] for r in reports]

    def _embed(self, texts: list[str]) -> tuple[dict[str, int], np.ndarray]:
        """``(row of each distinct text, vectors)``, through the vector cache when there is one."""
        if self.vector_cache is None:
            with self._autocast():
                return self.encoder(texts)
        distinct = list(dict.fromkeys(texts))
        found = self.vector_cache.lookup(distinct)
        missing = [t for t in distinct if t not in found]
        if missing:
            with self._autocast():
                index, table = self.encoder(missing)
            new = {t: table[index[t]] for t in missing}
            self.vector_cache.store(new.items())
            found.update(new)
        index = {t: k for k, t in enumerate(distinct)}
        table = np.stack([found[t] for t in distinct]) if distinct else np.zeros((0, self.encoder.dim), np.float32)
        return index, table

    # ---- scoring ------------------------------------------------------------------------------
    def compute_score(self, candidate_list: Sequence[str] | None = None,
                      reference_list: Sequence[str] | None = None, **aliases) -> list[float]:
        """RaTEScore of each candidate against its reference: the released package's method, with
        one score per input pair, in order. The sides may also be named ``candidates``/``hyps``
        and ``references``/``refs`` (:mod:`radscore.inputs`)."""
        cands, refs = pair_arguments(candidate_list, reference_list, ("candidate_list", "reference_list"), **aliases)
        return [p.f1 for p in self.iter_score(cands, refs, checked=True)]

    def score(self, candidates: Sequence[str] | None = None, references: Sequence[str] | None = None,
              explain: bool = False, **aliases) -> list[PairScore]:
        """Per pair: both directional scores, the F1 and the entities of each side; with
        ``explain=True`` also every match (see :meth:`PairScore`)."""
        candidates, references = pair_arguments(candidates, references, **aliases)
        return list(self.iter_score(candidates, references, explain=explain, checked=True))

    def iter_score(self, candidates: Sequence[str], references: Sequence[str], explain: bool = False,
                   progress: bool = False, checked: bool = False) -> Iterator[PairScore]:
        """:meth:`score` as a stream, one chunk of ``chunk_size`` pairs at a time."""
        if not checked:
            candidates, references = check_reports(candidates, references)
        from tqdm.auto import tqdm

        with tqdm(total=len(candidates), disable=not progress, unit="pair", desc="RaTEScore") as bar:
            for lo in range(0, len(candidates), self.chunk_size):
                cand, ref = candidates[lo : lo + self.chunk_size], references[lo : lo + self.chunk_size]
                yield from self._score_chunk(cand, ref, explain)
                bar.update(len(cand))

    def _score_chunk(self, candidates: list[str], references: list[str], explain: bool) -> list[PairScore]:
        ents = self.entities(candidates + references)
        index, table = self._embed([e.text for side in ents for e in side])
        with _one_blas_thread():
            return [self._score_pair(ce, re_, index, table, explain)
                    for ce, re_ in zip(ents[: len(candidates)], ents[len(candidates):])]

    def _autocast(self):
        """bfloat16 autocast of the model passes when ``precision="bf16"`` on the torch backend
        (OpenVINO sets its precision when it compiles), else nothing."""
        if self.precision == "bf16" and self.backend == "torch":
            return torch.autocast(device_type=self.ner.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _score_pair(self, cand: list[Entity], ref: list[Entity], index: dict[str, int], table: np.ndarray,
                    explain: bool) -> PairScore:
        """:func:`radscore.scoring.rate_score`'s steps, with cosines computed between distinct
        texts and then repeated, so that copies of a text tie exactly (the first one wins)."""
        if not cand or not ref:
            e = self.empty_score
            return PairScore(e, e, e, cand, ref, {"candidate": [], "reference": []} if explain else None)
        c_rows, c_inv = np.unique([index[e.text] for e in cand], return_inverse=True)
        r_rows, r_inv = np.unique([index[e.text] for e in ref], return_inverse=True)
        sim = cosine_matrix(table[c_rows], table[r_rows])[c_inv][:, r_inv]  # candidate x reference
        c_types, r_types = [e.type for e in cand], [e.type for e in ref]
        prec = direction_from_similarity(sim, c_types, r_types, self.matrix, self.penalty_mode)
        rec = direction_from_similarity(sim.T, r_types, c_types, self.matrix, self.penalty_mode)
        matches = None
        if explain:
            matches = {"candidate": self._explain(cand, ref, prec), "reference": self._explain(ref, cand, rec)}
        return PairScore(prec.score, rec.score, f1(prec.score, rec.score), cand, ref, matches)

    @staticmethod
    def _explain(scored: list[Entity], other: list[Entity], d: Direction) -> list[dict]:
        """One record per scored entity: the entity, its best match, both types, the cosine, the
        weight and the penalty factor applied (1.0 when not penalised)."""
        return [{"entity": e.text, "matched_entity": other[int(m)].text, "type": e.type,
                 "matched_type": other[int(m)].type, "cosine": float(cos), "weight": float(w),
                 "penalised": bool(pen), "penalty": d.penalty if pen else 1.0}
                for e, m, cos, w, pen in zip(scored, d.matched, d.cosine, d.weight, d.penalised)]


def options_from_cli(args) -> dict:
    """The :class:`RaTEScore` options of the ``radscore`` command's arguments (its own flags)."""
    return dict(ner=args.ner, encoder=args.encoder, affinity_matrix=args.matrix, penalty=args.penalty,
                splitter=args.splitter, pooling=args.pooling, empty_score=args.empty_score,
                batch_size=args.batch_size, device=args.device, precision=args.precision,
                backend=args.backend)

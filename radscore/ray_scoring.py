"""Scoring corpora that outgrow one process: the same scorer over Ray Data.

    from radscore.ray_scoring import score_with_ray
    records = score_with_ray("ratescore", {"ner": "checkpoints/ner/iob_sample/export"}, candidates, references,
                             actors=8, chunk_size=512)           # ray.init(address=...) first for a cluster

The input is cut into chunks of ``chunk_size`` consecutive pairs; each Ray actor builds one scorer
(one copy of the models) and scores whole chunks with it, exactly as
:func:`radscore.records.score_records` does in one process. The records come back in input order
(each chunk carries its start index), with the ids when given. ``radscore score --ray`` writes each
chunk's records as it finishes (:func:`ray_scored_chunks`), in input order, resumable as without Ray.
Without a running cluster, a local Ray instance is started with ``actors`` CPUs.

Exactness: the models see the same batches as a single process whose chunks are the same
(``RaTEScore(chunk_size=chunk_size)``; ClinicalBLEURT's ``iter_score(chunk_size=...)``; ER2Score
called once per chunk, since it length-sorts the pairs of each call), so the scores are identical
to that run. Against a run with other chunks, float32 results of differently
composed model batches can differ in their last bits (about 1e-7 on a score; entity types,
matches and ids do not change in practice; ``benchmarks/scoring/bench_ray.py`` measures it).
"""

from __future__ import annotations

import json
from typing import Iterable, Iterator, Sequence

from radscore.inputs import check_reports


class _ChunkScorer:
    """A Ray Data callable class: one scorer per actor, built once; each row is one chunk of pairs."""

    def __init__(self, spec, options: dict, threads: int):
        import torch

        from radscore import registry

        torch.set_num_threads(max(1, threads))
        if spec.name not in registry.names():  # a metric the driver registered at run time
            registry.register(spec)
        self.scorer = registry.make_scorer(spec.name, **options)

    def __call__(self, batch: dict) -> dict:
        from radscore.records import score_records

        out = []
        for chunk in batch["chunk"]:
            cands, refs = json.loads(chunk)
            records, _ = score_records(self.scorer, cands, refs, progress=False)
            out.append(json.dumps(records, ensure_ascii=False))
        return {"start": batch["start"], "records": out}


def ray_scored_chunks(metric: str, options: dict, chunks: Iterable, actors: int = 2,
                      cpus_per_actor: float = 1.0) -> Iterator[tuple[list[dict], list[float]]]:
    """Per chunk (:class:`radscore.reading.Chunk`), in input order as each finishes: its records
    (index, id, every sub-score) and headline values, as :func:`radscore.streaming.scored_chunks`
    gives them in one process. The remaining chunks' texts go to Ray at once."""
    from radscore.optional import require
    from radscore.registry import get

    spec = get(metric)
    ray = require("ray")
    require("ray.data")
    chunks = list(chunks)
    if not chunks:
        return
    if not ray.is_initialized():
        ray.init(num_cpus=max(1, int(actors * cpus_per_actor)), include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    rows = [{"start": c.start, "chunk": json.dumps([c.candidates, c.references], ensure_ascii=False)} for c in chunks]
    scored = ray.data.from_items(rows).map_batches(
        _ChunkScorer, fn_constructor_args=(spec, dict(options), int(cpus_per_actor)), batch_size=1,
        compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=cpus_per_actor, batch_format="numpy")
    waiting, pending = iter(chunks), {}
    chunk = next(waiting)
    for row in scored.iter_rows():
        pending[int(row["start"])] = row["records"]
        while chunk is not None and chunk.start in pending:
            records = json.loads(pending.pop(chunk.start))
            if len(records) != len(chunk.candidates):
                raise RuntimeError(f"Ray returned {len(records)} scores for the {len(chunk.candidates)} pairs "
                                   f"from {chunk.start}")
            yield ([{"index": chunk.start + k, **({"id": chunk.ids[k]} if chunk.ids else {}), **r}
                    for k, r in enumerate(records)], [r[spec.headline] for r in records])
            chunk = next(waiting, None)
    if chunk is not None or pending:
        raise RuntimeError("Ray returned a different set of chunks than it was given")


def score_with_ray(metric: str, options: dict, candidates: Sequence[str], references: Sequence[str],
                   ids: Sequence[str] | None = None, actors: int = 2, chunk_size: int = 256,
                   cpus_per_actor: float = 1.0) -> list[dict]:
    """One record per pair (as ``radscore score`` writes them), in input order (module doc).
    ``metric`` is a name of :mod:`radscore.registry`; a metric registered at run time reaches the
    actors with its entry (its scorer's module must be importable there)."""
    from radscore.reading import Chunk

    candidates, references = check_reports(candidates, references)
    if ids is not None and len(ids) != len(candidates):
        raise ValueError(f"{len(ids)} ids for {len(candidates)} pairs")
    size = max(1, int(chunk_size))
    chunks = (Chunk(lo, list(candidates[lo:lo + size]), list(references[lo:lo + size]),
                    list(ids[lo:lo + size]) if ids is not None else None) for lo in range(0, len(candidates), size))
    return [row for rows, _ in ray_scored_chunks(metric, options, chunks, actors, cpus_per_actor) for row in rows]

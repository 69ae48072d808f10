"""Benchmark ``radscore score --ray`` (Ray Data, one model copy per actor) against one process.

    .venv/bin/python -m benchmarks.scoring.bench_ray [--ner checkpoints/ner/iob_sample/export] [--pairs 2000]
        [--actors 2] [--chunk-size 250] [--out benchmarks/results/ray.json]

The same ``--pairs`` pairs of SAMPLE reports (:func:`report_pairs.shuffled_reports`: distinct
reports built from shuffled sentences of the sample corpus) are scored with RaTEScore (the given
NER export, the packaged all-MiniLM-L6-v2 encoder, the long matrix) three ways, each timed from
after model loading to the last score:

1. one process, ``chunk_size = --chunk-size`` (the Ray tasks' chunks): the scores must be
   identical to Ray's;
2. one process with the default chunks (2,048 pairs): the max |Δ| against Ray is reported;
3. Ray on a local instance with ``--actors`` actors (one CPU and one torch thread each), Ray start
   and actor start-up excluded.

The single-process runs use every core of the machine (torch's default threads), so on one
machine Ray's gain is small by construction; it is there for corpora that outgrow one machine.
Numbers go to stdout and a JSON file.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from benchmarks.results_file import write_result

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ner", default=str(ROOT / "checkpoints" / "ner" / "iob_sample" / "export"))
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--chunk-size", type=int, default=250)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "ray.json"))
    args = parser.parse_args(argv)
    if not Path(args.ner, "radscore_manifest.json").is_file():
        sys.exit(f"{args.ner}: no NER export; run `make train-ner` first")

    import ray
    import torch

    from benchmarks.scoring.report_pairs import shuffled_reports
    from radscore import RaTEScore
    from radscore.ray_scoring import score_with_ray

    texts = shuffled_reports(2 * args.pairs, seed=3)
    cands, refs = texts[: args.pairs], texts[args.pairs:]
    options = {"ner": args.ner, "chunk_size": args.chunk_size}
    result = {"pairs": args.pairs, "data": "SAMPLE reports (shuffled sentences of data/samples/reports.jsonl)",
              "ner": args.ner, "encoder": "packaged all-MiniLM-L6-v2", "cores": os.cpu_count(),
              "torch_threads_single_process": torch.get_num_threads(), "actors": args.actors,
              "chunk_size": args.chunk_size}

    runs = {}
    for name, chunk in (("single_same_chunks", args.chunk_size), ("single_default_chunks", 2048)):
        scorer = RaTEScore(args.ner, chunk_size=chunk)
        t = time.perf_counter()
        runs[name] = scorer.compute_score(cands, refs)
        result[f"{name}_pairs_per_s"] = args.pairs / (time.perf_counter() - t)
        del scorer

    ray.init(num_cpus=args.actors, include_dashboard=False, log_to_driver=False, configure_logging=False)
    score_with_ray("ratescore", options, cands[:4], refs[:4], actors=args.actors, chunk_size=2)  # warm-up
    t = time.perf_counter()
    rows = score_with_ray("ratescore", options, cands, refs, actors=args.actors, chunk_size=args.chunk_size)
    result["ray_pairs_per_s"] = args.pairs / (time.perf_counter() - t)
    ray.shutdown()
    ray_scores = [r["f1"] for r in rows]
    result["identical_to_single_same_chunks"] = ray_scores == runs["single_same_chunks"]
    result["max_abs_diff_vs_default_chunks"] = max(abs(a - b) for a, b in zip(ray_scores, runs["single_default_chunks"]))
    result["ray_speed_ratio_vs_single_default"] = result["ray_pairs_per_s"] / result["single_default_chunks_pairs_per_s"]

    for key, value in result.items():
        print(f"{key:40s} {value:.4g}" if isinstance(value, float) else f"{key:40s} {value}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_result(Path(args.out), result, precision="fp32", seed=3, indent=1)  # seed: the shuffled pairs'
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

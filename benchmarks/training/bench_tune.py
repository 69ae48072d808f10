"""Benchmark the TPE search of ``tune-weights``: trials per second on 2,000 SYNTHETIC pairs.

    .venv/bin/python -m benchmarks.training.bench_tune [--ner checkpoints/ner/iob_sample/export] [--pairs 2000]
        [--trials 1000] [--rescore-pairs 200] [--out benchmarks/results/tune.json]

The pairs are data.synth's RaTE-Eval Task 2 layout (paragraph pairs with a 0-5 score, SYNTHETIC),
generated into ``checkpoints/bench_tune/``. Measured, each alone:

1. precomputation (entities, embeddings, best matches) with a cold cache, unless the cache of an
   earlier run is there (``precompute_cached`` says which);
2. the objective alone (scores of every pair for one W and p, then the Pearson correlation);
3. the whole search, ``--trials`` trials of optuna's TPE with the study in SQLite (the default of
   ``tune-weights``) and in memory (optuna's own cost without storage); target: 1,000 trials with
   SQLite in at most 60 s;
4. what one trial would cost without the precomputation: ``radscore.RaTEScore`` on every pair
   (timed on ``--rescore-pairs`` pairs after model loading, scaled to all pairs), and the scoring
   arithmetic alone (``radscore.scoring.rate_score`` pair by pair from cached embeddings).

The load average is recorded: the machine may be shared, and every time depends on it.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.results_file import write_result


def synthetic_pairs(n: int, folder: Path):
    from data.rate_eval import read_rate_eval_task2
    from data.synth import generate

    if not (folder / "SYNTHETIC_README.md").is_file():
        generate(folder, seed=0, sizes={"rexval": 0, "task1": 0, "task2": n, "task3": 0, "er2": 0, "bleurt": 0})
    root = folder / "synthetic_rate_eval"
    pairs = read_rate_eval_task2(root, "train") + read_rate_eval_task2(root, "test")
    if len(pairs) != n:
        raise SystemExit(f"{folder} holds {len(pairs)} pairs, not {n}: delete it to regenerate")
    return pairs


def time_search(objective, n_trials: int, storage: str, seed: int = 0) -> float:
    """Seconds for ``n_trials`` TPE trials: ``storage`` an optuna URL (the tune-weights path, study
    made fresh) or ``"memory"`` (optuna's in-memory storage)."""
    import optuna

    from train.tune.search import SearchJob, run_search

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if storage == "memory":
        study = optuna.create_study(direction="maximize",
                                    sampler=optuna.samplers.TPESampler(seed=seed, multivariate=True))
        t0 = time.perf_counter()
        study.optimize(objective, n_trials=n_trials)
        return time.perf_counter() - t0
    job = SearchJob(storage, "bench", {"bench": True}, objective, n_trials, seed, True, 10, ())
    t0 = time.perf_counter()  # the tune-weights path itself: open (create) the study, run the trials
    run_search(job, workers=1, progress=False)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ner", default="checkpoints/ner/iob_sample/export")
    parser.add_argument("--encoder", default="packaged:all-MiniLM-L6-v2")
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--rescore-pairs", type=int, default=200)
    parser.add_argument("--work", default="checkpoints/bench_tune")
    parser.add_argument("--out", default="benchmarks/results/tune.json")
    args = parser.parse_args()
    if not Path(args.ner).is_dir():
        raise SystemExit(f"{args.ner}: no NER export; run `make train-ner` first or pass --ner")

    from radscore import RaTEScore
    from radscore.scoring import AffinityMatrix, rate_score
    from train.evaluation.metaeval import correlation
    from train.tune.precompute import EmbeddingCache, EntityCache, ScorerSettings, precompute
    from train.tune.search import Objective

    work = Path(args.work)
    pairs = synthetic_pairs(args.pairs, work / f"synthetic_{args.pairs}")
    refs, cands = [p.reference for p in pairs], [p.candidate for p in pairs]
    ratings = np.array([p.rating for p in pairs])
    settings = ScorerSettings(ner=args.ner, encoder=args.encoder)
    cache = work / "cache"
    cached = any(cache.glob("entities-*.json"))
    t0 = time.perf_counter()
    tables, pre = precompute(refs, cands, settings, cache, progress=True)
    t_pre = time.perf_counter() - t0

    objective = Objective(tables, ratings, "pearson", 1.0)
    rng = np.random.default_rng(0)
    mats = [(rng.uniform(size=(5, 5)), float(rng.uniform())) for _ in range(1000)]
    t0 = time.perf_counter()
    for w, p in mats:
        objective.value(w, p)
    t_obj = (time.perf_counter() - t0) / len(mats)

    with tempfile.TemporaryDirectory() as tmp:
        t_sqlite = time_search(objective, args.trials, f"sqlite:///{tmp}/bench.db")
    t_memory = time_search(objective, args.trials, "memory")

    # Without the precomputation: radscore in every trial.
    scorer = RaTEScore(args.ner, encoder=args.encoder, affinity_matrix=AffinityMatrix(*mats[0]))
    k = min(args.rescore_pairs, len(pairs))
    t0 = time.perf_counter()
    direct = scorer.compute_score(cands[:k], refs[:k])
    t_rescore = (time.perf_counter() - t0) * len(pairs) / k
    np.testing.assert_allclose(tables.subset(range(k)).scores(*mats[0]), direct, atol=1e-6)
    ents = EntityCache(Path(pre["entity_cache"]), pre["ner_identity"]).entries
    emb = EmbeddingCache(Path(pre["embedding_cache"]), pre["encoder_identity"])
    vec = lambda side: emb.vectors[[emb.index[t] for t, _ in side]] if side else np.zeros((0, 0))
    t0 = time.perf_counter()
    arithmetic = [rate_score(vec(ents[r]), [t for _, t in ents[r]], vec(ents[c]), [t for _, t in ents[c]],
                             AffinityMatrix(*mats[0]))[2] for r, c in zip(refs, cands)]
    correlation(arithmetic, ratings, "pearson")
    t_arith = time.perf_counter() - t0

    result = {
        "synthetic": True, "pairs": len(pairs), "trials": args.trials, "ner": args.ner, "encoder": args.encoder,
        "load_average_1min": os.getloadavg()[0], "cpus": os.cpu_count(),
        "precompute_seconds": round(t_pre, 2), "precompute_cached": cached, "precompute": pre,
        "objective_ms": round(1000 * t_obj, 3), "objective_per_second": round(1 / t_obj, 1),
        "search_sqlite_seconds": round(t_sqlite, 2), "search_sqlite_trials_per_second": round(args.trials / t_sqlite, 2),
        "search_memory_seconds": round(t_memory, 2), "search_memory_trials_per_second": round(args.trials / t_memory, 2),
        "target_1000_trials_60s_sqlite": bool(t_sqlite * 1000 / args.trials <= 60.0),
        "rescore_radscore_seconds_per_trial": round(t_rescore, 2),
        "rescore_radscore_timed_on_pairs": k,
        "rescore_arithmetic_seconds_per_trial": round(t_arith, 3),
        "speedup_objective_vs_radscore": round(t_rescore / t_obj, 0),
        "speedup_objective_vs_arithmetic": round(t_arith / t_obj, 1),
        "speedup_sqlite_trial_vs_radscore": round(t_rescore / (t_sqlite / args.trials), 0),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_result(out, result, seed=0, indent=1)  # the TPE sampler's and the sets' seed
    rows = [
        ("pairs (SYNTHETIC)", f"{len(pairs)}"),
        ("precompute", f"{t_pre:.1f} s" + (" (cache of an earlier run)" if cached else " (cold)")),
        ("objective alone", f"{1000 * t_obj:.2f} ms = {1 / t_obj:.0f} /s"),
        (f"search, {args.trials} trials, SQLite", f"{t_sqlite:.1f} s = {args.trials / t_sqlite:.1f} trials/s"),
        (f"search, {args.trials} trials, memory", f"{t_memory:.1f} s = {args.trials / t_memory:.1f} trials/s"),
        ("radscore per trial (re-score)", f"{t_rescore:.1f} s (timed on {k} pairs)"),
        ("scoring arithmetic per trial", f"{t_arith:.2f} s"),
        ("SQLite trial vs radscore re-score", f"{t_rescore / (t_sqlite / args.trials):,.0f}x faster"),
        ("objective vs radscore re-score", f"{t_rescore / t_obj:,.0f}x faster"),
        ("objective vs arithmetic loop", f"{t_arith / t_obj:,.0f}x faster"),
        ("load average (1 min)", f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"),
    ]
    width = max(len(a) for a, _ in rows)
    print("\n".join(f"{a:<{width}}  {b}" for a, b in rows))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

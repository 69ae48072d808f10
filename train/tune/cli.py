"""``python -m train tune-weights --config configs/tune/<name>.yaml [--config OVERLAY.yaml …] [--workers N]
[--n-trials N] [--storage URL] [--study-name NAME] [--run-dir DIR] [--no-progress] [--<section>.<key>=VALUE …]``.

Several ``--config`` files compose in order (a later file's keys override an earlier one's), and the
other flags override them all: ``--search.n_trials=50``, ``--scorer.ner=DIR``; ``--n-trials``,
``--storage`` and ``--study-name`` are short for ``--search.n_trials``, ``--search.storage`` and
``--search.study_name`` (:mod:`train.tune.config`). Reads the rated pairs (``data/`` readers),
splits them (``split.by``), precomputes RaTEScore's W-free part once (cached in ``<run>/cache/``
unless ``cache_dir`` names another folder), runs the TPE search on the training pairs (study in
``<run>/study.db`` unless ``search.storage`` names another storage; a second run resumes it), then
writes to the run folder (default ``checkpoints/tune/<name>``, :func:`train.tune.config.default_name`):
``affinity_matrix.json`` (official format), ``report.json``, ``W_heatmap.png`` and ``history.png``,
and prints the comparison table.
"""

from __future__ import annotations

import sys
import time
from argparse import SUPPRESS
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

from radscore.environment import environment
from radscore.scoring import AffinityMatrix
from data.ratings import RatingFormatError
from train.tune.config import TuneConfig, TuneConfigError, compose, config_parser, from_namespace
from train.tune.data import data_fingerprint, read_pairs, split_pairs
from train.tune.precompute import precompute
from train.tune.report import (BASELINES, compare_matrices, compare_shallow, compare_trivial, format_table, heatmap,
                               history_plot, write_report)
from train.tune.search import (Objective, SearchJob, StudyMismatchError, best_matrix, complete_trials,
                               enqueue_params, make_storage, open_study, run_search)

# the command's short flags for config keys (--search.n_trials etc. work too)
ALIASES = {"--n-trials": ("search.n_trials", int), "--storage": ("search.storage", str),
           "--study-name": ("search.study_name", str)}


def _versions() -> dict:
    out = {}
    for name in ("radscore", "optuna", "numpy", "scipy", "torch", "transformers"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def run(cfg: TuneConfig, workers: int = 1, progress: bool = True) -> dict:
    """The whole command; returns the report (also written to ``<run>/report.json``)."""
    t0 = time.perf_counter()
    run_dir = Path(cfg.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    label = "SYNTHETIC " if cfg.data.synthetic else ""
    pairs = read_pairs(cfg.data)
    split = split_pairs(pairs, cfg.split)
    if split.shared_groups:
        print(f"warning: the published split puts {len(split.shared_groups)} group(s) on both sides "
              "(kept as published; set split.by: group for a split by group)", file=sys.stderr)
    tables, pre = precompute([p.reference for p in pairs], [p.candidate for p in pairs], cfg.scorer,
                             cfg.cache_dir, progress)
    ratings = np.array([p.rating for p in pairs], dtype=np.float64)
    groups = [p.group for p in pairs]
    sign, method = cfg.objective.sign, cfg.objective.correlation
    fingerprint = {"data": data_fingerprint(pairs, split), "correlation": method, "sign": sign,
                   "penalty": cfg.scorer.penalty, "empty_score": cfg.scorer.empty_score,
                   "ner": pre["ner_identity"], "encoder": pre["encoder_identity"],
                   "weight_range": [float(x) for x in cfg.search.weight_range],
                   "penalty_range": [float(x) for x in cfg.search.penalty_range]}
    train_tables = tables.subset(split.train)
    objective = Objective(train_tables, ratings[split.train], method, sign,
                          tuple(cfg.search.weight_range), tuple(cfg.search.penalty_range))
    enqueue = tuple(enqueue_params(m, cfg.search.weight_range, cfg.search.penalty_range) for m in cfg.search.enqueue)
    job = SearchJob(cfg.storage_url, cfg.study_name, fingerprint, objective, int(cfg.search.n_trials),
                    int(cfg.search.sampler_seed), bool(cfg.search.multivariate), int(cfg.search.n_startup_trials),
                    enqueue)
    search = run_search(job, workers, progress)

    study = open_study(make_storage(cfg.storage_url), cfg.study_name, fingerprint, create=False)
    trials = complete_trials(study)
    if not trials:
        raise RuntimeError(f"study {cfg.study_name!r} holds no complete trial: nothing to export "
                           "(raise --n-trials)")
    tuned = best_matrix(study)
    matrix_path = run_dir / "affinity_matrix.json"
    tuned.save(matrix_path)
    AffinityMatrix.load(matrix_path)  # the file reads back as written

    splits = {name: (tables.subset(idx), ratings[idx], [groups[i] for i in idx])
              for name, idx in (("train", split.train), ("test", split.test))}
    matrices = {"tuned": tuned, **{name: make() for name, make in BASELINES.items()}}
    rep = cfg.report
    results = compare_matrices(matrices, splits, method, sign, int(rep.bootstrap_resamples),
                               float(rep.confidence), int(rep.seed))
    results.update(compare_trivial(pairs, {"train": split.train, "test": split.test}, ratings, groups, method, sign,
                                   int(rep.bootstrap_resamples), float(rep.confidence), int(rep.seed)))
    shallow_choice: dict = {}
    results.update(compare_shallow(pairs, {"train": split.train, "test": split.test}, ratings, groups, method, sign,
                                   int(rep.bootstrap_resamples), float(rep.confidence), int(rep.seed), shallow_choice))
    title = (f"tune-weights {cfg.name}: {label}{cfg.data.format}, {len(split.train)} train / "
             f"{len(split.test)} test pairs, {len(trials)} trials, penalty mode {cfg.scorer.penalty}")
    table = format_table(results, method, sign, float(rep.confidence), title)
    print(table)

    heatmap(tuned, run_dir / "W_heatmap.png", f"{label}tuned W: {cfg.name} ({method}, train)")
    ylabel = f"{method} on the train split" + ("" if sign > 0 else " (sign: -rating)")
    history_plot([t.number for t in trials], [t.value for t in trials], run_dir / "history.png",
                 f"{label}TPE search {cfg.name}: {len(trials)} complete trials", ylabel,
                 {name: results[name]["train"]["value"] for name in BASELINES})
    best = study.best_trial
    report = {
        "synthetic": bool(cfg.data.synthetic), "config": cfg.to_dict(),
        "data": {"format": cfg.data.format, "path": cfg.data.path, "pairs": len(pairs),
                 "groups": len(set(groups)), "split": split.to_dict(pairs)},
        "objective": {"correlation": method, "sign": sign, "higher_rating_is_better": cfg.objective.higher_rating_is_better},
        "precompute": pre,
        "search": {**search, "best_trial": best.number, "best_value": best.value, "complete_trials": len(trials)},
        "affinity_matrix": tuned.to_official(), "affinity_matrix_path": str(matrix_path),
        "results": results, "table": table, "versions": _versions(),
        "shallow_learner": shallow_choice,  # its penalty and block weights, chosen on validation of the train pairs
        "seconds_total": round(time.perf_counter() - t0, 3),
        # the scorer's models run in float32 (their precision); the seed is the TPE sampler's
        "environment": environment(precision="fp32", seed=int(cfg.search.sampler_seed)),
    }
    write_report(run_dir / "report.json", report)
    bundle = write_scorer_bundle(cfg, run_dir, tuned, {f"test/{method}": results["tuned"]["test"]["value"]})
    print(f"wrote {matrix_path}, {run_dir / 'report.json'}, {run_dir / 'W_heatmap.png'}, {run_dir / 'history.png'}")
    print(f"scorer bundle: {bundle} (RaTEScore.from_bundle('{bundle}'); python -m train publish {bundle} --repo-id ...)")
    return report


def write_scorer_bundle(cfg: TuneConfig, run_dir: Path, tuned: AffinityMatrix, metrics: dict) -> Path:
    """``<run>/bundle``: the scorer this search tuned, ready for ``RaTEScore.from_bundle`` and publishing
    (:mod:`radscore.bundle`); its data sources are the NER export's training data and the ratings."""
    from train.release.bundle import write_bundle
    from train.release.publish import training_data

    sc = cfg.scorer
    ner_data = training_data(Path(sc.ner)) if Path(sc.ner).is_dir() else []
    return write_bundle(run_dir / "bundle", sc.ner, sc.encoder, tuned, penalty=sc.penalty, splitter=sc.splitter,
                        pooling=sc.pooling, empty_score=sc.empty_score,
                        data_sources=list(dict.fromkeys([*ner_data, str(cfg.data.path)])), metrics=metrics)


def main(argv: list[str] | None = None) -> int:
    parser = config_parser(prog="python -m train tune-weights", description=__doc__)
    parser.add_argument("--workers", type=int, default=1, help="processes running trials on the one study")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    for alias, (dest, kind) in ALIASES.items():
        parser.add_argument(alias, dest=dest, type=kind, default=SUPPRESS, help=f"short for --{dest}")
    configs, flags, rest = [], [], list(sys.argv[1:] if argv is None else argv)
    while rest:  # the configs first, in order, then the other flags over them
        arg = rest.pop(0)
        if arg == "--config" and rest or arg.startswith("--config="):
            configs.append(arg.split("=", 1)[1] if "=" in arg else rest.pop(0))
        else:
            flags.append(arg)
    try:
        if not configs and not {"-h", "--help"} & set(flags):
            raise TuneConfigError("say which config: --config configs/tune/<name>.yaml (repeatable)")
        cfg, ns = compose(parser, configs, lambda ns: (from_namespace(ns, configs), ns), flags, TuneConfigError)
        run(cfg, workers=ns.workers, progress=not ns.no_progress)
    except (TuneConfigError, RatingFormatError, StudyMismatchError, FileNotFoundError) as err:
        print(f"tune-weights: error: {err}", file=sys.stderr)
        return 2
    return 0

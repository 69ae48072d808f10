"""The learned metrics beside the shallow learner, on their own test split. SYNTHETIC data.

    .venv/bin/python -m benchmarks.quality.learned_vs_shallow --run er2score=checkpoints/reward/sample \\
        --run clinical_bleurt=checkpoints/bleurt/sample --demo checkpoints/demo \\
        --run-unseen er2score=checkpoints/unseen/reward_seed42 --run-unseen clinical_bleurt=checkpoints/unseen/bleurt_seed42

Writes (merges into) ``benchmarks/results/learned_vs_shallow.json``::

    {"<metric>": {"<seed>": {"set": ..., "test": {"kendall" | "pearson" | "pair_accuracy": value},
                             "shallow_test": {...}, "command": "...",
                             "set_unseen": ..., "test_unseen": {...}, "shallow_test_unseen": {...},
                             "command_unseen": "..."}}}

- ``--run METRIC=RUN``: a training run folder of ``python -m train fit --config configs/reward/sample.yaml``
  (or ``configs/bleurt/sample.yaml``). Its ``test_metrics.json`` holds the model's test figures and, beside
  them, the shallow learner's on the same rows (``test/baseline/shallow_ridge/<statistic>``: ridge on diff
  n-grams and counts, or a logistic regression on the candidates' difference for pair accuracy, fitted on the
  train rows of the same set by the training command's ``train.callbacks.RatedTestReport``,
  :mod:`train.evaluation.beside`). The seed is the run's ``seed_everything`` (its resolved
  ``logs/version_N/config.yaml``); the set is its rows file. A run that differs from the sample config in a
  setting (or trained on a share of the rows) is refused, naming the settings: the ``command`` written would
  not reproduce it.
- ``--run-unseen METRIC=RUN``: a run trained on the unseen-domain sets (``data/samples/split_unseen.json``:
  its test side holds every report of the held-out anatomies; sets made by ``python -m data synth --split
  data/samples/split_unseen.json --out checkpoints/synthetic_unseen``). Read as ``--run`` reads, into
  ``test_unseen``, ``shallow_test_unseen``, ``set_unseen`` and ``command_unseen`` of the same metric and
  seed. It is either a run of the sample config with its ``configs/unseen`` overlay (:data:`UNSEEN_CONFIGS`),
  or of the sample config except for exactly one setting, the rows override that points at the
  unseen-domain set (:data:`UNSEEN_ROWS`; ``--data.rows`` for ER²Score, ``--data.train_path`` for
  ClinicalBLEURT); the command written names the overlay or carries that override.
- ``--demo OUT``: a ``python -m train demo`` folder (``make demo``: ``checkpoints/demo``); its
  ``demo_report.json`` gives the tuned RaTEScore and the shallow learner (fitted on the search's
  train pairs) on the held-out pairs: Kendall, Pearson and the Task 3 triad accuracy.

Nothing is recomputed by ``--run`` and ``--demo``: every figure is the one its training or demo
command printed, so the ``command`` field reproduces it.

- ``--shallow-only``: recompute the shallow learner's rows alone, without retraining any learned model,
  on the sets the sample configs name (``configs/reward/sample.yaml``, ``configs/bleurt/sample.yaml``,
  ``configs/tune/sample.yaml``; their folder, default ``checkpoints/synthetic``, is generated with
  ``data.synth``'s default seed and sizes when missing or stale, or ``--synthetic DIR``), with the same code
  the training and demo commands run (the data modules' ``rated_split`` and
  :func:`train.evaluation.beside.split_baselines`, as ``RatedTestReport`` calls them;
  ``train.demo.shallow_scores``). It replaces ``shallow_test`` of every entry already in the JSON and
  records ``shallow_learner`` (its version, :data:`train.evaluation.baselines.SHALLOW_VERSION`, and the
  values it chose on validation) with ``shallow_command`` and ``shallow_set`` (the sets' seed and generator
  fingerprint); the learned figures are left as they are. With ``--unseen``: the same on the unseen-domain
  sets (default ``checkpoints/synthetic_unseen``, which must hold this generator's seed-0 default sets on
  ``data/samples/split_unseen.json``; never generated here), read through the ``configs/unseen`` overlays,
  into ``shallow_test_unseen``, ``shallow_learner_unseen``, ``shallow_command_unseen`` and ``shallow_set_unseen``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.results_file import run_environment, write_result

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "learned_vs_shallow.json"
SHALLOW = "shallow_ridge"
#: test_metrics.json statistic -> the JSON's name
STATISTICS = {"pair_acc": "pair_accuracy", "kendall": "kendall", "pearson": "pearson"}
#: metric -> its sample config
TASKS = {"er2score": "configs/reward/sample.yaml", "clinical_bleurt": "configs/bleurt/sample.yaml"}
#: the unseen-domain sets (``python -m data synth --split data/samples/split_unseen.json --out
#: checkpoints/synthetic_unseen``): the one setting a ``--run-unseen`` run may set otherwise than its config,
#: as the command line writes it
UNSEEN_ROWS = {"er2score": ("data.rows", "checkpoints/synthetic_unseen/synthetic_er2/radcliq_synthetic.jsonl"),
               "clinical_bleurt": ("data.train_path",
                                   "checkpoints/synthetic_unseen/synthetic_bleurt/clinical_bleurt_synthetic.jsonl")}
#: the overlays of the sample configs that train on those sets (configs/unseen/README.md), run after the sample
#: config: a run of the two, unchanged, is an unseen-domain run too, and its command names both
UNSEEN_CONFIGS = {"er2score": "configs/unseen/reward.yaml", "clinical_bleurt": "configs/unseen/bleurt.yaml"}


def _resolved_config(run: Path) -> dict:
    """The newest config LightningCLI saved in the run folder (``RunFolder.training_config``)."""
    import yaml

    from train.lightning.run_folder import RunFolder

    found = RunFolder(run).training_config
    if found is None:
        raise SystemExit(f"{run}: no logs/version_*/config.yaml (not a finished `python -m train fit` run?)")
    return yaml.safe_load(found.read_text(encoding="utf-8")) or {}


def _same_file(a, b: str) -> bool:
    return a is not None and (ROOT / str(a)).resolve() == (ROOT / b).resolve()


def setting(cfg: dict, key: str):
    """A resolved config's value of a setting named as on the command line (``data.rows`` is
    ``data.init_args.rows``), or None."""
    from train.ablations.runs import flatten, override_key

    return flatten(cfg).get(override_key(f"--{key}"))


def unseen_rows_check(metric: str, cfg: dict) -> str | None:
    """``None`` when the run's rows setting points at the unseen-domain set of ``metric``
    (:data:`UNSEEN_ROWS`), else why not."""
    key, want = UNSEEN_ROWS[metric]
    have = setting(cfg, key)
    if _same_file(have, want):
        return None
    return f"{key}: run has {have!r}, an unseen-domain run has {want!r}"


def run_config_differences(configs, cfg: dict, overrides=()) -> dict:
    """``{key: (run's value, wanted)}``: what a run's resolved config sets otherwise than ``configs`` (paths
    under the repository, in order) with ``overrides`` resolve to (:func:`train.ablations.runs.run_differences`,
    as ``python -m train ablations`` compares a run)."""
    from train.ablations.runs import run_differences

    return run_differences([str(ROOT / c) for c in configs], cfg, tuple(overrides))


def differences_from_config(cfg: dict, configs, seed, overrides: tuple[str, ...] = ()) -> list[str]:
    """What a run's resolved config sets otherwise than ``configs`` (a path or paths in order) at ``seed``
    with ``overrides`` (``--key=value``): :func:`run_config_differences`, and the training share."""
    from train.ablations.runs import describe_differences
    from train.lightning.configs import init_args

    configs = [configs] if isinstance(configs, (str, Path)) else list(configs)
    differing = run_config_differences(configs, cfg, (f"--seed_everything={seed}", *overrides))
    fraction = init_args(cfg, "data").get("train_fraction")
    if "data.init_args.train_fraction" not in differing and fraction not in (None, 1, 1.0):
        differing["data.init_args.train_fraction"] = (fraction, 1.0)
    return describe_differences(differing)


def fit_command(configs, seed, run: Path, overrides=()) -> str:
    """``python -m train fit --config … --seed_everything S [overrides] --run_dir R``."""
    where = run.relative_to(ROOT) if run.is_relative_to(ROOT) else run
    return " ".join(["python -m train fit", *(f"--config {c}" for c in configs), f"--seed_everything {seed}",
                     *overrides, f"--run_dir {where}"])


def run_command(metric: str, run: Path, config: str | None = None, unseen: bool = False) -> tuple[str, str, dict]:
    """``(seed, the training command that reproduces the run, its resolved config)``; a run that
    differs from ``config`` (default: the metric's sample config) is refused, naming the settings.
    With ``unseen`` the run must have been trained on the unseen-domain set (:data:`UNSEEN_ROWS`):
    a run of the sample config and its overlay (:data:`UNSEEN_CONFIGS`) gets a command naming both,
    else the rows override (only that one) is accepted and written into the command."""
    if metric not in TASKS:
        raise SystemExit(f"--run{'-unseen' if unseen else ''} {metric}=...: expected one of {sorted(TASKS)}")
    cfg = _resolved_config(run)
    seed = cfg.get("seed_everything")
    default_config = TASKS[metric]
    config = config or default_config
    overrides: tuple[str, ...] = ()
    if unseen:
        why = unseen_rows_check(metric, cfg)
        if why is not None:
            raise SystemExit(f"{run}: given as an unseen-domain run but not trained on the unseen-domain set: {why}")
        overlaid = (default_config, UNSEEN_CONFIGS[metric])
        if config == default_config and not differences_from_config(cfg, overlaid, seed):
            return str(seed), fit_command(overlaid, seed, run), cfg
        key, _ = UNSEEN_ROWS[metric]
        overrides = (f"--{key}={setting(cfg, key)}",)
    differences = differences_from_config(cfg, config, seed, overrides)
    if differences:
        extra = f" with {UNSEEN_ROWS[metric][0]} on the unseen-domain set" if unseen else ""
        raise SystemExit(f"{run}: not {config}{extra} at seed {seed}, so the command written for it would "
                         f"not reproduce it: {'; '.join(differences)}")
    rows = (f"--{UNSEEN_ROWS[metric][0]}={UNSEEN_ROWS[metric][1]}",) if unseen else ()
    return str(seed), fit_command((config,), seed, run, rows), cfg


def from_run(metric: str, run: Path, config: str | None = None, unseen: bool = False) -> tuple[str, dict]:
    """``(seed, entry)``: the run's test figures and the shallow learner's beside them; with ``unseen``
    (an unseen-domain run, :func:`run_command`) under ``test_unseen``, ``shallow_test_unseen``,
    ``set_unseen`` and ``command_unseen``."""
    if metric not in TASKS:
        raise SystemExit(f"--run{'-unseen' if unseen else ''} {metric}=...: expected one of {sorted(TASKS)}")
    metrics_file = run / "test_metrics.json"
    if not metrics_file.is_file():
        raise SystemExit(f"{run}: no test_metrics.json (the run has not finished its test)")
    metrics = json.loads(metrics_file.read_text())
    seed, command, cfg = run_command(metric, run, config, unseen)
    test = {name: float(metrics[f"test/{key}"]) for key, name in STATISTICS.items() if f"test/{key}" in metrics}
    shallow = {name: float(metrics[f"test/baseline/{SHALLOW}/{key}"]) for key, name in STATISTICS.items()
               if f"test/baseline/{SHALLOW}/{key}" in metrics}
    if not test or not shallow:
        raise SystemExit(f"{metrics_file}: no test figures or no shallow-learner figures beside them")
    from train.lightning.configs import init_args

    data = init_args(cfg, "data")
    rows = data.get("rows") or data.get("train_path") or "?"
    made = ROOT / rows if rows != "?" else None
    info = made.parent.parent / "generator_synthetic.json" if made is not None else None
    if info is not None and info.is_file():  # data.synth's record of the set: its seed and fingerprint
        gen = json.loads(info.read_text())
        rows = f"{rows}, data.synth seed {gen.get('seed')}, generator fingerprint {gen.get('fingerprint')}"
    if unseen:
        return seed, {"set_unseen": f"SYNTHETIC {rows} (test split: the held-out anatomies of "
                                    "data/samples/split_unseen.json)",
                      "test_unseen": test, "shallow_test_unseen": shallow, "command_unseen": command}
    return seed, {"set": f"SYNTHETIC {rows} (test split)", "test": test, "shallow_test": shallow,
                  "command": command}


#: the demo's configs on the unseen-domain sets (configs/unseen/README.md), as ``--ner-config`` and
#: ``--tune-config`` take them and the demo report records them: the sample config, then its overlay
UNSEEN_DEMO = {"ner_config": "configs/ner/iob_sample.yaml configs/unseen/ner.yaml",
               "tune_config": "configs/tune/sample.yaml configs/unseen/tune.yaml"}


def same_configs(have, want: str) -> bool:
    """Whether a demo report's config entry names the files ``want`` names, in order. A report that
    gives the overlay alone is accepted for its base and itself: that is how a demo recorded it when
    the overlay named its base in itself."""
    want_files = want.split()
    have_files = have.split() if isinstance(have, str) else list(have or [])
    if len(have_files) == 1 and len(want_files) > 1 and _same_file(have_files[0], want_files[-1]):
        return True
    return len(have_files) == len(want_files) and all(_same_file(a, b) for a, b in zip(have_files, want_files))


def from_demo(out: Path, unseen: bool = False) -> tuple[str, dict]:
    """``(seed, entry)`` of a demo folder; with ``unseen`` (a demo run with the configs/unseen NER and tune
    configs, refused otherwise) under ``test_unseen``, ``shallow_test_unseen``, ``set_unseen``, ``command_unseen``."""
    report_file = out / "demo_report.json"
    if not report_file.is_file():
        raise SystemExit(f"{out}: no demo_report.json (run make demo first)")
    report = json.loads(report_file.read_text())
    rows = report["metrics"]
    if SHALLOW not in rows:
        raise SystemExit(f"{report_file}: no shallow-learner row (a demo made before the demo scored the shallow learner)")

    def figures(name):
        r = rows[name]
        return {"kendall": r["kendall"]["value"], "pearson": r["pearson"]["value"], "triad_accuracy": r["triad_accuracy"]}

    seed = f"sampler_seed {report.get('tune_seed', '?')}"
    where = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    if unseen:
        wrong = {k: report.get(k) for k, want in UNSEEN_DEMO.items() if not same_configs(report.get(k), want)}
        if wrong:
            raise SystemExit(f"{report_file}: given as an unseen-domain demo but made with {wrong} "
                             f"(expected {UNSEEN_DEMO}; configs/unseen/README.md)")
        return seed, {"set_unseen": f"SYNTHETIC unseen-domain Task 2 held-out pairs ({report['held_out']['pairs']}; "
                                    f"data/samples/split_unseen.json) and {report['triads']} Task 3 triads",
                      "test_unseen": figures("ratescore_tuned"), "shallow_test_unseen": figures(SHALLOW),
                      "command_unseen": f"python -m train demo --out {where} --ner-config "
                                        f"{UNSEEN_DEMO['ner_config']} --tune-config {UNSEEN_DEMO['tune_config']}",
                      "environment_unseen": report.get("environment")}
    return seed, {"set": f"SYNTHETIC Task 2 held-out pairs ({report['held_out']['pairs']}) and "
                         f"{report['triads']} Task 3 triads", "test": figures("ratescore_tuned"),
                  "shallow_test": figures(SHALLOW), "command": f"python -m train demo --out {where}",
                  "environment": report.get("environment")}


def _shallow_record(chosen: dict, statistic: str) -> dict:
    from train.evaluation.baselines import SHALLOW_VERSION

    return {"version": SHALLOW_VERSION, "chosen_on_validation_of_train_rows": chosen, "for": statistic}


def check_unseen_sets(folder: Path) -> None:
    """Refuse a folder that does not hold this generator's default-size sets on the unseen-domain split."""
    from data.split import UNSEEN_SPLIT_FILE
    from data.synth.generate import DEFAULT_SIZES, FINGERPRINT, corpus_paths, fingerprint

    make = f"python -m data synth --split data/samples/split_unseen.json --out {folder}"
    try:
        gen = json.loads((folder / FINGERPRINT).read_text())
    except (OSError, ValueError):
        raise SystemExit(f"{folder}: no unseen-domain sets ({make})") from None
    if gen.get("fingerprint") != fingerprint(corpus_paths(None), None, UNSEEN_SPLIT_FILE) or gen.get("seed") != 0 \
            or gen.get("sizes") != DEFAULT_SIZES:
        raise SystemExit(f"{folder}: not this generator's seed-0 default sets on the unseen-domain split; remake them: {make}")


def shallow_only(folder: Path | None, unseen: bool = False) -> dict[str, tuple[dict, dict]]:
    """``{metric: (shallow_test, shallow_learner record)}`` recomputed on the sample configs' sets (with
    ``unseen``: on the unseen-domain sets in ``folder``, read by the configs/unseen overlays)."""
    import numpy as np

    from data.ratings import pair_er2_rows
    from data.synth.generate import generate_default
    from train.demo import held_out, shallow_scores
    from train.evaluation.beside import split_baselines
    from train.evaluation.metaeval import agreement, triad_accuracy
    from train.lightning.cli import resolve
    from train.lightning.module import datamodule_from_run_config
    from train.tune.config import load_config

    folder = folder or ROOT / "checkpoints" / "synthetic"
    if unseen:
        check_unseen_sets(folder)
    else:
        generate_default(folder)  # nothing when the default sets of this generator are there
    out = {}

    def datamodule(metric: str, *overrides: str):
        """The data module a training run of the metric's sample config (and its unseen overlay) builds,
        on the sets in ``folder``."""
        configs = [ROOT / TASKS[metric], *([ROOT / UNSEEN_CONFIGS[metric]] if unseen else [])]
        return datamodule_from_run_config(resolve(*configs, args=overrides))

    def beside(dm) -> dict:
        """The shallow learner's row of the test report the training command logs beside the model
        (``train.callbacks.RatedTestReport``)."""
        return split_baselines(dm.rated_split("train"), dm.rated_split("test")).metrics[SHALLOW]

    dm = datamodule("er2score", f"--data.rows={folder / 'synthetic_er2' / 'radcliq_synthetic.jsonl'}")
    rows = dm.split_rows()  # the pairs as setup() makes them, without tokenising every prompt
    dm.pairs = {s: pair_er2_rows(rows[s], {dm.system.name: dm.system})[0] for s in ("train", "test")}
    table = beside(dm)
    keys = ("alpha", "char_weight", "count_weight")
    out["er2score"] = ({"pair_accuracy": table["pair_acc"], "kendall": table["kendall"]},
                       {"pair_accuracy": _shallow_record({k: table[f"pair_{k}"] for k in keys},
                                                         "pair accuracy (logistic on the pair difference)"),
                        "kendall": _shallow_record({k: table[k] for k in keys}, "Kendall (ridge on the totals)")})

    table = beside(datamodule("clinical_bleurt",
                              f"--data.train_path={folder / 'synthetic_bleurt' / 'clinical_bleurt_synthetic.jsonl'}",
                              "--data.generate_synthetic=false"))
    out["clinical_bleurt"] = ({"kendall": table["kendall"], "pearson": table["pearson"]},
                              _shallow_record({k: table[k] for k in keys}, "Pearson and Kendall (ridge on the ratings)"))

    tune = UNSEEN_DEMO["tune_config"].split() if unseen else ["configs/tune/sample.yaml"]
    cfg = load_config(*(ROOT / t for t in tune),
                      overrides={"data.path": str(folder / "synthetic_rate_eval"), "data.generate_synthetic": None})
    test, triads = held_out(cfg)
    originals = [t.original for t in triads]
    chosen: dict = {}
    scores = shallow_scores(cfg, {"held": ([p.reference for p in test], [p.candidate for p in test]),
                                  "syn": (originals, [t.synonym for t in triads]),
                                  "opp": (originals, [t.opposite for t in triads])}, chosen)
    rep = cfg.report
    res = agreement(scores["held"], np.array([p.rating for p in test], dtype=np.float64), [p.group for p in test],
                    ("kendall", "pearson"), int(rep.bootstrap_resamples), float(rep.confidence), int(rep.seed),
                    float(cfg.objective.sign))
    tri = triad_accuracy(scores["syn"], scores["opp"])
    out["ratescore_tuned"] = ({"kendall": res["kendall"]["value"], "pearson": res["pearson"]["value"],
                               "triad_accuracy": tri},
                              _shallow_record({k: chosen[k] for k in keys}, "Kendall, Pearson, triads (ridge on the Task 2 scores)"))
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="append", default=[], metavar="METRIC=RUN",
                   help=f"a training run folder, METRIC one of {sorted(TASKS)}")
    p.add_argument("--run-unseen", action="append", default=[], metavar="METRIC=RUN",
                   help="a training run folder trained on the unseen-domain set (its test: unseen anatomies)")
    p.add_argument("--demo", default=None, help="a make demo output folder (tuned RaTEScore)")
    p.add_argument("--demo-unseen", default=None, help="a demo folder made with the configs/unseen NER and tune "
                   "configs (the tuned RaTEScore on the unseen-domain test)")
    p.add_argument("--shallow-only", action="store_true",
                   help="recompute only the shallow learner's rows of the entries in --out (no learned model)")
    p.add_argument("--synthetic", default=None,
                   help="with --shallow-only: the synthetic sets' folder (default checkpoints/synthetic)")
    p.add_argument("--unseen", action="store_true",
                   help="with --shallow-only: the unseen-domain sets (default checkpoints/synthetic_unseen; "
                   "python -m data synth --split data/samples/split_unseen.json --out ...), into shallow_test_unseen")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    if args.unseen and not args.shallow_only:
        p.error("--unseen goes with --shallow-only (learned runs: --run-unseen)")
    out = Path(args.out)
    data = json.loads(out.read_text()) if out.is_file() else {}
    if args.shallow_only:
        if args.run or args.run_unseen or args.demo or args.demo_unseen:
            p.error("--shallow-only recomputes the shallow rows alone: give no --run or --demo")
        if not data:
            p.error(f"--shallow-only: {out} holds no entry to update")
        default = ROOT / "checkpoints" / ("synthetic_unseen" if args.unseen else "synthetic")
        folder = Path(args.synthetic).resolve() if args.synthetic else default
        got = shallow_only(folder, unseen=args.unseen)
        gen = json.loads((folder / "generator_synthetic.json").read_text())
        where = ("the unseen-domain sets (data/samples/split_unseen.json)" if args.unseen else
                 "the sample configs' sets" if not args.synthetic else "the sets in --synthetic")
        shallow_set = (f"SYNTHETIC {where}, data.synth seed {gen.get('seed')}, default sizes, generator fingerprint "
                       f"{gen.get('fingerprint')} (test split)")
        command = "python -m benchmarks.quality.learned_vs_shallow --shallow-only" + (" --unseen" if args.unseen else "") + (
            f" --synthetic {args.synthetic}" if args.synthetic else "")
        suffix = "_unseen" if args.unseen else ""
        for metric, seeds in data.items():
            if metric not in got:  # "environment" too
                continue
            figures, record = got[metric]
            for entry in seeds.values():
                entry["shallow_test" + suffix] = figures
                entry["shallow_learner" + suffix] = record
                entry["shallow_command" + suffix] = command
                entry["shallow_set" + suffix] = shallow_set
    for item in args.run:
        metric, _, run = item.partition("=")
        seed, entry = from_run(metric, Path(run).resolve())
        entry["environment"] = run_environment(Path(run).resolve())  # the training's record: it made the figures
        old = data.setdefault(metric, {}).get(seed, {})
        data[metric][seed] = {**entry, **{k: v for k, v in old.items() if k.endswith("_unseen")}}
    for item in args.run_unseen:
        metric, _, run = item.partition("=")
        seed, entry = from_run(metric, Path(run).resolve(), unseen=True)
        entry["environment_unseen"] = run_environment(Path(run).resolve())
        data.setdefault(metric, {}).setdefault(seed, {}).update(entry)
    if args.demo:
        seed, entry = from_demo(Path(args.demo).resolve())
        old = data.setdefault("ratescore_tuned", {}).get(seed, {})
        data["ratescore_tuned"][seed] = {**entry, **{k: v for k, v in old.items() if k.endswith("_unseen")}}
    if args.demo_unseen:
        seed, entry = from_demo(Path(args.demo_unseen).resolve(), unseen=True)
        data.setdefault("ratescore_tuned", {}).setdefault(seed, {}).update(entry)
    if not args.run and not args.run_unseen and not args.demo and not args.demo_unseen and not args.shallow_only:
        p.error("nothing to read: give --run, --run-unseen and/or --demo")
    out.parent.mkdir(parents=True, exist_ok=True)
    data.pop("environment", None)  # an earlier writing run's: the record is this run's
    write_result(out, data, indent=1)
    for metric, seeds in data.items():
        if metric == "environment":
            continue
        for seed, e in seeds.items():
            for side in ("test", "test_unseen"):
                if side not in e and "shallow_" + side in e:  # the shallow learner alone (--shallow-only --unseen)
                    print(f"{metric} seed {seed} {side}: shallow " + ", ".join(
                        f"{k} {v:.3f}" for k, v in e["shallow_" + side].items()) + " (no learned run yet)")
                if side in e:
                    pairs = ", ".join(f"{k} {v:.3f} (shallow {e['shallow_' + side].get(k, float('nan')):.3f})"
                                      for k, v in e[side].items())
                    print(f"{metric} seed {seed} {side}: {pairs}")
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())

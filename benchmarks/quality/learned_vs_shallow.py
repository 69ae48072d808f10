"""The learned metrics beside the shallow learner, on their own test split (issue #29). SYNTHETIC data.

    .venv/bin/python benchmarks/quality/learned_vs_shallow.py --run er2score=checkpoints/reward_sample \\
        --run clinical_bleurt=checkpoints/bleurt_sample --demo checkpoints/demo

Writes (merges into) ``benchmarks/results/learned_vs_shallow.json``::

    {"<metric>": {"<seed>": {"set": ..., "test": {"kendall" | "pearson" | "pair_accuracy": value},
                             "shallow_test": {...}, "command": "..."}}}

- ``--run METRIC=RUN``: a training run folder of ``python -m train reward|bleurt fit``. Its
  ``test_metrics.json`` holds the model's test figures and, beside them, the shallow learner's on the
  same rows (``test/baseline/shallow_ridge/<statistic>``: ridge on diff n-grams and counts, or a logistic
  regression on the candidates' difference for pair accuracy, fitted on the train rows of the same
  set by the training command itself, :mod:`train.evaluation.baselines`). The seed is the run's
  ``seed_everything`` (its resolved ``logs/version_N/config.yaml``); the set is its rows file. A run
  that differs from the sample config in a setting the config states (or trained on a share of the
  rows) is refused, naming the settings: the ``command`` written would not reproduce it.
- ``--demo OUT``: a ``python -m train demo`` folder (``make demo``: ``checkpoints/demo``); its
  ``demo_report.json`` gives the tuned RaTEScore and the shallow learner (fitted on the search's
  train pairs) on the held-out pairs: Kendall, Pearson and the Task 3 triad accuracy.

Nothing is recomputed by ``--run`` and ``--demo``: every figure is the one its training or demo
command printed, so the ``command`` field reproduces it.

- ``--shallow-only``: recompute the shallow learner's rows alone, without retraining any learned model,
  on the sets the sample configs name (``configs/reward/sample.yaml``, ``configs/bleurt/sample.yaml``,
  ``configs/tune/sample.yaml``; their folder, default ``checkpoints/synthetic``, is generated with
  ``data.synth``'s default seed and sizes when missing or stale, or ``--synthetic DIR``), with the same code
  the training and demo commands run (the data modules' ``baseline_metrics``, ``train.demo.shallow_scores``).
  It replaces ``shallow_test`` of every entry already in the JSON and records ``shallow_learner`` (its
  version, :data:`train.evaluation.baselines.SHALLOW_VERSION`, and the values it chose on validation)
  with ``shallow_command`` and ``shallow_set`` (the sets' seed and generator fingerprint); the learned
  figures are left as they are.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script: the repository's packages (train.ablations) import
OUT = ROOT / "benchmarks" / "results" / "learned_vs_shallow.json"
SHALLOW = "shallow_ridge"
#: test_metrics.json statistic -> the JSON's name
STATISTICS = {"pair_acc": "pair_accuracy", "kendall": "kendall", "pearson": "pearson"}
TASKS = {"er2score": ("reward", "configs/reward/sample.yaml"), "clinical_bleurt": ("bleurt", "configs/bleurt/sample.yaml")}


def _resolved_config(run: Path) -> dict:
    """The newest config LightningCLI saved in the run folder (``RunFolder.training_config``)."""
    import yaml

    from train.lightning.run_folder import RunFolder

    found = RunFolder(run).training_config
    if found is None:
        raise SystemExit(f"{run}: no logs/version_*/config.yaml (not a finished `python -m train ... fit` run?)")
    return yaml.safe_load(found.read_text(encoding="utf-8")) or {}


def differences_from_config(cfg: dict, config: str, seed) -> list[str]:
    """What a run's resolved config sets otherwise than ``config`` at ``seed`` (the settings the config
    states, as ``python -m train ablations`` compares them, and the training share)."""
    from train.ablations.runs import describe_differences, run_differs_from_config

    out = describe_differences(run_differs_from_config(str(ROOT / config), cfg, (f"--seed_everything={seed}",)))
    fraction = (cfg.get("data") or {}).get("train_fraction")
    if fraction not in (None, 1, 1.0):
        out.append(f"data.train_fraction: run has {fraction!r}, config says 1")
    return out


def from_run(metric: str, run: Path, config: str | None = None) -> tuple[str, dict]:
    if metric not in TASKS:
        raise SystemExit(f"--run {metric}=...: expected one of {sorted(TASKS)}")
    metrics_file = run / "test_metrics.json"
    if not metrics_file.is_file():
        raise SystemExit(f"{run}: no test_metrics.json (the run has not finished its test)")
    metrics = json.loads(metrics_file.read_text())
    cfg = _resolved_config(run)
    seed = cfg.get("seed_everything")
    task, default_config = TASKS[metric]
    test = {name: float(metrics[f"test/{key}"]) for key, name in STATISTICS.items() if f"test/{key}" in metrics}
    shallow = {name: float(metrics[f"test/baseline/{SHALLOW}/{key}"]) for key, name in STATISTICS.items()
               if f"test/baseline/{SHALLOW}/{key}" in metrics}
    if not test or not shallow:
        raise SystemExit(f"{metrics_file}: no test figures or no shallow-learner figures beside them")
    data = cfg.get("data") or {}
    rows = data.get("rows") or data.get("train_path") or "?"
    made = ROOT / rows if rows != "?" else None
    info = made.parent.parent / "generator_synthetic.json" if made is not None else None
    if info is not None and info.is_file():  # data.synth's record of the set: its seed and fingerprint
        gen = json.loads(info.read_text())
        rows = f"{rows}, data.synth seed {gen.get('seed')}, generator fingerprint {gen.get('fingerprint')}"
    differences = differences_from_config(cfg, config or default_config, seed)
    if differences:
        raise SystemExit(f"{run}: not {config or default_config} at seed {seed}, so the command written for it would "
                         f"not reproduce it: {'; '.join(differences)}")
    command = (f"python -m train {task} fit --config {config or default_config} --seed_everything {seed} "
               f"--run_dir {run.relative_to(ROOT) if run.is_relative_to(ROOT) else run}")
    return str(seed), {"set": f"SYNTHETIC {rows} (test split)", "test": test, "shallow_test": shallow,
                       "command": command}


def from_demo(out: Path) -> tuple[str, dict]:
    report_file = out / "demo_report.json"
    if not report_file.is_file():
        raise SystemExit(f"{out}: no demo_report.json (run make demo first)")
    report = json.loads(report_file.read_text())
    rows = report["metrics"]
    if SHALLOW not in rows:
        raise SystemExit(f"{report_file}: no shallow-learner row (a demo from before issue #29)")

    def figures(name):
        r = rows[name]
        return {"kendall": r["kendall"]["value"], "pearson": r["pearson"]["value"], "triad_accuracy": r["triad_accuracy"]}

    seed = f"sampler_seed {report.get('tune_seed', '?')}"
    return seed, {"set": f"SYNTHETIC Task 2 held-out pairs ({report['held_out']['pairs']}) and "
                         f"{report['triads']} Task 3 triads", "test": figures("ratescore_tuned"),
                  "shallow_test": figures(SHALLOW), "command": f"python -m train demo --out {out}"}


def _shallow_record(chosen: dict, statistic: str) -> dict:
    from train.evaluation.baselines import SHALLOW_VERSION

    return {"version": SHALLOW_VERSION, "chosen_on_validation_of_train_rows": chosen, "for": statistic}


def shallow_only(folder: Path | None) -> dict[str, tuple[dict, dict]]:
    """``{metric: (shallow_test, shallow_learner record)}`` recomputed on the sample configs' sets."""
    import numpy as np

    from data.ratings import pair_er2_rows
    from data.synth.generate import generate_default
    from train.bleurt.data import BleurtDataModule
    from train.demo import held_out, shallow_scores
    from train.evaluation.metaeval import agreement, triad_accuracy
    from train.lightning.configs import load_config as resolve_config
    from train.reward.data import RewardDataModule
    from train.tune.config import load_config

    folder = folder or ROOT / "checkpoints" / "synthetic"
    generate_default(folder)  # nothing when the default sets of this generator are there
    out = {}

    data = dict(resolve_config(ROOT / TASKS["er2score"][1])["data"])
    data["rows"] = str(folder / "synthetic_er2" / "radcliq_synthetic.jsonl")
    dm = RewardDataModule(**data)
    rows = dm.split_rows()
    dm.pairs = {s: pair_er2_rows(rows[s], {dm.system.name: dm.system})[0] for s in ("train", "test")}
    table = dm.baseline_metrics("test")[SHALLOW]  # what the training command logs beside the model
    keys = ("alpha", "char_weight", "count_weight")
    out["er2score"] = ({"pair_accuracy": table["pair_acc"], "kendall": table["kendall"]},
                       {"pair_accuracy": _shallow_record({k: table[f"pair_{k}"] for k in keys},
                                                         "pair accuracy (logistic on the pair difference)"),
                        "kendall": _shallow_record({k: table[k] for k in keys}, "Kendall (ridge on the totals)")})

    data = dict(resolve_config(ROOT / TASKS["clinical_bleurt"][1])["data"])
    data.update(train_path=str(folder / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl"), generate_synthetic=False)
    table = BleurtDataModule(**data).baseline_metrics("test")[SHALLOW]
    out["clinical_bleurt"] = ({"kendall": table["kendall"], "pearson": table["pearson"]},
                              _shallow_record({k: table[k] for k in keys}, "Pearson and Kendall (ridge on the ratings)"))

    cfg = load_config(ROOT / "configs/tune/sample.yaml", {"data.path": str(folder / "synthetic_rate_eval"),
                                                           "data.generate_synthetic": None})
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
    p.add_argument("--demo", default=None, help="a make demo output folder (tuned RaTEScore)")
    p.add_argument("--shallow-only", action="store_true",
                   help="recompute only the shallow learner's rows of the entries in --out (no learned model)")
    p.add_argument("--synthetic", default=None,
                   help="with --shallow-only: the synthetic sets' folder (default checkpoints/synthetic)")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    out = Path(args.out)
    data = json.loads(out.read_text()) if out.is_file() else {}
    if args.shallow_only:
        if args.run or args.demo:
            p.error("--shallow-only recomputes the shallow rows alone: give no --run or --demo")
        if not data:
            p.error(f"--shallow-only: {out} holds no entry to update")
        folder = Path(args.synthetic).resolve() if args.synthetic else ROOT / "checkpoints" / "synthetic"
        got = shallow_only(folder)
        gen = json.loads((folder / "generator_synthetic.json").read_text())
        where = "the sample configs' sets" if not args.synthetic else "the sets in --synthetic"
        shallow_set = (f"SYNTHETIC {where}, data.synth seed {gen.get('seed')}, default sizes, generator fingerprint "
                       f"{gen.get('fingerprint')} (test split)")
        command = "python benchmarks/quality/learned_vs_shallow.py --shallow-only" + (
            f" --synthetic {args.synthetic}" if args.synthetic else "")
        for metric, seeds in data.items():
            if metric not in got:
                continue
            figures, record = got[metric]
            for entry in seeds.values():
                entry["shallow_test"] = figures
                entry["shallow_learner"] = record
                entry["shallow_command"] = command
                entry["shallow_set"] = shallow_set
    for item in args.run:
        metric, _, run = item.partition("=")
        seed, entry = from_run(metric, Path(run).resolve())
        data.setdefault(metric, {})[seed] = entry
    if args.demo:
        seed, entry = from_demo(Path(args.demo).resolve())
        data.setdefault("ratescore_tuned", {})[seed] = entry
    if not args.run and not args.demo and not args.shallow_only:
        p.error("nothing to read: give --run and/or --demo")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n")
    for metric, seeds in data.items():
        for seed, e in seeds.items():
            pairs = ", ".join(f"{k} {v:.3f} (shallow {e['shallow_test'].get(k, float('nan')):.3f})"
                              for k, v in e["test"].items())
            print(f"{metric} seed {seed}: {pairs}")
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())

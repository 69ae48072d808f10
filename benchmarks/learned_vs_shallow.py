"""The learned metrics beside the shallow learner, on their own test split (issue #29). SYNTHETIC data.

    .venv/bin/python benchmarks/learned_vs_shallow.py --run er2score=checkpoints/reward_sample \\
        --run clinical_bleurt=checkpoints/bleurt_sample --demo checkpoints/demo

Writes (merges into) ``benchmarks/results/learned_vs_shallow.json``::

    {"<metric>": {"<seed>": {"set": ..., "test": {"kendall" | "pearson" | "pair_accuracy": value},
                             "shallow_test": {...}, "command": "..."}}}

- ``--run METRIC=RUN``: a training run folder of ``python -m train reward|bleurt fit``. Its
  ``test_metrics.json`` holds the model's test figures and, beside them, the shallow learner's on the
  same rows (``test/baseline/shallow_ridge/<statistic>``: ridge on diff tokens, or a logistic
  regression on the candidates' difference for pair accuracy, fitted on the train rows of the same
  set by the training command itself, :mod:`train.evaluation.baselines`). The seed is the run's
  ``seed_everything`` (its resolved ``logs/version_N/config.yaml``); the set is its rows file. A run
  that differs from the sample config in a setting the config states (or trained on a share of the
  rows) is refused, naming the settings: the ``command`` written would not reproduce it.
- ``--demo OUT``: a ``python -m train demo`` folder (``make demo``: ``checkpoints/demo``); its
  ``demo_report.json`` gives the tuned RaTEScore and the shallow learner (fitted on the search's
  train pairs) on the held-out pairs: Kendall, Pearson and the Task 3 triad accuracy.

Nothing is recomputed here: every figure is the one its training or demo command printed, so the
``command`` field reproduces it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="append", default=[], metavar="METRIC=RUN",
                   help=f"a training run folder, METRIC one of {sorted(TASKS)}")
    p.add_argument("--demo", default=None, help="a make demo output folder (tuned RaTEScore)")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    out = Path(args.out)
    data = json.loads(out.read_text()) if out.is_file() else {}
    for item in args.run:
        metric, _, run = item.partition("=")
        seed, entry = from_run(metric, Path(run).resolve())
        data.setdefault(metric, {})[seed] = entry
    if args.demo:
        seed, entry = from_demo(Path(args.demo).resolve())
        data.setdefault("ratescore_tuned", {})[seed] = entry
    if not args.run and not args.demo:
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

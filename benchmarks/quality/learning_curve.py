"""Learning curve of a learned metric beside the shallow learner, on VALIDATION figures.
SYNTHETIC data: the sample profile's sets, never the papers' benchmarks.

    .venv/bin/python -m benchmarks.quality.learning_curve er2score --seed 42 --fractions 0.25 0.5 \\
        --existing 1=checkpoints/reward/sample
    .venv/bin/python -m benchmarks.quality.learning_curve clinical_bleurt --seed 42 --fractions 0.25 0.5 \\
        --existing 1=checkpoints/bleurt/sample

For each training share F (``data.train_fraction``: a seeded share of the training split's reference
groups; validation and test stay whole) the sample config is trained with
``python -m train fit --config C --seed_everything S --data.train_fraction F
--run_dir checkpoints/curve/<metric>_f<F>_seed<S>``, unless that folder holds a finished run
(``test_metrics.json``); a killed run goes on from its ``ckpt/last.ckpt``. ``--existing F=RUN`` names a
finished run of the same config (F 1: the sample run itself) instead of training one.

From each run it reads the validation figures after every epoch (``logs/version_*/metrics.csv``) and
fits the shallow learner (:func:`train.evaluation.beside.split_baselines` on the data module's rated splits, as
the training command's test report does: ridge on diff n-grams and counts; a logistic pair model for pair
accuracy) on the run's own training rows, scored on the same validation rows. The
test split is not read here: configurations are chosen on validation figures, and a run's test
figures belong to ``benchmarks/quality/learned_vs_shallow.py``.

Writes (merges into) ``benchmarks/results/learning_curve.json``::

    {"<metric>": {"<seed>": {"<F>": {"train_rows", "train_groups", "val_rows", "epochs": [{"epoch", <stat>: value}],
                                      "best_epoch", "val": {<stat>}, "shallow_val": {<stat>}, "gap": {<stat>},
                                      "run", "command"}},
                  "trend": {<stat>: {"slope_per_doubling", "rows_at_crossing", "note"}}}}

``val`` is the epoch the run kept (its checkpoint monitor), ``gap`` is ``val - shallow_val``. A point
trained for another number of epochs than the config's (``--epochs``) is keyed ``<F>x<E>ep`` and left
out of the trend; so is a point trained with further fit arguments (after ``--``, e.g. another
learning rate), which needs ``--tag T``: keyed ``<F>+<T>``, its runs in ``<metric>_f<F>_<T>_seed<S>``.
An ``--existing`` run that differs from the config in a setting the config states needs ``--tag`` too
(its command names the differing settings); the points of one tag get a trend of their own,
``trend+<T>``. The trend is a least-squares line of the gap against log2(training rows) over the seed's points, with the
training rows at which it reaches 0: an extrapolation from a few points, labelled as such.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.results_file import run_environment, write_result

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "learning_curve.json"
SHALLOW = "shallow_ridge"
#: metric -> (its configs' folder, sample config, statistics {csv / baseline name: JSON name}, the checkpoint monitor)
METRICS = {
    "er2score": ("reward", "configs/reward/sample.yaml", {"pair_acc": "pair_accuracy", "kendall": "kendall"},
                 "pair_acc"),
    "clinical_bleurt": ("bleurt", "configs/bleurt/sample.yaml", {"pearson": "pearson", "kendall": "kendall"},
                        "pearson"),
}


def fraction_key(fraction: float) -> str:
    return f"{float(fraction):g}"


def resolved_config(run: Path) -> dict:
    from train.ablations.runs import saved_config

    cfg = saved_config(run)
    if cfg is None:
        raise SystemExit(f"{run}: no saved config (export/training_config.yaml or logs/version_*/config.yaml; "
                         "not a `python -m train fit` run)")
    return cfg


def val_by_epoch(run: Path, stats: dict[str, str]) -> list[dict]:
    """The validation figures after each epoch, from every ``metrics.csv`` of the run (a resumed run
    writes a new version; a later version's epoch replaces an earlier one's)."""
    by_epoch: dict[int, dict] = {}
    files = sorted(run.glob("logs/version_*/metrics.csv"), key=lambda p: int(p.parent.name.split("_")[-1]))
    for f in files:
        with f.open() as fh:
            for row in csv.DictReader(fh):
                got = {name: float(row[f"val/{key}"]) for key, name in stats.items() if row.get(f"val/{key}")}
                if got and row.get("epoch"):
                    by_epoch[int(float(row["epoch"]))] = {"epoch": int(float(row["epoch"])), **got}
    if not by_epoch:
        raise SystemExit(f"{run}: no validation figures in logs/version_*/metrics.csv")
    return [by_epoch[e] for e in sorted(by_epoch)]


def datamodule(metric: str, cfg: dict):
    """The run's data module, built from its resolved config (its ``data.class_path``)."""
    from train.lightning.module import datamodule_from_run_config

    dm = datamodule_from_run_config(cfg)
    if METRICS[metric][0] == "reward":
        dm.setup("fit")
    return dm


def shallow_on_val(dm) -> dict:
    """The shallow learner fitted on the data module's training rows, measured on its validation rows, with
    the values it chose (:func:`train.evaluation.beside.split_baselines`, as the test report fits it)."""
    from train.evaluation.beside import split_baselines

    return split_baselines(dm.rated_split("train"), dm.rated_split("val")).metrics[SHALLOW]


def curve_point(metric: str, run: Path, command: str) -> dict:
    """One point of the curve: the run's validation figures and the shallow learner's, fitted on the
    run's training rows."""
    from train.lightning.configs import init_args

    _, _, stats, monitor = METRICS[metric]
    cfg = resolved_config(run)
    epochs = val_by_epoch(run, stats)
    best = max(epochs, key=lambda e: e[stats[monitor]])
    dm = datamodule(metric, cfg)
    if METRICS[metric][0] == "reward":
        train_rows = {r.id: r for p in dm.pairs["train"] for r in (p.accepted, p.rejected)}
        val_rows = {r.id for p in dm.pairs["val"] for r in (p.accepted, p.rejected)}
        groups = {r.group for r in train_rows.values()}
        n_train, n_val = len(train_rows), len(val_rows)
    else:
        splits = dm.read_splits()
        groups = {p.group for p in splits["train"]}
        n_train, n_val = len(splits["train"]), len(splits["val"])
    table = shallow_on_val(dm)
    shallow = {name: float(table[key]) for key, name in stats.items()}
    val = {name: best[name] for name in stats.values()}
    return {"fraction": float(init_args(cfg, "data").get("train_fraction") or 1.0),
            "max_epochs": (cfg.get("trainer") or {}).get("max_epochs"),
            "train_rows": n_train, "train_groups": len(groups), "val_rows": n_val, "epochs": epochs,
            "best_epoch": best["epoch"], "val": val, "shallow_val": shallow,
            "shallow_chosen": {k: v for k, v in table.items() if k not in stats},
            "gap": {k: val[k] - shallow[k] for k in val},
            "run": str(run.relative_to(ROOT) if run.is_relative_to(ROOT) else run), "command": command}


MAX_LOG2_ROWS = 40  # a crossing extrapolated beyond 2^40 training rows is no crossing


def trend(points: dict[str, dict]) -> dict:
    """Least-squares line of the gap (learned - shallow, validation) against log2(training rows), over
    the points of the config's own number of epochs."""
    from scipy import stats as st

    if len(points) < 2:
        return {}
    out = {}
    for name in next(iter(points.values()))["gap"]:
        x = [math.log2(p["train_rows"]) for p in points.values()]
        y = [p["gap"][name] for p in points.values()]
        if len(set(x)) < 2:
            continue
        fit = st.linregress(x, y)
        entry = {"slope_per_doubling": float(fit.slope), "points": len(x)}
        if fit.slope > 0 and y[x.index(max(x))] < 0 and -fit.intercept / fit.slope > MAX_LOG2_ROWS:
            entry["note"] = (f"the line of the gap reaches 0 only beyond 2^{MAX_LOG2_ROWS} rows: no crossing by "
                             "rows in practice")
        elif fit.slope > 0 and y[x.index(max(x))] < 0:
            entry["rows_at_crossing"] = round(2 ** (-fit.intercept / fit.slope))
            entry["note"] = "extrapolated from the points above: where the line of the gap reaches 0"
        elif all(v >= 0 for v in y):
            entry["note"] = "at or above the shallow learner at every measured size"
        elif y[x.index(max(x))] >= 0:
            entry["note"] = "at or above the shallow learner at the largest measured size"
        else:
            entry["note"] = "the gap does not shrink with more rows over the measured sizes: no crossing by rows"
        out[name] = entry
    return out


def share_points(entry: dict) -> dict[str, dict]:
    """A seed's points (not the trends or the set note), by share."""
    return dict(sorted(((k, v) for k, v in entry.items()
                        if k != "set" and not k.startswith("trend") and isinstance(v, dict)),
                       key=lambda kv: (kv[1]["fraction"], kv[1]["max_epochs"] or 0)))


def retrend(entry: dict) -> dict[str, dict]:
    """Recompute a seed's trends (``trend``, ``trend+<tag>``) from its points; returns the points."""
    measured = share_points(entry)
    entry["trend"] = trend({k: v for k, v in measured.items() if on_trend(k)})
    for tag in sorted({k.split("+", 1)[1] for k in measured if "+" in k}):  # a curve per further setting
        entry[f"trend+{tag}"] = trend({k: v for k, v in measured.items() if "x" not in k and k.endswith("+" + tag)})
    entry["set"] = "SYNTHETIC (validation split of the sample set; data.synth)"
    return measured


def command_configs(command: str) -> list[str]:
    """The configs a fit command names (every ``--config``, in order). A command recorded with the task word
    (``python -m train reward fit --config C``) names them the same way; one that names a paper overlay alone
    (its base named in the overlay then) gets its base first (:func:`train.lightning.configs.config_chain`)."""
    import shlex

    from train.lightning.configs import config_chain

    words = shlex.split(command)
    configs = [words[k + 1] for k, w in enumerate(words[:-1]) if w == "--config"]
    configs += [w.split("=", 1)[1] for w in words if w.startswith("--config=")]
    if not configs:
        raise SystemExit(f"{command!r}: names no --config")
    first = ROOT / configs[0]
    return [str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)
            for p in config_chain(first)[:-1]] + configs


def point_config(point: dict) -> dict:
    """The config a point's run used, resolved by the training CLI from the configs its command names, with
    the point's share and its further fit arguments (``--data.X=V`` / ``--model.init_args.X=V``): what its
    data module is built from when its run folder is gone."""
    from train.lightning.cli import resolve

    configs = [ROOT / c for c in command_configs(point["command"])]
    return resolve(*configs, args=(f"--data.train_fraction={point['fraction']}", *point.get("fit_arguments", [])))


def refresh_shallow(out: Path, metrics: list[str]) -> list[str]:
    """Fit the shallow learner as it is now on every point's training rows (from its config, its share
    and its further fit arguments: the run folder is not needed) and write its validation figures, the
    values it chose, the gap and the trends again. Points measured with an earlier shallow learner (v1:
    diff tokens only, no ``shallow_chosen``) keep its figures under ``shallow_val_v1``. Returns the lines
    printed."""
    from train.lightning.cli import LINKED
    from train.lightning.configs import init_args

    data = json.loads(out.read_text())
    cache: dict[str, tuple[dict, dict]] = {}
    lines = []
    for metric in metrics:
        stats = METRICS[metric][2]
        for seed, entry in sorted(data.get(metric, {}).items()):
            for key, point in share_points(entry).items():
                cfg = point_config(point)
                linked = {k: init_args(cfg, "model").get(k) for k in LINKED}
                dm_key = json.dumps([cfg.get("data"), linked], sort_keys=True)  # the rows and how they are read
                if dm_key not in cache:
                    print(f"{metric} seed {seed} {key}: fitting the shallow learner on the point's training rows",
                          flush=True)
                    table = shallow_on_val(datamodule(metric, cfg))
                    shallow = {name: float(table[k]) for k, name in stats.items()}
                    chosen = {k: v for k, v in table.items() if k not in stats}
                    cache[dm_key] = (shallow, chosen)
                shallow, chosen = cache[dm_key]
                before = point["shallow_val"]
                if "shallow_chosen" not in point and "shallow_val_v1" not in point:
                    point["shallow_val_v1"] = before
                point["shallow_val"], point["shallow_chosen"] = shallow, chosen
                point["gap"] = {k: point["val"][k] - shallow[k] for k in point["val"]}
                lines.append(f"{metric} seed {seed} {key:>16}: " + ", ".join(
                    f"{s} val {point['val'][s]:.3f} shallow {before[s]:.3f} -> {shallow[s]:.3f} (gap {point['gap'][s]:+.3f})"
                    for s in stats.values()))
            retrend(entry)
    data.pop("environment", None)  # an earlier writing run's: the record is this run's
    write_result(out, data, indent=1)
    return lines


def config_epochs(config: str) -> int | None:
    from train.lightning.configs import config_chain, read_configs

    return (read_configs(*config_chain(ROOT / config)).get("trainer") or {}).get("max_epochs")


def point_key(fraction: float, max_epochs, default_epochs, tag: str | None = None) -> str:
    """A point's key: its share, with ``x<E>ep`` where it trained another number of epochs than the
    config's and ``+<tag>`` where it trained with further fit arguments (such points are shown, and
    left out of the trend over rows)."""
    return (fraction_key(fraction) + ("" if max_epochs == default_epochs else f"x{max_epochs}ep")
            + (f"+{tag}" if tag else ""))


def on_trend(key: str) -> bool:
    """Whether a point is of the config's own settings (a share only), the points the trend is over."""
    return "x" not in key and "+" not in key


def further_settings(cfg: dict, config: str, seed: int, fraction: float, epochs, extra: tuple = ()) -> list[str]:
    """The fit arguments (``--key=value``) by which a run's resolved config differs from what ``config`` at
    its seed, share and epochs (and the further fit arguments ``extra``, ``--key=value`` each) resolves to
    through the training CLI, as ``python -m train ablations`` compares a run
    (``run_config_differences`` of :mod:`benchmarks.quality.learned_vs_shallow`). A data setting the model gives
    its data module (:data:`train.lightning.cli.LINKED`) is named once, in the model."""
    from benchmarks.quality.learned_vs_shallow import run_config_differences
    from train.ablations.runs import NOT_SET
    from train.lightning.cli import LINKED

    overrides = (*extra, f"--seed_everything={seed}",
                 *([f"--data.train_fraction={fraction_key(fraction)}"] if fraction != 1 else []),
                 *([f"--trainer.max_epochs={epochs}"] if epochs is not None else []))
    differing = run_config_differences((config,), cfg, overrides)
    unset = [k for k, (have, _) in differing.items() if have is NOT_SET]
    if unset:
        raise SystemExit(f"{config}: states {unset}, which the run's config lacks: not a run of this config")
    linked = {f"data.init_args.{k}" for k in LINKED if f"model.init_args.{k}" in differing}
    return [f"--{key}={have}" for key, (have, _) in differing.items() if key not in linked]


def train_run(metric: str, config: str, seed: int, fraction: float, run: Path, extra: list[str],
              epochs: int | None = None) -> str:
    args = ["-m", "train", "fit", "--config", config, "--seed_everything", str(seed),
            "--data.train_fraction", fraction_key(fraction), "--run_dir", str(run.relative_to(ROOT) if run.is_relative_to(ROOT) else run),
            *(["--trainer.max_epochs", str(epochs)] if epochs else []), *extra]
    command = "python " + " ".join(args)
    if (run / "test_metrics.json").is_file():  # reused only where it is this run
        cfg = resolved_config(run)
        other = further_settings(cfg, config, seed, fraction, epochs or config_epochs(config), tuple(extra))
        if cfg.get("seed_everything") != seed:
            other.append(f"--seed_everything={cfg.get('seed_everything')}")
        if other:
            raise SystemExit(f"{run} holds a finished run of other settings ({', '.join(other)}) than {command}: "
                             "move it away, or give --runs or --tag")
        return command
    last = run / "ckpt" / "last.ckpt"
    resume = ["--ckpt_path", str(last)] if last.is_file() else []
    print(f"training ({'resuming from ' + str(last) if resume else 'new run'}): {command}", flush=True)
    env = {**os.environ, "WANDB_MODE": os.environ.get("WANDB_MODE", "offline")}
    done = subprocess.run([sys.executable, *args, *resume], cwd=ROOT, env=env)
    if done.returncode != 0 or not (run / "test_metrics.json").is_file():
        raise SystemExit(f"{command}: failed (exit {done.returncode}); run it again to go on from {last}")
    return command


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("metric", choices=sorted(METRICS))
    p.add_argument("--seed", type=int, default=42, help="seed_everything of the runs")
    p.add_argument("--fractions", type=float, nargs="*", default=[0.25, 0.5],
                   help="training shares to train (each its own run)")
    p.add_argument("--existing", action="append", default=[], metavar="F=RUN",
                   help="a finished run of the same config and seed at share F (1: the sample run)")
    p.add_argument("--config", default=None, help="the training config (default: the metric's sample config)")
    p.add_argument("--epochs", type=int, default=None,
                   help="train the --fractions for this many epochs instead of the config's (a point of its own)")
    p.add_argument("--runs", default="checkpoints/curve", help="folder of the curve's own runs")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--tag", default=None,
                   help="name of the further fit arguments (needed with them): the points' key <F>+<tag>")
    p.add_argument("extra", nargs="*", default=[], help="after --: further arguments of the fit command")
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--shallow-only" in argv:
        q = argparse.ArgumentParser(description="fit the shallow learner as it is now on every point's rows "
                                                "(no model is trained; the run folders are not needed)")
        q.add_argument("--shallow-only", action="store_true", required=True)
        q.add_argument("metrics", nargs="*", help=f"of {sorted(METRICS)} (default: both)")
        q.add_argument("--out", default=str(OUT))
        a = q.parse_args(argv)
        if set(a.metrics) - set(METRICS):
            q.error(f"metrics {sorted(set(a.metrics) - set(METRICS))}: expected some of {sorted(METRICS)}")
        for line in refresh_shallow(Path(a.out), a.metrics or sorted(METRICS)):
            print(line)
        for metric in a.metrics or sorted(METRICS):
            data = json.loads(Path(a.out).read_text())
            for seed, entry in sorted(data.get(metric, {}).items()):
                for name in sorted(k for k in entry if k.startswith("trend")):
                    for s, tr in entry[name].items():
                        print(f"{metric} seed {seed} {name} of {s}: {tr['slope_per_doubling']:+.3f} per doubling "
                              f"({tr['note']})")
        print(f"wrote {a.out}")
        return None
    cut = argv.index("--") if "--" in argv else len(argv)  # argparse would not take them after the options
    args = p.parse_args(argv[:cut])
    args.extra = argv[cut + 1:]
    if args.extra and not args.tag:
        p.error(f"further fit arguments {args.extra} need --tag NAME: they are another setting, not the config's "
                "point at that share (its run and key would be taken)")
    if any(not a.startswith("--") or "=" not in a for a in args.extra):
        p.error(f"further fit arguments {args.extra}: give each as --key=value")
    if args.tag and not all(c.isalnum() or c in "-_." for c in args.tag):
        p.error(f"--tag {args.tag!r}: letters, digits, '-', '_' and '.' only (it names a folder)")
    from train.lightning.configs import init_args

    _, default_config, *_ = METRICS[args.metric]
    config = args.config or default_config
    default_epochs = config_epochs(config)
    points = {}
    for item in args.existing:
        f, _, run = item.partition("=")
        run_path = Path(run).resolve()
        cfg = resolved_config(run_path)
        if cfg.get("seed_everything") != args.seed:
            raise SystemExit(f"--existing {item}: the run's seed_everything is {cfg.get('seed_everything')}, "
                             f"not --seed {args.seed}")
        frac = float(init_args(cfg, "data").get("train_fraction") or 1.0)
        if abs(frac - float(f)) > 1e-9:
            raise SystemExit(f"--existing {item}: the run trained on train_fraction {frac}, not {f}")
        rel = run_path.relative_to(ROOT) if run_path.is_relative_to(ROOT) else run_path
        epochs = (cfg.get("trainer") or {}).get("max_epochs")
        further = further_settings(cfg, config, args.seed, frac, epochs)
        if further and not args.tag:
            raise SystemExit(f"--existing {item}: the run differs from {config} in {', '.join(further)}: "
                             "give --tag NAME (its point is another setting, not the config's)")
        command = (f"python -m train fit --config {config} --seed_everything {args.seed}"
                   + (f" --data.train_fraction {fraction_key(frac)}" if frac != 1 else "")
                   + (f" --trainer.max_epochs {epochs}" if epochs != default_epochs else "")
                   + "".join(f" {o}" for o in further) + f" --run_dir {rel}")
        point = curve_point(args.metric, run_path, command)
        point["environment"] = run_environment(run_path)  # the training's record: it made the figures
        if further:
            point["fit_arguments"] = further
        points[point_key(point["fraction"], point["max_epochs"], default_epochs, args.tag if further else None)] = point
    for f in args.fractions:
        suffix = (f"_e{args.epochs}" if args.epochs else "") + (f"_{args.tag}" if args.tag else "")
        run = (ROOT / args.runs / f"{args.metric}_f{fraction_key(f)}{suffix}_seed{args.seed}").resolve()
        command = train_run(args.metric, config, args.seed, f, run, args.extra, args.epochs)
        point = curve_point(args.metric, run, command)
        point["environment"] = run_environment(run)
        if args.extra:
            point["fit_arguments"] = list(args.extra)
        points[point_key(point["fraction"], point["max_epochs"], default_epochs, args.tag)] = point
    if not points:
        p.error("nothing to measure: give --fractions and/or --existing")
    out = Path(args.out)
    data = json.loads(out.read_text()) if out.is_file() else {}
    entry = data.setdefault(args.metric, {}).setdefault(str(args.seed), {})
    entry.update(points)
    measured = retrend(entry)
    out.parent.mkdir(parents=True, exist_ok=True)
    data.pop("environment", None)
    write_result(out, data, seed=args.seed, indent=1)
    stats = list(METRICS[args.metric][2].values())
    print(f"{args.metric}, seed {args.seed}: VALIDATION figures (SYNTHETIC); shallow = ridge on diff n-grams and counts, "
          "fitted on the same training rows")
    print(f"{'share':>9} {'rows':>6} " + " ".join(f"{s + ' by epoch':>28} {'best':>6} {'shallow':>7}" for s in stats))
    for k, v in measured.items():
        cells = []
        for s in stats:
            curve = " ".join(f"{e[s]:.3f}" for e in v["epochs"])
            cells.append(f"{curve:>28} {v['val'][s]:6.3f} {v['shallow_val'][s]:7.3f}")
        print(f"{k:>9} {v['train_rows']:6d} " + " ".join(cells))
    for name in sorted(k for k in entry if k.startswith("trend")):
        for s, t in entry[name].items():
            extra = f", crosses near {t['rows_at_crossing']} rows" if "rows_at_crossing" in t else ""
            print(f"{name} of {s}: {t['slope_per_doubling']:+.3f} per doubling of the rows{extra} ({t['note']})")
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())

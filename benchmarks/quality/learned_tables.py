"""One table per learned metric, in-distribution and unseen-domain test side by side, each figure with its
bootstrap CI over reference reports and the paired bootstrap p-value of learned minus shallow.
SYNTHETIC data.

    .venv/bin/python -m benchmarks.quality.learned_tables \\
        --run er2score=checkpoints/reward/sample --run-unseen er2score=checkpoints/unseen/reward_seed42 \\
        --run clinical_bleurt=checkpoints/bleurt/sample --run-unseen clinical_bleurt=checkpoints/unseen/bleurt_seed42 \\
        --demo checkpoints/demo --demo-unseen checkpoints/unseen/demo

Reads, recomputing nothing that a model produced:

- ``--run METRIC=RUN`` / ``--run-unseen METRIC=RUN`` (any number of seeds each): a finished training run's
  ``test_predictions.jsonl`` (written after its test by ``python -m train fit``'s
  ``train.callbacks.RatedTestReport``, or for a run trained before that file existed by ``python -m train test
  --config <its configs> --ckpt_path <run>/ckpt/<best>.ckpt``): per test row the model's prediction, the
  label(s) and the scores of the shallow learner, BLEU-4 and the trivial baselines on the same row, fitted on
  the same train rows by the training command. The run must be what its command says
  (``learned_vs_shallow.run_command``: the sample config at its seed; for ``--run-unseen`` with its
  configs/unseen overlay, or plus exactly the rows override to the unseen-domain set).
- ``--demo OUT`` / ``--demo-unseen OUT``: a ``python -m train demo`` folder: the tuned RaTEScore and the
  baselines per held-out Task 2 pair (``demo_predictions.jsonl``). A demo from before that file existed gives
  the figures and CIs of its ``demo_report.json`` (its own resamples) and no p-value.

Per metric and test, the rows are: the learned metric (one per seed), the shallow learner, BLEU-4 and the
best trivial baseline (the one of :data:`train.evaluation.baselines.TRIVIAL` with the highest point
estimate of the metric's first statistic on that test, named in the table). Statistics: ER²Score pair
accuracy (every two test rows of one reference with different labelled totals; a tie is a miss) and Kendall
tau-b of the reward total against the labelled total; ClinicalBLEURT Pearson and Kendall against the target;
tuned RaTEScore Kendall on Task 2. The shallow learner's pair accuracy is its pair model's, its Kendall its
ridge's, as the training command logs them.

Bootstrap: ``--resamples`` resamples of the reference reports (groups) with replacement, seeded
(:func:`train.evaluation.metaeval.group_resamples`); every row (and pair) of a drawn report comes along.
Within one run all systems are scored on the same resamples. CI: the percentile interval of the resampled
statistic (resamples where it is undefined left out). p-value (two-sided), of learned minus shallow:
with Δ* = learned − shallow on each resample where both are defined (B' of them),
``p = min(1, 2 · min(1 + #{Δ* ≤ 0}, 1 + #{Δ* ≥ 0}) / (1 + B'))``: the smallest α at which the equal-tailed
(1 − α) percentile interval of Δ* excludes 0, with the +1 correction (so it is never 0; its floor is
2 / (1 + B')). Equal systems give 1.

Writes ``benchmarks/results/learned_tables.json`` and ``benchmarks/results/learned_tables.md`` (the markdown
tables; docs/results.md shows them, made by ``python -m benchmarks.report``).
``--from-json`` re-renders the markdown from the JSON alone.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from itertools import combinations
from pathlib import Path

import numpy as np

from benchmarks.results_file import run_environment, write_result
from radscore.atomic import refuse_unfinished, write_text_atomic

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "learned_tables.json"
MARKDOWN = ROOT / "benchmarks" / "results" / "learned_tables.md"
SIDES = {"test": "in-distribution test", "test_unseen": "unseen-domain test"}  # in this order
STATISTICS = {"er2score": ("pair_accuracy", "kendall"), "clinical_bleurt": ("pearson", "kendall"),
              "ratescore_tuned": ("kendall",)}
LABELS = {"er2score": "ER²Score", "clinical_bleurt": "ClinicalBLEURT", "ratescore_tuned": "tuned RaTEScore"}
STAT_LABELS = {"pair_accuracy": "pair accuracy", "kendall": "Kendall", "pearson": "Pearson"}
SYNTHETIC_NOTE = ("SYNTHETIC data: sample reports edited by data.synth with simulated ratings; these figures check "
                  "the pipeline and compare systems on one generator, they are not results on real reports.")
P_DEFINITION = ("two-sided paired bootstrap: delta* = learned - shallow on the same resample of reference reports, "
                "p = min(1, 2 min(1 + #{delta* <= 0}, 1 + #{delta* >= 0}) / (1 + B'))")


# --- reading ------------------------------------------------------------------------------------------
def read_lines(path: Path) -> list[dict]:
    if not path.is_file():
        raise SystemExit(f"{path}: missing (a run gets it after its test: python -m train test "
                         "--config <its configs> --ckpt_path <run>/ckpt/<best>.ckpt)")
    try:
        refuse_unfinished(path)
    except ValueError as err:
        raise SystemExit(str(err)) from None
    out = []
    for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise SystemExit(f"{path}:{k}: not JSON ({err})") from None
    if not out:
        raise SystemExit(f"{path}: no row")
    return out


def _need(line: dict, keys, where: str) -> None:
    missing = [k for k in keys if k not in line]
    if missing:
        raise SystemExit(f"{where}: row {line.get('id', '?')!r} lacks {missing}")


def run_systems(metric: str, lines: list[dict], where: str) -> tuple[np.ndarray, dict[str, dict[str, np.ndarray]]]:
    """``(target, {system: {statistic: per-row scores}})`` of a run's ``test_predictions.jsonl`` lines;
    systems: ``learned``, ``shallow`` and every baseline in the lines."""
    from train.evaluation.baselines import SHALLOW_NAME

    pred_key, label_key = ("reward_total", "label_total") if metric == "er2score" else ("prediction", "label")
    for line in lines:
        _need(line, ("id", "group", pred_key, label_key, "baselines"), where)
    target = np.array([x[label_key] for x in lines], dtype=np.float64)
    stats = STATISTICS[metric]
    systems = {"learned": {s: np.array([x[pred_key] for x in lines], dtype=np.float64) for s in stats}}
    names = list(lines[0]["baselines"])
    for name in names:
        if name == f"{SHALLOW_NAME}_pair":
            continue
        col = np.array([x["baselines"][name] for x in lines], dtype=np.float64)
        systems[name] = {s: col for s in stats}
    if SHALLOW_NAME not in systems:
        raise SystemExit(f"{where}: no shallow-learner score ({SHALLOW_NAME}) beside the model's")
    if metric == "er2score":
        if f"{SHALLOW_NAME}_pair" not in names:
            raise SystemExit(f"{where}: no pair-model score ({SHALLOW_NAME}_pair) for the shallow pair accuracy")
        systems[SHALLOW_NAME]["pair_accuracy"] = np.array([x["baselines"][f"{SHALLOW_NAME}_pair"] for x in lines])
    systems["shallow"] = systems.pop(SHALLOW_NAME)
    return target, systems


def demo_systems(lines: list[dict], where: str) -> tuple[np.ndarray, dict[str, dict[str, np.ndarray]]]:
    for line in lines:
        _need(line, ("group", "target", "scores"), where)
    target = np.array([x["target"] for x in lines], dtype=np.float64)
    systems = {}
    for name in lines[0]["scores"]:
        key = {"ratescore_tuned": "learned", "shallow_ridge": "shallow"}.get(name, name)
        systems[key] = {"kendall": np.array([x["scores"][name] for x in lines], dtype=np.float64)}
    if "learned" not in systems or "shallow" not in systems:
        raise SystemExit(f"{where}: no ratescore_tuned or shallow_ridge scores")
    return target, systems


# --- statistics and the paired bootstrap ----------------------------------------------------------------
def group_pairs(groups: list[str], target: np.ndarray) -> dict[str, np.ndarray]:
    """Per group, its pairs as (better row, worse row): every two rows with different targets (SPEC §3.2)."""
    rows: dict[str, list[int]] = {}
    for k, g in enumerate(groups):
        rows.setdefault(str(g), []).append(k)
    out = {}
    for g, members in rows.items():
        pairs = [(a, b) if target[a] > target[b] else (b, a) for a, b in combinations(members, 2)
                 if target[a] != target[b]]
        out[g] = np.array(pairs, dtype=np.intp).reshape(-1, 2)
    return out


def statistic(name: str, scores: np.ndarray, target: np.ndarray, idx: np.ndarray, pairs: np.ndarray | None) -> float:
    from train.evaluation.metaeval import correlation

    if name == "pair_accuracy":
        return float(np.mean(scores[pairs[:, 0]] > scores[pairs[:, 1]])) if len(pairs) else math.nan
    return correlation(scores[idx], target[idx], name)


def paired_bootstrap(target: np.ndarray, groups: list[str], systems: dict[str, dict[str, np.ndarray]],
                     stats: tuple[str, ...], resamples: int = 1000, confidence: float = 0.95,
                     seed: int = 0) -> dict[str, dict[str, dict]]:
    """``{system: {statistic: {"value", "low", "high"}}}`` and under ``learned``, ``p_vs_shallow``
    (:data:`P_DEFINITION`) when both ``learned`` and ``shallow`` are among the systems. Every system is
    scored on the same resamples of the groups."""
    from train.evaluation.metaeval import group_resamples

    target = np.asarray(target, dtype=np.float64)
    if len(target) != len(groups):
        raise ValueError(f"{len(target)} targets and {len(groups)} groups: they must pair up")
    by_group = group_pairs(groups, target) if "pair_accuracy" in stats else {}
    distinct = sorted({str(g) for g in groups})
    every = np.arange(len(target))
    all_pairs = np.concatenate([by_group[g] for g in distinct]) if by_group else None
    point = {s: {st: statistic(st, sc[st], target, every, all_pairs) for st in stats} for s, sc in systems.items()}
    draws = {s: {st: np.empty(int(resamples)) for st in stats} for s in systems}
    for r, (drawn, idx) in enumerate(group_resamples(groups, resamples, seed)):
        pairs = np.concatenate([by_group[distinct[k]] for k in drawn]) if by_group else None
        for s, sc in systems.items():
            for st in stats:
                draws[s][st][r] = statistic(st, sc[st], target, idx, pairs)
    tail = 100.0 * (1.0 - confidence) / 2.0
    out: dict = {}
    for s in systems:
        out[s] = {}
        for st in stats:
            v = draws[s][st][np.isfinite(draws[s][st])]
            low, high = np.percentile(v, [tail, 100.0 - tail]) if len(v) else (math.nan, math.nan)
            out[s][st] = {"value": point[s][st], "low": float(low), "high": float(high)}
    if "learned" in systems and "shallow" in systems:
        out["learned"]["p_vs_shallow"] = {}
        for st in stats:
            d = draws["learned"][st] - draws["shallow"][st]
            d = d[np.isfinite(d)]
            p = (min(1.0, 2.0 * min(1 + np.sum(d <= 0), 1 + np.sum(d >= 0)) / (1 + len(d))) if len(d) else math.nan)
            out["learned"]["p_vs_shallow"][st] = float(p)
    return out


# --- one test side of one metric ------------------------------------------------------------------------
def _rel(path: Path) -> str:
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def run_entry(metric: str, run: Path, unseen: bool) -> dict:
    """A run trained here: its seed, the command that reproduces it (refused when the run is not what the
    sample config, or its configs/unseen overlay, says), its predictions."""
    from benchmarks.quality.learned_vs_shallow import run_command

    seed_of_run, command, _ = run_command(metric, Path(run).resolve(), unseen=unseen)
    return {"label": seed_of_run, "run": Path(run), "command": command,
            "lines": read_lines(Path(run) / "test_predictions.jsonl")}


def side_from_entries(metric: str, entries: list[dict], resamples: int, confidence: float, seed: int) -> dict:
    """The rows of one metric on one test: each entry (a run: a seed) its learned row; the
    shallow learner, BLEU-4 and the best trivial baseline from the first entry's file (all entries must
    hold the same test rows)."""
    from train.evaluation.baselines import TRIVIAL

    stats = STATISTICS[metric]
    seeds, first_ids, shared = {}, None, None
    for entry in entries:
        run, lines = entry["run"], entry["lines"]
        path = Path(run) / "test_predictions.jsonl"
        ids = [x.get("id") for x in lines]
        if first_ids is None:
            first_ids = ids
        elif sorted(map(str, ids)) != sorted(map(str, first_ids)):
            raise SystemExit(f"{path}: other test rows than {entries[0]['run']}'s: the runs are not on one test split")
        if entry["label"] in seeds:
            raise SystemExit(f"{run}: a second run of {entry['label']} for {metric}")
        target, systems = run_systems(metric, lines, str(path))
        groups = [str(x["group"]) for x in lines]
        picked = {"learned": systems["learned"], "shallow": systems["shallow"]}
        got = paired_bootstrap(target, groups, picked, stats, resamples, confidence, seed)
        seeds[entry["label"]] = {"run": _rel(run), "command": entry["command"], "predictions": _rel(path),
                                 **got["learned"]}
        if shared is None:
            trivial = {n: systems[n] for n in TRIVIAL if n in systems}
            best = max(trivial, key=lambda n: np.nan_to_num(
                statistic(stats[0], trivial[n][stats[0]], target, np.arange(len(target)),
                          np.concatenate(list(group_pairs(groups, target).values())) if stats[0] == "pair_accuracy"
                          else None), nan=-np.inf))
            others = paired_bootstrap(target, groups, {"shallow": systems["shallow"], "bleu4": systems["bleu4"],
                                                       "best_trivial": trivial[best]}, stats, resamples, confidence, seed)
            others["best_trivial"]["which"] = best
            n_pairs = (sum(len(v) for v in group_pairs(groups, target).values()) if metric == "er2score" else None)
            shared = {"rows": len(lines), "groups": len(set(groups)), **({"pairs": n_pairs} if n_pairs else {}),
                      "baselines_from": _rel(path), **others}
    return {"learned": seeds, **shared}


def side_from_demo(out: Path, resamples: int, confidence: float, seed: int) -> dict:
    from benchmarks.quality.learned_vs_shallow import UNSEEN_DEMO, same_configs
    from train.evaluation.baselines import TRIVIAL

    report_file = out / "demo_report.json"
    if not report_file.is_file():
        raise SystemExit(f"{out}: no demo_report.json (run python -m train demo --out {out} first)")
    report = json.loads(report_file.read_text())
    label = f"sampler_seed {report.get('tune_seed', '?')}"
    command = f"python -m train demo --out {_rel(out)}"
    for flag, key, default in (("--ner-config", "ner_config", "configs/ner/iob_sample.yaml"),
                               ("--tune-config", "tune_config", "configs/tune/sample.yaml")):
        # the configs the demo ran with, as its report records them (the files in order); a report written when
        # an overlay named its base in itself gives an unseen overlay alone, run after its base now
        given = report.get(key)
        given = " ".join(given) if isinstance(given, list) else given
        if given and same_configs(given, UNSEEN_DEMO[key]):
            given = UNSEEN_DEMO[key]
        if given and given != default:
            command += f" {flag} {given}"
    path = out / "demo_predictions.jsonl"
    if path.is_file():
        lines = read_lines(path)
        target, systems = demo_systems(lines, str(path))
        groups = [str(x["group"]) for x in lines]
        trivial = {n: systems[n] for n in TRIVIAL if n in systems}
        best = max(trivial, key=lambda n: np.nan_to_num(statistic("kendall", trivial[n]["kendall"], target,
                                                                   np.arange(len(target)), None), nan=-np.inf))
        got = paired_bootstrap(target, groups, {"learned": systems["learned"], "shallow": systems["shallow"],
                                                "bleu4": systems["bleu4"], "best_trivial": trivial[best]},
                               ("kendall",), resamples, confidence, seed)
        got["best_trivial"]["which"] = best
        learned = got.pop("learned")
        return {"learned": {label: {"run": _rel(out), "command": command, "predictions": _rel(path), **learned}},
                "rows": len(lines), "groups": len(set(groups)), "baselines_from": _rel(path), **got}
    # a demo from before demo_predictions.jsonl: its report's figures and CIs, no paired p-value
    rows = report["metrics"]
    note = ("from demo_report.json (its own bootstrap: the tune config's resamples and seed); no paired "
            "p-value: rerun the demo for demo_predictions.jsonl")

    def fig(name):
        r = rows[name]["kendall"]
        return {"kendall": {"value": r["value"], "low": r["low"], "high": r["high"]}}

    trivial = [n for n in TRIVIAL if n in rows]
    best = max(trivial, key=lambda n: np.nan_to_num(rows[n]["kendall"]["value"], nan=-np.inf))
    return {"learned": {label: {"run": _rel(out), "command": command, **fig("ratescore_tuned"),
                                "p_vs_shallow": {"kendall": None}}},
            "rows": report["held_out"]["pairs"], "groups": report["held_out"].get("groups"), "note": note,
            "baselines_from": _rel(report_file), "shallow": fig("shallow_ridge"), "bleu4": fig("bleu4"),
            "best_trivial": {**fig(best), "which": best}}


# --- rendering ------------------------------------------------------------------------------------------
def _cell(fig: dict | None, stat: str, p: dict | None = None) -> str:
    if not fig or stat not in fig:
        return "not measured"
    f = fig[stat]
    if f["value"] is None or not np.isfinite(f["value"]):
        return "undefined"
    text = f"{f['value']:.3f} [{f['low']:.3f}, {f['high']:.3f}]"
    if p is not None:
        pv = p.get(stat)
        text += "; p vs shallow n/a" if pv is None else f"; p vs shallow {pv:.3g}"
    return text


def render(data: dict | None) -> str:
    """The markdown tables of ``learned_tables.json`` (a placeholder without it)."""
    if not data:
        return ("Not measured yet: `benchmarks/results/learned_tables.json` is written by "
                "`python -m benchmarks.quality.learned_tables` from finished runs (see its docstring).")
    b = data["bootstrap"]
    out = [f"{data['note']} Each cell: the statistic on the test rows [{b['confidence']:.0%} bootstrap CI, "
           f"{b['resamples']} resamples of the reference reports, seed {b['seed']}]; for a learned row also the "
           f"paired bootstrap p-value of learned minus shallow ({b['p_value']}). Command: `{data['command']}`."]
    for metric, table in data["metrics"].items():
        stats = table["statistics"]
        sides = [s for s in SIDES if s in table["sides"]]
        out += ["", f"#### {LABELS.get(metric, metric)} (SYNTHETIC)", ""]
        head = ["system"] + [f"{SIDES[s]}: {STAT_LABELS[st]}" for s in sides for st in stats]
        out += ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
        seeds = sorted({k for s in sides for k in table["sides"][s]["learned"]})
        for seed in seeds:
            cells = [_cell(table["sides"][s]["learned"].get(seed), st,
                           (table["sides"][s]["learned"].get(seed) or {}).get("p_vs_shallow"))
                     for s in sides for st in stats]
            name = f"{LABELS.get(metric, metric)}, seed {seed}" if seed.isdigit() else f"{LABELS.get(metric, metric)}, {seed}"
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        for key, name in (("shallow", "shallow learner"), ("bleu4", "BLEU-4"), ("best_trivial", "best trivial")):
            cells = []
            for s in sides:
                fig = table["sides"][s].get(key)
                for st in stats:
                    c = _cell(fig, st)
                    cells.append(f"{c} ({fig['which']})" if key == "best_trivial" and fig and st == stats[0] else c)
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        out.append("")
        for s in sides:
            side = table["sides"][s]
            n = f"{side['rows']} rows, {side['groups']} reference reports" + (
                f", {side['pairs']} pairs" if side.get("pairs") else "")
            cmds = "; ".join(f"`{e['command']}`" for e in side["learned"].values())
            out.append(f"- {SIDES[s]}: {side['set']} ({n}); learned rows from {cmds}; baselines from "
                       f"`{side['baselines_from']}`" + (f"; {side['note']}" if side.get("note") else ""))
    return "\n".join(out)


# --- main -----------------------------------------------------------------------------------------------
def _pairs(items: list[str], flag: str) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for item in items:
        metric, _, run = item.partition("=")
        if metric not in ("er2score", "clinical_bleurt") or not run:
            raise SystemExit(f"{flag} {item!r}: expected METRIC=RUN with METRIC er2score or clinical_bleurt")
        out.setdefault(metric, []).append(Path(run))
    return out


SETS = {"test": "SYNTHETIC test split of the corpus split (data/samples/split.json)",
        "test_unseen": "SYNTHETIC test split of data/samples/split_unseen.json (reports of the held-out anatomies "
                       "head, spine, breast; no model or baseline was fitted on them)"}


def build(args, command: str) -> dict:
    runs = {"test": _pairs(args.run, "--run"), "test_unseen": _pairs(args.run_unseen, "--run-unseen")}
    demos = {"test": args.demo, "test_unseen": args.demo_unseen}
    entries: dict[str, dict[str, list[dict]]] = {}
    for side, by_metric in runs.items():
        for metric, folders in by_metric.items():
            entries.setdefault(side, {}).setdefault(metric, []).extend(
                run_entry(metric, run, side == "test_unseen") for run in folders)
    metrics: dict = {}
    for metric in ("er2score", "clinical_bleurt"):
        for side in [s for s in SIDES if s in entries]:
            if metric in entries[side]:
                got = side_from_entries(metric, entries[side][metric], args.resamples, args.confidence, args.seed)
                table = metrics.setdefault(metric, {"statistics": list(STATISTICS[metric]), "sides": {}})
                table["sides"][side] = {"set": SETS[side], **got,  # each training's record: it made the scores
                                        "environments": {str(run): run_environment(run)
                                                         for run in runs[side][metric]}}
    for side, demo in demos.items():
        if demo:
            got = side_from_demo(Path(demo), args.resamples, args.confidence, args.seed)
            table = metrics.setdefault("ratescore_tuned", {"statistics": ["kendall"], "sides": {}})
            table["sides"][side] = {"set": SETS[side].replace("test split", "Task 2 held-out pairs"), **got}
    if not metrics:
        raise SystemExit("nothing to read: give --run, --run-unseen, --demo and/or --demo-unseen")
    return {"synthetic": True, "note": SYNTHETIC_NOTE, "command": command,
            "bootstrap": {"unit": "reference report (group)", "resamples": args.resamples,
                          "confidence": args.confidence, "seed": args.seed, "p_value": P_DEFINITION},
            "metrics": metrics}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="append", default=[], metavar="METRIC=RUN")
    p.add_argument("--run-unseen", action="append", default=[], metavar="METRIC=RUN")
    p.add_argument("--demo", default=None, help="a python -m train demo folder (in-distribution Task 2)")
    p.add_argument("--demo-unseen", default=None, help="a demo folder on the unseen-domain sets")
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--markdown", default=str(MARKDOWN))
    p.add_argument("--from-json", action="store_true", help="render --out's JSON again (markdown) only")
    args = p.parse_args(argv)
    if args.resamples < 1 or not 0 < args.confidence < 1:
        p.error("--resamples must be >= 1 and --confidence in (0, 1)")
    out = Path(args.out)
    if args.from_json:
        data = json.loads(out.read_text()) if out.is_file() else None
    else:
        argv_text = " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
        data = build(args, f"python -m benchmarks.quality.learned_tables {argv_text}".strip())
        out.parent.mkdir(parents=True, exist_ok=True)
        write_result(out, data, seed=args.seed, indent=1)  # the bootstrap's seed
    text = render(data)
    write_text_atomic(Path(args.markdown), text + "\n", encoding="utf-8")
    print(text)
    print(f"wrote {args.markdown}" + ("" if args.from_json else f" and {out}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

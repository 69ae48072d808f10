"""What text alone reaches on the SYNTHETIC benchmark: the trivial baselines on every rated set.

    .venv/bin/python -m benchmarks.quality.bench_synth_baselines [--seeds 0 1 2] [--out benchmarks/results/synth_baselines.json]

For each seed, generates the default synthetic sets (``python -m data synth`` sizes) into a
temporary folder and scores the evaluation side of every set with the trivial baselines of
:mod:`train.evaluation.baselines` (difflib change hunks, negation-cue count difference, unigram F1, sentences not kept word for word) and
BLEU-4 for reference: Kendall tau-b against the ReXVal-layout mean error counts (all errors, and
clinically significant ones), against the Task 2 test scores and the ER² RadCliQ test totals; the
accuracy on the ER² RadCliQ test pairs (the better total strictly higher: a tie is a miss), Pearson
against the ClinicalBLEURT test targets, and the accuracy on the Task 3 triads (synonym strictly
above opposite; a tie is a miss). A benchmark that these solve measures its generator,
not the metrics (``tests/data/test_synth_bars.py`` holds them to |Kendall| <= 0.40 and 35-65% on
the triads). Beside them the shallow
learner (``shallow_ridge``: ridge regression on word and character diff n-grams and counts, a logistic regression on the two
candidates' feature difference for pair accuracy; :mod:`train.evaluation.baselines`), fitted on the
train split of the same set and evaluated on its test split, for the sets that have a train split
(Task 2, ER² RadCliQ, ClinicalBLEURT; the ReXVal layout and Task 3 are evaluation-only: ``n/a``).
The JSON also records generator v3's surface operations as generated (``surface_rates``: for
errors and meaning-preserving edits, each operation's share and its kinds; docs/synthetic.md).
``--sizes`` (as ``python -m data synth --sizes``) makes a quick, smaller run; ``--folders DIR ...`` measures
sets made already (the learning curve's 2x-8x sets: ``--out benchmarks/results/synth_baselines_curve_sets.json``).
Prints a table and writes JSON. All numbers are on SYNTHETIC data.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.results_file import write_result
from data.rate_eval import read_rate_eval_task2, read_rate_eval_task3
from data.ratings import pair_er2_rows, read_bleurt_jsonl, read_er2_jsonl
from data.rexval import read_rexval
from data.synth import generate
from data.synth.generate import parse_sizes
from train.evaluation.baselines import (SHALLOW_NAME, TRIVIAL, pair_baselines, rating_baselines,
                                        shallow_pair_baseline, shallow_rating_baseline)

ROOT = Path(__file__).resolve().parents[2]

METRICS = (*TRIVIAL, "bleu4")  # train.evaluation.baselines names, table order
COLUMNS = (*METRICS, SHALLOW_NAME)  # the shallow learner: None (n/a) on a set without a train split


def _rated(rows, target, statistic: str, train=None, train_target=None) -> dict:
    """One rated set: each baseline's ``statistic`` (kendall or pearson) against a higher-is-better
    target; the shallow learner fitted on ``train`` rows (with ``train_target``) when given."""
    got = rating_baselines([r.reference for r in rows], [r.candidate for r in rows], target, METRICS)
    out = {"n": len(rows), "statistic": statistic, **{m: got[m][statistic] for m in METRICS}, SHALLOW_NAME: None}
    if train:
        out["n_train"] = len(train)
        out[SHALLOW_NAME] = shallow_rating_baseline(
            [r.reference for r in train], [r.candidate for r in train], train_target,
            [r.reference for r in rows], [r.candidate for r in rows], target)[SHALLOW_NAME][statistic]
    return out


def _paired(refs, better, worse, train=None, max_train_pairs: int | None = None) -> dict:
    """Accuracy on pairs of candidates of one reference (the better strictly higher; a tie is a miss);
    the shallow pair learner fitted on ``train`` = (refs, better, worse) when given, unless it has more than
    ``max_train_pairs`` pairs: then its value is None and ``shallow_skipped`` says why."""
    out = {"n": len(refs), **pair_baselines(refs, better, worse, METRICS), SHALLOW_NAME: None}
    if train:
        out["n_train"] = len(train[0])
        if max_train_pairs is not None and len(train[0]) > max_train_pairs:
            out["shallow_skipped"] = (f"{len(train[0])} training pairs > --max-pair-learner-pairs {max_train_pairs}: "
                                      "the pair learner's validation search was not run")
        else:
            out.update(shallow_pair_baseline(*train, refs, better, worse))
    return out


SURFACE_SETS = ("synthetic_rexval", "synthetic_rate_eval", "synthetic_er2", "synthetic_bleurt")
LAYOUT, TYPOS = ("reorder", "header"), ("spelling", "grammar")


def surface_rates(folder: Path) -> dict:
    """Generator v3's design, as generated: for errors and for meaning-preserving edits (layout
    changes and typos apart), the share of each surface operation and each kind's count, over the
    report candidates of every set (Task 1 sentences and Task 3 triads excluded: they plan no edits)."""
    counts: dict = {"error": {}, "meaning-preserving": {}, "layout": {}, "typo": {}}
    for name in SURFACE_SETS:
        for line in (folder / name / "manifest_synthetic.jsonl").read_text().splitlines():
            row = json.loads(line)
            if row.get("set") in ("task1", "task3"):
                continue
            for e in row.get("edits", []):
                cls = ("error" if e["category"] is not None else "layout" if e["kind"] in LAYOUT
                       else "typo" if e["kind"] in TYPOS else "meaning-preserving")
                by_op = counts[cls].setdefault(e["surface"], {})
                by_op[e["kind"]] = by_op.get(e["kind"], 0) + 1
    out = {}
    for cls, by_op in counts.items():
        total = sum(sum(k.values()) for k in by_op.values())
        out[cls] = {"edits": total, **{op: {"share": sum(k.values()) / total if total else 0.0, "kinds": k}
                                       for op, k in sorted(by_op.items())}}
    return out


#: the generator's set (``python -m data synth --sizes`` key) behind each measured set
SOURCE = {"rexval_mean_errors": "rexval", "rexval_mean_significant_errors": "rexval", "task2_test": "task2",
          "er2_radcliq_test_total": "er2", "er2_radcliq_test_pair_accuracy": "er2", "bleurt_test": "bleurt",
          "task3_triads": "task3"}


def measure(folder: Path, skip: frozenset = frozenset(), max_train_pairs: int | None = None) -> dict:
    """Every baseline on every rated set of one generated folder (``skip``: generator sets it holds no row of,
    :data:`SOURCE` values, left out; ``max_train_pairs``: :func:`_paired`)."""
    sets = {}
    if "rexval" not in skip:
        for name, significant in (("rexval_mean_errors", False), ("rexval_mean_significant_errors", True)):
            pairs = read_rexval(folder / "synthetic_rexval", significant_only=significant)
            sets[name] = _rated(pairs, [-p.rating for p in pairs], "kendall")  # fewer errors is better
    if "task2" not in skip:
        t2 = read_rate_eval_task2(folder / "synthetic_rate_eval", "test")
        t2_train = read_rate_eval_task2(folder / "synthetic_rate_eval", "train")
        sets["task2_test"] = _rated(t2, [p.rating for p in t2], "kendall", t2_train, [p.rating for p in t2_train])
    if "er2" not in skip:
        er2_all = read_er2_jsonl(folder / "synthetic_er2" / "radcliq_synthetic.jsonl")
        er2 = [p for p in er2_all if p.meta.get("split") == "test"]
        er2_train = [p for p in er2_all if p.meta.get("split") == "train"]  # dev rows are not fitted on
        sets["er2_radcliq_test_total"] = _rated(er2, [-p.total for p in er2], "kendall", er2_train,
                                                [-p.total for p in er2_train])
        # the pairs the ER² model's test pair accuracy is taken on (SPEC §3.2 pairing rule)
        pairs, _ = pair_er2_rows(er2)
        train_pairs, _ = pair_er2_rows(er2_train)
        sets["er2_radcliq_test_pair_accuracy"] = {"statistic": "pair accuracy", **_paired(
            [p.reference for p in pairs], [p.accepted.candidate for p in pairs], [p.rejected.candidate for p in pairs],
            ([p.reference for p in train_pairs], [p.accepted.candidate for p in train_pairs],
             [p.rejected.candidate for p in train_pairs]), max_train_pairs)}
    if "bleurt" not in skip:
        bl_all = read_bleurt_jsonl(folder / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl")
        bl = [r for r in bl_all if r.meta.get("split") == "test"]
        bl_train = [r for r in bl_all if r.meta.get("split") == "train"]
        sets["bleurt_test"] = _rated(bl, [r.rating for r in bl], "pearson", bl_train, [r.rating for r in bl_train])
    if "task3" not in skip:
        triads = read_rate_eval_task3(folder / "synthetic_rate_eval")
        sets["task3_triads"] = {"statistic": "accuracy", **_paired(
            [t.original for t in triads], [t.synonym for t in triads], [t.opposite for t in triads])}
    return sets


def measure_folders(folders: list[Path], out: Path, max_train_pairs: int | None = None) -> None:
    """:func:`measure` on sets made already (``--folders``): per folder its sets' rows, with its generator note.
    ``out`` is written after each folder and merged into (other folders' rows are kept), and a folder whose
    rows ``out`` already holds under the same generator note is not measured again: a killed run goes on."""
    data = json.loads(out.read_text()) if out.is_file() else {}
    runs, notes = data.get("runs", {}), data.get("generators", {})
    for folder in folders:
        note = folder / "generator_synthetic.json"
        if not note.is_file():
            raise SystemExit(f"{folder}: no generator_synthetic.json (not a python -m data synth folder)")
        t0 = time.perf_counter()
        stored = json.loads(note.read_text())
        sizes = stored.get("sizes") or {}
        skip = frozenset(k for k in set(SOURCE.values()) if sizes.get(k) == 0)
        stored = {**stored, "not_generated": sorted(skip)}  # sizes 0: no set to measure
        if max_train_pairs is not None:  # another measurement than one without the limit: not "already measured"
            stored["max_pair_learner_pairs"] = max_train_pairs
        if folder.name in runs and notes.get(folder.name) == stored:
            print(f"{folder}: already in {out} (same generator note): kept", flush=True)
            continue
        runs[folder.name] = measure(folder, skip, max_train_pairs)
        notes[folder.name] = stored
        out.parent.mkdir(parents=True, exist_ok=True)
        write_result(out, {"data": "SYNTHETIC (python -m data synth folders made already; see generators)",
                           "generators": notes, "runs": runs}, indent=1)  # the seeds: in each generator note
        print(f"{folder}: measured in {time.perf_counter() - t0:.0f} s; written to {out}", flush=True)
    print("\nSYNTHETIC sets (one generated folder each)")
    print(f"| folder | set | statistic | n | {' | '.join(COLUMNS)} |")
    print("|---|---|---|---:|" + "---:|" * len(COLUMNS))
    for name, sets in runs.items():
        for s, row in sets.items():
            print(f"| {name} | {s} | {row['statistic']} | {row['n']} | "
                  + " | ".join("n/a" if row[m] is None else f"{row[m]:.3f}" for m in COLUMNS) + " |")
    print(f"\nwrote {out}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "synth_baselines.json"))
    p.add_argument("--sizes", default=None, help="set sizes as python -m data synth --sizes (default: the default sizes)")
    p.add_argument("--folders", nargs="+", default=None, metavar="DIR",
                   help="measure these generated folders instead (e.g. the learning curve's larger sets, "
                        "checkpoints/curve_sets/2x ...), each named by its folder and described by its generator note")
    p.add_argument("--max-pair-learner-pairs", type=int, default=None, metavar="N",
                   help="with --folders: leave out the shallow pair learner where its training pairs exceed N (its "
                        "validation search grows with the pairs, which grow with the square of the candidates per "
                        "report: on the 8x set, over an hour and 16 GB here); recorded in the JSON")
    args = p.parse_args(argv)
    if args.max_pair_learner_pairs is not None and not args.folders:
        p.error("--max-pair-learner-pairs applies to --folders")
    if args.folders:
        return measure_folders([Path(f) for f in args.folders], Path(args.out), args.max_pair_learner_pairs)
    sizes = parse_sizes(args.sizes)
    runs, surfaces = {}, {}
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            generate(Path(tmp), seed=seed, sizes=sizes)
            runs[str(seed)] = measure(Path(tmp))
            surfaces[str(seed)] = surface_rates(Path(tmp))
            print(f"seed {seed}: generated and measured in {time.perf_counter() - t0:.0f} s", flush=True)
    names = list(runs[str(args.seeds[0])])
    summary = {s: {m: (None if any(runs[k][s][m] is None for k in runs)
                       else float(np.mean([runs[k][s][m] for k in runs]))) for m in COLUMNS} for s in names}
    print("\nSYNTHETIC sets, mean over seeds", args.seeds, "" if args.sizes is None else f"(sizes {sizes})")
    print(f"| set | statistic | n | {' | '.join(COLUMNS)} |")
    print("|---|---|---:|" + "---:|" * len(COLUMNS))
    for s in names:
        first = runs[str(args.seeds[0])][s]
        print(f"| {s} | {first['statistic']} | {first['n']} | "
              + " | ".join("n/a" if summary[s][m] is None else f"{summary[s][m]:.3f}" for m in COLUMNS) + " |")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    what = "default sizes" if args.sizes is None else f"sizes {sizes}"
    write_result(out, {"data": f"SYNTHETIC (python -m data synth, {what})", "seeds": args.seeds,
                       "mean": summary, "runs": runs, "surface_rates": surfaces}, seed=args.seeds, indent=1)
    first = surfaces[str(args.seeds[0])]
    print(f"\nsurface operations of seed {args.seeds[0]} (share of each class's edits):")
    for cls in ("error", "meaning-preserving"):
        print(f"  {cls}: " + ", ".join(f"{op} {v['share']:.2f}" for op, v in first[cls].items() if op != "edits"))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()

"""Where an ER²Score export loses Kendall: across references or within them (SYNTHETIC rows).

The MRE loss compares only candidates of one reference, so nothing fixes the reward level from one
reference to the next. This prints, on the test rows of an ER² RadCliQ file, Kendall tau-b of the
export's total and of the difflib change-hunk counter against the rows' totals, over all candidates
and centred per reference (each reference's mean removed from score and total), plus how much of
the totals' spread lies within references, and writes them as JSON.

    .venv/bin/python -m benchmarks.quality.bench_er2_levels checkpoints/reward/sample/export \
        checkpoints/synthetic/synthetic_er2/radcliq_synthetic.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

from benchmarks.results_file import write_result
from data.ratings import read_er2_jsonl
from train.evaluation.baselines import diff_hunks

ROOT = Path(__file__).resolve().parents[2]


def centred(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``values`` minus the mean of their group."""
    out = values.astype(float).copy()
    for g in np.unique(groups):
        out[groups == g] -= out[groups == g].mean()
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("export")
    p.add_argument("rows")
    p.add_argument("--split", default="test")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "er2_levels.json"))
    args = p.parse_args(argv)
    import radscore

    rows = [r for r in read_er2_jsonl(args.rows) if r.meta.get("split") == args.split]
    if not rows:
        raise SystemExit(f"{args.rows}: no rows of split {args.split!r}")
    refs, cands = [r.reference for r in rows], [r.candidate for r in rows]
    totals, groups = np.array([r.total for r in rows]), np.array([r.group for r in rows])
    scores = {"model": np.array([s.total for s in radscore.ER2Score(args.export).score(cands, refs)]),
              "diff_hunks": -diff_hunks(refs, cands)}  # both: higher = more errors, as the totals
    report = {"synthetic": True, "export": args.export, "rows": args.rows, "split": args.split,
              "n": len(rows), "references": int(len(np.unique(groups))),
              "total_sd": float(totals.std()),
              "mean_within_reference_sd": float(np.mean([totals[groups == g].std() for g in np.unique(groups)]))}
    for name, x in scores.items():
        report[name] = {"kendall": float(kendalltau(x, totals).statistic),
                        "kendall_within_reference": float(kendalltau(centred(x, groups), centred(totals, groups)).statistic)}
    print(json.dumps(report, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_result(Path(args.out), report, indent=1)
    return report


if __name__ == "__main__":
    main()

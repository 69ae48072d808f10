"""Where ER²Score loses to the shallow learner: prompts cut at ``max_length`` or not.
SYNTHETIC data; VALIDATION split by default (a diagnosis chooses what to change next, so it is made
on validation figures; ``--split test`` only to explain a reported test figure).

    .venv/bin/python -m benchmarks.quality.er2_truncation --run checkpoints/reward/sample \\
        --run checkpoints/reward/sample_seed43

For each run: its data module is rebuilt from the run's resolved config (its ``data.class_path``; same
rows, split, template and ``max_length``), the export (the best checkpoint) scores every candidate of the split with
:class:`radscore.ER2Score`, and the shallow learner is fitted on the run's training rows as the
training command fits it (:mod:`train.evaluation.baselines`: a logistic pair model for pair accuracy,
a ridge on the totals for Kendall). Both are then measured on three parts of the split:

- ``all``: every pair (every candidate for Kendall);
- ``whole``: the pairs whose two prompts fit ``max_length`` (the candidates whose prompt fits);
- ``cut``: the pairs with at least one prompt longer than ``max_length`` (the end of the reference
  was cut first, :func:`radscore.reward_model.encode_prompts`).

A tie is a miss in pair accuracy, as in training. Writes (merges into)
``benchmarks/results/er2_truncation.json``: ``{"<run>": {"seed", "split", "max_length", "parts": {part:
{"pairs", "candidates", "model": {...}, "shallow": {...}}}}}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from benchmarks.results_file import run_environment, write_result

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "er2_truncation.json"


def _kendall(scores, targets) -> float:
    from scipy.stats import kendalltau

    if len(scores) < 2:
        return float("nan")
    return float(kendalltau(scores, targets, variant="b").statistic)


def measure(run: Path, split: str = "val", batch_size: int = 16) -> dict:
    from radscore import ER2Score
    from radscore.reward_model import format_prompt
    from train.ablations.runs import saved_config
    from train.evaluation.baselines import ShallowLearner, shallow_learner
    from train.lightning.configs import init_args
    from train.lightning.module import datamodule_from_run_config

    cfg = saved_config(run)
    if cfg is None:
        raise SystemExit(f"{run}: no saved config (export/training_config.yaml or logs/version_*/config.yaml)")
    if not (run / "export").is_dir():
        raise SystemExit(f"{run}: no export folder (the run has not finished)")
    dm = datamodule_from_run_config(cfg)
    dm.setup("fit")
    system = dm.system
    pairs, train = dm.pairs[split], dm.pairs["train"]
    rows = list({r.id: r for p in pairs for r in (p.accepted, p.rejected)}.values())
    lengths = [len(x) for x in dm.tokenizer([format_prompt(dm.prompt_template, r.reference, r.candidate)
                                             for r in rows], truncation=False, verbose=False)["input_ids"]]
    cut = {r.id: n > dm.max_length for r, n in zip(rows, lengths)}

    scorer = ER2Score(run / "export", batch_size=batch_size, device="cpu", progress=True)
    model = {r.id: system.total_to_internal(s.total)
             for r, s in zip(rows, scorer.score([r.candidate for r in rows], [r.reference for r in rows]))}
    trows = list({r.id: r for p in train for r in (p.accepted, p.rejected)}.values())
    ridge = shallow_learner([r.reference for r in trows], [r.candidate for r in trows],
                            [system.total_to_internal(r.total) for r in trows])
    ridge_score = dict(zip([r.id for r in rows], ridge.predict([r.reference for r in rows],
                                                               [r.candidate for r in rows])))
    pair_model = ShallowLearner("pair").fit([p.reference for p in train], [p.accepted.candidate for p in train],
                                            worse=[p.rejected.candidate for p in train])
    pair_score = dict(zip([r.id for r in rows], pair_model.predict([r.reference for r in rows],
                                                                   [r.candidate for r in rows])))
    parts = {"all": (lambda p: True, lambda r: True),
             "whole": (lambda p: not (cut[p.accepted.id] or cut[p.rejected.id]), lambda r: not cut[r.id]),
             "cut": (lambda p: cut[p.accepted.id] or cut[p.rejected.id], lambda r: cut[r.id])}
    out = {}
    for name, (keep_pair, keep_row) in parts.items():
        ps = [p for p in pairs if keep_pair(p)]
        rs = [r for r in rows if keep_row(r)]
        target = [system.total_to_internal(r.total) for r in rs]

        def acc(score):
            return float(np.mean([score[p.accepted.id] > score[p.rejected.id] for p in ps])) if ps else float("nan")

        out[name] = {"pairs": len(ps), "candidates": len(rs),
                     "model": {"pair_accuracy": acc(model), "kendall": _kendall([model[r.id] for r in rs], target)},
                     "shallow": {"pair_accuracy": acc(pair_score),
                                 "kendall": _kendall([ridge_score[r.id] for r in rs], target)}}
    return {"seed": cfg.get("seed_everything"), "split": split, "max_length": dm.max_length,
            "set": f"SYNTHETIC {init_args(cfg, 'data').get('rows')}", "parts": out}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="append", required=True, help="a finished ER²Score run folder (`python -m train fit`)")
    p.add_argument("--split", default="val", choices=("val", "test"))
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    out = Path(args.out)
    data = json.loads(out.read_text()) if out.is_file() else {}
    for run in args.run:
        path = Path(run).resolve()
        key = str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
        data[f"{key} ({args.split})"] = res = measure(path, args.split, args.batch_size)
        res["environment"] = run_environment(path)  # the training's record: it made the model
        print(f"{key}, seed {res['seed']}, {args.split} split (SYNTHETIC), max_length {res['max_length']}:")
        print(f"  {'part':6} {'pairs':>5} {'cands':>5}  {'model acc':>9} {'shallow acc':>11}  {'model tau':>9} "
              f"{'shallow tau':>11}")
        for name, part in res["parts"].items():
            m, s = part["model"], part["shallow"]
            print(f"  {name:6} {part['pairs']:5d} {part['candidates']:5d}  {m['pair_accuracy']:9.3f} "
                  f"{s['pair_accuracy']:11.3f}  {m['kendall']:9.3f} {s['kendall']:11.3f}")
    out.parent.mkdir(parents=True, exist_ok=True)
    data.pop("environment", None)  # an earlier writing run's: the record is this run's
    write_result(out, data, indent=1)
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())

"""What does a learned metric add to the shallow learner's inputs? VALIDATION rows only; SYNTHETIC data.

    .venv/bin/python -m benchmarks.quality.what_learned_adds \\
        --run er2score=checkpoints/reward/sample:checkpoints/synthetic \\
        --run er2score=checkpoints/unseen/reward_seed42:checkpoints/synthetic_unseen \\
        --run clinical_bleurt=checkpoints/unseen/bleurt_seed42:checkpoints/synthetic_unseen

Each ``--run metric=run_dir:sets`` names a trained run (its ``export/``) and the synthetic folder whose rows it
was trained on (``synthetic_er2/radcliq_synthetic.jsonl`` or ``synthetic_bleurt/clinical_bleurt_synthetic.jsonl``).
On the rows of the ``dev`` split (what configurations are chosen on; the test split is not read), against the
higher-is-better target (ER²: the RadCliQ total, sign-flipped; ClinicalBLEURT: the rating), Kendall tau-b of:

- ``learned``: the run's scores;
- ``shallow``: the shallow learner (:class:`train.evaluation.baselines.ShallowLearner`, its values chosen on a
  validation part of the train rows) fitted on the train rows;
- ``counts``: a ridge regression on the standardised :data:`~train.evaluation.baselines.COUNT_FEATURES` (the 22
  untrained counts), its penalty chosen by grouped cross-validation on the train rows, fitted on them (what a
  head fed those counts could add; stacked with the learned score below, this measures their linear
  combination after training, not joint training);
- ``frozen_edit``: a ridge regression on the packaged MiniLM's frozen mean-pooled embeddings of the deleted and
  of the inserted text (:func:`~train.evaluation.baselines.diff_texts`) plus the counts, fitted as ``counts``:
  whether pretrained representations of the edit alone carry what the diff tokens do;
- stacks over the dev rows (5-fold cross-validation grouped by reference report, a ridge regression of the
  target on the named scores, penalty chosen inside each fold): ``counts+learned``, ``shallow+learned``,
  ``shallow`` (alone, the same procedure), ``counts+frozen_edit+learned``. ``shallow+learned`` minus
  ``shallow`` is what the learned metric adds to the shallow learner.

Writes ``benchmarks/results/what_learned_adds.json`` (per run, merged into what is there), with the commands.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks.results_file import run_environment, write_result

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "what_learned_adds.json"
ROWS = {"er2score": "synthetic_er2/radcliq_synthetic.jsonl",
        "clinical_bleurt": "synthetic_bleurt/clinical_bleurt_synthetic.jsonl"}
ALPHAS = np.logspace(-2, 4, 13)
FOLDS = 5


def target(metric: str, row: dict) -> float:
    """The higher-is-better target of a row."""
    if metric == "er2score":
        return float(row["total"]) if row["higher_is_better"] else -float(row["total"])
    return float(row["score"])


def read_rows(metric: str, sets: Path) -> dict[str, list[dict]]:
    path = sets / ROWS[metric]
    if not path.is_file():
        raise SystemExit(f"{path}: no such rows file (make the sets with `python -m data synth`)")
    out: dict[str, list[dict]] = {"train": [], "dev": []}
    for line_no, line in enumerate(path.read_text().splitlines(), 1):
        row = json.loads(line)
        if row.get("split") not in ("train", "dev", "test"):
            raise SystemExit(f"{path}:{line_no} ({row.get('id')}): split {row.get('split')!r} is not train/dev/test")
        if row["split"] in out:
            out[row["split"]].append(row)
    if not out["train"] or not out["dev"]:
        raise SystemExit(f"{path}: needs train and dev rows ({len(out['train'])}, {len(out['dev'])})")
    return out


def learned_scores(metric: str, export: Path, refs: list[str], cands: list[str]) -> np.ndarray:
    """Higher-is-better scores of the run's export on the pairs."""
    if metric == "er2score":
        from radscore.er2score import ER2Score

        return ER2Score.from_export(str(export)).rewards(cands, refs).sum(dim=1).numpy().astype(np.float64)
    from radscore.bleurt import ClinicalBLEURT

    return np.asarray(ClinicalBLEURT.from_export(str(export)).compute_score(cands, refs), dtype=np.float64)


def kendall(pred, gold) -> float:
    """Kendall tau-b, as the baselines report it (:func:`train.evaluation.baselines.rating_statistics`)."""
    from train.evaluation.baselines import rating_statistics

    return rating_statistics(pred, gold)["kendall"]


def ridge_on_train(x_train, y_train, groups, x_eval) -> tuple[np.ndarray, float]:
    """Standardised ridge, penalty chosen by grouped CV on the train rows (Kendall), refitted on them."""
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def model(alpha):
        return make_pipeline(StandardScaler(), Ridge(alpha=alpha))

    best, best_alpha = -np.inf, ALPHAS[0]
    for alpha in ALPHAS:
        pred = np.zeros(len(y_train))
        for fit, val in GroupKFold(FOLDS).split(x_train, y_train, groups):
            pred[val] = model(alpha).fit(x_train[fit], y_train[fit]).predict(x_train[val])
        score = kendall(pred, y_train)
        if score > best:
            best, best_alpha = score, alpha
    return model(best_alpha).fit(x_train, y_train).predict(x_eval), float(best_alpha)


def stacked(columns: list[np.ndarray], y: np.ndarray, groups: list[str]) -> float:
    """Kendall of a grouped-CV ridge stack of ``columns`` over the rows (penalty chosen inside each fold)."""
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x = np.column_stack(columns)
    pred = np.zeros(len(y))
    for fit, val in GroupKFold(FOLDS).split(x, y, groups):
        pred[val] = make_pipeline(StandardScaler(), RidgeCV(alphas=ALPHAS)).fit(x[fit], y[fit]).predict(x[val])
    return kendall(pred, y)


def edit_embeddings(refs: list[str], cands: list[str], encoder) -> np.ndarray:
    """(rows, 2 * dim): the frozen embeddings of each pair's deleted and inserted text."""
    from train.evaluation.baselines import diff_texts

    texts = [diff_texts(r, c) for r, c in zip(refs, cands)]
    index, vectors = encoder([t for pair in texts for t in pair])
    return np.asarray([np.concatenate([vectors[index[d]], vectors[index[i]]]) for d, i in texts], dtype=np.float64)


def measure(metric: str, run: Path, sets: Path, encoder=None) -> dict:
    from train.evaluation.baselines import ShallowLearner, count_features

    rows = read_rows(metric, sets)
    tr, dv = rows["train"], rows["dev"]
    tr_refs, tr_cands = [r["reference"] for r in tr], [r["candidate"] for r in tr]
    dv_refs, dv_cands = [r["reference"] for r in dv], [r["candidate"] for r in dv]
    y_tr = np.array([target(metric, r) for r in tr])
    y = np.array([target(metric, r) for r in dv])
    g_tr, g = [r["reference_id"] for r in tr], [r["reference_id"] for r in dv]
    export = run / "export"
    if not export.is_dir():
        raise SystemExit(f"{run}: no export/ (train the run first)")
    learned = learned_scores(metric, export, dv_refs, dv_cands)
    shallow_model = ShallowLearner("ridge").fit(tr_refs, tr_cands, y_tr)
    shallow = shallow_model.predict(dv_refs, dv_cands)
    c_tr, c_dv = count_features(tr_refs, tr_cands), count_features(dv_refs, dv_cands)
    counts, counts_alpha = ridge_on_train(c_tr, y_tr, g_tr, c_dv)
    if encoder is None:
        from radscore.encoder import EntityEncoder

        encoder = EntityEncoder(pooling="mean", device="cpu")
    e_tr = np.hstack([edit_embeddings(tr_refs, tr_cands, encoder), c_tr])
    e_dv = np.hstack([edit_embeddings(dv_refs, dv_cands, encoder), c_dv])
    frozen, frozen_alpha = ridge_on_train(e_tr, y_tr, g_tr, e_dv)
    single = {"learned": learned, "shallow": shallow, "counts": counts, "frozen_edit": frozen}
    out = {"dev_rows": len(dv), "dev_references": len(set(g)), "train_rows": len(tr),
           "kendall": {k: kendall(v, y) for k, v in single.items()},
           "stacked_kendall": {"shallow": stacked([shallow], y, g),
                               "counts+learned": stacked([counts, learned], y, g),
                               "shallow+learned": stacked([shallow, learned], y, g),
                               "counts+frozen_edit+learned": stacked([counts, frozen, learned], y, g)},
           "chosen": {"shallow": shallow_model.chosen(), "counts_alpha": counts_alpha,
                      "frozen_edit_alpha": frozen_alpha}}
    out["learned_adds_to_shallow"] = out["stacked_kendall"]["shallow+learned"] - out["stacked_kendall"]["shallow"]
    return out


def parse_run(spec: str) -> tuple[str, Path, Path]:
    try:
        metric, rest = spec.split("=", 1)
        run, sets = rest.rsplit(":", 1)
    except ValueError:
        raise SystemExit(f"--run {spec!r}: expected metric=run_dir:sets_folder") from None
    if metric not in ROWS:
        raise SystemExit(f"--run {spec!r}: metric must be one of {sorted(ROWS)}")
    return metric, Path(run), Path(sets)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", action="append", required=True, help="metric=run_dir:sets_folder (repeatable)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    data = json.loads(args.out.read_text()) if args.out.is_file() else {}
    data["data"] = ("SYNTHETIC: sample reports edited by data.synth; validation (dev) rows only, the test split is "
                    "not read. Kendall tau-b against the higher-is-better target.")
    data.setdefault("runs", {})
    for spec in args.run:
        metric, run, sets = parse_run(spec)
        result = measure(metric, run, sets)
        result["command"] = f"python -m benchmarks.quality.what_learned_adds --run {spec}"
        result["environment"] = run_environment(run)  # the training's record: it made the learned scores
        data["runs"][f"{metric}={run}"] = result
        args.out.parent.mkdir(parents=True, exist_ok=True)
        data.pop("environment", None)  # an earlier writing run's: the record is this run's
        write_result(args.out, data, indent=1, sort_keys=True)  # after each run: a kill keeps it
        print(f"{metric} {run}: " + ", ".join(f"{k} {v:.3f}" for k, v in result["kendall"].items())
              + "; stacked " + ", ".join(f"{k} {v:.3f}" for k, v in result["stacked_kendall"].items()))


if __name__ == "__main__":
    main()

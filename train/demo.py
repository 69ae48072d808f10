"""``python -m train demo`` (``make demo``): the main job end to end on the embedded default.

1. the SYNTHETIC sample benchmark (the default sets' Task 1-3 folder, made when missing);
2. the IOB NER model on the shipped sample corpus with the packaged all-MiniLM-L6-v2
   (``configs/ner/iob_sample.yaml``, run folder ``<out>/ner``; a finished export is reused and a
   killed run resumes from ``last.ckpt``);
3. the TPE search of W and p (``configs/tune/sample.yaml`` with that NER export; the study in
   ``<out>/tune`` resumes);
4. the held-out pairs (test-split references of the corpus's one split, ``data/samples/split.json``,
   which no model or search of the demo was trained on), scored with ``radscore``:
   RaTEScore with the released long and short matrices and the tuned one, against BLEU-4, BLEU-2,
   ROUGE-L and BERTScore (METEOR when WordNet is installed); Kendall tau-b and Pearson r with
   grouped bootstrap CIs, and the accuracy on the synthetic Task 3 triads;
5. the comparison of its table with the committed demo report (``benchmarks/results/demo_report.json``,
   ``--reference``): every figure of the table to the third decimal, and the environments of both;
6. ``<out>/``: ``demo_table.md``, ``demo_report.json`` (with the environment record), ``demo_predictions.jsonl`` (per held-out pair:
   id, reference group, rating, ``target`` = sign x rating (higher is better) and every metric's score),
   ``scatter_<metric>.png`` (metric against rating on the held-out pairs, one per metric) and
   ``W_heatmap.png`` (the tuned matrix).

Every number it prints comes from SYNTHETIC data (edited sample reports with simulated ratings),
never from RaTE-Eval, and says so.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from radscore.atomic import atomic_open, atomic_path, write_text_atomic
from radscore.scoring import AffinityMatrix
from train.evaluation.baselines import SHALLOW_LABEL, SHALLOW_NAME, TRIVIAL_LABELS
from train.lightning.run_folder import RunFolder

SYNTHETIC_NOTE = ("SYNTHETIC data: sample reports edited by data.synth with simulated ratings. These numbers "
                  "check the pipeline; they are not RaTE-Eval results and not the paper's.")

METRIC_LABELS = {"ratescore_long": "RaTEScore (released long W)", "ratescore_short": "RaTEScore (released short W)",
                 "ratescore_tuned": "RaTEScore (tuned W, this run)", "bleu4": "BLEU-4", "bleu2": "BLEU-2",
                 "rougeL": "ROUGE-L", "bertscore": "BERTScore (MiniLM)", "meteor": "METEOR",
                 **TRIVIAL_LABELS, SHALLOW_NAME: SHALLOW_LABEL}


REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "benchmarks" / "results" / "demo_report.json"
#: the figures of the table: (statistic, part) -> how the table prints it
FIGURES = (("kendall", "value"), ("kendall", "low"), ("kendall", "high"), ("pearson", "value"), ("pearson", "low"),
           ("pearson", "high"), ("triad_accuracy", None))


def table_figures(report: dict) -> dict[tuple[str, str], float]:
    """``{(metric, figure): value}`` of every number the demo table prints (NaN as None)."""
    out = {}
    for name, res in report.get("metrics", {}).items():
        for stat, part in FIGURES:
            value = res.get(stat)
            value = value.get(part) if part and isinstance(value, dict) else (None if part else value)
            label = stat if part is None else (stat if part == "value" else f"{stat} CI {part}")
            out[(name, label)] = None if value is None or value != value else float(value)
    return out


def compare_reports(report: dict, reference: dict, decimals: int = 3) -> dict:
    """Every table figure of ``report`` against ``reference`` at ``decimals`` (what the table shows):
    ``{"matches", "compared", "differences": [{metric, figure, here, reference, delta}], "missing",
    "settings_differ"}``."""
    ours, theirs = table_figures(report), table_figures(reference)
    differences, missing = [], sorted(f"{m} {f}" for m, f in set(ours) ^ set(theirs))
    for key in sorted(set(ours) & set(theirs)):
        a, b = ours[key], theirs[key]
        same = (a is None and b is None) or (a is not None and b is not None and round(a, decimals) == round(b, decimals))
        if not same:
            delta = None if a is None or b is None else round(a - b, 6)
            differences.append({"metric": key[0], "figure": key[1], "here": a, "reference": b, "delta": delta})
    settings = [k for k in ("ner_config", "tune_config", "tune_seed", "held_out", "triads", "settings")
                if report.get(k) != reference.get(k)]
    return {"matches": not differences and not missing, "decimals": decimals, "compared": len(set(ours) & set(theirs)),
            "differences": differences, "missing": missing, "settings_differ": settings}


def describe_comparison(cmp: dict, reference_path: Path, env: dict | None, ref_env: dict | None) -> str:
    from radscore.environment import describe

    here = describe(env) if env else "not recorded"
    there = describe(ref_env) if ref_env else "not recorded"
    lines = []
    if cmp["matches"]:
        lines.append(f"[demo] the table matches the committed demo report {reference_path} in all {cmp['compared']} "
                     f"figures to the third decimal")
    else:
        lines.append(f"[demo] the table differs from the committed demo report {reference_path}: "
                     f"{len(cmp['differences'])} of {cmp['compared']} figures at the third decimal"
                     + (f"; only on one side: {', '.join(cmp['missing'])}" if cmp["missing"] else ""))
        for d in cmp["differences"]:
            label = f"{METRIC_LABELS.get(d['metric'], d['metric'])} {d['figure']}"
            delta = "" if d["delta"] is None else f" ({d['delta']:+.3f})"
            lines.append(f"[demo]   {label}: {_num(d['here'])} here, {_num(d['reference'])} committed{delta}")
    if cmp["settings_differ"]:
        lines.append(f"[demo]   settings that differ from the committed run: {', '.join(cmp['settings_differ'])}")
    lines.append(f"[demo]   this run: {here}")
    lines.append(f"[demo]   committed: {there}")
    return "\n".join(lines)


def _num(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def compare_with_reference(report: dict, reference: Path | None) -> tuple[dict | None, str]:
    """How ``report``'s table compares with the committed one: ``(comparison or None, what to print)``."""
    if reference is None:
        return None, ""
    if not reference.is_file():
        return None, f"[demo] no committed demo report at {reference}: nothing to compare with"
    committed = json.loads(reference.read_text(encoding="utf-8"))
    cmp = compare_reports(report, committed)
    text = describe_comparison(cmp, reference, report.get("environment"), committed.get("environment"))
    return {"reference": str(reference), **cmp}, text


def _stage(name: str, timings: dict, t0: float) -> None:
    timings[name] = round(time.perf_counter() - t0, 1)
    print(f"[demo] {name}: done in {timings[name]:.0f} s", flush=True)


def train_ner(run_dir: Path, configs: list[str], epochs: int | None, progress: bool) -> Path:
    """The NER export in ``run_dir/export``: reused when there, else trained (resuming)."""
    run = RunFolder(run_dir)
    export = run.export
    if (export / "radscore_manifest.json").is_file():
        print(f"[demo] reusing the NER export {export}", flush=True)
        return export
    from train.lightning.cli import fit_args, main as fit

    overrides = [] if epochs is None else ["--trainer.max_epochs", str(epochs)]
    if not progress:
        overrides += ["--trainer.enable_progress_bar", "false"]
    if run.last_checkpoint.is_file():
        print(f"[demo] resuming the NER run from {run.last_checkpoint}", flush=True)
        overrides += ["--ckpt_path", "last"]
    fit(fit_args(configs, run_dir, overrides))
    if not (export / "radscore_manifest.json").is_file():
        raise RuntimeError(f"NER training finished without an export in {export}")
    return export


def score_metrics(refs: list[str], cands: list[str], ner: str, encoder: str, matrices: dict[str, AffinityMatrix],
                  scorer_settings, baselines: list[str], progress: bool) -> tuple[dict, dict]:
    """Scores of every metric on the pairs: ``(scores by metric, unavailable metric -> reason)``."""
    from radscore import RaTEScore
    from train.evaluation.baselines import score_baselines

    scores = {}
    # one scorer, its models run once: the other matrices rescore from its caches (with_matrix)
    base_scorer = RaTEScore(ner=ner, encoder=encoder, penalty=scorer_settings.penalty,
                            pooling=scorer_settings.pooling, empty_score=scorer_settings.empty_score,
                            batch_size=scorer_settings.batch_size, splitter=scorer_settings.splitter,
                            cache_size=1_000_000)
    for name, matrix in matrices.items():
        scorer = base_scorer.with_matrix(matrix)
        scores[f"ratescore_{name}"] = np.array(
            [p.f1 for p in scorer.iter_score(cands, refs, progress=progress)], dtype=np.float64)
    base, unavailable = score_baselines(refs, cands, baselines, bertscore_model=encoder)
    scores.update(base)
    return scores, unavailable


def scatter(scores: np.ndarray, ratings: np.ndarray, path: Path, title: str, ylabel: str, stats: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.8, 4.2), dpi=120)
    jitter = np.random.default_rng(0).uniform(-0.04, 0.04, len(ratings))  # ratings come in 0.25 steps
    ax.scatter(scores, ratings + jitter, s=14, alpha=0.7)
    if np.ptp(scores) > 0:
        slope, intercept = np.polyfit(scores, ratings, 1)
        xs = np.linspace(scores.min(), scores.max(), 50)
        ax.plot(xs, slope * xs + intercept, color="black", lw=1)
    ax.set_xlabel("metric score")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title}\n{stats}", fontsize=9)
    fig.tight_layout()
    with atomic_path(path) as tmp:  # the format from the final name: the temporary one ends in .tmp
        fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or None)
    plt.close(fig)


def _ci(r: dict) -> str:
    if not np.isfinite(r["value"]):
        return "undefined"
    return f"{r['value']:.3f} [{r['low']:.3f}, {r['high']:.3f}]"


def format_table(rows: dict, unavailable: dict, header: str, confidence: float) -> str:
    pct = f"{round(100 * confidence)}%"
    lines = [f"### {header}", "", f"_{SYNTHETIC_NOTE}_", "",
             f"| metric | Kendall tau-b [{pct} CI] | Pearson r [{pct} CI] | triad accuracy |", "|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {METRIC_LABELS.get(name, name)} | {_ci(r['kendall'])} | {_ci(r['pearson'])} | "
                     f"{r['triad_accuracy']:.3f} |")
    for name, reason in unavailable.items():
        lines.append(f"| {METRIC_LABELS.get(name, name)} | unavailable: {reason} | | |")
    return "\n".join(lines)


def modality_of_groups(reports: Path) -> dict[str, str]:
    """Reference report id -> modality, from the sample corpus (for the per-modality breakdown)."""
    out = {}
    for line in reports.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            out[str(rec["id"])] = str(rec.get("modality", "unknown"))
    return out


def held_out(cfg) -> tuple[list, list]:
    """What the demo evaluates: the test side of the tune config's split (with the sample config,
    the test-split references of the corpus split) and the synthetic Task 3 triads (made from
    test-split references only). ``tests/test_leakage.py`` checks both against every training set."""
    from data.rate_eval import read_rate_eval_task3
    from train.tune.data import read_pairs, split_pairs

    pairs = read_pairs(cfg.data)
    split = split_pairs(pairs, cfg.split)
    return [pairs[i] for i in split.test], read_rate_eval_task3(Path(cfg.data.path))


def fitted_side(cfg) -> list:
    """The pairs the TPE search fitted W and p on (the train side of the tune config's split): the
    shallow learner beside the metrics is fitted on exactly these, never on a held-out pair."""
    from train.tune.data import read_pairs, split_pairs

    pairs = read_pairs(cfg.data)
    return [pairs[i] for i in split_pairs(pairs, cfg.split).train]


def shallow_scores(cfg, texts: dict[str, tuple[list, list]], chosen: dict | None = None) -> dict[str, np.ndarray]:
    """The shallow learner (:mod:`train.evaluation.baselines`) fitted on the search's train pairs,
    with ``sign * rating`` as target so that higher is better, scoring each of ``texts`` (name ->
    (references, candidates)). ``chosen``, when given, receives its version and what it chose on a
    validation part of those train pairs."""
    from train.evaluation.baselines import shallow_learner

    train = fitted_side(cfg)
    sign = float(cfg.objective.sign)
    model = shallow_learner([p.reference for p in train], [p.candidate for p in train],
                            [sign * p.rating for p in train])
    if chosen is not None:
        from train.evaluation.baselines import SHALLOW_VERSION

        chosen.update({"version": SHALLOW_VERSION, **model.chosen()})
    return {name: model.predict(refs, cands) for name, (refs, cands) in texts.items()}


def run(out: Path, ner_config: list[str], tune_config: str | list[str], ner_epochs: int | None, n_trials: int | None,
        resamples: int, baselines: list[str], ner_export: str | None = None, progress: bool = True,
        reference: Path | None = REFERENCE) -> dict:
    from train.evaluation.metaeval import agreement, breakdown, triad_accuracy
    from train.tune.cli import run as tune_run
    from train.tune.config import load_config
    from train.tune.report import heatmap
    from train.tune.search import StudyMismatchError

    from radscore.environment import environment

    out.mkdir(parents=True, exist_ok=True)
    timings, t_all = {}, time.perf_counter()
    started = environment()  # the code and machine at the start (precision and seed: the NER run's, below)
    print(f"[demo] {SYNTHETIC_NOTE}", flush=True)

    t0 = time.perf_counter()
    export = Path(ner_export) if ner_export else train_ner(out / "ner", ner_config, ner_epochs, progress)
    _stage("NER model", timings, t0)

    t0 = time.perf_counter()
    overrides = {"scorer.ner": str(export), "run_dir": str(out / "tune")}
    if n_trials is not None:
        overrides["search.n_trials"] = int(n_trials)
    tune_configs = [tune_config] if isinstance(tune_config, (str, Path)) else list(tune_config)  # composed in order
    tune_config = " ".join(map(str, tune_configs))  # as the command line gives them to --tune-config
    cfg = load_config(*tune_configs, overrides=overrides)
    try:
        tune_report = tune_run(cfg, workers=1, progress=progress)  # also makes the synthetic sets when missing
    except StudyMismatchError as err:
        db = cfg.run_dir / "study.db"
        if cfg.search.storage or not db.is_file():
            raise
        # the demo's own study from an earlier run on other data or another NER: kept aside, not reused
        old = db.with_name("study.previous.db")
        for suffix in ("", "-wal", "-shm"):
            src = Path(f"{db}{suffix}")
            if src.exists():
                src.replace(Path(f"{old}{suffix}"))
        print(f"[demo] {err}: the earlier demo study was moved to {old}; starting a new one", flush=True)
        tune_report = tune_run(cfg, workers=1, progress=progress)
    tuned = AffinityMatrix.load(out / "tune" / "affinity_matrix.json")
    _stage("TPE search", timings, t0)

    t0 = time.perf_counter()
    test, triads = held_out(cfg)
    refs, cands = [p.reference for p in test], [p.candidate for p in test]
    ratings = np.array([p.rating for p in test], dtype=np.float64)
    groups = [p.group for p in test]
    matrices = {"long": AffinityMatrix.builtin("long"), "short": AffinityMatrix.builtin("short"), "tuned": tuned}
    encoder = cfg.scorer.encoder
    scores, unavailable = score_metrics(refs, cands, str(export), encoder, matrices, cfg.scorer, baselines, progress)

    originals, n_t = [t.original for t in triads], len(triads)
    both, _ = score_metrics(originals + originals, [t.synonym for t in triads] + [t.opposite for t in triads],
                            str(export), encoder, matrices, cfg.scorer,
                            [b for b in baselines if b not in unavailable], progress)
    syn, opp = {k: v[:n_t] for k, v in both.items()}, {k: v[n_t:] for k, v in both.items()}
    shallow_choice: dict = {}
    shallow = shallow_scores(cfg, {"held": (refs, cands), "syn": (originals, [t.synonym for t in triads]),
                                   "opp": (originals, [t.opposite for t in triads])}, shallow_choice)
    scores[SHALLOW_NAME] = shallow["held"]
    syn[SHALLOW_NAME], opp[SHALLOW_NAME] = shallow["syn"], shallow["opp"]
    _stage("scoring the held-out pairs and the triads", timings, t0)

    t0 = time.perf_counter()
    rep = cfg.report
    sign = cfg.objective.sign
    modality = modality_of_groups(Path(__file__).resolve().parents[1] / "data" / "samples" / "reports.jsonl")
    keys = [modality.get(g, "unknown") for g in groups]
    rows = {}
    for name, values in scores.items():
        res = agreement(values, ratings, groups, ("kendall", "pearson"), int(rep.bootstrap_resamples),
                        float(rep.confidence), int(rep.seed), sign)
        res["triad_accuracy"] = triad_accuracy(syn[name], opp[name])
        res["by_modality_kendall"] = breakdown(values, ratings, groups, keys, "kendall", min_pairs=8,
                                               n_resamples=int(resamples), confidence=float(rep.confidence),
                                               seed=int(rep.seed), sign=sign)
        rows[name] = res
        stats = f"Kendall {_ci(res['kendall'])}, Pearson {_ci(res['pearson'])}"
        scatter(values, ratings, out / f"scatter_{name}.png", f"SYNTHETIC: {METRIC_LABELS.get(name, name)}",
                "simulated rating (0-5)", stats)
    heatmap(tuned, out / "W_heatmap.png", f"SYNTHETIC: tuned W ({cfg.objective.correlation}, train split)")
    header = (f"demo: {len(test)} held-out pairs ({len(set(groups))} test-split reference reports of the split "
              f"the sets were made on) of the synthetic Task-2-style set, {len(triads)} synthetic triads; NER {export}")
    table = format_table(rows, unavailable, header, float(rep.confidence))
    _stage("meta-evaluation and plots", timings, t0)

    tune_test = tune_report["results"]["tuned"]["test"]["value"]
    ours = rows["ratescore_tuned"][cfg.objective.correlation]["value"]
    report = {"synthetic": True, "note": SYNTHETIC_NOTE, "ner_export": str(export),
              "ner_config": None if ner_export else " ".join(ner_config),
              "tune_run": str(out / "tune"), "tune_config": tune_config,
              "tune_seed": int(cfg.search.sampler_seed),
              "held_out": {"pairs": len(test), "groups": len(set(groups))}, "triads": len(triads),
              "metrics": rows, "unavailable": unavailable,
              "shallow_learner": shallow_choice,  # chosen on validation of the search's train pairs
              "check_tuned_vs_tune_report": {"method": cfg.objective.correlation, "demo": ours,
                                             "tune_report": tune_test},
              "tuned_matrix": tuned.to_official(), "timings_s": timings,
              "settings": {"ner_epochs": ner_epochs, "n_trials": int(cfg.search.n_trials), "resamples": int(resamples),
                           "baselines": sorted(baselines)},
              "seconds_total": round(time.perf_counter() - t_all, 1)}
    ner_env = None if ner_export else RunFolder(out / "ner").fit_environment()
    report["environment"] = {**started, "precision": (ner_env or {}).get("precision"), "seed": (ner_env or {}).get("seed")}
    report["environment"]["ner_run"] = ner_env  # the NER's own start (its threads, precision and seed)
    comparison, compared = compare_with_reference(report, reference)
    if comparison is not None:
        report["comparison"] = comparison
    write_text_atomic(out / "demo_report.json", json.dumps(report, indent=1, default=float) + "\n")
    with atomic_open(out / "demo_predictions.jsonl", "w", encoding="utf-8") as f:  # per held-out pair, every metric
        for k, p in enumerate(test):
            f.write(json.dumps({"id": p.id, "group": p.group, "rating": p.rating, "target": sign * p.rating,
                                "scores": {name: float(values[k]) for name, values in scores.items()}}) + "\n")
    write_text_atomic(out / "demo_table.md", table + "\n")
    print("\n" + table + "\n")
    if compared:
        print(compared, flush=True)
    print(f"[demo] wrote {out / 'demo_table.md'}, {out / 'demo_report.json'}, {out / 'W_heatmap.png'} and "
          f"{len(rows)} scatter plots in {out}/; total {report['seconds_total']:.0f} s "
          f"({', '.join(f'{k}: {v:.0f} s' for k, v in timings.items())})")
    return report


def main(argv: list[str] | None = None) -> int:
    from train.evaluation.baselines import BASELINES

    parser = argparse.ArgumentParser(prog="python -m train demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="checkpoints/demo", help="output folder (default checkpoints/demo)")
    parser.add_argument("--ner-config", nargs="+", default=["configs/ner/iob_sample.yaml"],
                        help="the NER run's configs, in order (an overlay after its base)")
    parser.add_argument("--ner-epochs", type=int, default=None, help="default: the NER config's max_epochs")
    parser.add_argument("--ner-export", default=None, help="use this NER export instead of training one")
    parser.add_argument("--tune-config", nargs="+", default=["configs/tune/sample.yaml"],
                        help="one or more tune configs, composed in order")
    parser.add_argument("--n-trials", type=int, default=None, help="default: the tune config's n_trials")
    parser.add_argument("--resamples", type=int, default=200,
                        help="bootstrap resamples of the per-modality breakdown (the headline CIs use the "
                             "tune config's report.bootstrap_resamples)")
    parser.add_argument("--baselines", nargs="*", default=list(BASELINES), choices=list(BASELINES))
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--reference", default=str(REFERENCE),
                        help="the committed demo report the table is compared with at the end ('none': no comparison)")
    args = parser.parse_args(argv)
    reference = None if args.reference.lower() == "none" else Path(args.reference)
    try:
        run(Path(args.out), args.ner_config, args.tune_config, args.ner_epochs, args.n_trials, args.resamples,
            list(args.baselines), args.ner_export, progress=not args.no_progress, reference=reference)
    except (FileNotFoundError, ValueError) as err:
        print(f"demo: error: {err}", file=sys.stderr)
        return 2
    return 0

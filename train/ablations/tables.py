"""One builder per ablation table: each returns a :class:`~train.ablations.render.Table` with the
paper's rows (and the profile's rows of ours only), our values where this profile can make them.

Tables of runs (their rows come from the profile's ``tables.<name>.rows``):
- ``ner-schemes`` (RaTEScore Table 6), ``ner-data`` (Table 7): entity-level P/R/F1 and word
  accuracy of each NER run on the profile's ``ner_eval_subset`` test split;
- ``er2-backbones`` (ER²Score Table 5), ``er2-loss``, ``er2-lambda`` (§3.4): Kendall and Spearman
  of each reward run's total against the ReXVal-format error counts, then the shallow learner fitted
  on the runs' training rows (:func:`shallow_er2_rows`);
- ``encoders`` (RaTEScore Table 8): sentence-level Pearson of RaTEScore with each entity encoder.
Tables of metrics (``rexval``, ``rate-eval``, ``er2-criteria``, ``er2-metrics``) are in
:mod:`train.ablations.tables_metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from train.ablations.evaluate import Evaluator
from train.ablations.paper import PAPER_TABLES, PaperTable
from train.ablations.profile import EncoderSpec, Profile, RunSpec
from train.ablations.render import MEASURED, NEEDS_PAPER, Cell, Row, Table
from train.ablations.resources import RowUnavailable
from train.ablations.runs import RunManager, RunResult
from train.evaluation.baselines import SHALLOW_LABEL

SHALLOW_NAME = (SHALLOW_LABEL,)  # the shallow learner's row name (a row name is a tuple of labels)

NER_KEYS = {"P": "test/precision", "R": "test/recall", "F1": "test/f1", "Acc": "test/accuracy"}


@dataclass
class Context:
    profile: Profile
    runs: RunManager
    ev: Evaluator


def status_of(err: RowUnavailable) -> str:
    text = str(err)
    return text if text.startswith(("unavailable:", "skipped:")) else f"failed: {text}"


def not_mapped(ctx: Context) -> str:
    if ctx.profile.name != "paper":
        return NEEDS_PAPER
    return f"failed: {ctx.profile.source} maps no run or model to this row"


def measure_row(ctx: Context, label, paper: dict, spec, measure: Callable, in_paper: bool = True) -> Row:
    """A row measured by ``measure(spec) -> (cells, source)``; a missing spec or an unavailable
    resource becomes the row's status."""
    if spec is None:
        return Row(tuple(label), paper, status=not_mapped(ctx), in_paper=in_paper)
    try:
        cells, source = measure(spec)
    except RowUnavailable as err:
        described = spec.describe() if isinstance(spec, RunSpec) else ""
        return Row(tuple(label), paper, status=status_of(err), source=described, in_paper=in_paper)
    return Row(tuple(label), paper, cells, MEASURED, source, in_paper)


def table_rows(ctx: Context, paper: PaperTable, measure: Callable) -> list[Row]:
    """The paper's rows mapped through the profile, then the profile's rows of ours only."""
    settings = ctx.profile.table(paper.name)
    rows = [measure_row(ctx, r.label, r.values, settings.rows.get(r.key), measure) for r in paper.rows]
    rows += [measure_row(ctx, e.label, {}, e.spec, measure, in_paper=False) for e in settings.extra]
    return rows


def new_table(ctx: Context, name: str, ours_data: str, notes: list[str]) -> Table:
    return Table(PAPER_TABLES[name], ctx.profile.name, ours_data, notes=[*notes, *ctx.profile.table(name).notes])


def run_label(run: RunResult) -> str:
    model = run.config.get("model.class_path", "?").rsplit(".", 1)[-1]
    backbone = run.config.get("model.init_args.backbone", "?")
    return f"{model} on {backbone}"


# ---- NER ---------------------------------------------------------------------------------------------
def _ner_measure(ctx: Context) -> Callable:
    subset = ctx.profile.data.ner_eval_subset

    def measure(spec: RunSpec):
        run = ctx.runs.ensure(spec)
        metrics = ctx.runs.ner_test_metrics(run, subset)
        missing = [k for k in NER_KEYS.values() if k not in metrics]
        if missing:
            raise RowUnavailable(f"{run.run_dir}: test metrics lack {missing}")
        trained_on = run.config.get("data.init_args.subset", "all")
        source = f"{run.source()}: {run_label(run)}, trained on subset {trained_on!r}"
        return {m: Cell(metrics[k]) for m, k in NER_KEYS.items()}, source
    return measure


def _ner_table(ctx: Context, name: str) -> Table:
    subset = ctx.profile.data.ner_eval_subset
    table = new_table(ctx, name, f"{ctx.ev.describe('ner')}; every row tested on the {subset!r} test split", [
        "P, R, F1: entity level (seqeval, strict IOB2); Acc: word accuracy, as train.ner logs them.",
        "No bootstrap CI: these are single runs on one test split."])
    table.rows = table_rows(ctx, table.paper, _ner_measure(ctx))
    return table


def build_ner_schemes(ctx: Context) -> Table:
    return _ner_table(ctx, "ner-schemes")


def build_ner_data(ctx: Context) -> Table:
    return _ner_table(ctx, "ner-data")


# ---- RaTEScore entity encoders --------------------------------------------------------------------------
def build_encoders(ctx: Context) -> Table:
    rs = ctx.profile.ratescore
    table = new_table(ctx, "encoders", f"{ctx.ev.describe('rate_eval')}; Task 1 (sentence pairs), splits "
                      f"{ctx.profile.data.task1_splits}", [
                          f"RaTEScore with the {rs.sentence_matrix!r} affinity matrix and penalty mode "
                          f"{rs.penalty!r}; Pearson with the rating, 95% CI from "
                          f"{ctx.profile.metaeval.bootstrap_resamples} bootstrap resamples over reference groups."])

    def measure(spec: EncoderSpec):
        pairs = ctx.ev.task(1)
        refs, cands = [p.reference for p in pairs], [p.candidate for p in pairs]
        scores = ctx.ev.ratescore("task1", refs, cands, rs.sentence_matrix, spec.encoder, spec.pooling,
                                  spec.trust_remote_code)
        res = ctx.ev.agreement(scores, [p.rating for p in pairs], [p.group for p in pairs], ("pearson",))
        source = (f"encoder {spec.encoder} ({spec.pooling} pooling), NER {ctx.ev.ner_export()}, "
                  f"{len(pairs)} pairs")
        return {"Pearson": Cell.of(res["pearson"])}, source

    table.rows = table_rows(ctx, table.paper, measure)
    try:
        pairs = ctx.ev.task(1)
    except RowUnavailable:
        pairs = None
    fitted = shallow_on_task_train(ctx, 1, pairs is not None)
    if isinstance(fitted, Row):
        table.rows.append(fitted)
    else:
        model, n_train = fitted
        res = ctx.ev.agreement(model.predict([p.reference for p in pairs], [p.candidate for p in pairs]),
                               [p.rating for p in pairs], [p.group for p in pairs], ("pearson",))
        table.rows.append(Row(SHALLOW_NAME, {}, {"Pearson": Cell.of(res["pearson"])}, MEASURED,
                              f"ridge on diff n-grams and counts, fitted on the {n_train} Task 1 train pairs "
                              "(train/evaluation/baselines.py)", in_paper=False))
    return table


def shallow_on_task_train(ctx: Context, number: int, anything_to_evaluate: bool):
    """The shallow learner (ridge on diff n-grams and counts, :mod:`train.evaluation.baselines`) fitted on the
    train split of RaTE-Eval Task ``number``, as ``(model, training pairs)``; or the row saying why it
    is unavailable. It is never fitted on a pair it is evaluated on: where the profile evaluates the
    train split too, there is no row."""
    from data import rate_eval
    from train.evaluation.baselines import shallow_learner

    splits = ctx.profile.data.task1_splits if number == 1 else ctx.profile.data.task2_splits
    if "train" in splits:
        return Row(SHALLOW_NAME, {}, status=f"unavailable: the evaluated Task {number} splits include the train "
                   "split, the shallow learner's only fitting data", in_paper=False)
    reader = rate_eval.read_rate_eval_task1 if number == 1 else rate_eval.read_rate_eval_task2
    try:
        train = reader(ctx.ev.rate_eval_root(), "train")
    except (RowUnavailable, OSError, ValueError) as err:
        return Row(SHALLOW_NAME, {}, status=f"unavailable: no Task {number} train split to fit on ({err})",
                   in_paper=False)
    if len(train) < 2 or not anything_to_evaluate:
        return Row(SHALLOW_NAME, {}, status="unavailable: nothing to fit on or to evaluate", in_paper=False)
    model = shallow_learner([p.reference for p in train], [p.candidate for p in train], [p.rating for p in train])
    return model, len(train)


# ---- ER²Score runs against ReXVal ---------------------------------------------------------------------
def rexval_arrays(ctx: Context):
    pairs = ctx.ev.rexval()
    return (pairs, [p.reference for p in pairs], [p.candidate for p in pairs],
            np.array([p.rating for p in pairs]), [p.group for p in pairs])


def er2_goodness(out: dict) -> np.ndarray:
    """ER²Score's total as "higher is better" (RadCliQ's total is a predicted error count)."""
    return out["total"] if out["system"].higher_is_better else -out["total"]


def rexval_data_line(ctx: Context) -> str:
    line = ctx.ev.describe("rexval")
    try:
        pairs = ctx.ev.rexval()
        line += f" ({len(pairs)} pairs, {len({p.group for p in pairs})} studies)"
    except RowUnavailable:
        pass
    return line


def rexval_notes(ctx: Context) -> list[str]:
    from train.ablations.evaluate import is_synthetic

    m = ctx.profile.metaeval
    errors = "clinically significant errors only" if ctx.profile.data.rexval_significant_only else "all errors"
    notes = [f"Rating: the raters' mean error count ({errors}). Each metric is correlated with minus that count, "
             "so a metric that agrees with the radiologists gets a positive value (ER²Score's RadCliQ total, "
             f"a predicted error count, is negated first). 95% CI from {m.bootstrap_resamples} bootstrap "
             "resamples over studies."]
    folder = ctx.profile.data.rexval
    if folder and is_synthetic(folder):
        notes.append("SYNTHETIC pairs: edited copies of the sample reports, errors counted by simulated raters. "
                     "A sample ER²Score run learned from SYNTHETIC ER² rows edited from the same sample corpus "
                     "(the shallow learner's row says how many evaluated references are among its training "
                     "references): its numbers check the pipeline, they measure nothing the papers measured.")
    return notes


def _er2_run_table(ctx: Context, name: str) -> Table:
    table = new_table(ctx, name, rexval_data_line(ctx), rexval_notes(ctx))
    measured: list[RunResult] = []

    def measure(spec: RunSpec):
        pairs, refs, cands, errors, groups = rexval_arrays(ctx)
        run = ctx.runs.ensure(spec)
        out = ctx.ev.er2(run, "rexval", refs, cands)
        res = ctx.ev.agreement(er2_goodness(out), errors, groups, ("kendall", "spearman"), sign=-1.0)
        measured.append(run)
        return ({"Kendall": Cell.of(res["kendall"]), "Spearman": Cell.of(res["spearman"])},
                f"{run.source()}: {run_label(run)}")

    table.rows = table_rows(ctx, table.paper, measure)
    table.rows += shallow_er2_rows(ctx, measured, ("kendall", "spearman"))
    return table


def er2_train_rows(run: RunResult):
    """``(data module, training rows)`` of a finished ER²Score run, rebuilt from its saved config
    (its own rows file and split); :class:`RowUnavailable` when the run saved no config."""
    from train.ablations.resources import ResourceUnavailable
    from train.ablations.runs import saved_config
    from train.lightning.module import datamodule_from_run_config

    cfg = saved_config(run.run_dir)
    if cfg is None:
        raise ResourceUnavailable(f"{run.run_dir} saved no config to read its training rows from")
    dm = datamodule_from_run_config(cfg)
    return dm, dm.split_rows()["train"]


def shallow_er2_rows(ctx: Context, runs: list[RunResult], methods: tuple[str, ...],
                     label: str | None = None) -> list[Row]:
    """The shallow learner (ridge on diff n-grams and counts, :mod:`train.evaluation.baselines`) fitted on the
    training rows of ER²Score runs (each run's own data module and split, the rows' totals as the
    target) and scored on the ReXVal pairs: what a linear model of the edit learns from the rows the
    runs learned from. The ReXVal layout has no train split of its own.

    One row per distinct set of training rows: runs that trained on the same rows (the usual case in
    a table of backbones, losses or λ) share one row; runs on other rows get a row each, named."""
    from train.evaluation.baselines import shallow_learner

    base = label or f"{SHALLOW_LABEL}, these runs' training rows"
    if not runs:
        return [Row((base,), {}, status="unavailable: no ER²Score run of this table was measured", in_paper=False)]
    try:
        _, refs, cands, errors, groups = rexval_arrays(ctx)
    except RowUnavailable as err:
        return [Row((base,), {}, status=status_of(err), in_paper=False)]
    sets: dict[tuple, list] = {}   # training rows (by content) -> [(run, data module, rows)]
    failed: list[Row] = []
    seen = set()
    for run in runs:
        if run.run_dir in seen:  # a run measured in two rows is fitted once
            continue
        seen.add(run.run_dir)
        try:
            dm, train = er2_train_rows(run)
        except RowUnavailable as err:
            failed.append(Row((f"{base} ({run.spec.run_name})",), {}, status=status_of(err), in_paper=False))
            continue
        key = tuple((r.reference, r.candidate, r.total) for r in train)
        sets.setdefault(key, []).append((run, dm, train))
    rows = []
    for members in sets.values():
        run, dm, train = members[0]
        names = [m[0].spec.run_name for m in members]
        row_label = base if len(sets) == 1 else f"{base} ({', '.join(names)})"
        model = shallow_learner([r.reference for r in train], [r.candidate for r in train],
                                [dm.system.total_to_internal(r.total) for r in train])
        res = ctx.ev.agreement(model.predict(refs, cands), errors, groups, methods, sign=-1.0)
        seen_refs = {r.reference for r in train}
        held = sum(ref in seen_refs for ref in set(refs))
        source = (f"ridge on diff n-grams and counts, fitted on the {len(train)} training rows of ER²Score {run.source()}"
                  + (f", the same rows as {', '.join(names[1:])}" if len(names) > 1 else "")
                  + f" (their totals; train/evaluation/baselines.py); {held} of the {len(set(refs))} evaluated "
                  "references are among these rows' references")
        rows.append(Row((row_label,), {}, {m.capitalize(): Cell.of(res[m]) for m in methods}, MEASURED, source,
                        in_paper=False))
    return rows + failed


def build_er2_backbones(ctx: Context) -> Table:
    return _er2_run_table(ctx, "er2-backbones")


def build_er2_loss(ctx: Context) -> Table:
    return _er2_run_table(ctx, "er2-loss")


def build_er2_lambda(ctx: Context) -> Table:
    return _er2_run_table(ctx, "er2-lambda")

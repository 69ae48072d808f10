"""Tables whose rows are metrics: ``rexval`` (SPEC §2), ``rate-eval`` (RaTEScore Table 5 and the
sentence-level Pearson), ``er2-criteria`` (ER²Score Table 1) and ``er2-metrics`` (ER²Score Table 2).

Each paper row names what computes it (``PaperRow.measure``): ``bleu4``, ``rougeL``, ``bertscore``,
``meteor`` (:mod:`train.evaluation.baselines`), ``ratescore`` (the profile's NER run, encoder and
matrices), ``er2score`` (the profile's ER²Score run), or one of the comparators computed by the
package that maintains it (:mod:`train.evaluation.comparators`: ``cider``, ``spice`` through
pycocoevalcap; ``radgraph``, ``chexbert``, ``semb``, ``radcliq``, ``green`` through RadEval), whose
implementation and version the row's source names. A comparator that cannot run here says what it
needs (``skipped: needs <model id> (offline)``, ``skipped: needs the radeval package …``). CIDEr also
stands beside BLEU and ROUGE-L in ``rexval`` and ``rate-eval`` (not in those papers' tables).
"""

from __future__ import annotations

import numpy as np

from radscore.systems import RADCLIQ
from train.evaluation.baselines import TRIVIAL, TRIVIAL_LABELS
from train.evaluation.comparators import COMPARATORS, implementation
from train.ablations.paper import PaperRow
from train.ablations.render import MEASURED, Cell, Row, Table
from train.ablations.resources import ResourceUnavailable, RowUnavailable
from train.ablations.tables import (Context, er2_goodness, new_table, not_mapped, rexval_arrays, rexval_data_line,
                                    SHALLOW_NAME, rexval_notes, shallow_er2_rows, shallow_on_task_train,
                                    status_of)

BASELINE_SOURCES = {"bleu4": "BLEU-4 (nltk, smoothing method1)", "bleu2": "BLEU-2 (nltk)",
                    "rougeL": "ROUGE-L F (rouge-score)", "meteor": "METEOR (nltk)",
                    **{k: f"{v} (train/evaluation/baselines.py; no model)" for k, v in TRIVIAL_LABELS.items()}}


BESIDE_BLEU = {"cider": "CIDEr"}  # n-gram metrics these papers' tables omit, shown beside BLEU and ROUGE-L


def _beside_rows(measure, names: dict[str, str]) -> list[Row]:
    """Rows of ours only for metrics of the same kind as the table's BLEU and ROUGE-L rows."""
    rows = []
    for name, label in names.items():
        try:
            cells, source = measure(name)
        except RowUnavailable as err:
            rows.append(Row((label,), {}, status=status_of(err), in_paper=False))
            continue
        rows.append(Row((label,), {}, cells, MEASURED, source, in_paper=False))
    return rows


def _trivial_rows(measure) -> list[Row]:
    """Rows of the trivial baselines (no model): what the data can be solved with by text distance
    or a negation-keyword count alone, shown next to the metrics (not in the papers' tables)."""
    rows = []
    for name in TRIVIAL:
        label = (TRIVIAL_LABELS[name],)
        try:
            cells, source = measure(name)
        except RowUnavailable as err:
            rows.append(Row(label, {}, status=status_of(err), in_paper=False))
            continue
        rows.append(Row(label, {}, cells, MEASURED, source, in_paper=False))
    return rows


def _er2_run(ctx: Context):
    if ctx.profile.er2.run is None:
        raise ResourceUnavailable(f"needs an ER²Score run: set er2.run in {ctx.profile.source}")
    return ctx.runs.ensure(ctx.profile.er2.run)


def metric_scores(ctx: Context, measure: str, dataset: str, refs: list, cands: list, matrix: str):
    """``(scores where higher is better, source)`` of one of our metrics on a dataset."""
    if measure == "ratescore":
        scores = ctx.ev.ratescore(dataset, refs, cands, matrix)
        rs = ctx.profile.ratescore
        return scores, (f"RaTEScore: NER {ctx.ev.ner_export()}, encoder {rs.encoder} ({rs.pooling}), "
                        f"{matrix!r} matrix")
    if measure == "er2score":
        run = _er2_run(ctx)
        return er2_goodness(ctx.ev.er2(run, dataset, refs, cands)), f"ER²Score {run.source()}"
    if measure in COMPARATORS:
        return ctx.ev.comparator(measure, dataset, refs, cands), implementation(measure)
    scores = ctx.ev.baseline(measure, dataset, refs, cands)
    if measure == "bertscore":
        return scores, f"BERTScore F1 with {ctx.profile.baselines.bertscore_model}"
    return scores, BASELINE_SOURCES[measure]


def _rows_by_measure(ctx: Context, table: Table, measure_row) -> list[Row]:
    rows = []
    for prow in table.paper.rows:
        try:
            cells, source = measure_row(prow.measure)
        except RowUnavailable as err:
            rows.append(Row(prow.label, prow.values, status=status_of(err)))
            continue
        rows.append(Row(prow.label, prow.values, cells, MEASURED, source))
    return rows


# ---- rexval ----------------------------------------------------------------------------------------------
def build_rexval(ctx: Context) -> Table:
    table = new_table(ctx, "rexval", rexval_data_line(ctx), rexval_notes(ctx))
    matrix = ctx.profile.ratescore.paragraph_matrix

    def measure(name: str):
        _, refs, cands, errors, groups = rexval_arrays(ctx)
        scores, source = metric_scores(ctx, name, "rexval", refs, cands, matrix)
        res = ctx.ev.agreement(scores, errors, groups, ("kendall",), sign=-1.0)
        return {"Kendall": Cell.of(res["kendall"])}, source

    table.rows = _rows_by_measure(ctx, table, measure)
    table.rows += _beside_rows(measure, BESIDE_BLEU)
    table.rows.append(_composite_row(ctx, matrix))
    table.rows += _trivial_rows(measure)
    table.rows.append(_shallow_er2_row(ctx, ("kendall",)))
    return table


def _composite_row(ctx: Context, matrix: str) -> Row:
    """RadCliQ's recipe on the metrics we have: fit on whole studies, Kendall on held-out ones."""
    from train.evaluation.composite import evaluate_composite
    from train.evaluation.metaeval import group_split

    label = ("RadCliQ-style composite of BLEU-2, BERTScore, RaTEScore",)
    m = ctx.profile.metaeval
    try:
        _, refs, cands, errors, groups = rexval_arrays(ctx)
        columns = {name: metric_scores(ctx, name, "rexval", refs, cands, matrix)[0]
                   for name in ("bleu2", "bertscore", "ratescore")}
        train, test = group_split(groups, float(m.composite_test_fraction), int(m.seed))
        res = evaluate_composite(columns, errors, groups, train, test, int(m.bootstrap_resamples), int(m.seed))
    except (RowUnavailable, ValueError) as err:
        return Row(label, {}, status=status_of(err if isinstance(err, RowUnavailable) else RowUnavailable(str(err))),
                   in_paper=False)
    source = (f"linear regression on standardised scores, fitted on {res['n_train']} pairs, Kendall of the "
              f"predicted error count on {res['n_test']} held-out pairs ({len(set(groups[i] for i in test))} studies)")
    return Row(label, {}, {"Kendall": Cell.of(res["kendall"])}, MEASURED, source, in_paper=False)


# ---- rate-eval --------------------------------------------------------------------------------------------
def build_rate_eval(ctx: Context) -> Table:
    d, rs = ctx.profile.data, ctx.profile.ratescore
    m = ctx.profile.metaeval
    table = new_table(ctx, "rate-eval", f"{ctx.ev.describe('rate_eval')}; Task 2 splits {d.task2_splits}, "
                      f"Task 1 splits {d.task1_splits}, Task 3 all triads", [
                          f"Pearson/Kendall/Spearman: Task 2 (paragraph pairs, 0-5 score); RaTEScore with the "
                          f"{rs.paragraph_matrix!r} matrix. sentence Pearson: Task 1 with the {rs.sentence_matrix!r} "
                          f"matrix. synthetic Acc: share of Task 3 triads whose synonym rewrite scores strictly "
                          f"higher than the opposite rewrite ({rs.paragraph_matrix!r} matrix).",
                          f"95% CI from {m.bootstrap_resamples} bootstrap resamples over reference groups."])
    missing: dict[str, str] = {}

    def data(number: int):
        try:
            return ctx.ev.task(number)
        except RowUnavailable as err:
            missing[f"Task {number}"] = str(err)
            return None

    def measure(name: str):
        cells, sources = {}, []
        task2, task1, task3 = data(2), data(1), data(3)
        if task2 is not None:
            refs, cands = [p.reference for p in task2], [p.candidate for p in task2]
            scores, src = metric_scores(ctx, name, "task2", refs, cands, rs.paragraph_matrix)
            res = ctx.ev.agreement(scores, [p.rating for p in task2], [p.group for p in task2],
                                   ("pearson", "kendall", "spearman"))
            cells.update({"Pearson": Cell.of(res["pearson"]), "Kendall": Cell.of(res["kendall"]),
                          "Spearman": Cell.of(res["spearman"])})
            sources.append(src)
        if task3 is not None:
            from train.evaluation.metaeval import triad_accuracy

            originals = [t.original for t in task3]
            syn = metric_scores(ctx, name, "task3-synonym", originals, [t.synonym for t in task3],
                                rs.paragraph_matrix)[0]
            opp = metric_scores(ctx, name, "task3-opposite", originals, [t.opposite for t in task3],
                                rs.paragraph_matrix)[0]
            cells["synthetic Acc"] = Cell(triad_accuracy(syn, opp), n=len(task3))
        if task1 is not None:
            refs, cands = [p.reference for p in task1], [p.candidate for p in task1]
            scores, _ = metric_scores(ctx, name, "task1", refs, cands, rs.sentence_matrix)
            res = ctx.ev.agreement(scores, [p.rating for p in task1], [p.group for p in task1], ("pearson",))
            cells["sentence Pearson"] = Cell.of(res["pearson"])
        if not cells:
            raise ResourceUnavailable("; ".join(dict.fromkeys(missing.values())) or "no RaTE-Eval task could be read")
        return cells, sources[0] if sources else "—"

    table.rows = _rows_by_measure(ctx, table, measure)
    table.rows += _beside_rows(measure, BESIDE_BLEU)
    table.rows += _trivial_rows(measure)
    table.rows.append(_shallow_rate_eval_row(ctx, data(2), data(3)))
    for task, reason in sorted(missing.items()):
        table.notes.append(f"{task} could not be read, its columns are empty: {reason}")
    return table


def _shallow_rate_eval_row(ctx: Context, task2, task3) -> Row:
    """The shallow learner fitted on the Task 2 train split (:func:`shallow_on_task_train`), scored on
    the evaluated Task 2 pairs and the Task 3 triads: what a linear model of the edit reaches."""
    from train.evaluation.metaeval import triad_accuracy

    fitted = shallow_on_task_train(ctx, 2, bool(task2 or task3))
    if isinstance(fitted, Row):
        return fitted
    model, n_train = fitted
    cells = {}
    if task2:
        scores = model.predict([p.reference for p in task2], [p.candidate for p in task2])
        res = ctx.ev.agreement(scores, [p.rating for p in task2], [p.group for p in task2],
                               ("pearson", "kendall", "spearman"))
        cells.update({"Pearson": Cell.of(res["pearson"]), "Kendall": Cell.of(res["kendall"]),
                      "Spearman": Cell.of(res["spearman"])})
    if task3:
        originals = [t.original for t in task3]
        cells["synthetic Acc"] = Cell(triad_accuracy(model.predict(originals, [t.synonym for t in task3]),
                                                     model.predict(originals, [t.opposite for t in task3])),
                                      n=len(task3))
    return Row(SHALLOW_NAME, {}, cells, MEASURED, f"ridge on diff n-grams and counts, fitted on the {n_train} Task 2 train "
               "pairs (train/evaluation/baselines.py)", in_paper=False)


def _shallow_er2_row(ctx: Context, methods: tuple[str, ...]) -> Row:
    """The shallow learner fitted on the training rows of the profile's ER²Score run
    (:func:`train.ablations.tables.shallow_er2_rows`), beside ER²Score in a table of metrics."""
    from train.evaluation.baselines import SHALLOW_LABEL

    label = f"{SHALLOW_LABEL}, ER²Score's training rows"
    try:
        run = _er2_run(ctx)
    except RowUnavailable as err:
        return Row((label,), {}, status=status_of(err), in_paper=False)
    (row,) = shallow_er2_rows(ctx, [run], methods, label)
    return row


# ---- er2-criteria --------------------------------------------------------------------------------------------
def build_er2_criteria(ctx: Context) -> Table:
    table = new_table(ctx, "er2-criteria", rexval_data_line(ctx), rexval_notes(ctx) + [
        "Each sub-score (a predicted error count of one category) against the raters' mean count of that "
        "category; total: ER²Score's total against the mean total count."])
    paper = table.paper
    try:
        _, refs, cands, errors, groups = rexval_arrays(ctx)
        run = _er2_run(ctx)
        out = ctx.ev.er2(run, "rexval", refs, cands)
    except RowUnavailable as err:
        status = not_mapped(ctx) if ctx.profile.er2.run is None and ctx.profile.name != "paper" else status_of(err)
        table.rows = [Row(r.label, r.values, status=status) for r in paper.rows]
        return table
    system = out["system"]
    if tuple(system.items) != tuple(RADCLIQ.items):
        reason = (f"unavailable: the ER²Score run's scoring system {system.name!r} has no sub-score per ReXVal "
                  f"category (needs {list(RADCLIQ.items)})")
        table.rows = [Row(r.label, r.values, status=reason) for r in paper.rows]
        return table
    pairs = ctx.ev.rexval()
    per_category = np.array([[p.meta["per_category"][c] for c in range(1, 7)] for p in pairs], dtype=np.float64)
    rows = []
    for prow in paper.rows:
        if prow.key == "total":
            scores, ratings = er2_goodness(out), errors
        else:
            j = RADCLIQ.items.index(prow.key)
            scores, ratings = -out["subscores"][:, j], per_category[:, j]
        res = ctx.ev.agreement(scores, ratings, groups, ("kendall", "spearman"), sign=-1.0)
        rows.append(Row(prow.label, prow.values, {"Kendall": Cell.of(res["kendall"]),
                                                  "Spearman": Cell.of(res["spearman"])},
                        MEASURED, f"ER²Score {run.source()}"))
    table.rows = rows
    constant = [paper.rows[j].label[0] for j in range(6) if np.ptp(per_category[:, j]) == 0]
    if constant:
        table.notes.append(f"n/a: no pair has errors of {constant} (constant ratings: no correlation).")
    return table


# ---- er2-metrics --------------------------------------------------------------------------------------------
def build_er2_metrics(ctx: Context) -> Table:
    table = new_table(ctx, "er2-metrics", rexval_data_line(ctx), rexval_notes(ctx))
    matrix = ctx.profile.ratescore.paragraph_matrix
    devices = set()

    def measure(name: str):
        _, refs, cands, errors, groups = rexval_arrays(ctx)
        scores, source = metric_scores(ctx, name, "rexval", refs, cands, matrix)
        res = ctx.ev.agreement(scores, errors, groups, ("kendall", "spearman"), sign=-1.0)
        cells = {"Kendall": Cell.of(res["kendall"]), "Spearman": Cell.of(res["spearman"])}
        if name == "er2score":
            out = ctx.ev.er2(_er2_run(ctx), "rexval", refs, cands)
            cells["s/sample"] = Cell(out["seconds_per_pair"], n=len(refs))
            devices.add(out["device"])
        return cells, source

    table.rows = _rows_by_measure(ctx, table, measure)
    try:
        cells, source = measure("ratescore")
        table.rows.append(Row(("RaTEScore",), {}, cells, MEASURED, source, in_paper=False))
    except RowUnavailable as err:
        table.rows.append(Row(("RaTEScore",), {}, status=status_of(err), in_paper=False))
    table.rows += _trivial_rows(measure)
    table.rows.append(_shallow_er2_row(ctx, ("kendall", "spearman")))
    if devices:
        table.notes.append(f"s/sample: ER²Score scoring time per pair on {', '.join(sorted(devices))} "
                           f"(batch size {ctx.profile.er2.batch_size}, model loading excluded); the paper's is "
                           "on one GPU.")
    return table

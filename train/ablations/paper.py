"""The papers' tables as data, transcribed from SPEC (RaTEScore §1.7/§1.10, ReXVal §2, ER²Score §3.4-3.5).

Each :class:`PaperTable` gives the layout (key columns, metric columns, rows in the paper's order)
and the published numbers; ``None`` where the paper reports no number for a cell. In the tables of
metrics every row names its ``measure``: one of this project's metrics, a baseline of
:mod:`train.evaluation.baselines`, or a comparator computed by the package that maintains it
(RadGraph F1, CheXbert, semb, RadCliQ-v1, GREEN through RadEval; CIDEr, SPICE through pycocoevalcap:
:mod:`train.evaluation.comparators`). Rows that need a trained run or a model come from the profile
(:mod:`train.ablations.profile`), keyed by ``PaperRow.key``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PaperRow:
    key: str                                # the row's name in a profile's ``tables.<name>.rows``
    label: tuple[str, ...]                  # the key columns as the paper prints them
    values: dict[str, float | None] = field(default_factory=dict)  # metric -> published number
    measure: str | None = None              # what computes it here (tables of metrics)


@dataclass(frozen=True)
class PaperTable:
    name: str                    # the ``--table`` name
    title: str
    source: str                  # where the numbers come from
    paper_data: str              # what the paper measured them on
    key_columns: tuple[str, ...]
    metrics: tuple[str, ...]
    rows: tuple[PaperRow, ...]

    def row(self, key: str) -> PaperRow:
        for r in self.rows:
            if r.key == key:
                return r
        raise KeyError(f"table {self.name!r} has no row {key!r}; rows: {[r.key for r in self.rows]}")


def _rows(metrics: tuple[str, ...], spec: list[tuple]) -> tuple[PaperRow, ...]:
    """``(key, label, numbers[, measure])`` tuples -> rows (numbers in metric order)."""
    out = []
    for item in spec:
        key, label, numbers = item[0], item[1], item[2]
        if len(numbers) != len(metrics):
            raise AssertionError(f"row {key}: {len(numbers)} numbers for {len(metrics)} metrics")
        label = (label,) if isinstance(label, str) else tuple(label)
        out.append(PaperRow(key, label, dict(zip(metrics, numbers)), *item[3:]))
    return tuple(out)


NER_METRICS = ("P", "R", "F1", "Acc")
NER_SCHEMES = PaperTable(
    "ner-schemes", "NER schemes and initialisations", "RaTEScore paper, Table 6 (SPEC §1.7)",
    "RaTE-NER test set (all)", ("scheme", "initialisation"), NER_METRICS, _rows(NER_METRICS, [
        ("iob-deberta-v3", ("IOB", "DeBERTa-v3"), (0.567, 0.575, 0.571, 0.754)),
        ("iob-medical-ner", ("IOB", "Medical-NER"), (0.559, 0.572, 0.565, 0.759)),
        ("span-biomedbert", ("Span", "BiomedBERT"), (0.556, 0.676, 0.610, 0.730)),
        ("span-sapbert", ("Span", "SapBERT"), (0.560, 0.658, 0.605, 0.731)),
        ("span-bluebert", ("Span", "BlueBERT"), (0.554, 0.657, 0.601, 0.726)),
        ("span-medcpt", ("Span", "MedCPT-Q-Enc."), (0.470, 0.682, 0.556, 0.678)),
        ("span-biolord", ("Span", "BioLORD-2023-C"), (0.555, 0.664, 0.605, 0.727)),
    ]))

NER_DATA = PaperTable(
    "ner-data", "NER training data (IOB, DeBERTa-v3)", "RaTEScore paper, Table 7 (SPEC §1.7)",
    "RaTE-NER test set (all)", ("training data",), NER_METRICS, _rows(NER_METRICS, [
        ("radiopaedia", "R. (Radiopaedia only)", (0.525, 0.558, 0.541, 0.727)),
        ("mimic", "M. (MIMIC-IV only)", (0.515, 0.550, 0.531, 0.744)),
        ("radiopaedia+mimic", "R.+M.", (0.567, 0.575, 0.571, 0.754)),
    ]))

PEARSON = ("Pearson",)
ENCODERS = PaperTable(
    "encoders", "Entity encoders of RaTEScore", "RaTEScore paper, Table 8 (SPEC §1.10)",
    "RaTE-Eval Task 1 (sentence level)", ("encoder",), PEARSON, _rows(PEARSON, [
        ("biolord", "BioLORD", (0.540,)),
        ("medcpt", "MedCPT", (0.498,)),
        ("radbert", "RadBERT", (0.519,)),
        ("cxr-bert", "CXR-BERT", (0.368,)),
        ("biovil-t", "BioViL-T", (0.465,)),
    ]))

KENDALL = ("Kendall",)
REXVAL = PaperTable(
    "rexval", "Metrics against radiologists' error counts (ReXVal)", "RaTEScore / ER²Score papers (SPEC §2)",
    "ReXVal (200 MIMIC-CXR report pairs, six radiologists)", ("metric",), KENDALL, _rows(KENDALL, [
        ("ratescore", "RaTEScore", (0.527,), "ratescore"),
        ("radgraph", "RadGraph F1", (0.515,), "radgraph"),
        ("bertscore", "BERTScore", (0.511,), "bertscore"),
        ("chexbert", "CheXbert", (0.499,), "chexbert"),
        ("bleu", "BLEU", (0.462,), "bleu4"),
        ("er2score", "ER²Score", (0.751,), "er2score"),
        ("radcliq-v1", "RadCliQ-v1", (0.631,), "radcliq"),
        ("green", "GREEN", (0.640,), "green"),
    ]))

RATE_EVAL_METRICS = ("Pearson", "Kendall", "Spearman", "synthetic Acc", "sentence Pearson")
RATE_EVAL = PaperTable(
    "rate-eval", "Metrics on RaTE-Eval", "RaTEScore paper, Table 5 (paragraph level, synthetic accuracy) "
    "and the sentence-level Pearson of §1.10", "RaTE-Eval Task 2 (paragraph), Task 3 (847 synthetic triads), "
    "Task 1 (sentence)", ("metric",), RATE_EVAL_METRICS, _rows(RATE_EVAL_METRICS, [
        ("radgraph", "RadGraph", (0.624, 0.439, 0.582, 0.463, None), "radgraph"),
        ("bertscore", "BERTScore", (0.599, 0.413, 0.555, 0.140, None), "bertscore"),
        ("chexbert", "CheXbert", (0.496, 0.294, 0.403, 0.666, None), "chexbert"),
        ("bleu", "BLEU", (0.409, 0.289, 0.404, 0.119, None), "bleu4"),
        ("rouge-l", "ROUGE-L", (0.572, 0.396, 0.567, 0.117, None), "rougeL"),
        ("spice", "SPICE", (0.623, 0.453, 0.605, 0.140, None), "spice"),
        ("meteor", "METEOR", (0.599, 0.422, 0.567, 0.168, None), "meteor"),
        ("ratescore", "RaTEScore", (0.653, 0.462, 0.608, 0.670, 0.54), "ratescore"),
    ]))

KENDALL_SPEARMAN = ("Kendall", "Spearman")
ER2_CRITERIA = PaperTable(
    "er2-criteria", "ER²Score sub-scores against each ReXVal error category", "ER²Score paper, Table 1 (SPEC §3.5)",
    "ReXVal", ("error category",), KENDALL_SPEARMAN, _rows(KENDALL_SPEARMAN, [
        ("false_prediction", "false prediction", (0.680, 0.842)),
        ("omission", "omission", (0.507, 0.673)),
        ("incorrect_location", "location", (0.246, 0.327)),
        ("incorrect_severity", "severity", (0.443, 0.569)),
        ("added_comparison", "comparison added", (0.433, 0.545)),
        ("omitted_comparison", "comparison omitted", (0.267, 0.345)),
        ("total", "total", (0.751, 0.910)),
    ]))

ER2_METRIC_COLUMNS = ("Kendall", "Spearman", "s/sample")
ER2_METRICS = PaperTable(
    "er2-metrics", "Metrics against ReXVal error counts", "ER²Score paper, Table 2 (SPEC §3.5)", "ReXVal",
    ("metric",), ER2_METRIC_COLUMNS, _rows(ER2_METRIC_COLUMNS, [
        ("bleu-4", "BLEU-4", (0.345, 0.475, None), "bleu4"),
        ("rouge-l", "ROUGE-L", (0.491, 0.663, None), "rougeL"),
        ("meteor", "METEOR", (0.464, 0.627, None), "meteor"),
        ("cider", "CIDEr", (0.499, 0.664, None), "cider"),
        ("bertscore", "BERTScore", (0.507, 0.677, None), "bertscore"),
        ("radgraph", "RadGraph F1", (0.516, 0.702, None), "radgraph"),
        ("semb", "semb", (0.494, 0.665, None), "semb"),
        ("radcliq-v1", "RadCliQ-v1", (0.631, 0.816, None), "radcliq"),
        ("green", "GREEN", (0.640, None, 1.06), "green"),
        ("er2score", "ER²Score", (0.751, 0.910, 0.04), "er2score"),
    ]))

ER2_BACKBONES = PaperTable(
    "er2-backbones", "ER²Score backbones", "ER²Score paper, Table 5 (SPEC §3.5)", "ReXVal", ("backbone",),
    KENDALL_SPEARMAN, _rows(KENDALL_SPEARMAN, [
        ("llama3", "Llama3", (0.751, 0.910)),
        ("vicuna-7b", "Vicuna-7b", (0.738, 0.901)),
        ("meditron", "Meditron", (0.709, 0.880)),
        ("gemma-7b", "Gemma-7b", (0.707, 0.876)),
        ("qwen1.5-7b", "Qwen1.5-7b", (0.684, 0.858)),
        ("phi-2", "Phi-2", (0.591, 0.784)),
    ]))

SPEARMAN_KENDALL = ("Spearman", "Kendall")
ER2_LOSS = PaperTable(
    "er2-loss", "ER²Score loss terms (MRE)", "ER²Score paper, loss ablation (SPEC §3.4)", "ReXVal",
    ("loss",), SPEARMAN_KENDALL, _rows(SPEARMAN_KENDALL, [
        ("total-only", "L_tot only", (0.899, 0.740)),
        ("individual-only", "L_ind only", (0.899, 0.738)),
        ("both", "L_ind + λ·L_tot", (0.910, 0.751)),
    ]))

ER2_LAMBDA = PaperTable(
    "er2-lambda", "ER²Score λ sweep (MRE loss)", "ER²Score paper, λ ablation (SPEC §3.4)", "ReXVal",
    ("λ",), SPEARMAN_KENDALL, _rows(SPEARMAN_KENDALL, [
        ("lambda-0.5", "0.5", (0.904, 0.743)),
        ("lambda-0.8", "0.8", (0.906, 0.746)),
        ("lambda-1.0", "1.0", (0.910, 0.751)),
        ("lambda-1.2", "1.2", (0.900, 0.740)),
        ("lambda-2.0", "2.0", (0.895, 0.735)),
        ("lambda-3.0", "3.0", (0.893, 0.729)),
    ]))

PAPER_TABLES: dict[str, PaperTable] = {t.name: t for t in (
    NER_SCHEMES, NER_DATA, ENCODERS, REXVAL, RATE_EVAL, ER2_CRITERIA, ER2_METRICS, ER2_BACKBONES, ER2_LOSS,
    ER2_LAMBDA)}
TABLE_NAMES = tuple(PAPER_TABLES)

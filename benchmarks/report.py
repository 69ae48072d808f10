"""docs/results.md, generated from the committed results JSONs.

    python -m benchmarks.report            # (re)write docs/results.md
    python -m benchmarks.report --check    # exit 1 and print a diff when docs/results.md is not what this writes

It reads ``benchmarks/results/*.json`` and nothing else: no model runs. Each JSON is claimed by the first
renderer whose file pattern matches it (:data:`RENDERERS`); a JSON that no renderer claims is named in the
page's last section, "Not rendered", so a new result never goes missing silently. Every table names the
file it came from and the machine that file records: the ``environment`` record the run wrote
(``write_result`` of ``benchmarks.results_file``, ``describe`` of ``radscore.environment``), or for a file
written before runs recorded one, what the file says of CPU class, GPU, precision and threads ("not
recorded" when it does not say). A table whose figures come from SYNTHETIC data says so in its heading.

The GPU-hours and CUDA memory tables are those of ``benchmarks.training.gpu_hours`` and
``benchmarks.training.memory_probe_table``, called by import on the same JSONs.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from radscore.atomic import refuse_unfinished, write_text_atomic
from radscore.environment import describe

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "results.md"
NOT_RECORDED = "not recorded"

STAT = {"pair_accuracy": "pair accuracy", "kendall": "Kendall", "pearson": "Pearson", "spearman": "Spearman",
        "triad_accuracy": "triad accuracy", "accuracy": "accuracy"}
METRIC = {"er2score": "ER²Score", "clinical_bleurt": "ClinicalBLEURT", "ratescore_tuned": "RaTEScore, tuned W"}
BASELINE = {"diff_hunks": "diff hunks", "negation_keywords": "negation cues", "unigram_f1": "unigram F1",
            "sentences_changed": "sentences changed", "bleu4": "BLEU-4", "shallow_ridge": "shallow learner"}
DEMO_ROWS = {"ratescore_tuned": "RaTEScore, tuned W", "ratescore_short": "RaTEScore, released short W",
             "ratescore_long": "RaTEScore, released long W", "shallow_ridge": "shallow learner",
             "bleu4": "BLEU-4", "bleu2": "BLEU-2", "rougeL": "ROUGE-L", "bertscore": "BERTScore",
             "diff_hunks": "difflib change hunks", "negation_keywords": "negation-cue count difference",
             "unigram_f1": "unigram F1", "sentences_changed": "sentences not kept word for word"}
SETS = {"rexval_mean_errors": "ReXVal-layout mean error counts (Kendall)",
        "rexval_mean_significant_errors": "ReXVal-layout mean significant error counts (Kendall)",
        "task2_test": "Task 2 test scores (Kendall)", "er2_radcliq_test_total": "ER² RadCliQ test totals (Kendall)",
        "er2_radcliq_test_pair_accuracy": "ER² RadCliQ test pairs (pair accuracy)",
        "bleurt_test": "ClinicalBLEURT test targets (Pearson)", "task3_triads": "Task 3 triads (accuracy, ties as misses)"}


# ---- small formatting helpers ------------------------------------------------------------------------------
def num(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.{digits}f}"


def sci(x) -> str:
    return "—" if x is None else f"{x:.1e}"


def ci(fig: dict | None) -> str:
    """``value [low, high]`` of a figure with a bootstrap CI."""
    if not fig or fig.get("value") is None or (isinstance(fig["value"], float) and math.isnan(fig["value"])):
        return "—"
    return f"{fig['value']:.3f} [{fig['low']:.3f}, {fig['high']:.3f}]"


def table(head: list[str], rows: list[list], align: str | None = None) -> str:
    """A markdown table; ``align``: one letter per column, ``l`` or ``r`` (default: first left, others right)."""
    align = align or "l" + "r" * (len(head) - 1)
    rule = "|" + "|".join("---" if a == "l" else "---:" for a in align) + "|"
    cell = lambda c: str(c).replace("|", "\\|")
    lines = ["| " + " | ".join(map(cell, head)) + " |", rule]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
    return "\n".join(lines)


def is_synthetic(node) -> bool:
    """True when a JSON says its data are SYNTHETIC: a top-level ``synthetic: true`` or the word in any text."""
    if isinstance(node, dict):
        if node.get("synthetic") is True:
            return True
        return any(is_synthetic(v) for v in node.values())
    if isinstance(node, list):
        return any(is_synthetic(v) for v in node)
    return isinstance(node, str) and "SYNTHETIC" in node


# ---- the machine a JSON records ----------------------------------------------------------------------------
def _threads(d: dict):
    if d.get("threads") is not None:
        return d["threads"]
    if d.get("torch_threads_single_process") is not None:
        return d["torch_threads_single_process"]
    gemm = d.get("gemm_measurements") or []
    return gemm[0].get("threads") if gemm and isinstance(gemm[0], dict) else None


def machine(d: dict, precision: str | None = None) -> str:
    """What a results JSON records of its machine: its ``environment`` record where it has one (:func:`recorded`),
    else what older files say, with "not recorded" for CPU class, GPU, precision and threads."""
    if isinstance(d.get("environment"), dict):
        return recorded(d["environment"], precision, d.get("load_average_1min_at_end", d.get("load_average_1min")))
    m = d.get("machine")
    device = d.get("device") or ("cuda" if d.get("accelerator") == "gpu" else None)
    nested = m if isinstance(m, dict) else {}
    cpu = (d.get("cpu") or (d.get("device_name") if device == "cpu" else None) or (m if isinstance(m, str) else None)
           or nested.get("cpu"))
    cores = d.get("cpu_count") or d.get("cpus") or d.get("cores") or (m.get("cpus") if isinstance(m, dict) else None)
    cls = d.get("hardware_class")
    emulation = d.get("isa_emulation") or {}
    if cls and emulation.get("host_hardware_class"):
        cls = f"{cls} (on a {emulation['host_hardware_class']} host)"
    native_bf16 = d["native_bf16"] if d.get("native_bf16") is not None else nested.get("avx512_bf16")
    if cls is None and native_bf16 is not None:
        cls = NOT_RECORDED + (" (native bf16: yes)" if native_bf16 else " (native bf16: no)")
    gpu = d.get("device_name") if device == "cuda" and d.get("device_name") else (
        "none (a CPU run)" if device == "cpu" else NOT_RECORDED)
    if d.get("accelerator") == "gpu" and not d.get("device_name"):
        gpu = NOT_RECORDED + " (accelerator gpu)"
    prec = precision or d.get("precision")
    threads = _threads(d)
    known = [cpu, cores, d.get("hardware_class"), prec, threads, d.get("torch"), device, d.get("accelerator")]
    if all(v is None for v in known):
        return "Machine: not recorded."
    parts = [f"CPU {cpu or NOT_RECORDED}" + (f", {cores} cores" if cores else ""),
             f"CPU class {cls or NOT_RECORDED}", f"GPU {gpu}", f"precision {prec or NOT_RECORDED}",
             f"threads {threads if threads is not None else NOT_RECORDED}"]
    if d.get("torch"):
        parts.append(f"torch {d['torch']}" + (f", CUDA {d['cuda']}" if d.get("cuda") else ""))
    python = d.get("python") or (m.get("python") if isinstance(m, dict) else None)
    if python and not str(python).startswith("/"):
        parts.append(f"Python {python}")
    load = d.get("load_average_1min_at_end", d.get("load_average_1min"))
    if load is not None:
        parts.append(f"1-minute load average {load:.1f}")
    return "Machine: " + "; ".join(parts) + "."


def recorded(env: dict, precision: str | None = None, load: float | None = None) -> str:
    """The machine line of a results JSON's ``environment`` record (``describe`` of ``radscore.environment``);
    ``precision``: the renderer's word where the record states none."""
    if precision and not env.get("precision"):
        env = {**env, "precision": precision}
    cores = f", {env['cpu_count']} cores" if env.get("cpu_count") else ""
    extra = f"; Python {env['python']}" if env.get("python") else ""
    if load is not None:
        extra += f"; 1-minute load average {load:.1f}"
    return f"Machine: {describe(env)}{extra} (recorded environment{cores})."


def entries(d: dict) -> list:
    """A JSON keyed by metric or run: its items without the ``environment`` record."""
    return [(k, v) for k, v in d.items() if k != "environment"]


# ---- blocks and renderers ----------------------------------------------------------------------------------
@dataclass
class Block:
    title: str
    sources: list[Path]
    body: str
    synthetic: bool = False
    precision: dict[str, str] = field(default_factory=dict)  # file name -> precision text, where the JSON has it elsewhere

    def render(self, data: dict[str, dict]) -> str:
        title = self.title + (" (SYNTHETIC)" if self.synthetic and "SYNTHETIC" not in self.title else "")
        names = [p.name for p in self.sources]
        links = ", ".join(f"[`{n}`](../benchmarks/results/{n})" for n in names)
        machines: dict[str, list[str]] = {}
        for n in names:
            machines.setdefault(machine(data[n], self.precision.get(n)), []).append(n)
        if len(machines) == 1:
            env = list(machines)
        else:
            env = ["- " + ", ".join(f"`{n}`" for n in ns) + f": {m}" for m, ns in machines.items()]
        return "\n".join([f"### {title}", "", f"Source: {links}.", "", *env, "", self.body.strip("\n"), ""])


@dataclass
class Renderer:
    section: str
    patterns: tuple[str, ...]
    make: Callable[[list[Path], dict[str, dict]], list[Block]]


# ---- the demo ----------------------------------------------------------------------------------------------
def demo(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows = []
        for key, fig in d.get("metrics", {}).items():
            rows.append([DEMO_ROWS.get(key, key), ci(fig.get("kendall")), ci(fig.get("pearson")),
                         num(fig.get("triad_accuracy"))])
        held = d.get("held_out", {})
        body = [d.get("note", ""), "",
                f"Held-out pairs: {held.get('pairs', '?')} over {held.get('groups', '?')} reference reports; "
                f"triads: {d.get('triads', '?')}. Cells: value [95% bootstrap CI over reference reports].", "",
                table(["system", "Kendall", "Pearson", "triad accuracy"], rows)]
        if d.get("unavailable"):
            body += ["", "Unavailable: " + "; ".join(f"{k}: {v}" for k, v in d["unavailable"].items()) + "."]
        if d.get("timings_s"):
            t = [[k, num(v / 60, 1)] for k, v in d["timings_s"].items()]
            t.append(["total", num(d.get("seconds_total", sum(d["timings_s"].values())) / 60, 1)])
            body += ["", table(["stage", "minutes"], t)]
        if d.get("measured"):
            body += ["", f"How it was run: {d['measured']}."]
        body += ["", "Per-modality figures and the tuned matrix are in the file."]
        blocks.append(Block(f"The demo's held-out table: {p.stem}", [p], "\n".join(body), is_synthetic(d)))
    return blocks


# ---- learned metrics ---------------------------------------------------------------------------------------
def learned_vs_shallow(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows, sets = [], []
        for metric, seeds in entries(d):
            for seed, e in seeds.items():
                for stat in e.get("test", {}):
                    rows.append([METRIC.get(metric, metric), seed, STAT.get(stat, stat), num(e["test"][stat]),
                                 num(e.get("shallow_test", {}).get(stat)), num(e.get("test_unseen", {}).get(stat)),
                                 num(e.get("shallow_test_unseen", {}).get(stat))])
                for key in ("set", "set_unseen"):
                    if e.get(key) and e[key] not in sets:
                        sets.append(e[key])
        body = ["Test figures of each learned run beside the shallow learner fitted on the same training rows; "
                "the unseen-domain columns come from runs trained on the unseen-domain split's training side.", "",
                table(["metric", "seed", "statistic", "learned", "shallow learner", "unseen: learned",
                       "unseen: shallow learner"], rows, "lllrrrr"),
                "", "Sets:", *[f"- {s}" for s in sets]]
        blocks.append(Block("Learned metrics beside the shallow learner", [p], "\n".join(body), is_synthetic(d)))
    return blocks


def learned_tables(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        b = d.get("bootstrap", {})
        out = [d.get("note", ""), "",
               f"Cells: value [{b.get('confidence', 0.95):.0%} bootstrap CI, {b.get('resamples', '?')} resamples of "
               f"the {b.get('unit', 'groups')}], and for a learned row the paired p-value of learned minus shallow "
               f"({b.get('p_value', 'see the file')})."]
        for metric, t in d.get("metrics", {}).items():
            stats, sides = t["statistics"], list(t["sides"])
            head = ["system"] + [f"{'unseen' if 'unseen' in s else 'in-distribution'}: {STAT.get(st, st)}"
                                 for s in sides for st in stats]
            rows = []
            seeds = sorted({k for s in sides for k in t["sides"][s]["learned"]})
            for seed in seeds:
                cells = []
                for s in sides:
                    e = t["sides"][s]["learned"].get(seed) or {}
                    for st in stats:
                        pv = (e.get("p_vs_shallow") or {}).get(st)
                        cells.append(ci(e.get(st)) + (f"; p {pv:.3f}" if pv is not None else ""))
                rows.append([f"{METRIC.get(metric, metric)}, {'seed ' + seed if seed.isdigit() else seed}", *cells])
            for key, name in (("shallow", "shallow learner"), ("bleu4", "BLEU-4"), ("best_trivial", "best trivial")):
                cells = []
                for s in sides:
                    fig = t["sides"][s].get(key) or {}
                    for st in stats:
                        c = ci(fig.get(st))
                        cells.append(c + (f" ({fig['which']})" if fig.get("which") and st == stats[0] else ""))
                rows.append([name, *cells])
            out += ["", f"**{METRIC.get(metric, metric)}**", "", table(head, rows), ""]
            for s in sides:
                side = t["sides"][s]
                n = f"{side.get('rows')} rows, {side.get('groups')} reference reports" + (
                    f", {side['pairs']} pairs" if side.get("pairs") else "")
                out.append(f"- {'unseen' if 'unseen' in s else 'in-distribution'}: {side.get('set')} ({n})")
        blocks.append(Block("Learned metrics with bootstrap CIs and paired p-values", [p], "\n".join(out),
                            is_synthetic(d)))
    return blocks


def _baseline_rows(runs: dict, label) -> list[list]:
    rows = []
    for run, sets in runs.items():
        for key, s in sets.items():
            if not isinstance(s, dict):
                continue
            cells = [num(s.get(b)) for b in BASELINE]
            note = f" ({s['shallow_skipped']})" if s.get("shallow_skipped") else ""
            rows.append([SETS.get(key, key), label(run), s.get("n", "—"), *cells[:-1], cells[-1] + note])
    return rows


def synth_baselines(paths, data):
    blocks = []
    head = ["set", "run", "test rows", *BASELINE.values()]
    for p in paths:
        d = data[p.name]
        if "generators" in d:  # sets made at larger sizes
            rows = _baseline_rows(d["runs"], lambda r: r)
            gens = [f"- `{k}`: seed {g.get('seed')}, generator {g.get('fingerprint')}, sizes "
                    + ", ".join(f"{s} {n:,}" for s, n in (g.get("sizes") or {}).items() if n)
                    for k, g in d["generators"].items()]
            body = [d.get("data", ""), "", "The shallow learner's version is not recorded in the file.", "",
                    table(head, rows, "llrrrrrrr"), "", "Sets:", *gens]
            blocks.append(Block("Trivial baselines and the shallow learner on larger sets", [p], "\n".join(body),
                                is_synthetic(d)))
            continue
        rows = _baseline_rows(d.get("runs", {}), lambda r: f"seed {r}")
        rows += _baseline_rows({"mean": d.get("mean", {})}, lambda r: "**mean**")
        order = list(SETS.values())
        rows.sort(key=lambda r: (order.index(r[0]) if r[0] in order else len(order), r[1] == "**mean**", r[1]))
        body = [d.get("data", ""), "", "Kendall tau-b, pair accuracy, Pearson or triad accuracy as the set names; "
                "`—`: no train split to fit the shallow learner on. The shallow learner's version is not recorded "
                "in the file.", "", table(head, rows, "llrrrrrrr")]
        rates = d.get("surface_rates", {})
        if rates:
            r_rows = []
            for seed, classes in rates.items():
                for cls, c in classes.items():
                    ops = [f"{op} {c[op]['share']:.2f}" for op in c if isinstance(c[op], dict)]
                    r_rows.append([f"seed {seed}", cls, c.get("edits", "—"), ", ".join(ops)])
            body += ["", "Surface operations of the generated edits (share of each class's edits):", "",
                     table(["seed", "class", "edits", "operations"], r_rows, "llrl")]
        blocks.append(Block("Trivial baselines and the shallow learner on the default sets", [p], "\n".join(body),
                            is_synthetic(d)))
    return blocks


def unseen_domain(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows = []
        for split in ("corpus_split", "unseen_domain_split"):
            s = d.get(split)
            if not s:
                continue
            cells = []
            for key in ("corpus_words", "er2_radcliq", "clinical_bleurt", "task2"):
                c = s.get(key, {})
                cells.append(f"{c.get('unseen_running', float('nan')):.1%} / {c.get('unseen_types', float('nan')):.1%}")
            rows.append([split.replace("_", " "), *cells])
        body = [d.get("what", ""), "", "Cells: share by running token / by distinct word.", "",
                table(["split", "corpus words", "ER² RadCliQ", "ClinicalBLEURT", "Task 2"], rows)]
        blocks.append(Block("How unseen the unseen-domain test is", [p], "\n".join(body), is_synthetic(d)))
    return blocks


def what_learned_adds(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows = []
        for run, r in d.get("runs", {}).items():
            k, s = r.get("kendall", {}), r.get("stacked_kendall", {})
            rows.append([f"`{run}`", r.get("dev_rows"), num(k.get("learned")), num(k.get("shallow")),
                         num(k.get("counts")), num(k.get("frozen_edit")), num(s.get("shallow")),
                         num(s.get("shallow+learned")), num(r.get("learned_adds_to_shallow")),
                         num(s.get("counts+learned"))])
        body = [d.get("data", ""), "", "Columns: Kendall of the learned run, the shallow learner, a ridge on the "
                "untrained counts, a ridge on frozen embeddings of the edit; then stacks fitted by grouped "
                "cross-validation on the validation rows.", "",
                table(["run", "val rows", "learned", "shallow", "counts", "frozen edit", "stack: shallow",
                       "stack: shallow + learned", "learned adds", "stack: counts + learned"], rows)]
        blocks.append(Block("What the learned score adds to the shallow learner", [p], "\n".join(body),
                            is_synthetic(d)))
    return blocks


def _point_order(key: str):
    try:
        return (0, float(key), "")
    except ValueError:
        return (1, 0.0, key)


def learning_curve(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        for metric, seeds in entries(d):
            stats, rows, trends, empty, args, sets = None, [], [], [], [], []
            for seed in sorted(seeds):
                for key in sorted(seeds[seed], key=_point_order):
                    e = seeds[seed][key]
                    if key == "set":
                        if e not in sets:
                            sets.append(e)
                        continue
                    if key.startswith("trend"):
                        if not e:
                            empty.append(f"seed {seed} `{key}`")
                        for st, t in e.items():
                            trends.append([seed, f"`{key}`", STAT.get(st, st), f"{t['slope_per_doubling']:+.3f}",
                                           t.get("points"), f"{t['rows_at_crossing']:,}"])
                        continue
                    stats = stats or list(e.get("val", {}))
                    cells = []
                    for st in stats:
                        by_epoch = ", ".join(num(x.get(st)) for x in e.get("epochs", []))
                        cells += [by_epoch, num(e.get("shallow_val", {}).get(st)), num(e.get("gap", {}).get(st))]
                    rows.append([seed, f"`{key}`", f"{e.get('train_rows', 0):,}", e.get("max_epochs"), *cells])
                    if e.get("fit_arguments"):
                        args.append(f"- seed {seed} `{key}`: " + " ".join(f"`{a}`" for a in e["fit_arguments"]))
            head = ["seed", "point", "training rows", "epochs"]
            for st in stats or []:
                head += [f"val {STAT.get(st, st)} by epoch", "shallow learner", "gap"]
            body = ["Validation figures by training share or variant (a point `0.5` trains on half the training "
                    "reports); each point's shallow learner is fitted on that point's training rows.", "",
                    table(head, rows, "llrr" + "lrr" * len(stats or []))]
            if args:
                body += ["", "Points trained with extra arguments:", *args]
            if trends:
                body += ["", "Trend of the gap over log2(training rows), extrapolated to where it reaches 0:", "",
                         table(["seed", "curve", "statistic", "slope per doubling", "points", "rows at crossing"],
                               trends, "lllrrr")]
            if empty:
                body += ["", "No trend (fewer than two points): " + ", ".join(empty) + "."]
            if sets:
                body += ["", "Sets: " + "; ".join(sets)]
            blocks.append(Block(f"Learning curve: {METRIC.get(metric, metric)}", [p], "\n".join(body),
                                is_synthetic(d)))
    return blocks


def learning_curve_shallow(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows = []
        for key, e in entries(d):
            metric, fingerprint = key.split("|")[:2]
            split = e.get("set", {}).get("split", "corpus split")
            for part in ("shallow_val", "shallow_test"):
                for st, v in sorted(e.get(part, {}).items()):
                    rows.append([METRIC.get(metric, metric), f"{fingerprint} ({split})", part.split("_")[1],
                                 STAT.get(st, st), num(v)])
        body = ["The shallow learner's figures cached by metric, generator fingerprint and sizes (the sets are "
                "SYNTHETIC: `python -m data synth` seed 0).", "",
                table(["metric", "set", "split", "statistic", "shallow learner"], rows, "llllr")]
        blocks.append(Block("Shallow learner cache of the learning curve", [p], "\n".join(body), True))
    return blocks


def er2_truncation(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows = []
        for run, r in entries(d):
            for part, x in r.get("parts", {}).items():
                rows.append([f"`{run}`", part, x.get("pairs"), num(x["model"].get("pair_accuracy")),
                             num(x["shallow"].get("pair_accuracy")), num(x["model"].get("kendall")),
                             num(x["shallow"].get("kendall"))])
        body = ["ER²Score on validation prompts cut at `max_length` (`cut`) or not (`whole`), beside the shallow "
                "learner (the file does not record its version).", "",
                table(["run", "prompts", "pairs", "model pair acc.", "shallow pair acc.", "model Kendall",
                       "shallow Kendall"], rows, "llrrrrr")]
        blocks.append(Block("ER²Score and truncated prompts", [p], "\n".join(body), is_synthetic(d)))
    return blocks


def er2_levels(paths, data):
    rows = []
    for p in paths:
        d = data[p.name]
        rows.append([f"`{p.stem}`", d.get("n"), d.get("references"), num(d.get("total_sd")),
                     num(d.get("mean_within_reference_sd")), num(d["model"]["kendall"]),
                     num(d["model"]["kendall_within_reference"]), num(d["diff_hunks"]["kendall"]),
                     num(d["diff_hunks"]["kendall_within_reference"])])
    body = ["ER²Score's Kendall across all test candidates and within each reference (scores and totals centred "
            "per reference), beside the difflib change-hunk counter. The files record their export and rows "
            "paths but not the generator version or loss settings.", "",
            table(["file", "candidates", "references", "total SD", "mean SD within a reference", "model Kendall",
                   "model within", "hunks Kendall", "hunks within"], rows)]
    return [Block("ER²Score across and within references", paths, "\n".join(body),
                  any(is_synthetic(data[p.name]) for p in paths))]


# ---- scoring -----------------------------------------------------------------------------------------------
def ratescore_bench(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows, var_rows = [], []
        for name, w in d.get("workloads", {}).items():
            released = (f"{num(w.get('released_best_pairs_per_s'), 2)} (bs {w.get('released_best_batch_size')})"
                        if w.get("released_best_pairs_per_s") is not None else "not run")
            ratio = f"{w['ratio_vs_released_best']:.1f}×" if w.get("ratio_vs_released_best") else "—"
            eq = w.get("ratio_vs_released_best_at_equal_throughput")
            delta = sci(w.get("max_abs_delta_vs_released"))
            if w.get("tie_ambiguous_pairs"):
                delta += f" ({w['tie_ambiguous_pairs']} tie-ambiguous left out)"
            texts = (f"{w['texts_with_released_sentence_lists']}/{w['texts']}" if w.get("texts") else "—")
            rows.append([name, w.get("pairs"), f"{w.get('repetition_factor', 0):.2f}×", released,
                         num(w.get("radscore_pairs_per_s"), 1), ratio, f"{eq:.1f}×" if eq else "—", delta, texts,
                         f"{w['radscore_distance_to_floor']:.2f}×" if w.get("radscore_distance_to_floor") else "—",
                         f"{w['released_best_distance_to_floor']:.2f}×" if w.get("released_best_distance_to_floor")
                         else "—"])
            for v, x in (w.get("variants") or {}).items():
                if "skipped" in x:
                    var_rows.append([name, v, "skipped: " + x["skipped"], "", ""])
                    continue
                vs = (f"{x['ratio_vs_radscore_fp32']:.2f}× radscore fp32" if x.get("ratio_vs_radscore_fp32")
                      is not None else f"{x['ratio_vs_released_best']:.2f}× released")
                var_rows.append([name, v, f"{num(x.get('pairs_per_s'), 1)} pairs/s on {x.get('pairs')} pairs", vs,
                                 sci(x.get("max_abs_delta_vs_fp32"))])
        body = [f"NER `{d.get('ner')}`, encoder `{d.get('encoder')}`, matrix `{d.get('matrix', '?')}`; the released "
                f"package {'ran' if (d.get('released_package') or {'ran': True}).get('ran') else 'did not run: ' + d['released_package'].get('reason', '')}.",
                "", table(["workload", "pairs", "repetition", "released best pairs/s", "radscore pairs/s", "ratio",
                           "ratio at equal throughput", "max |Δ| vs released", "texts with released sentences",
                           "radscore / fp32 floor", "released / floor"], rows, "lrrrrrrlrrr")]
        if var_rows:
            body += ["", "Opt-in variants:", "", table(["workload", "variant", "speed", "against", "max |Δ| vs fp32"],
                                                       var_rows, "llllr")]
        mem = [[k, v.get("ner"), num(v.get("pairs_per_s"), 0), num(v.get("peak_rss_mb"), 0)]
               for k, v in d.items() if k.startswith("memory_") and isinstance(v, dict)]
        if mem:
            body += ["", "Memory over a long run (tiny random models, the same streaming code):", "",
                     table(["run", "models", "pairs/s", "peak RSS MB"], mem, "llrr")]
        prec = "fp32 (the exact default); opt-in variants as named"
        blocks.append(Block(f"radscore against the released package: {p.stem}", [p], "\n".join(body),
                            precision={p.name: prec}))
    return blocks


def ratescore_profile(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows = []
        for name, w in d.get("workloads", {}).items():
            st = w.get("stages", {})
            fwd = sum(v["share"] for k, v in st.items() if k.endswith("forward"))
            ops = w.get("operators", {})
            mm = ops.get("matmul_seconds")
            share = mm / (mm + ops.get("other_aten_seconds", 0)) if mm else None
            f = w.get("forward", {})
            pad = " / ".join(num(f[k].get("padding_factor"), 2) for k in ("NER", "encoder") if k in f)
            rows.append([name, w.get("pairs"), num(w.get("pairs_per_s"), 1), f"{w.get('distance_to_floor', 0):.2f}×",
                         f"{fwd:.1%}", f"{1 - fwd:.1%}", f"{share:.1%}" if share else "—", pad])
        body = [f"GEMM throughput for the floor: {d.get('gemm_flops_per_s_for_floor', 0) / 1e9:.0f} GFLOP/s.", "",
                table(["workload", "pairs", "pairs/s", "× fp32 floor", "forward passes", "outside them",
                       "matrix products / operator time", "padding (NER / encoder)"], rows)]
        blocks.append(Block(f"Where radscore's time goes: {p.stem}", [p], "\n".join(body),
                            precision={p.name: "fp32"}))
    return blocks


def splitter(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows = [[k, s.get("texts"), s.get("identical"), f"{s.get('identical_share', 0):.1%}"]
                for k, s in d.get("sets", {}).items()]
        t = d.get("timing", {})
        v = d.get("versions", {})
        body = ["radscore's RuSH splitter against the released package's (" +
                ", ".join(f"{k} {x}" for k, x in v.items()) + ").", "",
                table(["texts", "count", "identical sentence lists", "share"], rows), "",
                table(["timing", "ms per report"], [["released package", num(t.get("released_ms_per_report"), 2)],
                                                    ["radscore, first pass", num(t.get("ms_per_report_first_pass"), 2)],
                                                    ["radscore, warm", num(t.get("ms_per_report_warm"), 2)]])]
        blocks.append(Block("Sentence splitter parity and speed", [p], "\n".join(body)))
    return blocks


def splitter_soak(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        body = [f"{d.get('sentences', 0):,} sentences of {d.get('report_texts', 0):,} report-like texts "
                f"({d.get('texts')}); automaton limit {d.get('max_states'):,} states.", "",
                table(["resident memory", "MiB"], [["after warm-up", num(d.get("rss_after_warmup_mib"), 2)],
                                                    ["at the end", num(d.get("rss_last_mib"), 2)],
                                                    ["growth after warm-up", num(d.get("rss_growth_after_warmup_mib"), 2)]]),
                "", "Per-sample memory and automaton restarts are in the file."]
        blocks.append(Block("Sentence splitter memory over a long run", [p], "\n".join(body), is_synthetic(d)))
    return blocks


def ray(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows = [["one process, default chunks", num(d.get("single_default_chunks_pairs_per_s"), 1), "reference"],
                [f"one process, chunks of {d.get('chunk_size')}", num(d.get("single_same_chunks_pairs_per_s"), 1),
                 "identical to Ray's" if d.get("identical_to_single_same_chunks") else "differs from Ray's"],
                [f"Ray, {d.get('actors')} actors, chunks of {d.get('chunk_size')}", num(d.get("ray_pairs_per_s"), 1),
                 f"max |Δ| {sci(d.get('max_abs_diff_vs_default_chunks'))} against the default chunks"]]
        body = [f"{d.get('pairs'):,} pairs of {d.get('data')}; encoder {d.get('encoder')}.", "",
                table(["run", "pairs/s", "scores"], rows, "lrl")]
        blocks.append(Block("Ray against one process", [p], "\n".join(body)))
    return blocks


def kill_test(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        jobs = d.get("jobs", {})

        def launcher(j):
            return (j.get("run") or {}).get("launcher") or d.get("launcher")

        rows = [[name, launcher(j), j.get("kills"), j.get("finished_before_kill"), j.get("corrupted_outputs"),
                 j.get("equal_to_uninterrupted"), j.get("largest_persist_step") or "-",
                 num(j.get("largest_seconds_since_persist"), 1),
                 "-" if not j.get("refusal") else ("one line, names the file" if j["refusal"].get("ok") else "NOT OK"),
                 num(j.get("wall_seconds"), 1)] for name, j in jobs.items()]
        body = [f"`python -m benchmarks.kill_test`: {d.get('kills_per_job')} SIGKILLs per job at seeded random points "
                f"(seed {d.get('seed')}; jobs merged from other runs keep their own seed and launcher in the file), "
                f"then a resume or a rerun; overall {'passed' if d.get('ok') else 'FAILED'}."]
        if d.get("complete") is False:
            body.append(f"**Not complete**: still to run: {', '.join(d.get('still_to_run') or [])}.")
        body += ["", table(["job", "launcher", "kills", "finished before the kill", "corrupted outputs",
                            "equal to uninterrupted", "largest persist step", "largest run time lost, s",
                            "changed input refused", "wall s"], rows, "llrrrrrrlr")]
        same = []
        for name, j in jobs.items():
            comps = [e["comparison"] for e in j.get("episodes", []) if e.get("comparison")]
            if not comps:
                continue
            if "spread" in j or "largest_metric_abs_diff" in comps[0]:
                spread = j.get("spread") or {}
                same.append([name, f"test metrics: {len(j['reference'].get('metrics', {}))}",
                             sci(spread.get("largest_metric_abs_diff")) if spread else "not measured",
                             sci(max(c["largest_metric_abs_diff"] for c in comps)),
                             f"weights {sum(bool(c.get('weights_bit_identical')) for c in comps)}/{len(comps)}"])
            elif "best_value" in comps[0]:
                same.append([name, f"best value {j['reference']['best_value']:.6f} in "
                             f"{j['reference']['complete_trials']} trials", "-",
                             sci(max(abs(c["best_value"] - c["reference_best_value"]) for c in comps)),
                             f"affinity matrix {sum(c['affinity_matrix_bit_identical'] for c in comps)}/{len(comps)}"])
            else:
                same.append([name, "files" if "files" in comps[0] else "printout", "-", "-",
                             f"bytes {sum(c['equal'] for c in comps)}/{len(comps)}"])
        if same:
            body += ["", "Training jobs: each resumed or rerun result against the uninterrupted run's (spread: "
                     "the largest difference between two uninterrupted runs).", "",
                     table(["job", "compared", "spread of two runs", "largest difference after kills",
                            "bit-identical"], same, "lllrl")]
        body += ["", "Each episode's kill times, what was on disk, where each resume started and the refusal "
                 "messages are in the file."]
        blocks.append(Block("Kill test", [p], "\n".join(body), is_synthetic(d)))
    return blocks


def resume(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        body = [f"`radscore score --out` on {d.get('pairs_source')}."]
        r = d.get("resume")
        if r:
            rows = [["full run", num(r["full"]["seconds"], 1), r["full"].get("records_persisted")],
                    [f"killed at {r.get('kill_at_fraction_of_full_time')} of the full time",
                     num(r["killed"]["seconds"], 1), r["killed"].get("records_persisted")],
                    ["--resume", num(r["resume"]["seconds"], 1), r["resume"].get("records_persisted")]]
            body += ["", f"Resume on {r.get('pairs'):,} pairs (NER `{r.get('ner', 'given')}`, {r.get('threads')} threads, "
                     f"chunks of {r['full'].get('chunk_size')}): the resumed run took "
                     f"{num(r.get('resume_over_full_time'))} of the full run's time; resumed file equal to the full "
                     f"run's byte for byte: {'yes' if r.get('resumed_equals_full_bytes') else 'NO'}.", "",
                     table(["run", "seconds", "records complete"], rows)]
        m = d.get("memory")
        if m:
            rows = [[k, v.get("chunk_size"), num(v.get("input_mib"), 1), num(v.get("peak_rss_mib"), 1),
                     num(v.get("seconds"), 1)] for k, v in m.get("runs", {}).items()]
            body += ["", f"Peak resident memory by corpus size ({m.get('models')}; {m.get('threads')} thread); "
                     f"the largest over the smallest: "
                     f"{num(m.get('peak_rss_100000_over_1000'))}.",
                     "", table(["pairs", "chunk", "input MiB", "peak RSS MiB", "seconds"], rows)]
        blocks.append(Block("Streaming and resumed scoring", [p], "\n".join(body), is_synthetic(d)))
    return blocks


def autocast(paths, data):
    rows = []
    for p in paths:
        d = data[p.name]
        pps = d.get("pairs_per_s", {})
        casts = d.get("casts_per_ner_pass", {})
        rows.append([f"`{p.stem}`", d.get("pairs"), d.get("batch_size"), num(pps.get("fp32"), 1), num(pps.get("bf16"), 1),
                     num(pps.get("bf16, inference_mode"), 1), f"{d.get('bf16_over_fp32_speed', 0):.2f}×",
                     f"{d.get('cache_speedup', 0):.2f}×",
                     f"{casts.get('bf16', {}).get('six_batches')} / {casts.get('bf16, inference_mode', {}).get('six_batches')}",
                     sci(d.get("max_abs_delta_bf16_vs_fp32"))])
    body = ["bf16 autocast with its cache of cast weights (under `no_grad`) and without it (under "
            "`inference_mode`), against fp32; best of the timed passes.", "",
            table(["file", "pairs", "batch", "fp32 pairs/s", "bf16 pairs/s", "bf16, inference_mode", "bf16 / fp32",
                   "cache speed-up", "casts per six-batch NER pass (cached / not)", "max |Δ| bf16 vs fp32"], rows)]
    return [Block("bf16 autocast and its weight cache", paths, "\n".join(body),
                  precision={p.name: "fp32 and bf16 autocast, side by side" for p in paths})]


# ---- training cost and memory ------------------------------------------------------------------------------
def train_step(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows = [[k, num(v.get("forward")), num(v.get("backward")), num(v.get("optimizer")), num(v.get("step"))]
                for k, v in d.get("settings", {}).items()]
        body = [f"One optimizer step of the sample IOB model, batch {d.get('batch')} "
                f"({num(d.get('padded_tokens_per_batch'), 1)} padded tokens), mean of {d.get('steps')} steps; seconds.",
                "", table(["setting", "forward", "backward", "optimizer", "step"], rows)]
        blocks.append(Block("A training step of the sample NER model", [p], "\n".join(body),
                            precision={p.name: "fp32 and bf16 autocast, side by side"}))
    return blocks


def tune(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        pre = d.get("precompute", {})
        rows = [["precompute (entities and embeddings, once)", f"{num(d.get('precompute_seconds'), 1)} s"],
                ["distinct reports / entity texts", f"{pre.get('distinct_reports')} / {pre.get('distinct_entity_texts')}"],
                ["one objective evaluation", f"{num(d.get('objective_ms'), 3)} ms"],
                ["search, SQLite storage", f"{num(d.get('search_sqlite_trials_per_second'), 1)} trials/s"],
                ["search, in memory", f"{num(d.get('search_memory_trials_per_second'), 1)} trials/s"],
                ["rescoring with radscore instead", f"{num(d.get('rescore_radscore_seconds_per_trial'), 1)} s a trial"],
                ["speed-up of the objective over rescoring", f"{num(d.get('speedup_objective_vs_radscore'), 0)}×"]]
        body = [f"The TPE search of `tune-weights` on {d.get('pairs'):,} pairs, {d.get('trials'):,} trials; "
                f"NER `{d.get('ner')}`, encoder `{d.get('encoder')}`.", "", table(["step", "cost"], rows, "lr")]
        blocks.append(Block("Weight search speed", [p], "\n".join(body), is_synthetic(d)))
    return blocks


def threads(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows = []
        for job, res in d.get("jobs", {}).items():
            counts = " / ".join(f"{r['threads']} ({r.get('threads_recorded')})" for r in res.get("runs", []))
            moved = [f"{k}: {v:.1e}" if isinstance(v, (int, float)) else f"{k}: {v}"
                     for k, v in sorted(res.get("figures_that_differ", {}).items())]
            weights = [f"{n} threads: largest {v['max_abs']:.1e}, {100 * v['share_differing']:.0f}% of weights"
                       for n, v in (res.get("weights_vs_first") or {}).items() if v]
            shas = {r.get("weights_sha256") for r in res.get("runs", [])}
            verdict = ("not compared (no model.safetensors)" if shas == {None} else "identical"
                       if res.get("weights_identical") else "; ".join(weights) or "differ")
            rows.append([job, counts, verdict,
                         f"{res.get('figures_compared')} compared; "
                         + ("all identical" if not moved else "differ: " + ", ".join(moved))])
        body = [f"The seeded sample trainings, shortened to one epoch of {d.get('batches')} batches, run once per thread "
                f"count (asked for, and used by torch in brackets); weights of the exports and every test figure compared "
                f"with the first thread count's.", "",
                table(["job", "threads (used)", "weights", "test figures"], rows)]
        blocks.append(Block("The same seed at several thread counts", [p], "\n".join(body)))
    return blocks


def memory_probe_cpu(paths, data):
    from benchmarks.training import memory_probe_table

    body = ["`python -m train memory-probe` on the CPU: autograd's saved tensors over the estimate's activation "
            "terms, each phase's allocator peak over that phase's estimate, and the step's peak (the table of "
            "`benchmarks.training.memory_probe_table`).", "", memory_probe_table.table([str(p) for p in paths])]
    return [Block("Training memory measured over estimated, CPU", paths, "\n".join(body))]


def memory_probe_cuda(paths, data):
    body = ["`python -m train memory-probe --device cuda`: measured `max_memory_allocated` / estimate (GiB) and "
            "their ratio, per phase and for the step's peak; then the GPU-hours of the papers' runs predicted "
            "from the probes' tokens/s (an upper bound of the training steps alone). Tables of "
            "`benchmarks.training.memory_probe_table` and `benchmarks.training.gpu_hours`."]
    try:
        from benchmarks.training import gpu_hours, memory_probe_table

        body += ["", memory_probe_table.cuda_table([str(p) for p in paths]), "",
                 gpu_hours.table([gpu_hours.predict(data[p.name]) for p in paths])]
    except (Exception, SystemExit) as e:  # the scripts read the probes' configs, which may have moved
        body += ["", f"Not made here: {type(e).__name__}: {e}"]
    return [Block("Training memory and GPU-hours, CUDA", paths, "\n".join(body))]


def rehearsal(paths, data):
    blocks = []
    for p in paths:
        d = data[p.name]
        rows = []
        for c in d.get("configs", []):
            stages = c.get("stages", {})
            ok = "all ok" if stages and all(v == "ok" for v in stages.values()) else \
                ", ".join(f"{k}: {v}" for k, v in stages.items())
            rows.append([f"`{c.get('config')}`", c.get("real_model", ""), ok, num(c.get("seconds"), 1),
                         f"{c.get('params_real', 0) / 1e6:,.1f}M", f"{c.get('trainable_params_real', 0) / 1e6:,.1f}M",
                         num(c.get("gpu_memory_estimate_gib"), 1) if c.get("gpu_memory_estimate_gib") else "—"])
        body = ["REHEARSAL: the seconds are the stand-ins'; parameter counts and the memory estimate are the real "
                "models'.", "",
                table(["config", "real model", "stages", "s", "params (real)", "trainable (real)", "GPU GiB (est.)"],
                      rows, "lllrrrr")]
        blocks.append(Block(f"Rehearsal report: {p.stem}", [p], "\n".join(body)))
    return blocks


SECTIONS = {
    "demo": ("Demo", "`make demo` on SYNTHETIC data: the held-out table of the RaTEScore pipeline."),
    "learned": ("Learned metrics", "ER²Score, ClinicalBLEURT and the tuned RaTEScore beside the shallow learner "
                "and the trivial baselines. Every set here is SYNTHETIC: these figures check that the pipelines "
                "learn; they are not the papers' results."),
    "ner": ("NER", "No results JSON records the sample NER models' test figures: a run writes them to "
            "`checkpoints/ner/<config>/test_metrics.json` and its export's `metrics.json`. A training step's "
            "cost is under [Training cost and memory](#training-cost-and-memory)."),
    "scoring": ("Scoring speed and parity", "radscore against the released `ratescore` 0.6.0 package: speed, "
                "score differences and sentence lists; streaming and resumed scoring runs; the kill test of the scoring "
                "and training jobs."),
    "training": ("Training cost and memory", "A training step, the weight search, the memory model against "
                 "measured peaks, the predicted GPU-hours and the rehearsal on a GPU."),
}

RENDERERS = [
    Renderer("demo", ("demo_report*.json",), demo),
    Renderer("learned", ("learned_vs_shallow.json",), learned_vs_shallow),
    Renderer("learned", ("learned_tables.json",), learned_tables),
    Renderer("learned", ("synth_baselines*.json",), synth_baselines),
    Renderer("learned", ("unseen_domain.json",), unseen_domain),
    Renderer("learned", ("what_learned_adds.json",), what_learned_adds),
    Renderer("learned", ("learning_curve.json",), learning_curve),
    Renderer("learned", ("learning_curve_shallow.json",), learning_curve_shallow),
    Renderer("learned", ("er2_truncation.json",), er2_truncation),
    Renderer("learned", ("er2_levels*.json",), er2_levels),
    Renderer("scoring", ("ratescore_profile*.json",), ratescore_profile),
    Renderer("scoring", ("ratescore*.json",), ratescore_bench),
    Renderer("scoring", ("splitter.json",), splitter),
    Renderer("scoring", ("splitter_soak.json",), splitter_soak),
    Renderer("scoring", ("ray.json",), ray),
    Renderer("scoring", ("autocast*.json",), autocast),
    Renderer("scoring", ("resume.json",), resume),
    Renderer("scoring", ("kill_test.json",), kill_test),
    Renderer("training", ("train_step.json",), train_step),
    Renderer("training", ("tune.json",), tune),
    Renderer("training", ("threads.json",), threads),
    Renderer("training", ("memory_probe_cpu_*.json",), memory_probe_cpu),
    Renderer("training", ("memory_probe_cuda_*.json",), memory_probe_cuda),
    Renderer("training", ("rehearsal_*report.json",), rehearsal),
]


def load_result(path: Path):
    """One results JSON, or a one-line ValueError naming it when it is not whole: a run of it has not
    completed (``refuse_unfinished`` of ``radscore.atomic``) or it does not parse (a benchmark killed
    while writing it before its writes were atomic)."""
    refuse_unfinished(path)
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not whole JSON ({err.__class__.__name__}); rerun the benchmark that "
                         "writes it") from None


def render(results: Path = RESULTS) -> str:
    """The whole page from the JSONs in ``results``."""
    paths = sorted(Path(results).glob("*.json"))
    data = {p.name: load_result(p) for p in paths}
    claimed: dict[int, list[Path]] = {}
    unclaimed = []
    for p in paths:
        for i, r in enumerate(RENDERERS):
            if any(fnmatch.fnmatch(p.name, pat) for pat in r.patterns):
                claimed.setdefault(i, []).append(p)
                break
        else:
            unclaimed.append(p.name)
    out = ["# Results", "",
           "<!-- Generated by `python -m benchmarks.report` (`make results`) from benchmarks/results/*.json: "
           "do not edit by hand. -->", "",
           "Every figure of the project's measurements, one table per results file, each with the file it came "
           "from and the machine that file records. Tables on SYNTHETIC data say so in their heading: those "
           "figures come from sample reports edited by `python -m data synth` with simulated ratings, and are "
           "never the papers' benchmarks. Regenerate with `make results`; `python -m benchmarks.report --check` "
           "fails when this page and the JSONs disagree.", ""]
    for key, (title, intro) in SECTIONS.items():
        out += [f"## {title}", "", intro, ""]
        for i, r in enumerate(RENDERERS):
            if r.section == key and i in claimed:
                out += [b.render(data) for b in r.make(claimed[i], data)]
    out += ["## Not rendered", ""]
    if unclaimed:
        out += ["Results files that no renderer of `benchmarks/report.py` reads yet:", "",
                *[f"- [`{n}`](../benchmarks/results/{n})" for n in unclaimed], ""]
    else:
        out += ["None: every results file has a table above.", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="do not write: exit 1 with a diff when the page differs")
    ap.add_argument("--out", default=str(PAGE), help="the page (default docs/results.md)")
    ap.add_argument("--results", default=str(RESULTS), help="the folder of results JSONs")
    a = ap.parse_args(argv)
    text, out = render(Path(a.results)), Path(a.out)
    if a.check:
        old = out.read_text() if out.is_file() else ""
        if old == text:
            return 0
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                   f"{out} (committed)", f"{out} (from the JSONs)"))
        print(f"{out} differs from what `python -m benchmarks.report` writes: run `make results`", file=sys.stderr)
        return 1
    write_text_atomic(out, text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

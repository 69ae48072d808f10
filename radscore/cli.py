"""The ``radscore`` command.

    radscore score   [--metric ratescore|bleurt|er2] --candidates FILE --references FILE
                     [--out scores.jsonl|scores.csv] [--id-column NAME] [--explain [--html FILE]]
    radscore compare [--metric ...] --references FILE --candidates NAME=FILE --candidates NAME=FILE ...
                     [--out-dir DIR]

Inputs hold one report per record: a text file (one report per line; an empty line is an empty
report), JSON lines (``--field NAME``) or CSV (``--column NAME``); ``--reference-field`` and
``--reference-column`` name a different field for the references, ``--id-column`` the field or
column holding each record's id (when both files carry it, the ids must agree line by line).

Models: RaTEScore with no ``--ner`` is the official recipe (the released NER and BioLORD encoder
with the released package's sentence splitting; they are downloaded on first use); ``--ner
EXPORT`` scores with a trained export. Either way ``--splitter`` defaults to ``rush``, radscore's
reimplementation of the released splitter (its rules come from medspacy's wheel, fetched once).
ClinicalBLEURT and ER²Score need ``--model EXPORT`` (a folder or a Hub id). ``--metric`` is any
metric of :mod:`radscore.registry` (ratescore, bleurt, er2 and those registered since).

``score`` writes one record per pair (to ``--out``: CSV when it ends in ``.csv``, else JSON lines;
to stdout without ``--out``) holding the index, the id and every sub-score; ER²Score records also
carry the scoring system's direction (``higher_is_better``). Beside ``--out`` it writes
``<out>.meta.json``: the scorer's signature (models with Hub revision or weights hash, matrix,
modes, radscore version), the inputs and the summary. The summary (n, mean, std, 95% bootstrap
CI) goes to stderr.

``compare`` scores every system (``--candidates NAME=FILE``, repeated; ``--system`` is its old
name) with one scorer and prints, per system, the mean with its 95% bootstrap CI and, for every
other system against the first (the baseline), the mean difference with the paired-bootstrap and
approximate-randomisation p-values (:mod:`radscore.stats`); with ``--out-dir`` it also writes
``compare.json``, ``compare.md``, each system's scores and ``differences.png`` (the per-pair
differences against the baseline).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from radscore import registry
from radscore.records import score_records  # noqa: F401  (part of this module's interface)
from radscore.stats import bootstrap_ci, summary  # noqa: F401  (part of this module's interface)


# ---- reading ------------------------------------------------------------------------------------
def read_records(path: str, field: str | None = None, column: str | None = None,
                 id_name: str | None = None) -> tuple[list[str], list[str] | None]:
    """The reports of a text, JSONL or CSV file and, with ``id_name``, their ids; errors name the
    file, line and problem."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{path}: no such file")
    if field and column:
        raise ValueError("give --field (JSON lines) or --column (CSV), not both")
    text = p.read_text(encoding="utf-8")
    if field:
        reports, ids = [], []
        for n, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{n}: not valid JSON ({err.msg})") from None
            if not isinstance(record, dict) or field not in record:
                raise ValueError(f"{path}:{n}: no field {field!r} in this record")
            value = record[field]
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{path}:{n}: field {field!r} is a {type(value).__name__}, expected a string")
            reports.append(value or "")
            if id_name:
                if id_name not in record or record[id_name] is None:
                    raise ValueError(f"{path}:{n}: no id field {id_name!r} in this record")
                ids.append(str(record[id_name]))
        return reports, (ids if id_name else None)
    if column:
        rows = csv.DictReader(text.splitlines(keepends=True))
        if rows.fieldnames is None or column not in rows.fieldnames:
            raise ValueError(f"{path}: no column {column!r}; columns are {rows.fieldnames}")
        if id_name and id_name not in rows.fieldnames:
            raise ValueError(f"{path}: no id column {id_name!r}; columns are {rows.fieldnames}")
        table = list(rows)
        return [row[column] or "" for row in table], ([row[id_name] for row in table] if id_name else None)
    if p.suffix.lower() in (".jsonl", ".json", ".csv"):
        raise ValueError(f"{path}: a {p.suffix} file needs --field (JSON lines) or --column (CSV)")
    if id_name:
        raise ValueError(f"{path}: a text file has no id column; records are numbered by line (drop --id-column)")
    lines = [line.rstrip("\r") for line in text.split("\n")]
    return (lines[:-1] if lines and lines[-1] == "" else lines), None


def read_reports(path: str, field: str | None = None, column: str | None = None) -> list[str]:
    """The reports of a text, JSONL or CSV file (:func:`read_records` without ids)."""
    return read_records(path, field, column)[0]


def _read_pairs(args, candidates_path: str) -> tuple[list[str], list[str], list[str] | None]:
    cands, cand_ids = read_records(candidates_path, args.field, args.column, args.id_column)
    ref_field = args.reference_field or args.field
    ref_column = args.reference_column or args.column
    try:
        refs, ref_ids = read_records(args.references, ref_field, ref_column, args.id_column)
    except ValueError as err:
        if not (args.id_column and "no id" in str(err)):
            raise
        refs, ref_ids = read_records(args.references, ref_field, ref_column)  # ids on one side suffice
    if len(cands) != len(refs):
        raise ValueError(f"{candidates_path} holds {len(cands)} reports but {args.references} holds "
                         f"{len(refs)}; they must pair up line by line")
    if cand_ids is not None and ref_ids is not None and cand_ids != ref_ids:
        k = next(i for i, (a, b) in enumerate(zip(cand_ids, ref_ids)) if a != b)
        raise ValueError(f"record {k}: id {cand_ids[k]!r} in {candidates_path} but {ref_ids[k]!r} in "
                         f"{args.references}; the files must list the same ids in the same order")
    return cands, refs, cand_ids


# ---- scoring --------------------------------------------------------------------------------------
def scorer_options(args) -> dict:
    """The keyword arguments of ``--metric``'s scorer (:func:`radscore.registry.make_scorer`), by
    its registry entry (:func:`radscore.registry.options_from_args`)."""
    return registry.options_from_args(registry.get(args.metric), args)


def build_scorer(args, **extra):
    """The scorer of ``--metric`` with the command's options (and ``extra`` ones)."""
    return registry.make_scorer(args.metric, **scorer_options(args), **extra)


def _flat(record: dict) -> dict:
    """A CSV row: scalars as they are, entity lists as counts (the JSON lines keep them whole)."""
    out = {}
    for key, value in record.items():
        if isinstance(value, list) and key.endswith("_entities"):
            out[f"n_{key}"] = len(value)
        elif isinstance(value, (dict, list)):
            continue
        else:
            out[key] = value
    return out


def write_records(path: str | None, rows: list[dict]) -> None:
    """CSV when ``path`` ends in ``.csv``, else JSON lines; stdout when ``path`` is None."""
    if path and path.lower().endswith(".csv"):
        flat = [_flat(r) for r in rows]
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(k for r in flat for k in r)))
            writer.writeheader()
            writer.writerows(flat)
        return
    out = open(path, "w", encoding="utf-8") if path else sys.stdout
    try:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    finally:
        if path:
            out.close()


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _headline(metric: str, scorer) -> str:
    spec = registry.get(metric)
    if scorer is None:
        return spec.display_name
    detail = scorer.headline_detail()
    return f"{spec.headline_label} ({detail})" if detail else spec.display_name


def _score(args) -> int:
    if args.html and not args.explain:
        raise ValueError("--html writes the explanation: add --explain")
    spec = registry.get(args.metric)
    if args.explain and not spec.explain:
        shows = "; ".join(s.explain for s in registry.specs() if s.explain)
        raise ValueError(f"--explain shows {shows}; it has no meaning for --metric {args.metric}")
    cands, refs, ids = _read_pairs(args, args.candidates)
    started = time.time()
    if args.ray:
        if args.explain:
            raise ValueError("--explain is not available with --ray")
        from radscore.ray_scoring import score_with_ray

        if args.ray_address:
            import ray

            ray.init(address=args.ray_address, log_to_driver=False)
        rows = score_with_ray(args.metric, scorer_options(args), cands, refs, ids, actors=args.ray_actors,
                              chunk_size=args.ray_chunk_size)
        records = [{k: v for k, v in r.items() if k not in ("index", "id")} for r in rows]
        values = [r[spec.headline] for r in records]
        scorer = build_scorer(args) if args.out else None  # for the signature beside the output
    else:
        scorer = build_scorer(args)
        records, values = score_records(scorer, cands, refs, args.explain, not args.quiet)
        rows = [{"index": i, **({"id": ids[i]} if ids else {}), **r} for i, r in enumerate(records)]
    write_records(args.out, rows)
    s = summary(values, seed=args.seed)
    headline = _headline(args.metric, scorer)
    print(f"{headline}  n={s['n']}  mean={s['mean']:.4f}  std={s['std']:.4f}  "
          f"95% CI=[{s['ci95'][0]:.4f}, {s['ci95'][1]:.4f}]", file=sys.stderr)
    if args.html:
        from radscore.explain_html import render

        Path(args.html).write_text(render(records, cands, refs, ids), encoding="utf-8")
        print(f"wrote {args.html}", file=sys.stderr)
    if args.out:
        meta = {"signature": scorer.signature(), "metric": args.metric, "summary": s,
                "seconds": round(time.time() - started, 3), "command": ["radscore", *sys.argv[1:]],
                "inputs": {"candidates": {"path": args.candidates, "sha256": file_sha256(args.candidates)},
                           "references": {"path": args.references, "sha256": file_sha256(args.references)}}}
        Path(args.out + ".meta.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n",
                                                 encoding="utf-8")
        print(f"wrote {args.out} and {args.out}.meta.json", file=sys.stderr)
    return 0


# ---- compare ------------------------------------------------------------------------------------
def parse_system(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise ValueError(f"--candidates {spec!r}: expected NAME=FILE")
    return name, path


def compare_systems(values: dict[str, list[float]], higher_is_better: bool = True, n_bootstrap: int = 1000,
                    n_randomization: int = 10000, seed: int = 0) -> dict:
    """Per system: summary; per system after the first: the paired tests against the first."""
    from radscore.stats import paired_bootstrap_p, randomization_p

    names = list(values)
    base = names[0]
    out = {"baseline": base, "higher_is_better": higher_is_better,
           "systems": {n: summary(v, seed=seed) for n, v in values.items()}, "comparisons": []}
    for name in names[1:]:
        d = np.asarray(values[name]) - np.asarray(values[base])
        lo, hi = bootstrap_ci(d, n_bootstrap, seed)
        out["comparisons"].append({
            "system": name, "baseline": base, "mean_difference": float(d.mean()), "difference_ci95": [lo, hi],
            "wins": int((d > 0).sum()), "losses": int((d < 0).sum()), "ties": int((d == 0).sum()),
            "p_paired_bootstrap": paired_bootstrap_p(values[name], values[base], n_bootstrap, seed),
            "p_randomization": randomization_p(values[name], values[base], n_randomization, seed)})
    return out


def compare_table(result: dict, metric_label: str) -> str:
    direction = "higher" if result["higher_is_better"] else "lower"
    lines = [f"{metric_label} ({direction} is better); baseline: {result['baseline']}", "",
             "| system | n | mean | 95% CI | Δ vs baseline | Δ 95% CI | p (paired bootstrap) | p (randomisation) |",
             "|---|---|---|---|---|---|---|---|"]
    comps = {c["system"]: c for c in result["comparisons"]}
    for name, s in result["systems"].items():
        row = f"| {name} | {s['n']} | {s['mean']:.4f} | [{s['ci95'][0]:.4f}, {s['ci95'][1]:.4f}] |"
        c = comps.get(name)
        row += (f" {c['mean_difference']:+.4f} | [{c['difference_ci95'][0]:+.4f}, {c['difference_ci95'][1]:+.4f}] |"
                f" {c['p_paired_bootstrap']:.4f} | {c['p_randomization']:.4f} |" if c else " – | – | – | – |")
        lines.append(row)
    return "\n".join(lines) + "\n"


def plot_differences(values: dict[str, list[float]], path: Path, metric_label: str) -> None:
    """Per-pair differences of every system against the baseline, sorted (one line each)."""
    from radscore.optional import require

    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(values)
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in names[1:]:
        d = np.sort(np.asarray(values[name]) - np.asarray(values[names[0]]))
        ax.plot(np.arange(1, d.size + 1), d, label=f"{name} − {names[0]} (mean {d.mean():+.4f})")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("pairs, sorted by difference")
    ax.set_ylabel(f"{metric_label} difference")
    ax.set_title(f"Per-pair {metric_label} differences against {names[0]}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _compare(args) -> int:
    systems = [parse_system(s) for s in args.systems]
    if len(systems) < 2:
        raise ValueError("compare needs at least two --candidates NAME=FILE")
    if len({n for n, _ in systems}) != len(systems):
        raise ValueError(f"system names repeat: {[n for n, _ in systems]}")
    inputs = {name: _read_pairs(args, path) for name, path in systems}
    spec = registry.get(args.metric)
    scorer = build_scorer(args, **spec.shared_references)  # the systems share their references
    values, records = {}, {}
    for name, (cands, refs, _) in inputs.items():
        records[name], values[name] = score_records(scorer, cands, refs, progress=not args.quiet)
    result = compare_systems(values, scorer.higher_is_better, args.bootstrap, args.randomization, args.seed)
    result["signature"] = scorer.signature()
    label = spec.headline_label
    table = compare_table(result, label)
    print(table, end="")
    if args.out_dir:
        out = Path(args.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        (out / "compare.md").write_text(table, encoding="utf-8")
        for name, (_, _, ids) in inputs.items():
            write_records(str(out / f"scores.{name}.jsonl"),
                          [{"index": i, **({"id": ids[i]} if ids else {}), **r} for i, r in enumerate(records[name])])
        plot_differences(values, out / "differences.png", label)
        print(f"wrote {out}/compare.json, compare.md, differences.png and the scores of each system", file=sys.stderr)
    return 0


# ---- parser ---------------------------------------------------------------------------------------
def _input_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--field", help="JSON lines: the field holding the report")
    p.add_argument("--reference-field", help="JSON lines: the references' field, when it differs")
    p.add_argument("--column", help="CSV: the column holding the report")
    p.add_argument("--reference-column", help="CSV: the references' column, when it differs")
    p.add_argument("--id-column", help="JSON lines field or CSV column holding each record's id")


def _model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--metric", choices=registry.names(), default="ratescore",
                   help="a metric of radscore.registry (default: ratescore)")
    p.add_argument("--model", help="bleurt / er2: export folder or Hub id")
    p.add_argument("--ner", default=None,
                   help="ratescore: NER export folder or Hub id (default: the official Angelakeke/RaTE-NER-Deberta)")
    p.add_argument("--encoder", default=None, help="ratescore: entity encoder folder or Hub id (default: the "
                   "official BioLORD-2023-C with the official NER, else the packaged all-MiniLM-L6-v2)")
    p.add_argument("--matrix", default="long", help="ratescore: 'long', 'short' or an official JSON file")
    p.add_argument("--penalty", choices=["official", "paper"], default="official")
    p.add_argument("--splitter", choices=["rush", "radiology", "builtin", "pyrush"], default=None,
                   help="ratescore: default rush (the released package's sentences, radscore's own code); pyrush "
                   "(the same by medspacy, which must be installed); radiology (radscore's simpler splitter, "
                   "different scores; builtin is its old name)")
    p.add_argument("--pooling", choices=["cls", "mean"], default="cls")
    p.add_argument("--empty-score", type=float, default=0.5)
    p.add_argument("--batch-size", type=int, default=None,
                   help="items per forward pass (default: the metric's default for the device; ratescore: 64 on the "
                        "CPU, 256 on CUDA; see radscore.device)")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                   help="ratescore bf16 (opt-in): the models run in bfloat16, faster only on CPUs with native bf16 "
                        "(AMX, AVX512-BF16) and GPUs; scores differ (see benchmarks/results/ratescore.json)")
    p.add_argument("--backend", choices=["torch", "openvino"], default="torch",
                   help="ratescore openvino (opt-in, CPU, radscore[openvino]): the models run by OpenVINO from IR "
                        "converted once and kept next to the export; fp32 scores equal torch's to float32 rounding")
    p.add_argument("--device", default=None,
                   help="cpu, cuda, cuda:N (default: CUDA when present, else CPU; cuda without CUDA is an error)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="radscore", description="Score radiology reports with trained models.")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("score", help="score candidate reports against references",
                       description=__doc__.split("\n\n")[4].strip())
    s.add_argument("--candidates", required=True, help="file of candidate reports")
    s.add_argument("--references", required=True, help="file of reference reports")
    s.add_argument("--out", help="output: .csv, else JSON lines (default: JSON lines on stdout)")
    s.add_argument("--explain", action="store_true",
                   help="add the scorer's explanation to each record (ratescore: every entity match)")
    s.add_argument("--html", help="with --explain: also write the matches as an HTML page")
    s.add_argument("--ray", action="store_true", help="score on Ray Data: one model copy per actor (pip install 'radscore[ray]')")
    s.add_argument("--ray-address", help="an existing Ray cluster (default: start a local one)")
    s.add_argument("--ray-actors", type=int, default=2, help="scoring actors (one model copy each)")
    s.add_argument("--ray-chunk-size", type=int, default=2048,
                   help="consecutive pairs per Ray task (default: RaTEScore's own chunk, so the scores equal a run without --ray)")
    _input_options(s)
    _model_options(s)
    s.set_defaults(func=_score)
    c = sub.add_parser("compare", help="compare two or more systems on the same references",
                       description=__doc__.split("\n\n")[5].strip())
    c.add_argument("--references", required=True, help="file of reference reports")
    c.add_argument("--candidates", "--system", dest="systems", action="append", default=[], metavar="NAME=FILE",
                   help="a system's candidate reports, in the references' order (repeat; the first is the baseline); "
                        "--system is its old name, still accepted")
    c.add_argument("--out-dir", help="write compare.json, compare.md, differences.png and the scores here")
    c.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples")
    c.add_argument("--randomization", type=int, default=10000, help="approximate-randomisation trials")
    _input_options(c)
    _model_options(c)
    c.set_defaults(func=_compare)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError, ImportError) as err:
        print(f"radscore {args.command}: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a model that transformers could not open
        print(f"radscore {args.command}: error: {str(err).splitlines()[0] if str(err) else err!r}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

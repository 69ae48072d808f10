"""The ``radscore`` command.

    radscore score   [--metric ratescore|bleurt|er2] --candidates FILE --references FILE
                     [--out scores.jsonl|scores.csv [--resume]] [--chunk-size N] [--id-column NAME]
                     [--explain [--html FILE]]
    radscore compare [--metric ...] --references FILE --candidates NAME=FILE --candidates NAME=FILE ...
                     [--out-dir DIR [--resume]] [--chunk-size N]

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
carry the scoring system's direction (``higher_is_better``). Records are written as they are
scored, ``--chunk-size`` pairs at a time; ``--out`` grows under ``<out>.partial`` and takes its name
when the run completes, and ``--resume`` continues a killed run (:mod:`radscore.streaming`).
``<out>.meta.json`` holds the scorer's signature (models with Hub revision or weights hash, matrix,
modes, radscore version), the inputs, whether the run completed and the summary. The summary (n,
mean, std, 95% bootstrap CI) goes to stderr.

``compare`` scores every system (``--candidates NAME=FILE``, repeated; ``--system`` is its old
name) with one scorer and prints, per system, the mean with its 95% bootstrap CI and, for every
other system against the first (the baseline), the mean difference with the paired-bootstrap and
approximate-randomisation p-values (:mod:`radscore.stats`); with ``--out-dir`` it also writes
``compare.json``, ``compare.md``, each system's scores (written and resumable as ``score``'s) and
``differences.png`` (the per-pair differences against the baseline).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from radscore import registry
from radscore.atomic import meta_path, write_json_atomic, write_text_atomic
from radscore.compare import compare_systems, compare_table, parse_system, plot_differences  # noqa: F401
from radscore.reading import PairFiles, file_sha256, read_records, read_reports  # noqa: F401
from radscore.records import score_records  # noqa: F401  (part of this module's interface)
from radscore.stats import bootstrap_ci, summary  # noqa: F401  (part of this module's interface)
from radscore.streaming import (RecordFile, StdoutRecords, _read_meta, default_chunk_size,  # noqa: F401
                                scored_chunks)


# ---- scoring --------------------------------------------------------------------------------------
def scorer_options(args) -> dict:
    """The keyword arguments of ``--metric``'s scorer (:func:`radscore.registry.make_scorer`), by
    its registry entry (:func:`radscore.registry.options_from_args`)."""
    return registry.options_from_args(registry.get(args.metric), args)


def build_scorer(args, **extra):
    """The scorer of ``--metric`` with the command's options (and ``extra`` ones)."""
    return registry.make_scorer(args.metric, **scorer_options(args), **extra)


def _headline(metric: str, scorer) -> str:
    spec = registry.get(metric)
    if scorer is None:
        return spec.display_name
    detail = scorer.headline_detail()
    return f"{spec.headline_label} ({detail})" if detail else spec.display_name


def _chunk_size(args, n: int, out: str | Path | None) -> int:
    """``--chunk-size``; else, resuming, the partial run's; else :func:`default_chunk_size`."""
    if args.chunk_size is not None:
        if args.chunk_size < 1:
            raise ValueError(f"--chunk-size must be at least 1, got {args.chunk_size}")
        return args.chunk_size
    old = _read_meta(meta_path(out)) if args.resume and out else None
    return int(old["chunk_size"]) if old and old.get("chunk_size") else default_chunk_size(n)


def _progress(args, total: int, initial: int, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, disable=args.quiet, unit="pair", desc=desc)


def _score(args) -> int:
    if args.html and not args.explain:
        raise ValueError("--html writes the explanation: add --explain")
    spec = registry.get(args.metric)
    if args.explain and not spec.explain:
        shows = "; ".join(s.explain for s in registry.specs() if s.explain)
        raise ValueError(f"--explain shows {shows}; it has no meaning for --metric {args.metric}")
    if args.resume and not args.out:
        raise ValueError("--resume continues a run writing --out: give --out")
    if args.resume and args.html:
        raise ValueError("--html renders the records of one run: not with --resume")
    if args.ray and args.explain:
        raise ValueError("--explain is not available with --ray")
    files = PairFiles.from_args(args, args.candidates).check()
    started = time.time()
    scorer = build_scorer(args) if (args.out or not args.ray) else None  # with Ray: for the signature only
    size = _chunk_size(args, files.n, args.out)
    if args.out:
        meta = {"metric": args.metric, "signature": scorer.signature(), "inputs": files.identity(),
                "chunk_size": size, "explain": bool(args.explain), "systems": None,
                "command": ["radscore", *sys.argv[1:]]}
        sink = RecordFile(args.out, meta, spec.headline, files.n, resume=args.resume)
    else:
        sink = StdoutRecords()
    kept = [] if args.html else None
    if not sink.complete:
        chunks = files.chunks(size, sink.done)
        if args.ray:
            from radscore.ray_scoring import ray_scored_chunks

            if args.ray_address:
                import ray

                ray.init(address=args.ray_address, log_to_driver=False)
            stream = ray_scored_chunks(args.metric, scorer_options(args), chunks, actors=args.ray_actors)
        else:
            stream = scored_chunks(scorer, chunks, args.explain)
        with _progress(args, files.n, sink.done, spec.display_name) as bar:
            for rows, values in stream:
                sink.write_chunk(rows, values)
                bar.update(len(rows))
                if kept is not None:
                    kept.extend({k: v for k, v in r.items() if k not in ("index", "id")} for r in rows)
    s = summary(sink.values, seed=args.seed)
    headline = _headline(args.metric, scorer)
    print(f"{headline}  n={s['n']}  mean={s['mean']:.4f}  std={s['std']:.4f}  "
          f"95% CI=[{s['ci95'][0]:.4f}, {s['ci95'][1]:.4f}]", file=sys.stderr)
    if args.html:
        from radscore.explain_html import render

        cands, ids = read_records(files.candidates, files.field, files.column, files.id_column)
        refs = read_reports(files.references, files.reference_field, files.reference_column)
        write_text_atomic(args.html, render(kept, cands, refs, ids))
        print(f"wrote {args.html}", file=sys.stderr)
    if args.out:
        sink.finish(summary=s, seconds=round(time.time() - started, 3))
        print(f"wrote {args.out} and {meta_path(args.out)}", file=sys.stderr)
    return 0


# ---- compare ------------------------------------------------------------------------------------
def _compare(args) -> int:
    systems = [parse_system(s) for s in args.systems]
    if len(systems) < 2:
        raise ValueError("compare needs at least two --candidates NAME=FILE")
    if len({n for n, _ in systems}) != len(systems):
        raise ValueError(f"system names repeat: {[n for n, _ in systems]}")
    if args.resume and not args.out_dir:
        raise ValueError("--resume continues a run writing --out-dir: give --out-dir")
    files = {name: PairFiles.from_args(args, path).check() for name, path in systems}
    n = next(iter(files.values())).n
    spec = registry.get(args.metric)
    scorer = build_scorer(args, **spec.shared_references)  # the systems share their references
    out = Path(args.out_dir) if args.out_dir else None
    paths = {name: out / f"scores.{name}.jsonl" for name in files} if out else {}
    size = _chunk_size(args, n, paths.get(systems[0][0]))
    if out:
        out.mkdir(parents=True, exist_ok=True)
        signature, inputs = scorer.signature(), {name: f.identity() for name, f in files.items()}
        order = [{"name": name, "path": f.candidates, "sha256": inputs[name]["candidates"]["sha256"]}
                 for name, f in files.items()]
        sinks = {name: RecordFile(paths[name], {
            "metric": args.metric, "signature": signature, "inputs": inputs[name], "chunk_size": size,
            "explain": False, "systems": order, "command": ["radscore", *sys.argv[1:]]}, spec.headline, n,
            resume=args.resume) for name in files}
    else:
        sinks = {name: StdoutRecords(stream=False) for name in files}
    start = min(s.done for s in sinks.values())
    streams = {name: f.chunks(size, start) for name, f in files.items()}
    with _progress(args, n * len(files), start * len(files), spec.display_name) as bar:
        for lo in range(start, n, size):
            scorer.clear_cache()  # each chunk starts from the same state, resumed or not
            for name, sink in sinks.items():
                rows, values = next(scored_chunks(scorer, [next(streams[name])]))
                if sink.done <= lo:  # else written before a resume (scored again for the cache)
                    sink.write_chunk(rows, values)
                bar.update(len(rows))
    scorer.clear_cache()
    values = {name: sink.values for name, sink in sinks.items()}
    result = compare_systems(values, scorer.higher_is_better, args.bootstrap, args.randomization, args.seed)
    result["signature"] = scorer.signature()
    label = spec.headline_label
    table = compare_table(result, label)
    print(table, end="")
    if out:
        for name, sink in sinks.items():
            sink.finish(summary=result["systems"][name])
        write_json_atomic(out / "compare.json", result)
        write_text_atomic(out / "compare.md", table)
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


def _run_options(p: argparse.ArgumentParser, out: str) -> None:
    p.add_argument("--chunk-size", "--ray-chunk-size", dest="chunk_size", type=int, default=None,
                   help="consecutive pairs scored and written together (one Ray task with --ray; --ray-chunk-size "
                        "is its old name); default: a fiftieth of the pairs, between 32 and 2,048")
    p.add_argument("--resume", action="store_true",
                   help=f"continue the killed run writing {out} from its last complete chunk (refused when the "
                        "inputs or the scorer differ); without it a run starts over")


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
    _input_options(s)
    _model_options(s)
    _run_options(s, "--out")
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
    _run_options(c, "--out-dir")
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

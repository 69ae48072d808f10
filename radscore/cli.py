"""The ``radscore`` command.

    radscore score --ner EXPORT [--encoder MODEL] [--matrix long|short|FILE.json]
                   --candidates FILE --references FILE [--out scores.jsonl] [--explain]

Inputs hold one report per record: a text file (one report per line; an empty line is an empty
report), JSON lines (``--field NAME``) or CSV (``--column NAME``); ``--reference-field`` and
``--reference-column`` name a different field for the references. Scores are written as one JSON
line per pair (to ``--out``, else to stdout); the summary (n, mean, std and a 95% bootstrap
confidence interval of the mean) goes to stderr.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np


def read_reports(path: str, field: str | None = None, column: str | None = None) -> list[str]:
    """The reports of a text, JSONL or CSV file; errors name the file, line and problem."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{path}: no such file")
    if field and column:
        raise ValueError("give --field (JSON lines) or --column (CSV), not both")
    text = p.read_text(encoding="utf-8")
    if field:
        out = []
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
            out.append(value or "")
        return out
    if column:
        rows = csv.DictReader(text.splitlines(keepends=True))
        if rows.fieldnames is None or column not in rows.fieldnames:
            raise ValueError(f"{path}: no column {column!r}; columns are {rows.fieldnames}")
        return [row[column] or "" for row in rows]
    if p.suffix.lower() in (".jsonl", ".json", ".csv"):
        raise ValueError(f"{path}: a {p.suffix} file needs --field (JSON lines) or --column (CSV)")
    lines = [line.rstrip("\r") for line in text.split("\n")]
    return lines[:-1] if lines and lines[-1] == "" else lines


def bootstrap_ci(values: np.ndarray, n_resamples: int = 1000, seed: int = 0,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean."""
    if len(values) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    for k in range(n_resamples):  # one resample at a time: memory stays O(n)
        means[k] = values[rng.integers(0, len(values), len(values))].mean()
    lo, hi = np.percentile(means, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def summary(values: list[float], seed: int = 0) -> dict:
    arr = np.asarray(values, dtype=np.float64)
    lo, hi = bootstrap_ci(arr, seed=seed)
    return {"n": int(arr.size), "mean": float(arr.mean()) if arr.size else float("nan"),
            "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0, "ci95": [lo, hi]}


def _score(args) -> int:
    from radscore.ratescore import RaTEScore

    cands = read_reports(args.candidates, args.field, args.column)
    refs = read_reports(args.references, args.reference_field or args.field,
                        args.reference_column or args.column)
    if len(cands) != len(refs):
        raise ValueError(f"{args.candidates} holds {len(cands)} reports but {args.references} holds "
                         f"{len(refs)}; they must pair up line by line")
    scorer = RaTEScore(args.ner, args.encoder, args.matrix, penalty=args.penalty, splitter=args.splitter,
                       pooling=args.pooling, empty_score=args.empty_score, batch_size=args.batch_size,
                       device=args.device, precision=args.precision)
    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
    f1s = []
    try:
        for i, pair in enumerate(scorer.iter_score(cands, refs, explain=args.explain, progress=not args.quiet)):
            f1s.append(pair.f1)
            out.write(json.dumps({"index": i, **pair.to_dict()}, ensure_ascii=False) + "\n")
    finally:
        if args.out:
            out.close()
    s = summary(f1s, seed=args.seed)
    print(f"RaTEScore  n={s['n']}  mean={s['mean']:.4f}  std={s['std']:.4f}  "
          f"95% CI=[{s['ci95'][0]:.4f}, {s['ci95'][1]:.4f}]", file=sys.stderr)
    if args.out:
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from radscore.models import PACKAGED_MINILM

    parser = argparse.ArgumentParser(prog="radscore", description="Score radiology reports with trained models.")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("score", help="RaTEScore of candidate reports against references",
                       description=__doc__.split("\n\n")[2].strip())
    s.add_argument("--ner", required=True, help="NER export folder (IOB or span) or Hub id")
    s.add_argument("--encoder", default=PACKAGED_MINILM, help="entity encoder folder or Hub id")
    s.add_argument("--matrix", default="long", help="'long', 'short' or an official JSON file")
    s.add_argument("--candidates", required=True, help="file of candidate reports")
    s.add_argument("--references", required=True, help="file of reference reports")
    s.add_argument("--out", help="JSON lines output (default: stdout)")
    s.add_argument("--explain", action="store_true", help="add every entity match to each line")
    s.add_argument("--field", help="JSON lines: the field holding the report")
    s.add_argument("--reference-field", help="JSON lines: the references' field, when it differs")
    s.add_argument("--column", help="CSV: the column holding the report")
    s.add_argument("--reference-column", help="CSV: the references' column, when it differs")
    s.add_argument("--penalty", choices=["official", "paper"], default="official")
    s.add_argument("--splitter", choices=["builtin", "pyrush"], default="builtin")
    s.add_argument("--pooling", choices=["cls", "mean"], default="cls")
    s.add_argument("--empty-score", type=float, default=0.5)
    s.add_argument("--batch-size", type=int, default=64)
    s.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                   help="bf16: bfloat16 autocast, about 2x faster on CPUs with AMX, scores differ by ~1e-3")
    s.add_argument("--device", default=None, help="default: CUDA when present, else CPU")
    s.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=_score)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError, ImportError) as err:
        print(f"radscore {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

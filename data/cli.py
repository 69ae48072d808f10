"""Command line of the data layer: ``python -m data {validate,build-samples,stats} …``."""

from __future__ import annotations

import argparse
import sys


def _validate(args) -> int:
    from data.annotation import validate_reports_file

    bad = 0
    for path in args.files:
        errors = validate_reports_file(path)
        for e in errors:
            print(e, file=sys.stderr)
        bad += len(errors)
        if not errors:
            print(f"{path}: ok")
    return 1 if bad else 0


def _build_samples(args) -> int:
    from data.samples import build_samples

    summary = build_samples(args.reports, args.out)
    for source, splits in summary.items():
        print(f"{args.out}/{source}: " + ", ".join(f"{k} {v} sentences" for k, v in splits.items()))
    return 0


def _stats(args) -> int:
    from data.stats import collect, format_table

    print(format_table(collect(args.folder)))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m data", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="check inline [text|TYPE] annotations of corpus JSONL files")
    p.add_argument("files", nargs="+")
    p.set_defaults(func=_validate)

    from data.samples import RATENER_DIR, REPORTS

    p = sub.add_parser("build-samples", help="convert the authored corpus into RaTE-NER files")
    p.add_argument("--reports", default=str(REPORTS))
    p.add_argument("--out", default=str(RATENER_DIR))
    p.set_defaults(func=_build_samples)

    p = sub.add_parser("stats", help="entity statistics of a RaTE-NER folder (paper's Table 2)")
    p.add_argument("folder")
    p.set_defaults(func=_stats)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as err:  # format errors name the file and record
        print(f"error: {err}", file=sys.stderr)
        return 2

"""``python -m train ablations --table NAME [--table NAME …] --profile sample|paper`` (or
``--profile-config FILE [--profile-config OVERLAY …]``).

Builds each table (``all``: every table) with the profile's data, models and runs, reusing
finished runs and training missing ones, and writes ``<output>/<table>.md``, ``.csv`` and
``.json`` (default output ``checkpoints/ablations/<profile>/``). Ends with a summary: rows measured,
needing the paper profile, unavailable, skipped (a comparator whose package or model is not here)
and failed per table, and the runs reused or trained.
Exit code 0 when every row the profile maps was measured, unavailable by nature or skipped, 1 when
a row failed (e.g. a Hub model or dataset that could not be loaded: each is named), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from train.ablations.paper import TABLE_NAMES
from train.ablations.profile import ProfileError, load_profile, profile_path


def parse_tables(names: list[str]) -> list[str]:
    out = []
    for name in names:
        for part in filter(None, name.split(",")):
            if part == "all":
                out.extend(TABLE_NAMES)
            elif part in TABLE_NAMES:
                out.append(part)
            else:
                raise ProfileError(f"unknown table {part!r}; expected one of {', '.join(TABLE_NAMES)} or all")
    return list(dict.fromkeys(out))


def run(tables: list[str], profile, out_dir: Path | None = None, progress: bool = True) -> dict:
    """Build and write the tables; returns ``{"tables": {name: {paths, counts, failures}}, "runs": [...]}``."""
    from train.ablations.evaluate import Evaluator
    from train.ablations.render import to_markdown, write_table
    from train.ablations.runs import RunManager
    from train.ablations.builders import builders
    from train.ablations.tables import Context

    if out_dir is not None:
        profile.output = Path(out_dir)
    runs = RunManager(profile.runs_root, profile.run_overrides, progress)
    ctx = Context(profile, runs, Evaluator(profile, runs, progress))
    build = builders()
    report = {"profile": profile.name, "profile_file": profile.source, "output": str(profile.output), "tables": {}}
    for name in tables:
        t0 = time.perf_counter()
        print(f"[ablations] table {name} ({profile.name} profile)", flush=True)
        mark = len(runs.requested)
        table = build[name](ctx)
        used = list(dict.fromkeys(runs.requested[mark:]))
        paths = write_table(table, profile.output, {"runs": runs.summary(used), "profile_file": profile.source,
                                                      "seconds": round(time.perf_counter() - t0, 1)})
        if progress:
            print(to_markdown(table), flush=True)
        report["tables"][name] = {"paths": {k: str(v) for k, v in paths.items()}, "counts": table.counts(),
                                  "failures": table.failures(), "runs": used}
    report["runs"] = runs.summary()
    return report


def print_summary(report: dict, stream=sys.stdout) -> None:
    head = f"{'table':<14}{'measured':>9}{'needs paper':>12}{'unavailable':>12}{'skipped':>8}{'failed':>7}  written"
    print("\n" + head + "\n" + "-" * len(head), file=stream)
    for name, info in report["tables"].items():
        c = info["counts"]
        print(f"{name:<14}{c['measured']:>9}{c['needs the paper profile']:>12}{c['unavailable']:>12}{c['skipped']:>8}"
              f"{c['failed']:>7}  {info['paths']['md']} (.csv, .json)", file=stream)
    if report["runs"]:
        print(f"\n{'run':<28}{'status':<9}{'seconds':>9}  folder or reason", file=stream)
        for r in report["runs"]:
            detail = r.get("run_dir") if r["status"] != "failed" else r.get("reason", "")
            print(f"{r['name']:<28}{r['status']:<9}{r.get('seconds', 0):>9}  {detail}", file=stream)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train ablations", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", action="append", default=None,
                        help=f"one of {', '.join(TABLE_NAMES)}, or all (repeatable, or comma-separated)")
    parser.add_argument("--profile", default="sample", help="sample or paper (configs/ablations/<profile>.yaml)")
    parser.add_argument("--profile-config", action="append", default=None,
                        help="a profile file instead of configs/ablations/<profile>.yaml (repeatable: "
                        "several compose in order, a later file's keys over an earlier one's)")
    parser.add_argument("--out", default=None, help="output folder (default: the profile's, "
                        "checkpoints/ablations/<profile>)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars, no tables on the terminal")
    parser.add_argument("--list", action="store_true", help="list the tables and exit")
    args = parser.parse_args(argv)
    if args.list:
        from train.ablations.paper import PAPER_TABLES

        for name, t in PAPER_TABLES.items():
            print(f"{name:<14} {t.title} ({t.source})")
        return 0
    try:
        if not args.table:
            raise ProfileError(f"say which table: --table NAME (one of {', '.join(TABLE_NAMES)}) or --table all")
        tables = parse_tables(args.table)
        profile = load_profile(*(args.profile_config or [profile_path(args.profile)]))
        report = run(tables, profile, Path(args.out) if args.out else None, progress=not args.no_progress)
    except ProfileError as err:
        print(f"ablations: error: {err}", file=sys.stderr)
        return 2
    print_summary(report)
    failures = [f for info in report["tables"].values() for f in info["failures"]]
    if failures:
        reasons = list(dict.fromkeys(f["reason"] for f in failures))
        print(f"\nablations: {len(failures)} row(s) failed; what could not be loaded or run:", file=sys.stderr)
        for reason in reasons:
            print(f"  - {reason}", file=sys.stderr)
        print(f"(the tables were written with every row that could be made: {report['output']})", file=sys.stderr)
        return 1
    return 0

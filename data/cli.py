"""Command line of the data layer: ``python -m data {validate,split,build-samples,stats,corpus-stats,synth,generate-er2} …``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _validate(args) -> int:
    from data.annotation import read_reports, validate_reports_file

    bad = 0
    for path in args.files:
        errors = validate_reports_file(path)
        if not errors and args.consistency:
            from data.corpus_check import read_reviewed, unreviewed_issues

            reviewed = read_reviewed(Path(path).parent / "consistency_reviewed.txt")
            issues, stale = unreviewed_issues(read_reports(path), reviewed)
            errors = [f"{path}: {issue}" for issue in issues]
            errors += [f"{path}: reviewed exception no longer occurs (remove it from consistency_reviewed.txt): "
                       f"{line}" for line in stale]
            if reviewed and not errors:
                print(f"{path}: {len(reviewed)} reviewed exception(s) in consistency_reviewed.txt")
        for e in errors:
            print(e, file=sys.stderr)
        bad += len(errors)
        if not errors:
            print(f"{path}: ok")
    return 1 if bad else 0


def _split(args) -> int:
    from data.annotation import read_reports
    from data.split import read_split, write_split

    reports = read_reports(args.reports)
    held = tuple(a for a in (args.held_out_anatomies or "").split(",") if a.strip())
    out = args.out or str(Path(args.reports).parent / ("split_unseen.json" if held else "split.json"))
    if args.check:
        from data.split import SplitError, split_by_rule

        split = read_split(out)
        try:
            split.check(reports)
        except SplitError as err:
            print(f"{out}: {err}", file=sys.stderr)
            return 1
        redo = split_by_rule(reports, split.held_out_anatomies, split.salt)
        moved = sorted(r for r in split.sides if redo.sides.get(r) != split.sides[r])
        if moved:
            print(f"{out}: {len(moved)} report(s) on another side than the rule puts them, e.g. {moved[:5]}; "
                  "rewrite it (python -m data split)", file=sys.stderr)
            return 1
        print(f"{out}: ok ({len(split.sides)} reports)")
        return 0
    split = write_split(reports, out, held_out_anatomies=held)
    counts = {s: len(split.ids(s)) for s in ("train", "dev", "test")}
    print(f"{out}: " + ", ".join(f"{k} {v} reports" for k, v in counts.items())
          + f"; {len(set(split.groups.values()))} multi-report case groups kept on one side")
    return 0


def _corpus_stats(args) -> int:
    from data.annotation import read_reports
    from data.corpus_check import corpus_figures, format_figures
    from data.split import split_for

    reports = read_reports(args.reports)
    print(f"{args.reports}:")
    print(format_figures(corpus_figures(reports, split_for(reports, args.reports))))
    return 0


def _build_samples(args) -> int:
    from data.samples import RATENER_DIR, build_samples

    if args.split and Path(args.out).resolve() == Path(RATENER_DIR).resolve():
        print(f"--split writes NER files of another split: give --out (not the shipped {RATENER_DIR})", file=sys.stderr)
        return 2
    summary = build_samples(args.reports, args.out, args.split)
    for source, splits in summary.items():
        print(f"{args.out}/{source}: " + ", ".join(f"{k} {v} sentences" for k, v in splits.items()))
    return 0


def _stats(args) -> int:
    from data.stats import collect, format_table

    print(format_table(collect(args.folder)))
    return 0


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _synth(args) -> int:
    from data.synth.generate import DEFAULT_OUT, generate, generate_default, parse_sizes

    args.out = args.out or str(DEFAULT_OUT)
    if args.if_missing and args.split:
        print("--if-missing makes the default sets on the corpus split; give --split without it", file=sys.stderr)
        return 2
    if args.if_missing:
        counts = generate_default(args.out, args.seed, reports=args.reports, progress=_progress)
        if counts is None:
            print(f"{args.out}: synthetic sets already present (nothing to do)")
            return 0
    else:
        counts = generate(args.out, args.seed, parse_sizes(args.sizes), args.reports,
                          progress=_progress, split=args.split)
    width = max(len(k) for k in counts)
    print(f"SYNTHETIC benchmark sets written to {args.out} (seed {args.seed})")
    print(f"{'set':<{width}}  items (synthetic)")
    for name, n in counts.items():
        print(f"{name:<{width}}  {n}")
    return 0


def _generate_er2(args) -> int:
    from data.er2_generate import main_generate

    return main_generate(args)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m data", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="check inline [text|TYPE] annotations of corpus JSONL files")
    p.add_argument("files", nargs="+")
    p.add_argument("--consistency", action="store_true",
                   help="also check one decision per phrase: the same words in the same context typed two "
                   "ways, or annotated in one place and not in another (data/corpus_check.py); "
                   "reviewed exceptions: consistency_reviewed.txt beside the file")
    p.set_defaults(func=_validate)

    from data.samples import RATENER_DIR, REPORTS

    p = sub.add_parser("split", help="write (or --check) the corpus's one train/dev/test split, split.json "
                       "beside the corpus file")
    p.add_argument("--reports", default=str(REPORTS))
    p.add_argument("--out", default=None, help="default: split.json beside --reports")
    p.add_argument("--check", action="store_true", help="check the stored split against the corpus, write nothing")
    p.add_argument("--held-out-anatomies", default=None, metavar="A,B,...",
                   help="write the unseen-domain split instead (issue #46): test = every case group with a report "
                   "of these anatomies, e.g. head,spine,breast (default --out: split_unseen.json beside --reports)")
    p.set_defaults(func=_split)

    p = sub.add_parser("corpus-stats", help="figures of an authored corpus file: reports, sentences, entities, "
                       "normal share, lengths, headers, modalities, anatomies, split")
    p.add_argument("reports", nargs="?", default=str(REPORTS))
    p.set_defaults(func=_corpus_stats)

    p = sub.add_parser("build-samples", help="convert the authored corpus into RaTE-NER files")
    p.add_argument("--reports", default=str(REPORTS))
    p.add_argument("--out", default=str(RATENER_DIR))
    p.add_argument("--split", default=None, help="another split file than the corpus's, e.g. "
                   "data/samples/split_unseen.json (then --out elsewhere, e.g. checkpoints/unseen/ratener)")
    p.set_defaults(func=_build_samples)

    p = sub.add_parser("stats", help="entity statistics of a RaTE-NER folder (paper's Table 2)")
    p.add_argument("folder")
    p.set_defaults(func=_stats)

    p = sub.add_parser("synth", help="generate the SYNTHETIC labelled benchmark sets (ReXVal, "
                       "RaTE-Eval, ER²Score and ClinicalBLEURT formats) from the corpus")
    p.add_argument("--out", default=None,
                   help="output folder (default: checkpoints/synthetic of the repository)")
    p.add_argument("--seed", type=int, default=0)
    from data.synth.generate import DEFAULT_SIZES

    p.add_argument("--sizes", default=None,
                   help=f"e.g. {','.join(f'{k}={v}' for k, v in DEFAULT_SIZES.items())} "
                   "(sets not named keep these defaults)")
    p.add_argument("--reports", default=None, help="corpus JSONL file or folder of JSONL files "
                   "(default: data/samples/reports.jsonl, else data/samples/parts/)")
    p.add_argument("--if-missing", action="store_true",
                   help="generate the default sizes (--sizes is ignored) only when --out holds "
                   "no synthetic set yet")
    p.add_argument("--split", default=None, help="a split file other than the corpus's own, e.g. "
                   "data/samples/split_unseen.json (the unseen-domain split: head, spine and breast reports on the "
                   "test side only); default: split.json beside the corpus")
    p.set_defaults(func=_synth)
    p = sub.add_parser("generate-er2", help="ER²Score training rows from an LLM through the OpenAI-compatible "
                       "chat API: candidates per quality tier, scored, validated, cached, resumable")
    p.add_argument("--system", required=True, help="radcliq, mrscore, or a scoring-system YAML/JSON file")
    p.add_argument("--references", required=True,
                   help="reference reports: a text file (one a line) or JSON lines (--field)")
    p.add_argument("--model", required=True, help="chat model name, e.g. gpt-4o or the local server's model")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 "
                   "(vLLM, llama.cpp); default: the OpenAI API")
    p.add_argument("--out", default=None, help="output JSONL, appended to (default: er2_<system>_<model>.jsonl)")
    p.add_argument("--cache", default=None, help="reply cache folder (default: <out>.cache)")
    p.add_argument("--field", default="reference", help="JSON lines: the field holding the report")
    p.add_argument("--id-field", default="id", help="JSON lines: the field holding the reference id")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--max-reasks", type=int, default=2, help="re-asks after an invalid reply")
    p.add_argument("--retries", type=int, default=5, help="retries of a failing API call (exponential back-off)")
    p.add_argument("--backoff", type=float, default=1.0, help="first back-off delay in seconds")
    p.add_argument("--structured-output", action="store_true",
                   help="send the reply JSON schema as response_format (servers that support it)")
    p.set_defaults(func=_generate_er2)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as err:  # format errors name the file and record
        print(f"error: {err}", file=sys.stderr)
        return 2

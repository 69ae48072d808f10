"""radscore's ``"rush"`` sentence splitter against the released package's (medspacy + PyRuSH in the
released venv): the share of reports with identical sentence lists, and milliseconds per report.

    python -m benchmarks.scoring.bench_splitter [--random 2000] [--repeat 3] [--out benchmarks/results/splitter.json]

Texts: every report of ``data/samples/reports.jsonl`` (the whole report, then each section alone),
and ``--random`` seeded report-like texts (``benchmarks/scoring/report_texts.py``). Sentence lists are the
kept ones (stripped, with a word and at least 3 characters). Times are per report, the median
over ``--repeat`` passes: the released one is ``RaTEScore.utils.sentence_split([text])`` in its
own venv; radscore's is ``RushSplitter`` plus the same strip and filter, measured twice, on a
fresh splitter's first pass (its automaton still growing) and once warm. The machine's other load
shows in both; the figures are comparable with each other, less so across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.results_file import write_result

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "benchmarks" / "scoring" / "rush_driver.py"


def run_released_splitter(texts: list[str], python: Path | None = None, detail: bool = False,
                          repeat: int = 1) -> dict:
    """The released package's kept sentences of each text (see ``rush_driver.py`` for the fields)."""
    from benchmarks.scoring.released_package import ensure_released_venv

    python = python or ensure_released_venv()
    with tempfile.TemporaryDirectory() as tmp:
        job, out = Path(tmp, "in.json"), Path(tmp, "out.json")
        job.write_text(json.dumps({"texts": list(texts), "detail": detail, "repeat": repeat}))
        done = subprocess.run([str(python), str(DRIVER), str(job), str(out)], capture_output=True, text=True,
                              env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})
        if done.returncode != 0:
            raise RuntimeError(f"the released splitter failed:\n{done.stderr[-3000:]}")
        return json.loads(out.read_text())


def sample_texts() -> list[str]:
    """Every sample report whole, then its findings and its impression alone (distinct texts)."""
    from data.annotation import read_reports

    reports = read_reports(ROOT / "data" / "samples" / "reports.jsonl")
    texts = [r.text() for r in reports] + [r.text(s) for r in reports for s in ("findings", "impression")]
    return list(dict.fromkeys(t for t in texts if t))


def compare(ours: list[list[str]], released: list[list[str]], texts: list[str]) -> dict:
    differ = [k for k, (a, b) in enumerate(zip(ours, released)) if a != b]
    return {"texts": len(texts), "identical": len(texts) - len(differ),
            "identical_share": (len(texts) - len(differ)) / max(1, len(texts)),
            "differences": [{"text": texts[k], "ours": ours[k], "released": released[k]} for k in differ]}


def time_ours(texts: list[str], repeat: int) -> dict:
    from radscore.rush import RushSplitter
    from radscore.text import clean_sentences

    splitter = RushSplitter()
    cold = []
    for t in texts:
        t0 = time.perf_counter()
        clean_sentences(splitter(t))
        cold.append(time.perf_counter() - t0)
    passes = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for t in texts:
            clean_sentences(splitter(t))
        passes.append((time.perf_counter() - t0) / len(texts))
    return {"ms_per_report_first_pass": 1000 * sum(cold) / len(texts),
            "ms_per_report_warm": 1000 * statistics.median(passes),
            "automaton_states": splitter.rules.n_states, "rules_from": splitter.source.origin,
            "rules_medspacy": splitter.source.medspacy_version}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=2000, help="seeded random report-like texts (0: none)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "splitter.json"))
    args = ap.parse_args(argv)
    from radscore.rush import RushSplitter
    from radscore.text import clean_sentences
    from benchmarks.scoring.report_texts import report_texts

    sets = {"samples": sample_texts()}
    if args.random:
        sets["random"] = report_texts(args.random, seed=0)
    result: dict = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count()}, "sets": {}}
    splitter = RushSplitter()
    for name, texts in sets.items():
        released = run_released_splitter(texts, repeat=args.repeat if name == "samples" else 1)
        ours = [clean_sentences(splitter(t)) for t in texts]
        result["sets"][name] = compare(ours, released["sentences"], texts)
        result["versions"] = released["versions"]
        if name == "samples":
            result["timing"] = {"texts": len(texts), "mean_chars": sum(map(len, texts)) / len(texts),
                                "released_ms_per_report": 1000 * statistics.mean(released["seconds"]),
                                **time_ours(texts, args.repeat)}
        s = result["sets"][name]
        print(f"{name}: {s['identical']} of {s['texts']} texts have identical sentence lists "
              f"({100 * s['identical_share']:.2f}%)")
    t = result["timing"]
    print(f"ms per report ({t['texts']} sample texts, {t['mean_chars']:.0f} characters on average): released "
          f"{t['released_ms_per_report']:.2f}, radscore rush {t['ms_per_report_warm']:.3f} warm, "
          f"{t['ms_per_report_first_pass']:.3f} on a fresh splitter's first pass")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_result(Path(args.out), result, seed=0, indent=1, ensure_ascii=False)  # seed: the random texts'
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Soak of radscore's RuSH splitter: memory stays flat over a long run of varied text.

    .venv/bin/python -m benchmarks.scoring.bench_splitter_soak [--sentences 1000000] [--every 50000]
        [--out benchmarks/results/splitter_soak.json]

Splits SYNTHETIC report-like texts (``benchmarks/scoring/report_texts.py``, seeded, new texts all the way:
headers, lists, abbreviations, measurements, odd whitespace and non-ASCII) with one
``RushSplitter`` until ``--sentences`` sentences came out, and records every ``--every`` sentences
the process's resident memory (``/proc/self/statm``), the automaton's state count and how often it
started over (``RuleSet.restarts``; bounded by ``radscore.rush.MAX_STATES``). Flat memory means
the last sample's RSS is within a few MiB of the one after warm-up. Needs the RuSH rules
(``radscore.rush.rules_file``: installed with the package, else fetched once).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from benchmarks.results_file import write_result

ROOT = Path(__file__).resolve().parents[2]


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def soak(n_sentences: int, every: int, seed: int = 0, batch: int = 1000) -> dict:
    import random

    from radscore.rush import MAX_STATES
    from radscore.rush import RushSplitter
    from benchmarks.scoring.report_texts import report_text

    splitter = RushSplitter()
    rng = random.Random(seed)
    samples, done, texts, chars, next_mark = [], 0, 0, 0, every
    t0 = time.perf_counter()
    while done < n_sentences:
        for _ in range(batch):
            text = report_text(rng)
            done += len(splitter(text))
            texts += 1
            chars += len(text)
        if done >= next_mark or done >= n_sentences:
            samples.append({"sentences": done, "texts": texts, "rss_mib": round(rss_mib(), 2),
                            "automaton_states": splitter.rules.n_states, "restarts": splitter.rules.restarts,
                            "seconds": round(time.perf_counter() - t0, 1)})
            print(f"{done:>9,} sentences  {texts:>8,} texts  RSS {samples[-1]['rss_mib']:8.1f} MiB  "
                  f"states {samples[-1]['automaton_states']:>5}  restarts {samples[-1]['restarts']}", flush=True)
            while next_mark <= done:
                next_mark += every
    warm = samples[min(1, len(samples) - 1)]["rss_mib"]
    return {"synthetic": True, "texts": "benchmarks/scoring/report_texts.py, seed %d (SYNTHETIC report-like texts)" % seed,
            "sentences": done, "report_texts": texts, "characters": chars, "max_states": MAX_STATES,
            "samples": samples, "rss_after_warmup_mib": warm, "rss_last_mib": samples[-1]["rss_mib"],
            "rss_growth_after_warmup_mib": round(samples[-1]["rss_mib"] - warm, 2),
            "seconds": round(time.perf_counter() - t0, 1), "python": platform.python_version(),
            "machine": platform.machine()}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sentences", type=int, default=1_000_000)
    p.add_argument("--every", type=int, default=50_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "splitter_soak.json"))
    args = p.parse_args(argv)
    if args.sentences < 1 or args.every < 1:
        p.error("--sentences and --every must be positive")
    result = soak(args.sentences, args.every, args.seed)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_result(out, result, seed=args.seed, indent=1)
    print(f"RSS after warm-up {result['rss_after_warmup_mib']:.1f} MiB, last {result['rss_last_mib']:.1f} MiB "
          f"({result['rss_growth_after_warmup_mib']:+.1f}); {result['seconds']:.0f} s; wrote {out}")


if __name__ == "__main__":
    main()

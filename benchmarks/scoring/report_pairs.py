"""The report pairs the scoring benchmarks run on (``bench_ratescore.py``'s three workloads; the sample
pairs of ``bench_autocast.py`` and of the parity tests; the shuffled reports of ``bench_ray.py`` and of
the memory run). See ``bench_ratescore.py``'s module doc for what each workload holds.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "data" / "samples" / "reports.jsonl"


def report_texts(path: Path = REPORTS) -> list[tuple[str, str]]:
    """``(anatomy, text)`` of every sample report: findings, a line break, the impression."""
    from data.annotation import read_reports

    return [(r.anatomy, r.text("findings") + "\n" + r.text("impression")) for r in read_reports(path)]


def sample_pairs(n: int, seed: int = 0, identical: int = 0) -> tuple[list[str], list[str]]:
    """``n`` (candidate, reference) pairs of different reports of the same anatomy, then
    ``identical`` pairs of a report with itself; deterministic for a seed."""
    rng = random.Random(seed)
    by_anatomy: dict[str, list[str]] = {}
    for anatomy, text in report_texts():
        by_anatomy.setdefault(anatomy, []).append(text)
    groups = [g for g in by_anatomy.values() if len(g) > 1]
    cands, refs = [], []
    for _ in range(n):
        a, b = rng.sample(rng.choice(groups), 2)
        cands.append(a)
        refs.append(b)
    for text in rng.sample([t for g in groups for t in g], identical):
        cands.append(text)
        refs.append(text)
    return cands, refs


def shuffled_reports(n: int, seed: int = 1) -> list[str]:
    """``n`` distinct synthetic reports, each 3-8 sentences drawn from same-anatomy reports."""
    from radscore.splitter import split_sentences

    rng = random.Random(seed)
    pools: dict[str, list[str]] = {}
    for anatomy, text in report_texts():
        pools.setdefault(anatomy, []).extend(split_sentences(text))
    names = sorted(pools)
    out = []
    for k in range(n):
        pool = pools[rng.choice(names)]
        out.append(" ".join(rng.sample(pool, min(len(pool), rng.randint(3, 8)))) + f" Series {k}.")
    return out


def sentence_pool(seed: int = 0, sizes: dict | None = None) -> list[str]:
    """Distinct sentences (default splitter, cleaned) of every sample report and of freshly
    generated SYNTHETIC ER²Score and ClinicalBLEURT rows (references and edited candidates),
    shuffled with ``seed``."""
    from data.annotation import read_reports
    from data.ratings import read_bleurt_jsonl, read_er2_jsonl
    from data.synth import generate
    from radscore.splitter import rush_splitter
    from radscore.text import clean_sentences

    texts = [r.text() for r in read_reports(REPORTS)]
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp, seed=seed, sizes={"rexval": 0, "task1": 0, "task2": 0, "task3": 0,
                                        **(sizes or {"er2": 900, "bleurt": 900})})
        rows = [*read_er2_jsonl(Path(tmp, "synthetic_er2", "radcliq_synthetic.jsonl")),
                *read_er2_jsonl(Path(tmp, "synthetic_er2", "mrscore_synthetic.jsonl")),
                *read_bleurt_jsonl(Path(tmp, "synthetic_bleurt", "clinical_bleurt_synthetic.jsonl"))]
    texts += [t for r in rows for t in (r.reference, r.candidate)]
    split = rush_splitter()
    pool = sorted({s for t in dict.fromkeys(texts) for s in clean_sentences(split(t))})
    random.Random(seed).shuffle(pool)
    return pool


def distinct_pairs(pool: list[str], n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n`` pairs of 4-9-sentence reports; takes their sentences from the end of ``pool`` (so no
    sentence occurs twice). Raises ``ValueError`` when the pool runs out."""
    rng = random.Random(seed)
    texts = []
    for _ in range(2 * n):
        k = rng.randint(4, 9)
        if len(pool) < k:
            raise ValueError(f"the sentence pool ran out after {len(texts)} reports; ask for fewer pairs")
        texts.append(" ".join(pool.pop() for _ in range(k)))
    return texts[:n], texts[n:]


def long_pairs(pool: list[str], n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n`` pairs of multi-section reports (see the module doc), sentences taken from ``pool``."""
    rng = random.Random(seed)
    texts = []
    for _ in range(2 * n):
        need = 3 + rng.randint(12, 20) + rng.randint(2, 4)
        if len(pool) < need:
            raise ValueError(f"the sentence pool ran out after {len(texts)} long reports; ask for fewer pairs")
        take = [pool.pop() for _ in range(need)]
        pre, body = take[:3], take[3:]
        n_imp = rng.randint(2, 4)
        findings, impression = body[:-n_imp], body[-n_imp:]
        lines = [f"{h}: {s}" for h, s in zip(("INDICATION", "TECHNIQUE", "COMPARISON"), pre)]
        lines += ["", "FINDINGS:", *findings, "", "IMPRESSION:"]
        lines += [f"{k}. {s}" for k, s in enumerate(impression, 1)]
        texts.append("\n".join(lines))
    return texts[:n], texts[n:]


def make_workloads(names: list[str], sizes: list[int]) -> dict[str, tuple[list[str], list[str]]]:
    out, pool = {}, None
    for name, n in zip(names, sizes):
        if name == "sample":
            out[name] = sample_pairs(n, seed=0)
        elif name in ("distinct", "long"):
            pool = sentence_pool() if pool is None else pool
            out[name] = (distinct_pairs if name == "distinct" else long_pairs)(pool, n, seed=1)
        else:
            raise ValueError(f"unknown workload {name!r}; expected sample, distinct or long")
    return out

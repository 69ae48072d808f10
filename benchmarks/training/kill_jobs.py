"""(module) The training jobs of the kill test (``python -m benchmarks.kill_test``), each shrunk to
seconds on one thread: tiny random backbones (``train.rehearsal.tiny``), the NER test fixture and
small SYNTHETIC sets (``data.synth``).

- ``ner-fit``, ``reward-fit``, ``bleurt-fit``: ``python -m train fit`` of the sample config with a
  tiny backbone, a few steps per epoch and ``last.ckpt`` at every epoch's end (the checkpoint
  interval is one epoch); resumed with ``--ckpt_path last``. Persisted: the global step of
  ``last.ckpt``. Changing the config before a resume must be refused in one line.
- ``tune``: ``python -m train tune-weights`` (the TPE search) on a small rating set with a tiny NER
  export; resumed by running it again (its optuna study in ``<run>/study.db``). Persisted: the
  study's complete trials. A changed objective must be refused in one line naming the study.
- ``export``: ``python -m train export`` of a finished NER run (rerun).
- ``publish-dry-run``: ``python -m train publish --dry-run`` of that run's export (rerun; it writes
  nothing, and the export must be left as it was).

After a kill (``check``): every checkpoint under its final name loads, every JSON parses, the study
file passes SQLite's integrity check, an export or bundle under its final name has its manifest and
every file loads, and what an export killed half-way left is refused by the export's reader with a
message naming it. After a resume or rerun the result is compared with an uninterrupted run's:
test metrics within the spread of two uninterrupted runs (and whether the exported weights are the
same bytes), the TPE search's best value and trial count, the export's files byte for byte, the
dry run's printout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import shutil
import sqlite3
from pathlib import Path

from benchmarks.kill_test import Job

ROOT = Path(__file__).resolve().parents[2]
HUB = ROOT / "tests" / "fixtures" / "ratener_hub"  # a NER test fixture publish recognises
FIT = {  # config, overrides; steps per epoch (the checkpoint interval) with these sizes
    "ner": ("configs/ner/iob_sample.yaml", lambda s: [f"--data.data_dir={HUB}", "--data.batch_size=2"]),
    "reward": ("configs/reward/sample.yaml", lambda s: [f"--data.rows={s['er2_rows']}", "--data.batch_size=6",
                                                        "--model.init_args.max_length=128"]),
    "bleurt": ("configs/bleurt/sample.yaml", lambda s: [f"--data.train_path={s['bleurt_rows']}",
                                                        "--data.batch_size=8", "--model.init_args.max_length=128"]),
}
PROGRESS_BAR = re.compile(r"[\w ]+:\s+\d+%\|[^|\n]*\|[^\[\n]*\[[^\]\n]*\]")  # tqdm: "Loading weights:  33%|██| 34/103 [...]"
SHALLOW_OFF = ("trainer:\n  callbacks:\n    - class_path: train.callbacks.RatedTestReport\n"
               "      init_args: {shallow: false}\n    - class_path: train.callbacks.Export\n")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fit-epochs", type=int, default=6, help="training jobs: epochs of each fit (a checkpoint each)")
    p.add_argument("--tune-trials", type=int, default=40, help="training jobs: trials of the TPE search")


def setup(root: Path, args) -> dict:
    """Tiny models, the SYNTHETIC sets, and one finished NER run for the export and publish jobs."""
    from data.synth import generate
    from train.rehearsal.tiny import build_tiny_bert, build_tiny_iob_export

    root.mkdir(parents=True)
    synth = root / "synthetic"
    generate(synth, seed=0, sizes={"rexval": 0, "task1": 0, "task2": 60, "task3": 0, "er2": 36, "bleurt": 40})
    out = {"backbone": build_tiny_bert(root / "tiny_bert", seed=0),
           "ner_export": build_tiny_iob_export(root / "tiny_ner", seed=0, head_std=0.3, o_bias=2.5),
           "er2_rows": str(synth / "synthetic_er2" / "radcliq_synthetic.jsonl"),
           "bleurt_rows": str(synth / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl"),
           "rate_eval": str(synth / "synthetic_rate_eval"), "epochs": args.fit_epochs, "trials": args.tune_trials}
    if {"export", "publish-dry-run"} & set(getattr(args, "jobs", JOBS)):
        run = root / "finished_ner"
        _overlay(run.parent / "finished_overlay.yaml", "ner")
        from train.__main__ import main as train_main

        code = train_main(_fit_argv("ner", out, run.parent / "finished_overlay.yaml", run))
        if code or not (run / "export").is_dir():
            raise RuntimeError(f"the finished NER run for the export jobs failed ({code})")
        out["finished_run"] = str(run)
    out["record"] = {"backbone": "tiny random BERT (train.rehearsal.tiny, seed 0)",
                     "ner_export": "tiny random IOB export (train.rehearsal.tiny, seed 0)",
                     "data": "NER: tests/fixtures/ratener_hub; the others SYNTHETIC (data.synth, seed 0): "
                             "36 ER² rows per system, 40 ClinicalBLEURT rows, 60 RaTE-Eval Task 2 pairs",
                     "fit_epochs": args.fit_epochs, "tune_trials": args.tune_trials,
                     "precision": "32-true", "checkpoint_interval": "one epoch (last.ckpt at every epoch's end)"}
    return out


# ---- reading what a run left --------------------------------------------------------------------
def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): _sha(p) for p in sorted(folder.rglob("*")) if p.is_file()}


_STEPS: dict[tuple, int] = {}


def ckpt_step(path: Path) -> int:
    """The global step a checkpoint holds (cached by inode, size and time: it is polled)."""
    import torch

    st = path.stat()
    key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _STEPS:
        _STEPS[key] = int(torch.load(path, map_location="cpu", weights_only=False)["global_step"])
    return _STEPS[key]


def _load_ckpt(path: Path) -> str | None:
    import torch

    try:
        torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # any failure to load is the finding
        return f"{path.name}: does not load ({type(err).__name__}: {str(err)[:120]})"
    return None


def _check_folder_files(folder: Path) -> list[str]:
    """Every JSON of a folder parses and every safetensors file opens."""
    bad = []
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        try:
            if p.suffix == ".json":
                json.loads(p.read_text())
            elif p.suffix == ".safetensors":
                from safetensors import safe_open

                with safe_open(str(p), "pt") as fh:
                    for key in fh.keys():
                        fh.get_tensor(key)
        except Exception as err:
            bad.append(f"{p.relative_to(folder.parent)}: does not load ({type(err).__name__})")
    return bad


def check_export(folder: Path, notes: list) -> list[str]:
    """An export (or bundle) under its final name loads; what a kill left in its place is refused
    with a message naming it (``refuse_unfinished_export`` of ``train.release.base``)."""
    from radscore.export import read_manifest
    from train.release.base import STAGING_PREFIX, refuse_unfinished_export

    traces = sorted(folder.parent.glob(f"{STAGING_PREFIX}{folder.name}-*"))
    try:
        refuse_unfinished_export(folder)
    except ValueError as err:
        named = any(str(t) in str(err) for t in traces) or str(folder) in str(err)
        if not named or "\n" in str(err):
            return [f"{folder.name}: refused, but the message does not name what was left: {err}"]
        notes.append(f"{folder.name}: a half-written export was refused, naming it")
        return []
    if not folder.is_dir():
        return []
    try:
        read_manifest(folder)
    except (ValueError, OSError) as err:
        return [f"{folder.name}: under its final name but does not load ({err})"]
    return _check_folder_files(folder)


def _study_trials(db: Path) -> int:
    if not db.is_file():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM trials WHERE state = 'COMPLETE'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0  # no trials table yet


# ---- the fit jobs ------------------------------------------------------------------------------
def _overlay(path: Path, task: str, lr_scale: float = 1.0) -> None:
    """The job's own config overlay (what the refusal test changes): the model's learning rate, and
    the rated tasks' test report without the shallow learner's fit."""
    from train.lightning.configs import read_yaml

    lr = float(read_yaml(ROOT / FIT[task][0])["model"]["init_args"]["lr"]) * lr_scale
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"model:\n  init_args:\n    lr: {lr!r}\n" + (SHALLOW_OFF if task != "ner" else ""))


def _fit_argv(task: str, s: dict, overlay: Path, run: Path) -> list[str]:
    config, extra = FIT[task]
    return ["fit", "--config", str(ROOT / config), "--config", str(overlay), *extra(s),
            f"--model.init_args.backbone={s['backbone']}", f"--trainer.max_epochs={s['epochs']}",
            "--trainer.precision=32-true", "--trainer.log_every_n_steps=1", "--trainer.enable_progress_bar=false",
            f"--run_dir={run}"]


def fit_job(task: str):
    def build(s: dict) -> Job:
        notes: list = []

        def prepare(work: Path) -> None:
            _overlay(work / "overlay.yaml", task)

        def command(work: Path):
            return "train.__main__", _fit_argv(task, s, work / "overlay.yaml", work / "run")

        def progress(work: Path) -> dict[str, int]:
            last = work / "run" / "ckpt" / "last.ckpt"
            try:
                return {"last.ckpt step": ckpt_step(last)}
            except (FileNotFoundError, KeyError):
                return {"last.ckpt step": 0}

        def check(work: Path) -> list[str]:
            from train.lightning.run_folder import RunFolder

            run = RunFolder(work / "run")
            bad = [b for p in sorted(run.ckpt.glob("*.ckpt")) if (b := _load_ckpt(p))]
            try:
                run.read_test_metrics()
            except ValueError as err:
                bad.append(str(err))
            return bad + check_export(run.export, notes)

        def summary(work: Path) -> dict:
            run = work / "run"
            last = ckpt_step(run / "ckpt" / "last.ckpt")
            return {"metrics": json.loads((run / "test_metrics.json").read_text()),
                    "export": _files(run / "export"), "last_step": last, "steps_per_epoch": last // s["epochs"]}

        def change(work: Path):
            path = work / "overlay.yaml"
            before = path.read_bytes()
            _overlay(path, task, lr_scale=2.0)
            return str(work / "run" / "ckpt" / "last.ckpt"), lambda: path.write_bytes(before)

        return Job(f"{task}-fit", prepare, command, lambda w: [], resume=["--ckpt_path", "last"], check=check,
                   change=change, complete_only=False, progress=progress, resumed_from=_fit_resumed_from,
                   summary=summary, compare=compare_fit, spread=spread_fit, notes=notes, chunk=None,
                   warm=_warm_training)
    return build


def _fit_resumed_from(log: str) -> int | None:
    found = re.findall(r"resuming from \S+ at step (\d+)", log)
    return int(found[-1]) if found else None


def _diff(a: float | None, b: float | None) -> float:
    """|a - b|; 0 when both are NaN (an undefined statistic on both sides), inf when one is missing or NaN."""
    if a is None or b is None:
        return math.inf
    if math.isnan(a) or math.isnan(b):
        return 0.0 if math.isnan(a) and math.isnan(b) else math.inf
    return abs(a - b)


def spread_fit(a: dict, b: dict) -> dict:
    keys = sorted(set(a["metrics"]) | set(b["metrics"]))
    diffs = {k: _diff(a["metrics"].get(k), b["metrics"].get(k)) for k in keys}
    return {"metrics_abs_diff": diffs, "largest_metric_abs_diff": max(diffs.values(), default=0.0),
            "export_files_differing": sorted(k for k in set(a["export"]) | set(b["export"])
                                             if a["export"].get(k) != b["export"].get(k)),
            "weights_bit_identical": _weights(a) == _weights(b)}


def _weights(result: dict) -> dict:
    """The exported model files (safetensors) of a fit's result."""
    return {k: v for k, v in result["export"].items() if k.endswith(".safetensors")}


def compare_fit(result: dict, ref: dict, spread: dict | None) -> dict:
    """Equal: every test metric within the spread of two uninterrupted runs (exactly equal when they
    agreed), the same final step; also whether the exported files are the same bytes."""
    allowed = (spread or {}).get("metrics_abs_diff", {})
    keys = sorted(set(result["metrics"]) | set(ref["metrics"]))
    diffs = {k: _diff(result["metrics"].get(k), ref["metrics"].get(k)) for k in keys}
    outside = [k for k, d in diffs.items() if not d <= allowed.get(k, 0.0)]
    return {"equal": not outside and result["last_step"] == ref["last_step"], "metrics_outside_spread": outside,
            "largest_metric_abs_diff": max(diffs.values(), default=0.0), "last_step": result["last_step"],
            "weights_bit_identical": _weights(result) == _weights(ref),
            "export_files_differing": sorted(k for k in set(result["export"]) | set(ref["export"])
                                             if result["export"].get(k) != ref["export"].get(k))}


# ---- the TPE search ----------------------------------------------------------------------------
def tune_job(s: dict) -> Job:
    notes: list = []

    def write_config(work: Path, correlation: str = "pearson") -> None:
        import yaml

        cfg = {"data": {"format": "rate_eval_task2", "path": s["rate_eval"], "splits": ["train", "test"],
                        "synthetic": True},
               "scorer": {"ner": s["ner_export"], "encoder": s["backbone"], "penalty": "official", "batch_size": 16},
               "objective": {"correlation": correlation, "higher_rating_is_better": True},
               "split": {"by": "group", "test_fraction": 0.2, "seed": 0},
               "search": {"n_trials": s["trials"], "sampler_seed": 0, "n_startup_trials": 10},
               "report": {"bootstrap_resamples": 50, "confidence": 0.95, "seed": 0},
               "run_dir": str(work / "run")}
        (work / "kill_tune.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))

    def command(work: Path):
        return "train.__main__", ["tune-weights", "--config", str(work / "kill_tune.yaml"), "--no-progress"]

    def progress(work: Path) -> dict[str, int]:
        return {"complete trials": _study_trials(work / "run" / "study.db")}

    def check(work: Path) -> list[str]:
        from radscore.scoring import AffinityMatrix

        run, bad = work / "run", []
        db = run / "study.db"
        if db.is_file():
            try:
                con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
                ok = con.execute("PRAGMA integrity_check").fetchone()[0]
                con.close()
                if ok != "ok":
                    bad.append(f"study.db: integrity check says {ok}")
            except sqlite3.Error as err:
                bad.append(f"study.db: does not open ({err})")
        if (run / "affinity_matrix.json").exists():
            try:
                AffinityMatrix.load(run / "affinity_matrix.json")
            except (ValueError, KeyError) as err:
                bad.append(f"affinity_matrix.json: does not load ({err})")
        if (run / "report.json").exists():
            try:
                json.loads((run / "report.json").read_text())
            except ValueError:
                bad.append("report.json: not whole JSON")
        return bad + check_export(run / "bundle", notes)

    def summary(work: Path) -> dict:
        report = json.loads((work / "run" / "report.json").read_text())
        return {"best_value": report["search"]["best_value"], "best_trial": report["search"]["best_trial"],
                "complete_trials": report["search"]["complete_trials"],
                "affinity_matrix": _sha(work / "run" / "affinity_matrix.json"),
                "bundle": _files(work / "run" / "bundle")}

    def compare(result: dict, ref: dict, spread: dict | None) -> dict:
        return {"equal": result["best_value"] == ref["best_value"] and result["complete_trials"] == ref["complete_trials"],
                "best_value": result["best_value"], "reference_best_value": ref["best_value"],
                "complete_trials": result["complete_trials"],
                "affinity_matrix_bit_identical": result["affinity_matrix"] == ref["affinity_matrix"]}

    def change(work: Path):
        path = work / "kill_tune.yaml"
        before = path.read_bytes()
        write_config(work, correlation="kendall")
        return "study 'kill_tune'", lambda: path.write_bytes(before)

    def resumed_from(log: str) -> int | None:
        found = re.findall(r"resuming study \S+ from (\d+) complete trials", log)
        return int(found[-1]) if found else None

    return Job("tune", write_config, command, lambda w: [], resume=[], check=check, change=change,
               complete_only=False, progress=progress, resumed_from=resumed_from, summary=summary,
               compare=compare, notes=notes, warm=_warm_training)


# ---- export and publish (reruns) ----------------------------------------------------------------
def export_job(s: dict) -> Job:
    notes: list = []

    def command(work: Path):
        return "train.__main__", ["export", s["finished_run"], "--out", str(work / "export")]

    def summary(work: Path) -> dict:
        return {"files": _files(work / "export")}

    def compare(result: dict, ref: dict, spread: dict | None) -> dict:
        return {"equal": result == ref, "files": len(result["files"])}

    return Job("export", lambda work: None, command, lambda w: [], check=lambda w: check_export(w / "export", notes),
               complete_only=False, summary=summary, compare=compare, notes=notes, warm=_warm_training)


def publish_job(s: dict) -> Job:
    export = Path(s["finished_run"]) / "export"

    def command(work: Path):
        return "train.__main__", ["publish", str(export), "--repo-id", "radscore-kill-test/tiny-ner", "--dry-run"]

    def check(work: Path) -> list[str]:
        return [] if _files(export) == s.setdefault("_export_files", _files(export)) else [
            f"{export}: changed by a dry run"]

    def summary(work: Path) -> dict:
        text = (work / "log_final.txt").read_text() if (work / "log_final.txt").exists() else (work / "log.txt").read_text()
        text = "\n".join(line for line in PROGRESS_BAR.sub("", text).splitlines() if line.strip())  # a progress
        # bar's steps and rates vary from run to run
        return {"printout": hashlib.sha256(text.encode()).hexdigest(), "lines": len(text.splitlines()),
                "export": _files(export)}

    def compare(result: dict, ref: dict, spread: dict | None) -> dict:
        return {"equal": result == ref, "lines": result["lines"]}

    return Job("publish-dry-run", lambda work: None, command, lambda w: [], check=check, complete_only=False,
               summary=summary, compare=compare, warm=_warm_training)


def _warm_training() -> None:
    """The fork launcher's children start with the training code imported."""
    import importlib

    for name in ("pytorch_lightning", "transformers", "train.__main__", "train.lightning.cli", "train.tune.cli",
                 "train.release.export", "train.release.publish"):
        importlib.import_module(name)


JOBS = {"ner-fit": fit_job("ner"), "reward-fit": fit_job("reward"), "bleurt-fit": fit_job("bleurt"),
        "tune": tune_job, "export": export_job, "publish-dry-run": publish_job}

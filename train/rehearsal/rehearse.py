"""``python -m train rehearse [--profile paper] [--only GLOB] [--fast]``: every paper config, run end to
end here, on stand-ins of the same model family and tokenizer kind, in the published data layouts.

For each config that names a Hub model or dataset (``configs/{ner,reward,bleurt,tune}/*.yaml``) and
each row of ``configs/ablations/paper.yaml``, the commands a user runs are run in this process,
through the same entry points (``python -m train …``, ``radscore``), stage by stage:

- NER / reward / BLEURT: ``fit`` (a few steps; it tests and exports as a real run does),
  ``validate``, ``test``, ``export``, ``score`` (the export loaded with ``radscore``, a few pairs
  scored) and ``publish --dry-run``;
- tune: ``tune-weights`` on a filled-in copy of the config (data in the published RaTE-Eval / ReXVal
  layouts, the NER export of the rehearsed ``iob_deberta_v3`` run, a few trials);
- ablations: ``python -m train ablations --table all`` with a filled-in copy of the paper profile
  whose rows all train and evaluate on the stand-ins.

What changes between the rehearsal and a real run is said here, once:

- Hub ids resolve to stand-ins through the one substitution point (:mod:`train.rehearsal.standins`); the
  code under rehearsal is the code of the real run;
- trainer overrides: the machine's accelerator (``--accelerator auto``: CUDA when there is one, else
  the CPU), one device, a few steps (:func:`rehearsal_trainer`); the precision stays the config's,
  except that on the CPU a stage that needs CUDA (fp16 mixed precision, 4-bit loading) is reported
  ``skipped: needs CUDA`` instead of being changed;
- local data paths that the user fills in (reward rows, BLEURT rows, RaTE-Eval, ReXVal) point to
  REHEARSAL data in the published layouts, generated from the sample corpus into
  ``checkpoints/rehearsal/data`` (``python -m data synth``; SYNTHETIC and REHEARSAL).

Writes ``checkpoints/rehearsal/report.json`` (``{"rehearsal": true, "configs": [...]}``, one entry
per config or ablation row with its stages, seconds, the real model's parameter counts and a GPU
memory estimate, :mod:`train.lightning.memory`) and ``report.md`` (the same as a table).
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import io
import json
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from train.lightning.configs import config_chain, read_configs, read_yaml
from train.rehearsal.comparators import StageSkipped

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "checkpoints" / "rehearsal"
# the config folders rehearsed, NER first: the tune configs use its export
TASK_FOLDERS = ("ner", "reward", "bleurt", "tune")
TRAINING_FOLDERS = ("ner", "reward", "bleurt")
# the command-line overrides that point a paper config's user-filled local data at the REHEARSAL rows
# ({data}: the rehearsal's data folder, {system}: the config's scoring system); NER's Hub dataset id
# resolves to a stand-in instead
REHEARSAL_ROWS = {
    "reward": ("--data.rows={data}/synthetic_er2/{system}_synthetic.jsonl", "--data.val_rows=null",
               "--data.test_rows=null"),
    "bleurt": ("--data.train_path={data}/synthetic_bleurt/clinical_bleurt_synthetic.jsonl", "--data.val_path=null",
               "--data.test_path=null", "--data.generate_synthetic=false"),
}
# the evaluation batches of every rehearsed stage: one batch of this many proves the evaluation path (the
# paper's 64 sentences through the paper-sized span head took about 8 s per batch on a 2-core CPU)
REHEARSAL_EVAL_BATCH = 8
ACCELERATORS = ("auto", "cpu", "gpu")
# the trainer overrides of every rehearsed stage, the accelerator aside (rehearsal_trainer adds it)
REHEARSAL_TRAINER = ["--trainer.devices=1", "--trainer.max_epochs=1",
                     "--trainer.max_steps=2", "--trainer.limit_val_batches=1", "--trainer.limit_test_batches=1",
                     "--trainer.log_every_n_steps=1", "--trainer.enable_progress_bar=false"]
CUDA_ONLY_PRECISIONS = {"16-mixed", "16", "16-true"}  # fp16 autocast: CUDA only in this setup
# --fast: one config per model family and data layout (the full run covers every config).
FAST = ("configs/ner/iob_deberta_v3.yaml", "configs/ner/span_biolord.yaml", "configs/reward/paper_llama3.yaml",
        "configs/reward/paper_llama3/vicuna_7b.yaml", "configs/bleurt/paper.yaml", "configs/tune/rate_eval_paragraph.yaml",
        "configs/tune/rexval.yaml")
SCORE_PAIRS = (["No pleural effusion. Heart size is normal.", "Small left pleural effusion."],
               ["Small right pleural effusion. Heart size is normal.", "No pleural effusion."])


def resolve_accelerator(choice: str = "auto") -> str:
    """``cpu`` or ``gpu``: ``auto`` is the GPU where CUDA is available; ``gpu`` without CUDA is an error."""
    import torch

    if choice not in ACCELERATORS:
        raise ValueError(f"--accelerator {choice!r}: expected one of {list(ACCELERATORS)}")
    cuda = torch.cuda.is_available()
    if choice == "gpu" and not cuda:
        raise ValueError("--accelerator gpu: torch sees no CUDA device on this machine (use auto or cpu)")
    return "gpu" if choice == "gpu" or (choice == "auto" and cuda) else "cpu"


def rehearsal_trainer(accelerator: str = "cpu") -> list[str]:
    """The trainer overrides of every rehearsed fit, validate and test on ``accelerator``."""
    return [f"--trainer.accelerator={accelerator}", *REHEARSAL_TRAINER]


class NeedsCuda(RuntimeError):
    """A stage that cannot run without CUDA (reported as ``skipped: needs CUDA``)."""


@dataclass
class Entry:
    """One line of the report."""

    config: str
    task: str
    real_model: str | None = None
    model_class: str | None = None
    tokenizer_class: str | None = None
    pad_token_at_load: str | None = None
    stages: dict = field(default_factory=dict)
    seconds: float = 0.0
    params_real: int | None = None
    trainable_params_real: int | None = None
    gpu_memory_estimate_gib: float | None = None
    memory: dict | None = None

    def ok(self) -> bool:
        return all(stage_ok(v) for v in self.stages.values())


# Stages that are not failures of the code under rehearsal: what needs CUDA, ablation rows whose
# data must be downloaded (nltk's WordNet for METEOR), and comparator rows (RadGraph F1, CheXbert,
# RadCliQ-v1, GREEN, SPICE: train.evaluation.comparators) whose package or Hub model is not on this
# machine, once the rehearsal has run that comparator's own code path (rehearse_comparators); a
# comparator row whose code path failed there fails too.
NOT_FAILURES = ("skipped: needs CUDA", "skipped: needs a download", "skipped: needs a comparator's")


def stage_ok(value: str) -> bool:
    return value == "ok" or value.startswith(NOT_FAILURES)


def row_status(status: str, comparator: str | None = None, code_path: str | None = None) -> str:
    """A table row's status as a rehearsal stage; ``comparator`` names the row's comparator and
    ``code_path`` is its stage in :meth:`Rehearsal.rehearse_comparators`."""
    if status == "measured":
        return "ok"
    if status.startswith("unavailable:") and "cannot be downloaded here" in status:
        return f"skipped: needs a download ({status.removeprefix('unavailable: ')})"
    if comparator is not None and status.startswith("skipped: needs "):
        if code_path is None or not stage_ok(code_path):
            return f"failed: {status}; its code path was not rehearsed ok ({code_path or 'not run'})"
        return f"skipped: needs a comparator's package or model ({status.removeprefix('skipped: needs ')})"
    return f"failed: {status}"


# --- discovery ----------------------------------------------------------------------------------

def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def names_hub_id(config: Path, hub_ids) -> bool:
    raw = read_configs(*config_chain(config))  # an overlay's base too: its values are the run's
    return any(s in hub_ids for s in _strings(raw))


def discover(hub_ids, only: str | None = None, fast: bool = False) -> list[tuple[str, str]]:
    """``(config path relative to the repo, task)`` of every config to rehearse, in dependency order
    (NER first: the tune configs and the ablations use its export)."""
    jobs = []
    for task in TASK_FOLDERS:
        for cfg in sorted((REPO / "configs" / task).rglob("*.yaml")):
            rel = cfg.relative_to(REPO).as_posix()
            if fast and rel not in FAST:
                continue
            if only and not fnmatch.fnmatch(rel, only):
                continue
            if names_hub_id(cfg, hub_ids):
                jobs.append((rel, task))
    return jobs


# --- the stages ---------------------------------------------------------------------------------

def _train(argv: list[str]) -> None:
    """What ``python -m train <argv>`` runs, in this process; a non-zero exit is an error."""
    from train.__main__ import main

    code = main(list(argv))
    if code not in (0, None):
        raise RuntimeError(f"python -m train {' '.join(argv[:3])} … exited with {code}")


def _trainer_section(cfg: dict) -> dict:
    return cfg.get("trainer") or {}


def _check_cuda_needs(cfg: dict, accelerator: str = "cpu") -> None:
    """On the CPU, what only CUDA runs is a :class:`NeedsCuda` (reported, not changed)."""
    if accelerator == "gpu":
        return
    precision = str(_trainer_section(cfg).get("precision", "32-true"))
    if precision in CUDA_ONLY_PRECISIONS:
        raise NeedsCuda(f"precision {precision}")
    init = (cfg.get("model") or {}).get("init_args") or {}
    if init.get("load_in_4bit") or init.get("load_in_8bit") or init.get("quantization"):
        raise NeedsCuda("quantised loading (bitsandbytes)")


# Also fit with DDP on two CPU processes (gloo), as a user's multi-GPU run would, one config per task.
DDP_CONFIGS = ("configs/ner/iob_deberta_v3.yaml", "configs/reward/paper_llama3.yaml", "configs/bleurt/paper.yaml")
DDP_TRAINER = ["--trainer.strategy=ddp", "--trainer.devices=2", "--trainer.accelerator=cpu"]


def _train_subprocess(argv: list[str], log: Path) -> None:
    """``python -m train <argv>`` in a child process (DDP's launcher re-runs the command for each
    rank, so it cannot run inside this one); the stand-ins come through the environment."""
    import subprocess

    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as fh:
        done = subprocess.run([sys.executable, "-m", "train", *argv], cwd=REPO, stdout=fh, stderr=subprocess.STDOUT,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    if done.returncode != 0:
        tail = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()][-3:]
        raise RuntimeError(f"python -m train {' '.join(argv[:2])} … exited with {done.returncode}: "
                           + " | ".join(tail))


class Rehearsal:
    def __init__(self, out: Path = OUT, progress: bool = True, quiet: bool = True, ddp: bool = True,
                 accelerator: str = "cpu"):
        self.out, self.progress, self.quiet, self.ddp = Path(out), progress, quiet, ddp
        self.accelerator = accelerator
        self.trainer = rehearsal_trainer(accelerator)
        self.data = self.out / "data"
        self.runs = self.out / "runs"
        self.filled = self.out / "configs"
        self.exports: dict[str, Path] = {}

    # -- helpers
    def say(self, text: str) -> None:
        if self.progress:
            print(f"[rehearse] {text}", flush=True)

    def stage(self, entry: Entry, name: str, fn) -> bool:
        t0 = time.perf_counter()
        sink = io.StringIO()
        try:
            with (contextlib.redirect_stdout(sink) if self.quiet else contextlib.nullcontext()), \
                    (contextlib.redirect_stderr(sink) if self.quiet else contextlib.nullcontext()):
                fn()
            entry.stages[name] = "ok"
        except NeedsCuda as exc:
            entry.stages[name] = f"skipped: needs CUDA ({exc})"
        except StageSkipped as exc:
            entry.stages[name] = str(exc)
        except BaseException as exc:  # noqa: BLE001 - every failure is reported, none stops the rehearsal
            if isinstance(exc, KeyboardInterrupt):
                raise
            first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
            entry.stages[name] = f"failed: {type(exc).__name__}: {first}"
            (self.out / "logs").mkdir(parents=True, exist_ok=True)
            log = self.out / "logs" / f"{entry.config.replace('/', '__')}.{name}.log"
            log.write_text(sink.getvalue() + "\n" + traceback.format_exc())
        self.say(f"{entry.config}: {name} {entry.stages[name]} ({time.perf_counter() - t0:.1f} s)")
        return entry.stages[name] == "ok"

    def ensure_data(self) -> None:
        """REHEARSAL data in the published layouts, from the sample corpus (SYNTHETIC)."""
        if not (self.data / "SYNTHETIC_README.md").is_file():
            from data.synth.generate import generate

            generate(self.data, seed=0, sizes={"rexval": 24, "task1": 60, "task2": 60, "task3": 30,
                                               "er2": 60, "bleurt": 60})
        (self.data / "REHEARSAL.md").write_text(
            "# REHEARSAL data\n\nSYNTHETIC sets in the published layouts (ReXVal, RaTE-Eval, ER², ClinicalBLEURT), "
            "generated from the radscore sample corpus by `python -m train rehearse` to run the paper configs "
            "on stand-ins. Not the papers' data; no figure from them is a benchmark result.\n")

    # -- one config
    def run_config(self, rel: str, task: str) -> Entry:
        from train.rehearsal.standins import describe_config

        facts = describe_config(REPO / rel)
        limits = facts.pop("limits", None)
        entry = Entry(config=rel, task=task, **facts)
        if limits:
            entry.stages["limits"] = limits
        t0 = time.perf_counter()
        cfg = read_configs(*config_chain(REPO / rel))  # an overlay after its base
        if str(entry.model_class or "").startswith("no stand-in"):
            entry.stages["all"] = f"not rehearsed: {entry.model_class}"
        elif task in TRAINING_FOLDERS:
            self.rehearse_training(entry, rel, task, cfg)
        elif task == "tune":
            self.rehearse_tune(entry, rel, cfg)
        entry.seconds = round(time.perf_counter() - t0, 1)
        return entry

    def data_overrides(self, task: str, cfg: dict | None = None) -> list[str]:
        """The task's REHEARSAL rows in place of the user's local data (:data:`REHEARSAL_ROWS`;
        none for NER, whose Hub dataset id resolves to the REHEARSAL RaTE-NER fixture), and evaluation
        batches of :data:`REHEARSAL_EVAL_BATCH`."""
        system = ((cfg or {}).get("model") or {}).get("init_args", {}).get("system") or "radcliq"
        rows = [arg.format(data=self.data, system=system) for arg in REHEARSAL_ROWS.get(task, ())]
        return [*rows, f"--data.eval_batch_size={REHEARSAL_EVAL_BATCH}"]

    def rehearse_training(self, entry: Entry, rel: str, task: str, cfg: dict) -> None:
        from train.ablations.profile import RunSpec
        from train.ablations.runs import run_folder
        from train.lightning.cli import fit_args
        from train.lightning.run_folder import RunFolder

        chain = [str(p) for p in config_chain(REPO / rel)]
        run = run_folder(RunSpec(configs=tuple(chain)), self.runs)  # where the ablation tables look for it
        overrides = [*self.trainer, *self.data_overrides(task, cfg)]
        common = fit_args(chain, run, overrides)[1:]  # the fit's arguments, for validate and test too

        def fit():
            _check_cuda_needs(cfg, self.accelerator)
            _train(fit_args(chain, run, overrides))

        if not self.stage(entry, "fit", fit):
            for name in ("validate", "test", "export", "score", "publish"):
                entry.stages[name] = "skipped: fit did not succeed"
            return
        ckpt = str(RunFolder(run).last_checkpoint)
        self.stage(entry, "validate", lambda: _train(["validate", *common, f"--ckpt_path={ckpt}"]))
        self.stage(entry, "test", lambda: _train(["test", *common, f"--ckpt_path={ckpt}"]))
        export = RunFolder(run).export
        self.stage(entry, "export", lambda: _train(["export", str(run), "--out", str(export)]))
        self.exports[rel] = export
        self.stage(entry, "score", lambda: score_export(export))
        publish_args = [str(export), "--repo-id", f"rehearsal/{Path(rel).stem.replace('_', '-')}", "--dry-run"]
        if REHEARSAL_ROWS.get(task):  # REHEARSAL rows are not the real data: say what they are
            publish_args += ["--dataset", "REHEARSAL: SYNTHETIC rows from the radscore sample corpus",
                             "--license", "other"]
        self.stage(entry, "publish", lambda: _train(["publish", *publish_args]))
        if self.ddp and rel in DDP_CONFIGS:
            ddp_run = run.with_name(run.name + "_ddp")
            args = fit_args(chain, ddp_run, [*overrides, *DDP_TRAINER])
            self.stage(entry, "ddp-fit", lambda: _train_subprocess(args, self.out / "logs" / f"{ddp_run.name}.log"))

    def rehearse_tune(self, entry: Entry, rel: str, cfg: dict) -> None:
        ner = self.exports.get("configs/ner/iob_deberta_v3.yaml")
        filled = fill_tune_config(cfg, self.data, ner)
        self.filled.mkdir(parents=True, exist_ok=True)
        path = self.filled / Path(rel).name
        path.write_text("# REHEARSAL copy of " + rel + " with its FILL IN fields filled\n"
                        + yaml.safe_dump(filled, sort_keys=False))
        run = self.runs / ("tune_" + Path(rel).stem)
        self.stage(entry, "tune-weights", lambda: _train(["tune-weights", "--config", str(path), "--n-trials", "4",
                                                          "--run-dir", str(run), "--no-progress"]))

    # -- all
    def run(self, jobs: list[tuple[str, str]], ablations: bool) -> dict:
        from train.rehearsal.standins import substitution

        self.out.mkdir(parents=True, exist_ok=True)
        self.ensure_data()
        entries = []
        with substitution(self.out / "standins"):
            for rel, task in jobs:
                entries.append(self.run_config(rel, task))
                self.write(entries)
            if ablations:
                comparators = self.rehearse_comparators()
                entries += comparators
                entries += self.rehearse_ablations({e.config.split("/", 1)[1]: e.stages["code path"]
                                                    for e in comparators})
                self.write(entries)
        return self.write(entries)

    def rehearse_comparators(self) -> list[Entry]:
        """Each comparator's code path (:mod:`train.evaluation.comparators`) on a stand-in, so that a
        user's first run with the package and its models does not meet an import or API error
        (:func:`train.rehearsal.comparators.rehearse_comparator`)."""
        from train.evaluation.comparators import COMPARATORS
        from train.rehearsal.comparators import rehearse_comparator

        out = []
        for name in COMPARATORS:
            entry = Entry(config=f"comparators/{name}", task="comparators")
            t0 = time.perf_counter()
            self.stage(entry, "code path", lambda name=name: rehearse_comparator(name, self.out / "comparators"))
            entry.seconds = round(time.perf_counter() - t0, 1)
            out.append(entry)
        return out

    def rehearse_ablations(self, code_paths: dict[str, str] | None = None) -> list[Entry]:
        from train.ablations.cli import main as ablations_main

        profile = fill_ablation_profile(read_yaml(REPO / "configs/ablations/paper.yaml"),
                                        self.data, self.runs, self.out / "ablations",
                                        {t: [*self.trainer, *self.data_overrides(t)] for t in TRAINING_FOLDERS})
        path = self.filled / "ablations_paper.yaml"
        self.filled.mkdir(parents=True, exist_ok=True)
        path.write_text("# REHEARSAL copy of configs/ablations/paper.yaml\n" + yaml.safe_dump(profile, sort_keys=False))
        entry = Entry(config="ablations", task="ablations")
        t0 = time.perf_counter()

        def run_tables():
            code = ablations_main(["--table", "all", "--profile-config", str(path), "--no-progress"])
            if code != 0:
                raise RuntimeError(f"python -m train ablations exited with {code}")

        self.stage(entry, "tables", run_tables)
        entry.seconds = round(time.perf_counter() - t0, 1)
        out = [entry]
        from train.ablations.paper import PAPER_TABLES, TABLE_NAMES
        from train.evaluation.comparators import COMPARATORS

        code_paths = code_paths or {}
        for table in TABLE_NAMES:
            measures = {r.label: r.measure for r in PAPER_TABLES[table].rows}
            result = self.out / "ablations" / f"{table}.json"
            if not result.is_file():
                out.append(Entry(config=f"ablations/{table}", task="ablations",
                                 stages={"table": "failed: table not written"}))
                continue
            for row in json.loads(result.read_text()).get("rows", []):
                if not row.get("in_paper", True) and row.get("status") != "measured":
                    continue  # a row of ours only that this profile does not map
                measure = measures.get(tuple(row["label"])) if row.get("in_paper", True) else None
                comparator = measure if measure in COMPARATORS else None
                status = row_status(str(row.get("status")), comparator, code_paths.get(comparator))
                out.append(Entry(config=f"ablations/{table}/{' / '.join(map(str, row['label']))}",
                                 task="ablations", stages={"row": status}))
        return out

    def write(self, entries: list[Entry]) -> dict:
        from radscore.atomic import write_text_atomic
        from radscore.environment import environment

        report = {"rehearsal": True, "accelerator": self.accelerator, "configs": [e.__dict__ for e in entries],
                  # no one precision: each config trains at its own; the sets' seed is 0
                  "environment": environment(seed=0)}
        write_text_atomic(self.out / "report.json", json.dumps(report, indent=1) + "\n")
        write_text_atomic(self.out / "report.md", to_markdown(entries, self.accelerator))
        return report


def score_export(export: Path) -> None:
    """Score :data:`SCORE_PAIRS` with the export as a user would: the scorer of the metric that
    loads its kind (:mod:`radscore.registry`)."""
    from radscore import registry
    from radscore.export import read_manifest

    cands, refs = SCORE_PAIRS
    spec = registry.spec_for_kind(read_manifest(export)["kind"])
    scores = registry.from_export(spec.name, str(export)).compute_score(cands, refs)
    if len(scores) != len(cands) or not all(isinstance(float(s), float) for s in scores):
        raise RuntimeError(f"{export}: expected {len(cands)} scores, got {scores!r}")


def fill_tune_config(cfg: dict, data: Path, ner: Path | None) -> dict:
    """The user's "FILL IN" fields, filled with REHEARSAL data and the rehearsed NER export."""
    cfg = json.loads(json.dumps(cfg))
    fmt = (cfg.get("data") or {}).get("format", "")
    folders = {"rate_eval": data / "synthetic_rate_eval", "rexval": data / "synthetic_rexval"}
    key = "rexval" if "rexval" in fmt else "rate_eval"
    cfg.setdefault("data", {})["path"] = str(folders[key])
    if ner is not None:
        cfg.setdefault("scorer", {})["ner"] = str(ner)
    search = cfg.setdefault("search", {})
    search["storage"] = None
    return cfg


def fill_ablation_profile(profile: dict, data: Path, runs: Path, out: Path, overrides: dict) -> dict:
    profile = json.loads(json.dumps(profile))
    profile["labels"] = {k: f"REHEARSAL ({v})" for k, v in (profile.get("labels") or {}).items()}
    profile["runs_root"] = str(runs)
    profile["output"] = str(out)
    # ReXVal is a PhysioNet download the user fills in; RaTE-Eval stays the Hub id (its stand-in)
    profile.setdefault("data", {}).update({"rexval": str(data / "synthetic_rexval")})
    profile["run_overrides"] = overrides  # the rehearsal's own fit arguments, so its runs are reused
    return profile


def to_markdown(entries: list[Entry], accelerator: str = "cpu") -> str:
    lines = ["# REHEARSAL report: paper configs on same-family stand-ins (not the papers' results)", "",
             f"Stages trained on: {'CUDA' if accelerator == 'gpu' else 'the CPU'} (`--accelerator`).", "",
             "| config | real model | model class | tokenizer | pad at load | stages | s | params (real) | "
             "trainable (real) | GPU GiB (est.) |", "|---|---|---|---|---|---|---:|---:|---:|---:|"]
    for e in entries:
        bad = {k: v for k, v in e.stages.items() if v != "ok"}
        stages = ("all ok" if not bad and e.stages else "; ".join(f"{k}: {v}" for k, v in bad.items())).replace("|", "/")
        pad = "" if not e.real_model else (e.pad_token_at_load.replace("|", "\\|") if e.pad_token_at_load is not None
                                           else "(none)")
        fmt = lambda n: f"{n / 1e6:,.1f}M" if n else ""  # noqa: E731
        lines.append(f"| {e.config} | {e.real_model or ''} | {e.model_class or ''} | {e.tokenizer_class or ''} | "
                     f"{pad} | {stages} | "
                     f"{e.seconds:g} | {fmt(e.params_real)} | {fmt(e.trainable_params_real)} | "
                     f"{e.gpu_memory_estimate_gib if e.gpu_memory_estimate_gib is not None else ''} |")
    lines += ["", "GPU memory: weights + gradients + AdamW state + activations at the config's batch size, "
              "max_length and precision (train/lightning/memory.py says how); a planning figure, not a measurement.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train rehearse", description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="paper", choices=["paper"], help="only the paper profile has Hub ids")
    parser.add_argument("--only", default=None, help="glob over config paths, e.g. 'configs/ner/*'")
    parser.add_argument("--fast", action="store_true", help="one config per model family and data layout")
    parser.add_argument("--no-ablations", action="store_true", help="skip the ablation tables")
    parser.add_argument("--no-ddp", action="store_true", help="skip the two-process DDP fits")
    parser.add_argument("--accelerator", default="auto", choices=ACCELERATORS,
                        help="where the stages train: auto (CUDA when present, else the CPU), cpu or gpu")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    try:
        accelerator = resolve_accelerator(args.accelerator)
    except ValueError as err:
        parser.error(str(err))
    from train.rehearsal.standins import hub_ids

    jobs = discover(hub_ids(), args.only, args.fast)
    reh = Rehearsal(Path(args.out), ddp=not args.no_ddp, accelerator=accelerator)
    reh.say(f"accelerator: {accelerator}")
    report = reh.run(jobs, ablations=not args.no_ablations and not args.only and not args.fast)
    entries = report["configs"]
    failed = [e["config"] for e in entries if not all(stage_ok(v) for v in e["stages"].values())]
    print(f"\n{len(entries)} configs/rows rehearsed, {len(entries) - len(failed)} ok; report: "
          f"{Path(args.out) / 'report.md'}")
    for name in failed:
        print(f"  not ok: {name}", file=sys.stderr)
    return 1 if failed else 0

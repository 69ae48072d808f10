"""Training runs behind the ablation tables: reuse a finished run, or train it with
``python -m train fit --config …`` (the same command a user runs, in a subprocess).

A run folder is where that command puts it by default, under ``<runs_root>`` instead of
``checkpoints`` (:func:`run_folder`). It counts as finished when it holds
``export/radscore_manifest.json`` and ``test_metrics.json``; it is reused when, in addition, the
config its configs and overrides resolve to (through the training CLI, defaults filled in) equals
the resolved config the run saved (``export/training_config.yaml``, else its newest
``logs/version_*/config.yaml``). Settings that do not change what is trained (:data:`IGNORED_KEYS`)
are not compared. Otherwise the run is trained (again) in that folder.

Before training, every model, dataset and data file the configs name is checked
(:func:`train.ablations.resources.check_run_resources`), so a missing one fails in one line.
The child's stderr is shown live and kept in ``<run>/ablations_fit.log``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from radscore.atomic import write_text_atomic
from radscore.export import MANIFEST
from train.ablations.profile import ProfileError, RunSpec
from train.ablations.resources import ResourceUnavailable, RowUnavailable, check_run_resources
from train.lightning.configs import ConfigError, read_configs
from train.lightning.cli import resolve
from train.lightning.run_folder import CHECKPOINTS, RunFolder, default_run_dir

REPO = Path(__file__).resolve().parents[2]
IGNORED_KEYS = ("run_dir", "wandb", "config", "trainer.default_root_dir", "trainer.logger",
                "trainer.enable_progress_bar", "trainer.enable_model_summary", "trainer.callbacks",
                "checkpoint.dirpath", "data.init_args.num_workers", "data.init_args.eval_batch_size")


class RunFailed(RowUnavailable):
    """A training run that did not finish."""


# ---- configs: resolve, flatten, compare ---------------------------------------------------------
def flatten(tree: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def override_key(item: str) -> str:
    """The dotted key an override ``--key=value`` sets (``--model.lr`` is ``model.init_args.lr``)."""
    parts = item[2:].partition("=")[0].split(".")
    if parts[0] in ("model", "data") and len(parts) > 1 and parts[1] not in ("class_path", "init_args"):
        parts.insert(1, "init_args")
    return ".".join(parts)


def _number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):  # PyYAML reads 1e-3 as a string; jsonargparse as a number
        try:
            return float(value)
        except ValueError:
            return None
    return None


def same_value(key: str, stated, saved) -> bool:
    if key.endswith("class_path") and isinstance(stated, str) and isinstance(saved, str):
        return stated.rsplit(".", 1)[-1] == saved.rsplit(".", 1)[-1]
    a, b = _number(stated), _number(saved)
    if a is not None and b is not None and not (isinstance(stated, str) and isinstance(saved, str)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(stated, dict) and isinstance(saved, dict):
        return not differences(flatten(stated), flatten(saved))
    if isinstance(stated, (list, tuple)) and isinstance(saved, (list, tuple)):
        return len(stated) == len(saved) and all(same_value(key, a, b) for a, b in zip(stated, saved))
    return stated == saved


NOT_SET = object()


def differences(wanted: dict, saved: dict, stated: set | None = None) -> dict:
    """``{key: (run's value, wanted value)}`` for every flat key of ``wanted`` the saved config does
    not match (:data:`IGNORED_KEYS` aside). A key the saved config lacks counts (the run's value
    :data:`NOT_SET`) only when it is in ``stated`` (every key when None): a run from before a
    setting existed is not retrained for that setting's default."""
    out = {}
    for key, value in wanted.items():
        if key in IGNORED_KEYS or any(key.startswith(k + ".") for k in IGNORED_KEYS):
            continue
        if key not in saved:
            if value is not None and (stated is None or key in stated):
                out[key] = (NOT_SET, value)
        elif not same_value(key, value, saved[key]):
            out[key] = (saved[key], value)
    return out


def describe_differences(differing: dict) -> list[str]:
    """``key: run has X, config says Y`` for each entry of :func:`differences`."""
    return [f"{key}: not in the run's config, config says {want!r}" if have is NOT_SET
            else f"{key}: run has {have!r}, config says {want!r}"
            for key, (have, want) in differing.items()]


def stated_config(configs, overrides=()) -> dict:
    """The flat keys the config files state, as written, with the overrides (``--key=value``) applied."""
    import yaml

    try:
        flat = flatten(read_configs(*configs))
    except ConfigError as err:
        raise RunFailed(str(err)) from None
    for item in overrides:
        text = item.partition("=")[2]
        flat[override_key(item)] = yaml.safe_load(text) if text else None
    return flat


def run_differences(configs, saved: dict, overrides=()) -> dict:
    """:func:`differences` of a run's saved config against what ``configs`` with ``overrides``
    resolve to through the training CLI (defaults filled in, as the run saved them)."""
    wanted = flatten(resolve(*configs, args=tuple(overrides)))
    return differences(wanted, flatten(saved), set(stated_config(configs, overrides)))


def saved_config(run_dir: Path) -> dict | None:
    import yaml

    run = RunFolder(run_dir)
    candidates = [run.export / "training_config.yaml", *reversed(run.logged_configs)]
    for path in candidates:
        if path.is_file():
            return yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return None


def task_of(spec: RunSpec) -> str:
    """The task folder of a run's first config (``configs/<task>/…``): the key of ``run_overrides``."""
    return Path(spec.configs[0]).parent.name


def run_folder(spec: RunSpec, root: Path = CHECKPOINTS) -> Path:
    """Where ``python -m train fit`` puts the run by default (under ``root``), so that a run made by
    ``make train-reward`` is found and reused; a spec's explicit ``name`` is used as given."""
    return root / spec.name if spec.name else default_run_dir(spec.configs[-1], root)


# ---- runs ----------------------------------------------------------------------------------------
@dataclass
class RunResult:
    spec: RunSpec
    task: str
    run_dir: Path
    status: str                      # "reused" or "trained"
    seconds: float
    test_metrics: dict
    config: dict = field(default_factory=dict)  # the configs' flat keys as written (what the profile stated)

    @property
    def export(self) -> Path:
        return RunFolder(self.run_dir).export

    def source(self) -> str:
        return f"run {self.run_dir} ({self.status})"

    def to_dict(self) -> dict:
        return {"name": self.spec.run_name, "task": self.task, "run_dir": str(self.run_dir), "status": self.status,
                "seconds": round(self.seconds, 1), "configs": list(self.spec.configs),
                "overrides": list(self.spec.overrides)}


def finished(run_dir: Path) -> bool:
    run = RunFolder(run_dir)
    return (run.export / MANIFEST).is_file() and run.test_metrics.is_file()


class RunManager:
    """Reuses or trains the runs the tables ask for, each once per command."""

    def __init__(self, runs_root: Path, run_overrides: dict | None = None, progress: bool = True,
                 python: str = sys.executable):
        self.runs_root, self.run_overrides = Path(runs_root), dict(run_overrides or {})
        self.progress, self.python = progress, python
        self.done: dict[str, RunResult | RowUnavailable] = {}
        self.specs: dict[str, RunSpec] = {}
        self.requested: list[str] = []  # run names in the order tables asked for them

    def _say(self, message: str) -> None:
        if self.progress:
            print(f"[ablations] {message}", flush=True)

    def ensure(self, spec: RunSpec) -> RunResult:
        name = spec.run_name
        if name in self.specs and self.specs[name] != spec:
            raise ProfileError(f"run name {name!r} is used by two different runs ({self.specs[name].describe()} and "
                               f"{spec.describe()}); give one of them a name")
        self.specs[name] = spec
        self.requested.append(name)
        if name not in self.done:
            try:
                self.done[name] = self._ensure(spec)
            except RowUnavailable as err:
                self.done[name] = err
        outcome = self.done[name]
        if isinstance(outcome, RowUnavailable):
            raise outcome
        return outcome

    def _ensure(self, spec: RunSpec) -> RunResult:
        t0 = time.perf_counter()
        task = task_of(spec)
        overrides = (*self.run_overrides.get(task, ()), *spec.overrides)
        stated = stated_config(spec.configs, overrides)
        run_dir = run_folder(spec, self.runs_root)
        why = "no finished run (export and test_metrics.json)"
        if finished(run_dir):
            saved = saved_config(run_dir)
            diffs = (["the run saved no config"] if saved is None
                     else describe_differences(run_differences(spec.configs, saved, overrides)))
            if not diffs:
                self._say(f"reusing {run_dir} ({spec.describe()})")
                return RunResult(spec, task, run_dir, "reused", 0.0, _metrics(run_dir), stated)
            why = "its config differs: " + "; ".join(diffs[:3]) + (" …" if len(diffs) > 3 else "")
        check_run_resources(stated, spec.describe())
        self._say(f"training {spec.run_name} into {run_dir}: {why}")
        self._fit(spec, task, run_dir)
        if not finished(run_dir):
            raise RunFailed(f"training {spec.run_name} ended without an export and test_metrics.json in {run_dir}")
        return RunResult(spec, task, run_dir, "trained", time.perf_counter() - t0, _metrics(run_dir), stated)

    def command(self, spec: RunSpec, task: str, run_dir: Path) -> list[str]:
        from train.lightning.cli import fit_args

        return [self.python, "-m", "train",
                *fit_args(spec.configs, run_dir, (*self.run_overrides.get(task, ()), *spec.overrides))]

    def _fit(self, spec: RunSpec, task: str, run_dir: Path) -> None:
        cmd = self.command(spec, task, run_dir)
        self._say("$ " + " ".join(cmd[1:]))
        run_dir.mkdir(parents=True, exist_ok=True)
        log_path = run_dir / "ablations_fit.log"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
        stdout = None if self.progress else subprocess.DEVNULL
        with log_path.open("wb") as log:
            proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
            tail = bytearray()
            reader = threading.Thread(target=_pump, args=(proc.stderr, log, tail, self.progress), daemon=True)
            reader.start()
            code = proc.wait()
            reader.join()
        if code != 0:
            raise RunFailed(f"training {spec.run_name} failed (exit code {code}): {_last_error(bytes(tail))} "
                            f"(log: {log_path})")

    # ---- NER runs evaluated on another subset's test split ---------------------------------------
    def ner_test_metrics(self, result: RunResult, subset: str) -> dict:
        """The run's test metrics on ``subset``'s test split: ``test_metrics.json`` when it was
        trained on that subset, else its exported checkpoint tested there (cached in the run folder)."""
        if str(result.config.get("data.init_args.subset", "all")) == subset:
            return result.test_metrics
        from train.release.base import check_export_folder, find_checkpoint

        ckpt = Path(check_export_folder(result.export).get("checkpoint") or "")
        if not ckpt.is_file():
            try:
                ckpt = find_checkpoint(result.run_dir)
            except FileNotFoundError as err:
                raise RunFailed(f"cannot test {result.spec.run_name} on the {subset!r} test split: {err}") from None
        key = {"checkpoint": str(ckpt), "mtime": ckpt.stat().st_mtime, "subset": subset}
        cache = result.run_dir / "ablations" / f"test_metrics_{subset}.json"
        if cache.is_file():
            try:
                saved = json.loads(cache.read_text())
            except (json.JSONDecodeError, UnicodeDecodeError):  # cut short by a kill before its writes were atomic
                saved = {}
            if saved.get("key") == key:
                return saved["metrics"]
        self._say(f"testing {result.spec.run_name} on the {subset!r} test split ({ckpt})")
        from train.lightning.cli import RadscoreCLI
        from train.lightning.configs import config_args

        argv, sys.argv = sys.argv, sys.argv[:1]  # LightningCLI(args=…) warns when sys.argv holds other arguments
        try:
            cli = RadscoreCLI(run=False, args=[
                *config_args(result.spec.configs), *self.run_overrides.get("ner", ()), *result.spec.overrides,
                f"--data.subset={subset}", f"--run_dir={result.run_dir}", "--trainer.logger=false",
                f"--trainer.enable_progress_bar={str(self.progress).lower()}"])
        finally:
            sys.argv = argv
        out = cli.trainer.test(cli.model, datamodule=cli.datamodule, ckpt_path=str(ckpt), verbose=False,
                                weights_only=True)
        metrics = {k: float(v) for k, v in (out[0] if out else {}).items()}
        cache.parent.mkdir(parents=True, exist_ok=True)
        from radscore.environment import environment

        env = environment(precision=getattr(cli.trainer, "precision", None), seed=cli.config.get("seed_everything"))
        write_text_atomic(cache, json.dumps({"key": key, "metrics": metrics, "environment": env}, indent=1,
                                            sort_keys=True) + "\n")
        return metrics

    def summary(self, names=None) -> list[dict]:
        """Every run of this command (or of ``names``): reused, trained or failed, and why."""
        out = []
        for name, outcome in self.done.items():
            if names is not None and name not in names:
                continue
            if isinstance(outcome, RunResult):
                out.append(outcome.to_dict())
            else:
                spec = self.specs[name]
                out.append({"name": name, "status": "failed", "reason": str(outcome),
                            "configs": list(spec.configs), "overrides": list(spec.overrides)})
        return out


def _metrics(run_dir: Path) -> dict:
    return {k: float(v) for k, v in RunFolder(run_dir).read_test_metrics().items()}


def _pump(stream, log, tail: bytearray, echo: bool) -> None:
    """Copy the child's stderr to the log (and the terminal), keeping the last 8 kB."""
    out = sys.stderr.buffer if hasattr(sys.stderr, "buffer") else None
    for chunk in iter(lambda: stream.read1(4096), b""):
        log.write(chunk)
        tail.extend(chunk)
        del tail[:-8192]
        if echo and out is not None:
            out.write(chunk)
            out.flush()


def _last_error(tail: bytes) -> str:
    lines = [ln.strip() for ln in tail.decode("utf-8", "replace").replace("\r", "\n").splitlines() if ln.strip()]
    for line in reversed(lines):
        head = line.split(":", 1)[0]
        if head.endswith(("Error", "Exception")) or head in ("KeyboardInterrupt", "SystemExit"):
            return line[:300]
    return lines[-1][:300] if lines else "no output"


__all__ = ["RunManager", "RunResult", "RunFailed", "ResourceUnavailable", "RowUnavailable", "flatten",
           "run_differences", "describe_differences", "saved_config", "finished"]

"""Training runs behind the ablation tables: reuse a finished run, or train it the way
``python -m train <task> fit --config …`` does (the same command, in a subprocess).

A run folder is ``<runs_root>/<run name>`` (the run name is the last config's stem, as
``python -m train``). It counts as finished when it holds ``export/radscore_manifest.json`` and
``test_metrics.json``; it is reused when, in addition, every setting that the run's configs and
overrides state explicitly equals the resolved config the run saved (``export/training_config.yaml``,
else its newest ``logs/version_*/config.yaml``). Settings that do not change what is trained
(:data:`IGNORED_KEYS`) are not compared. Otherwise the run is trained (again) in that folder.

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
from functools import lru_cache
from pathlib import Path

from radscore.export import MANIFEST
from train.ablations.profile import ProfileError, RunSpec
from train.ablations.resources import ResourceUnavailable, RowUnavailable, check_run_resources
from train.lightning.configs import deep_merge
from train.lightning.run_folder import RunFolder, default_run_name
from train.tasks import TRAINING_TASKS

REPO = Path(__file__).resolve().parents[2]
TASKS = tuple(TRAINING_TASKS)
IGNORED_KEYS = ("run_dir", "wandb", "config", "trainer.default_root_dir", "trainer.logger",
                "trainer.enable_progress_bar", "trainer.enable_model_summary", "checkpoint.dirpath",
                "data.num_workers", "data.eval_batch_size")


class RunFailed(RowUnavailable):
    """A training run that did not finish."""


# ---- configs: merge, flatten, compare ---------------------------------------------------------
def _read_yaml(path: str) -> dict:
    from train.lightning.configs import ConfigError, load_config

    try:
        return load_config(path)  # an overlay resolved through its base, as the training CLI does
    except ConfigError as err:
        raise RunFailed(f"config {path!r}: {err}") from None


def _override_key(key: str) -> list[str]:
    parts = key.split(".")
    if parts[0] == "model" and len(parts) > 1 and parts[1] not in ("class_path", "init_args"):
        parts.insert(1, "init_args")  # jsonargparse's shorthand --model.lr for --model.init_args.lr
    return parts


def merged_config(spec: RunSpec, extra_overrides: tuple[str, ...] = ()) -> dict:
    """The configs merged in order (later keys win, as jsonargparse), then the overrides."""
    import yaml

    merged: dict = {}
    for path in spec.configs:
        merged = deep_merge(merged, _read_yaml(path))
    for item in (*extra_overrides, *spec.overrides):
        key, _, text = item[2:].partition("=")
        parts = _override_key(key)
        node = merged
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ProfileError(f"override {item!r}: {part!r} is not a section")
        node[parts[-1]] = yaml.safe_load(text) if text else None
    return merged


def flatten(tree: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


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
        return not config_differences(flatten(stated), flatten(saved))
    if isinstance(stated, (list, tuple)) and isinstance(saved, (list, tuple)):
        return len(stated) == len(saved) and all(same_value(key, a, b) for a, b in zip(stated, saved))
    return stated == saved


def differing_settings(stated: dict, saved: dict) -> dict:
    """``{key: (run's value, config's value)}`` for every stated setting the saved config does not
    match (the run's value :data:`NOT_SET` where its config lacks the key)."""
    out = {}
    for key, value in stated.items():
        if key in IGNORED_KEYS or any(key.startswith(k + ".") for k in IGNORED_KEYS):
            continue
        if key not in saved:
            if value is not None:
                out[key] = (NOT_SET, value)
        elif not same_value(key, value, saved[key]):
            out[key] = (saved[key], value)
    return out


NOT_SET = object()


def describe_differences(differing: dict) -> list[str]:
    """``key: run has X, config says Y`` for each entry of :func:`differing_settings`."""
    return [f"{key}: not in the run's config, config says {want!r}" if have is NOT_SET
            else f"{key}: run has {have!r}, config says {want!r}"
            for key, (have, want) in differing.items()]


def config_differences(stated: dict, saved: dict) -> list[str]:
    """``key: run has X, config says Y`` for every stated setting the saved config does not match."""
    return describe_differences(differing_settings(stated, saved))


def run_differs_from_config(config: str, saved: dict, overrides: tuple[str, ...] = (), task: str | None = None) -> dict:
    """:func:`differing_settings` of a run's saved config against ``config`` with ``overrides``
    (``--key=value`` each, e.g. the run's seed): what the run set otherwise than the config states,
    and otherwise than the defaults of what it leaves unstated (:func:`default_differences`; ``task``:
    the training task whose CLI fills them in, by default read from the configs' or the run's
    ``model.class_path``)."""
    spec = RunSpec((config,), tuple(overrides))
    stated, flat = flatten(merged_config(spec)), flatten(saved)
    return {**differing_settings(stated, flat), **default_differences(spec, stated, flat, task=task)}


#: the sections whose settings a config leaves to their defaults are compared with those defaults too
DEFAULTED_SECTIONS = ("model.", "data.")


def default_differences(spec: RunSpec, stated: dict, saved: dict, extra_overrides: tuple[str, ...] = (),
                        task: str | None = None) -> dict:
    """:func:`differing_settings` over the model and data settings that ``spec``'s configs and overrides
    leave to their defaults (``stated``: theirs, flattened), against those defaults as the task's CLI fills
    them in: a run given another value on its command line (``--model.init_args.candidate_format=diff_marked``)
    is not the config's run. Settings the run's saved config lacks (a run from before they existed) are not
    compared, nor :data:`IGNORED_KEYS`."""
    if task is None:
        merged = merged_config(spec, extra_overrides)
        if not (merged.get("model") or {}).get("class_path") and saved.get("model.class_path"):
            merged = {"model": {"class_path": saved["model.class_path"]}}  # a config that leaves it to its CLI
        task = task_of(merged, spec)
    defaults = flatten(_cli_defaults(task, tuple(str(c) for c in spec.configs), (*extra_overrides, *spec.overrides)))
    unstated = {k: v for k, v in defaults.items() if k.startswith(DEFAULTED_SECTIONS) and k not in stated and k in saved}
    return differing_settings(unstated, saved)


@lru_cache(maxsize=64)
def _cli_defaults(task: str, configs: tuple[str, ...], overrides: tuple[str, ...]) -> dict:
    from train.lightning.configs import resolve_cli_config

    more = [a for c in configs[1:] for a in ("--config", c)]
    return resolve_cli_config(task, configs[0], *more, *overrides)


def saved_config(run_dir: Path) -> dict | None:
    import yaml

    run = RunFolder(run_dir)
    candidates = [run.export / "training_config.yaml", *reversed(run.logged_configs)]
    for path in candidates:
        if path.is_file():
            return yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return None


def task_of(merged: dict, spec: RunSpec) -> str:
    class_path = str((merged.get("model") or {}).get("class_path") or "")
    parts = class_path.split(".")
    if len(parts) >= 2 and parts[0] == "train" and parts[1] in TASKS:
        return parts[1]
    raise RunFailed(f"{spec.describe()}: model.class_path {class_path!r} is not a model of train.ner, "
                    "train.reward or train.bleurt")


def run_folder(task: str, spec: RunSpec) -> str:
    """The run folder's name: the one ``python -m train <task> fit`` picks by default (the task's
    CLI prefix, e.g. ``reward_`` and ``bleurt_``, before the last config's stem), so a run made by
    ``make train-reward`` is found and reused; a spec's explicit ``name`` is used as given."""
    if spec.name:
        return spec.name
    return default_run_name(TRAINING_TASKS[task].run_prefix, spec.run_name)


# ---- runs ----------------------------------------------------------------------------------------
@dataclass
class RunResult:
    spec: RunSpec
    task: str
    run_dir: Path
    status: str                      # "reused" or "trained"
    seconds: float
    test_metrics: dict
    config: dict = field(default_factory=dict)  # flat merged config (what the profile stated)

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
        first = merged_config(spec)
        task = task_of(first, spec)
        merged = merged_config(spec, tuple(self.run_overrides.get(task, ())))
        flat = flatten(merged)
        run_dir = self.runs_root / run_folder(task, spec)
        why = "no finished run (export and test_metrics.json)"
        if finished(run_dir):
            saved = saved_config(run_dir)
            diffs = (["the run saved no config"] if saved is None else config_differences(flat, flatten(saved))
                     + describe_differences(default_differences(spec, flat, flatten(saved),
                                                                tuple(self.run_overrides.get(task, ())), task)))
            if not diffs:
                self._say(f"reusing {run_dir} ({spec.describe()})")
                return RunResult(spec, task, run_dir, "reused", 0.0, _metrics(run_dir), flat)
            why = "its config differs: " + "; ".join(diffs[:3]) + (" …" if len(diffs) > 3 else "")
        check_run_resources(flat, spec.describe())
        self._say(f"training {spec.run_name} into {run_dir}: {why}")
        self._fit(spec, task, run_dir)
        if not finished(run_dir):
            raise RunFailed(f"training {spec.run_name} ended without an export and test_metrics.json in {run_dir}")
        return RunResult(spec, task, run_dir, "trained", time.perf_counter() - t0, _metrics(run_dir), flat)

    def command(self, spec: RunSpec, task: str, run_dir: Path) -> list[str]:
        configs = [a for c in spec.configs for a in ("--config", c)]
        return [self.python, "-m", "train", task, "fit", *configs, *self.run_overrides.get(task, ()),
                *spec.overrides, f"--run_dir={run_dir}"]

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
        if str(result.config.get("data.subset", "all")) == subset:
            return result.test_metrics
        from radscore.export import read_manifest
        from train.release.base import find_checkpoint

        ckpt = Path(read_manifest(result.export).get("checkpoint") or "")
        if not ckpt.is_file():
            try:
                ckpt = find_checkpoint(result.run_dir)
            except FileNotFoundError as err:
                raise RunFailed(f"cannot test {result.spec.run_name} on the {subset!r} test split: {err}") from None
        key = {"checkpoint": str(ckpt), "mtime": ckpt.stat().st_mtime, "subset": subset}
        cache = result.run_dir / "ablations" / f"test_metrics_{subset}.json"
        if cache.is_file():
            saved = json.loads(cache.read_text())
            if saved.get("key") == key:
                return saved["metrics"]
        self._say(f"testing {result.spec.run_name} on the {subset!r} test split ({ckpt})")
        from train.ner.cli import NERCLI
        from train.ner.data import NERDataModule
        from train.ner.modules import NERTagger

        configs = [a for c in result.spec.configs for a in ("--config", c)]
        argv, sys.argv = sys.argv, sys.argv[:1]  # LightningCLI(args=…) warns when sys.argv holds other arguments
        try:
            cli = NERCLI(NERTagger, NERDataModule, run=False, args=[
                *configs, *self.run_overrides.get("ner", ()), *result.spec.overrides, f"--data.subset={subset}",
                f"--run_dir={result.run_dir}", "--trainer.logger=false",
                f"--trainer.enable_progress_bar={str(self.progress).lower()}"])
        finally:
            sys.argv = argv
        out = cli.trainer.test(cli.model, datamodule=cli.datamodule, ckpt_path=str(ckpt), verbose=False,
                                weights_only=True)
        metrics = {k: float(v) for k, v in (out[0] if out else {}).items()}
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"key": key, "metrics": metrics}, indent=1, sort_keys=True) + "\n")
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
    return {k: float(v) for k, v in json.loads(RunFolder(run_dir).test_metrics.read_text()).items()}


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


__all__ = ["RunManager", "RunResult", "RunFailed", "ResourceUnavailable", "RowUnavailable", "merged_config",
           "flatten", "config_differences", "saved_config", "finished"]

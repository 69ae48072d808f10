"""The layout of a training run folder, spelled once.

``python -m train fit`` writes (:func:`default_run_dir` unless ``--run_dir``)::

    <run>/ckpt/best-epoch=01-step=40.ckpt   the best checkpoint on the task's monitored key
    <run>/ckpt/last.ckpt                    rewritten after every validation (resume with --ckpt_path last)
    <run>/logs/version_N/config.yaml        the resolved config (CSV logs beside it)
    <run>/test_logs/version_N/              ``python -m train test`` of the run: its logs and config
    <run>/environment.json                  each start's environment record (commit, versions, CPU, threads, precision, seed)
    <run>/test_metrics.json                 the test split's metrics after fit
    <run>/test_predictions.jsonl            per test row: the model's prediction, label(s), baselines' scores
    <run>/export/                           the export ``radscore`` loads
"""

from __future__ import annotations

import json
from pathlib import Path

from radscore.atomic import refuse_unfinished

BEST_FILENAME = "best-{epoch:02d}-{step}"  # ModelCheckpoint's filename template (no .ckpt)
CHECKPOINTS = Path("checkpoints")
CONFIGS = "configs"


def _by_mtime(paths) -> list[Path]:
    return sorted(paths, key=lambda p: p.stat().st_mtime)


def default_run_dir(config: str | Path | None, root: Path = CHECKPOINTS) -> Path:
    """Where a run of ``config`` (the last ``--config`` of the command line) goes by default: its
    path under ``configs/`` without ``.yaml`` (``configs/reward/sample.yaml`` ->
    ``checkpoints/reward/sample``), or ``checkpoints/<stem>`` for a file elsewhere."""
    if config is None:
        return root / "run"
    path = Path(config)
    parts = path.with_suffix("").parts
    if CONFIGS in parts[:-1]:
        return root.joinpath(*parts[len(parts) - 1 - parts[::-1].index(CONFIGS) + 1:])
    return root / path.stem


class RunFolder:
    """A run folder and the paths in it (nothing is created or required to exist)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @classmethod
    def of_checkpoint(cls, ckpt: str | Path) -> RunFolder:
        """The run folder a checkpoint ``<run>/ckpt/<name>.ckpt`` belongs to."""
        return cls(Path(ckpt).parent.parent)

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    def __fspath__(self) -> str:
        return str(self.path)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def ckpt(self) -> Path:
        return self.path / "ckpt"

    @property
    def last_checkpoint(self) -> Path:
        return self.ckpt / "last.ckpt"

    @property
    def best_checkpoints(self) -> list[Path]:
        """``ckpt/best-*.ckpt``, oldest first."""
        return _by_mtime(self.ckpt.glob("best-*.ckpt"))

    @property
    def export(self) -> Path:
        return self.path / "export"

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    @property
    def test_logs(self) -> Path:
        """Where ``python -m train test`` logs (apart from ``logs/``, which holds the training config)."""
        return self.path / "test_logs"

    @property
    def logged_configs(self) -> list[Path]:
        """The resolved configs LightningCLI saved (``logs/version_*/config.yaml``), oldest first."""
        return _by_mtime(self.logs.glob("version_*/config.yaml"))

    @property
    def training_config(self) -> Path | None:
        """The newest resolved config, or None."""
        found = self.logged_configs
        return found[-1] if found else None

    @property
    def predictions(self) -> Path:
        """``python -m train predict`` of an NER model writes one sentence a line here."""
        return self.path / "predictions.jsonl"

    @property
    def environment(self) -> Path:
        """Each start of a run in this folder (``fit``, a resume, ``test`` …): its subcommand and
        environment record (:func:`radscore.environment.environment`)."""
        return self.path / "environment.json"

    def record_environment(self, subcommand: str, env: dict, ckpt_path=None) -> None:
        """Append one start to :attr:`environment` (written atomically; earlier starts are kept)."""
        from radscore.atomic import write_json_atomic

        refuse_unfinished(self.environment)
        runs = []
        if self.environment.is_file():
            try:
                runs = json.loads(self.environment.read_text(encoding="utf-8")).get("runs", [])
            except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
                raise ValueError(f"{self.environment}: not whole JSON; not adding to it") from None
        runs.append({"subcommand": subcommand, "ckpt_path": None if ckpt_path is None else str(ckpt_path), **env})
        self.path.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.environment, {"runs": runs})

    def fit_environment(self) -> dict | None:
        """The last ``fit`` start's record in :attr:`environment`; None without one or when unreadable."""
        try:
            records = json.loads(self.environment.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError):
            return None
        runs = records.get("runs") if isinstance(records, dict) else None
        fits = [r for r in runs or [] if isinstance(r, dict) and r.get("subcommand") == "fit"]
        return fits[-1] if fits else None

    @property
    def test_metrics(self) -> Path:
        return self.path / "test_metrics.json"

    @property
    def test_predictions(self) -> Path:
        """One line per test row (rated tasks): the model's prediction, the label(s), the baselines'."""
        return self.path / "test_predictions.jsonl"

    def read_test_metrics(self) -> dict:
        """``test_metrics.json`` as a dict; empty when the run wrote none; a ValueError naming a file
        a killed run left half-written (``refuse_unfinished`` of ``radscore.atomic``)."""
        refuse_unfinished(self.test_metrics)
        if not self.test_metrics.is_file():
            return {}
        try:
            return json.loads(self.test_metrics.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ValueError(f"{self.test_metrics}: not whole JSON (a run killed while writing it?); "
                             "not loading it") from None

    def checkpoint(self) -> Path:
        """The newest best checkpoint, else ``last.ckpt``; FileNotFoundError when there is neither."""
        best = self.best_checkpoints
        if best:
            return best[-1]
        if self.last_checkpoint.is_file():
            return self.last_checkpoint
        raise FileNotFoundError(f"{self.path}: neither a checkpoint file nor a run folder with ckpt/*.ckpt")

    @staticmethod
    def checkpoint_name(ckpt: str | Path) -> str:
        """A checkpoint relative to its run folder (``ckpt/best-epoch=01-step=40.ckpt``): what an
        export records, never a local absolute path."""
        ckpt = Path(ckpt)
        return (Path(ckpt.parent.name) / ckpt.name).as_posix()

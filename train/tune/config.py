"""The YAML config of ``python -m train tune-weights`` (``configs/tune/<name>.yaml``): typed dataclasses
parsed by jsonargparse, as the training configs are. Sections: ``data``, ``scorer``
(:class:`train.tune.precompute.ScorerSettings`), ``objective``, ``split``, ``search`` and ``report`` (the
dataclasses below; every key optional but ``data.format``, ``data.path`` and ``scorer.ner``), ``run_dir``
(default ``checkpoints/tune/<name>``, :func:`default_name`) and ``cache_dir`` (the entity/embedding cache,
default ``<run_dir>/cache``; several configs may share one). Several files compose in order (``--config A
--config B``: B's keys override A's, key by key); an unknown key or a bad value is an error naming the
file (or the overrides) and the key.
"""

from __future__ import annotations

import json
from argparse import ArgumentError
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Literal, Sequence

from train.tune.precompute import ScorerSettings

class TuneConfigError(ValueError):
    """A tune config that cannot be used."""


@dataclass
class DataSettings:
    """data: the rated pairs (read by data/'s readers)"""
    format: Literal["rate_eval_task1", "rate_eval_task2", "rexval", "csv"]
    path: str
    splits: list[Literal["train", "test"]] = field(default_factory=lambda: ["train", "test"])  # RaTE-Eval files
    generate_synthetic: str | None = None  # make data.synth's default sets that `path` reads here when missing
    significant_only: bool = False  # ReXVal
    aggregate: Literal["mean", "sum", "median"] = "mean"  # ReXVal
    columns: dict[str, str] = field(default_factory=dict)  # csv: reference, candidate, rating, id, group
    synthetic: bool = False  # the data are synthetic: said in the report and the table


@dataclass
class ObjectiveSettings:
    """objective: the correlation the search maximises"""
    correlation: Literal["pearson", "kendall", "spearman"] = "pearson"
    higher_rating_is_better: bool = True

    @property
    def sign(self) -> float:
        return 1.0 if self.higher_rating_is_better else -1.0


@dataclass
class SplitSettings:
    """split: the train/test split of the pairs"""
    # auto: the pairs' own train/test split (``published``) when every pair carries one, else
    # ``group``; only some pairs carrying one is an error naming a pair (train.tune.data.split_pairs)
    by: Literal["auto", "group", "published"] = "auto"
    test_fraction: float = 0.2
    seed: int = 0

    def __post_init__(self):
        if not 0.0 < self.test_fraction < 1.0:
            raise ValueError(f"split.test_fraction: must lie strictly between 0 and 1, got {self.test_fraction}")


@dataclass
class SearchSettings:
    """search: the TPE search (optuna)"""
    n_trials: int = 1000
    sampler_seed: int = 0
    multivariate: bool = True
    n_startup_trials: int = 10
    weight_range: tuple[float, float] = (0.0, 1.0)
    penalty_range: tuple[float, float] = (0.0, 1.0)
    storage: str | None = None
    study_name: str | None = None
    enqueue: list[str] = field(default_factory=lambda: ["uniform"])  # first trials: uniform, long, short or a JSON path

    def __post_init__(self):
        if self.n_trials < 0:
            raise ValueError(f"search.n_trials: must be >= 0, got {self.n_trials}")
        for key in ("weight_range", "penalty_range"):
            if not getattr(self, key)[0] < getattr(self, key)[1]:
                raise ValueError(f"search.{key}: expected [low, high] with low < high, got {getattr(self, key)}")


@dataclass
class ReportSettings:
    """report: the bootstrap CIs of the comparison table"""
    bootstrap_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0

    def __post_init__(self):
        if self.bootstrap_resamples < 1 or not 0.0 < self.confidence < 1.0:
            raise ValueError("report: bootstrap_resamples must be >= 1 and confidence in (0, 1)")


SECTIONS = {"data": DataSettings, "scorer": ScorerSettings, "objective": ObjectiveSettings,
            "split": SplitSettings, "search": SearchSettings, "report": ReportSettings}


@dataclass
class TuneConfig:
    data: DataSettings
    scorer: ScorerSettings
    objective: ObjectiveSettings
    split: SplitSettings
    search: SearchSettings
    report: ReportSettings
    name: str
    run_dir: Path
    cache_dir: Path
    source: str = ""

    def __post_init__(self):
        if self.split.by == "published" and not self.data.format.startswith("rate_eval"):
            raise ValueError("split.by: 'published' needs RaTE-Eval data (its own train/test files)")
        if self.split.by == "published" and sorted(self.data.splits) != ["test", "train"]:
            raise ValueError("data.splits: split.by 'published' needs both files: [train, test]")

    @property
    def storage_url(self) -> str:
        return self.search.storage or f"sqlite:///{(self.run_dir / 'study.db').as_posix()}"

    @property
    def study_name(self) -> str:
        return self.search.study_name or self.name

    def to_dict(self) -> dict:
        out = {k: asdict(getattr(self, k)) for k in SECTIONS}
        return {**out, "name": self.name, "run_dir": str(self.run_dir), "cache_dir": str(self.cache_dir),
                "source": self.source}


def config_parser(**kwargs):
    """The jsonargparse parser of a tune config: ``--config FILE`` (repeatable), ``--<section>.<key>``,
    ``--run_dir`` (also ``--run-dir``) and ``--cache_dir``."""
    from jsonargparse import ArgumentParser

    parser = ArgumentParser(exit_on_error=False, **kwargs)
    parser.add_argument("--config", action="config", help="a tune config; several compose in order")
    for name, cls in SECTIONS.items():
        parser.add_argument(f"--{name}", type=cls, **({} if name in ("data", "scorer") else {"default": cls()}))
    parser.add_argument("--run_dir", "--run-dir", type=str | None, default=None,
                        help="default checkpoints/tune/<name> (the last config's path under configs/tune, or stem)")
    parser.add_argument("--cache_dir", type=str | None, default=None, help="default <run_dir>/cache")
    return parser


def compose(parser, configs: Sequence, build: Callable, flags: Sequence[str] = (), error=ValueError):
    """``build(namespace)`` of ``configs`` (files or YAML strings) composed in order, then ``flags``, parsed
    and instantiated by ``parser``. A failure is an ``error`` naming the first config whose addition brings
    the same message (else the flags) and the key."""

    def attempt(k: int, with_flags: bool = False):
        try:
            args = [a for c in configs[:k] for a in ("--config", str(c))] + (list(flags) if with_flags else [])
            return build(parser.instantiate(parser.parse_args(args))), None
        except (ArgumentError, ValueError) as err:
            return None, " ".join(str(err).split())

    result, message = attempt(len(configs), True)
    if message is None:
        return result
    culprit = next((str(configs[k - 1]) for k in range(1, len(configs) + 1) if attempt(k)[1] == message),
                   " ".join(flags) or " + ".join(map(str, configs)))
    raise error(f"{culprit}: {message}")


def default_name(path: str | Path) -> str:
    """``configs/tune/a/b.yaml`` -> ``a/b``; a config elsewhere -> its stem."""
    parts = Path(path).with_suffix("").parts
    start = max((i + 2 for i in range(len(parts) - 1) if parts[i:i + 2] == ("configs", "tune")),
                default=len(parts) - 1)
    return "/".join(parts[start:])


def from_namespace(ns, configs: Sequence) -> TuneConfig:
    """The :class:`TuneConfig` of a parsed and instantiated namespace; named after the last config."""
    name = default_name(configs[-1])
    run_dir = Path(ns.run_dir or Path("checkpoints") / "tune" / name)
    return TuneConfig(**{k: ns[k] for k in SECTIONS}, name=name, run_dir=run_dir,
                      cache_dir=Path(ns.cache_dir or run_dir / "cache"), source=" + ".join(map(str, configs)))


def load_config(*paths: str | Path, overrides: dict | None = None) -> TuneConfig:
    """The config of ``paths`` composed in order; ``overrides`` maps ``"section.key"`` (or ``"run_dir"``)
    to a value, applied last (e.g. from flags)."""
    if not paths or any(isinstance(p, dict) for p in paths):
        raise TypeError("load_config(*paths, overrides=None): one or more config files, overrides by keyword")
    flags = ["--config", json.dumps(overrides, default=str)] if overrides else []
    return compose(config_parser(), paths, lambda ns: from_namespace(ns, paths), flags, TuneConfigError)

"""The YAML config of ``python -m train tune-weights`` (``configs/tune/<name>.yaml``).

Sections and keys (every key optional except ``data.format``, ``data.path`` and ``scorer.ner``)::

    data:       format (rate_eval_task1 | rate_eval_task2 | rexval | csv), path, splits,
                generate_synthetic, significant_only, aggregate, columns, synthetic
    scorer:     ner, encoder, pooling, splitter, penalty, empty_score, batch_size, device
    objective:  correlation (pearson | kendall | spearman), higher_rating_is_better
    split:      by (auto | group | published), test_fraction, seed
    search:     n_trials, sampler_seed, multivariate, n_startup_trials, weight_range,
                penalty_range, storage, study_name, enqueue
    report:     bootstrap_resamples, confidence, seed
    base:       another config file (relative to this one's folder) that this one overlays
                (:mod:`train.lightning.configs`; e.g. ``rate_eval_sentence.yaml``)
    run_dir:    default checkpoints/tune/<config stem>
    cache_dir:  entity/embedding cache, default <run_dir>/cache (several configs may share one)

An unknown section or key is an error naming the file and the key.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from train.evaluation.metaeval import CORRELATIONS
from train.tune.precompute import ScorerSettings

FORMATS = ("rate_eval_task1", "rate_eval_task2", "rexval", "csv")
SPLIT_MODES = ("auto", "group", "published")
TUNE_ROOT = Path("checkpoints") / "tune"


class TuneConfigError(ValueError):
    """A tune config that cannot be used."""


@dataclass
class DataSettings:
    format: str
    path: str
    splits: list = field(default_factory=lambda: ["train", "test"])  # RaTE-Eval files to read
    generate_synthetic: str | None = None  # write data.synth's default sets here when missing
    significant_only: bool = False  # ReXVal
    aggregate: str = "mean"  # ReXVal
    columns: dict = field(default_factory=dict)  # csv: reference, candidate, rating, id, group
    synthetic: bool = False  # the data are synthetic: said in the report and the table


@dataclass
class ObjectiveSettings:
    correlation: str = "pearson"
    higher_rating_is_better: bool = True

    @property
    def sign(self) -> float:
        return 1.0 if self.higher_rating_is_better else -1.0


@dataclass
class SplitSettings:
    # auto: the pairs' own train/test split (``published``) when every pair carries one, else
    # ``group``; only some pairs carrying one is an error naming a pair (train.tune.data.split_pairs)
    by: str = "auto"
    test_fraction: float = 0.2
    seed: int = 0


@dataclass
class SearchSettings:
    n_trials: int = 1000
    sampler_seed: int = 0
    multivariate: bool = True
    n_startup_trials: int = 10
    weight_range: list = field(default_factory=lambda: [0.0, 1.0])
    penalty_range: list = field(default_factory=lambda: [0.0, 1.0])
    storage: str | None = None
    study_name: str | None = None
    enqueue: list = field(default_factory=lambda: ["uniform"])  # first trials: uniform, long, short or a JSON path


@dataclass
class ReportSettings:
    bootstrap_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0


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

    @property
    def storage_url(self) -> str:
        return self.search.storage or f"sqlite:///{(self.run_dir / 'study.db').as_posix()}"

    @property
    def study_name(self) -> str:
        return self.search.study_name or self.name

    def to_dict(self) -> dict:
        out = {k: asdict(getattr(self, k)) for k in ("data", "scorer", "objective", "split", "search", "report")}
        return {**out, "name": self.name, "run_dir": str(self.run_dir), "cache_dir": str(self.cache_dir),
                "source": self.source}


_SECTIONS = {"data": DataSettings, "scorer": ScorerSettings, "objective": ObjectiveSettings,
             "split": SplitSettings, "search": SearchSettings, "report": ReportSettings}


def _section(cls, raw, where: str):
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise TuneConfigError(f"{where}: expected a mapping, got {type(raw).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise TuneConfigError(f"{where}: unknown key(s) {unknown}; expected some of {sorted(known)}")
    try:
        return cls(**raw)
    except TypeError as err:
        raise TuneConfigError(f"{where}: {err}") from None


def _check(cfg: TuneConfig, where: str) -> None:
    def bad(key, message):
        raise TuneConfigError(f"{where}: {key}: {message}")

    if cfg.data.format not in FORMATS:
        bad("data.format", f"{cfg.data.format!r} is not one of {list(FORMATS)}")
    if not cfg.data.path:
        bad("data.path", "the rating data's path is required")
    if not cfg.scorer.ner:
        bad("scorer.ner", "the NER export (folder or Hub id) is required")
    if cfg.objective.correlation not in CORRELATIONS:
        bad("objective.correlation", f"{cfg.objective.correlation!r} is not one of {list(CORRELATIONS)}")
    if cfg.split.by not in SPLIT_MODES:
        bad("split.by", f"{cfg.split.by!r} is not one of {list(SPLIT_MODES)}")
    if cfg.split.by == "published" and not cfg.data.format.startswith("rate_eval"):
        bad("split.by", "'published' needs RaTE-Eval data (its own train/test files)")
    if cfg.split.by == "published" and sorted(cfg.data.splits) != ["test", "train"]:
        bad("data.splits", "split.by 'published' needs both files: [train, test]")
    if not 0.0 < float(cfg.split.test_fraction) < 1.0:
        bad("split.test_fraction", f"must lie strictly between 0 and 1, got {cfg.split.test_fraction}")
    if int(cfg.search.n_trials) < 0:
        bad("search.n_trials", f"must be >= 0, got {cfg.search.n_trials}")
    for key in ("weight_range", "penalty_range"):
        lo_hi = getattr(cfg.search, key)
        if not (isinstance(lo_hi, list) and len(lo_hi) == 2 and float(lo_hi[0]) < float(lo_hi[1])):
            bad(f"search.{key}", f"expected [low, high] with low < high, got {lo_hi!r}")
    if not isinstance(cfg.search.enqueue, list):
        bad("search.enqueue", f"expected a list of matrices (uniform, long, short or JSON paths), got {cfg.search.enqueue!r}")
    if int(cfg.report.bootstrap_resamples) < 1 or not 0.0 < float(cfg.report.confidence) < 1.0:
        bad("report", "bootstrap_resamples must be >= 1 and confidence in (0, 1)")


def load_config(path: str | Path, overrides: dict | None = None) -> TuneConfig:
    """Read and check a config; ``overrides`` maps ``"section.key"`` to a value (e.g. from flags)."""
    from train.lightning.configs import ConfigError
    from train.lightning.configs import load_config as load_yaml

    path = Path(path)
    if not path.is_file():
        raise TuneConfigError(f"{path}: config file not found")
    try:
        raw = load_yaml(path)  # ``base:`` resolved (train/lightning/configs.py)
    except ConfigError as err:
        raise TuneConfigError(str(err)) from None
    for dotted, value in (overrides or {}).items():
        section, key = dotted.split(".", 1) if "." in dotted else (dotted, None)
        if key is None:
            raw[section] = value
        else:
            raw.setdefault(section, {})
            raw[section] = {**(raw[section] or {}), key: value}
    unknown = sorted(set(raw) - set(_SECTIONS) - {"run_dir", "cache_dir"})
    if unknown:
        raise TuneConfigError(f"{path}: unknown section(s) {unknown}; expected {sorted(_SECTIONS)}, run_dir "
                              "and cache_dir")
    if "data" not in raw or "scorer" not in raw:
        raise TuneConfigError(f"{path}: the 'data' and 'scorer' sections are required")
    parts = {name: _section(cls, raw.get(name), f"{path}: section {name!r}") for name, cls in _SECTIONS.items()}
    run_dir = Path(raw["run_dir"]) if raw.get("run_dir") else TUNE_ROOT / path.stem
    cache_dir = Path(raw["cache_dir"]) if raw.get("cache_dir") else run_dir / "cache"
    cfg = TuneConfig(**parts, name=path.stem, run_dir=run_dir, cache_dir=cache_dir, source=str(path))
    _check(cfg, str(path))
    return cfg

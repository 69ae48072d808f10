"""A profile of the ablation tables (``configs/ablations/{sample,paper}.yaml``): which data, models and
training runs produce our column of each table. Typed dataclasses parsed by jsonargparse, as the
training and tune configs are; several files compose in order (a later file's keys override an
earlier one's; in the mappings ``tables`` and ``rows`` the later file's entries are kept, each merged
key by key with the same entry of an earlier file). Unknown keys and bad values are errors naming the
file and the key.

Top-level keys: ``profile`` (its name, default the last file's stem), ``labels`` (what the data are,
printed in every table's header; data made by data.synth are labelled SYNTHETIC whatever the label
says), ``runs_root`` (run folders are ``<runs_root>/<run name>``), ``output`` (default
``checkpoints/ablations/<name>``), ``run_overrides`` (``{task: [--key=value, ...]}`` added to every run
of a task), the sections ``data``, ``metaeval``, ``ratescore``, ``baselines``, ``er2`` (the dataclasses
below) and ``tables``: ``<table>: {rows: {<paper row key>: spec}, extra: [{label: [...], <spec keys>}],
notes: [...]}``.

A run spec is a list of configs (``python -m train <task> fit --config A --config B``; the run is
named after the last config's stem) or ``{configs: [...], overrides: [...], name: ...}``. An
encoder spec (table ``encoders``) is a model id or ``{encoder: ..., pooling: cls|mean,
trust_remote_code: true|false}`` (the last for encoders that ship their own modelling code). A paper
row the profile does not map shows "needs the paper profile".
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Union

from train.ablations.paper import PAPER_TABLES
from train.tune.config import compose

RUN_TABLES = ("ner-schemes", "ner-data", "er2-backbones", "er2-loss", "er2-lambda")
ENCODER_TABLES = ("encoders",)
PROFILES_DIR = Path("configs") / "ablations"


class ProfileError(ValueError):
    """An ablation profile that cannot be used."""


@dataclass(frozen=True)
class RunSpec:
    """One training run: ``python -m train <task> fit --config c1 --config c2 … <overrides>``."""

    configs: tuple[str, ...]
    overrides: tuple[str, ...] = ()
    name: str | None = None

    @property
    def run_name(self) -> str:
        return self.name or Path(self.configs[-1]).stem

    def describe(self) -> str:
        return " + ".join(self.configs) + "".join(f" {o}" for o in self.overrides)


@dataclass(frozen=True)
class EncoderSpec:
    encoder: str
    pooling: Literal["cls", "mean"] = "cls"
    trust_remote_code: bool = False  # run the repository's own modelling code (opt-in)


@dataclass(frozen=True)
class ExtraRun(RunSpec):
    """A run row of ours only (no paper number), e.g. the sample profile's MiniLM rows."""

    label: tuple[str, ...] = ()

    @property
    def spec(self) -> RunSpec:
        return RunSpec(self.configs, self.overrides, self.name)


@dataclass(frozen=True)
class ExtraEncoder(EncoderSpec):
    """An encoder row of ours only."""

    label: tuple[str, ...] = ()

    @property
    def spec(self) -> EncoderSpec:
        return EncoderSpec(self.encoder, self.pooling, self.trust_remote_code)


Spec = Union[str, list[str], RunSpec, EncoderSpec]  # a run (configs) or an encoder (model id), by table


@dataclass
class TableSettings:
    rows: dict[str, Spec] = field(default_factory=dict)  # paper row key -> RunSpec | EncoderSpec
    extra: list[Union[ExtraRun, ExtraEncoder]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # printed under the table (e.g. shortened runs)


@dataclass
class Labels:
    rexval: str | None = None
    rate_eval: str | None = None
    ner: str | None = None


@dataclass
class DataSettings:
    synthetic: str | None = None  # folder where data.synth's default sets are written when missing
    rexval: str | None = None  # folder
    rate_eval: str | None = None  # folder or Hub dataset id
    rexval_significant_only: bool = False
    task1_splits: list[Literal["train", "test"]] = field(default_factory=lambda: ["test"])
    task2_splits: list[Literal["train", "test"]] = field(default_factory=lambda: ["test"])
    ner_eval_subset: str = "all"

    def __post_init__(self):
        for key in ("task1_splits", "task2_splits"):
            if not getattr(self, key):
                raise ValueError(f"data.{key}: expected some of [train, test], got none")


@dataclass
class MetaevalSettings:
    bootstrap_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    composite_test_fraction: float = 0.2

    def __post_init__(self):
        if self.bootstrap_resamples < 1 or not 0.0 < self.confidence < 1.0 \
                or not 0.0 < self.composite_test_fraction < 1.0:
            raise ValueError("metaeval: bootstrap_resamples must be >= 1, confidence and composite_test_fraction "
                             "in (0, 1)")


@dataclass
class RaTEScoreSettings:
    ner_run: Union[str, list[str], RunSpec, None] = None  # a RunSpec once loaded
    encoder: str = "packaged:all-MiniLM-L6-v2"
    pooling: Literal["cls", "mean"] = "cls"
    penalty: Literal["official", "paper"] = "official"
    splitter: Literal["rush", "radiology", "pyrush"] = "rush"  # RaTEScore's default
    empty_score: float = 0.5
    batch_size: int = 64
    paragraph_matrix: str = "long"
    sentence_matrix: str = "short"


@dataclass
class BaselineSettings:
    bertscore_model: str = "packaged:all-MiniLM-L6-v2"


@dataclass
class ER2Settings:
    run: Union[str, list[str], RunSpec, None] = None  # a RunSpec once loaded
    dtype: str | None = None
    batch_size: int = 16


SECTIONS = {"labels": Labels, "data": DataSettings, "metaeval": MetaevalSettings, "ratescore": RaTEScoreSettings,
            "baselines": BaselineSettings, "er2": ER2Settings}


@dataclass
class Profile:
    name: str
    source: str
    labels: Labels
    runs_root: Path
    output: Path
    run_overrides: dict  # task -> overrides
    data: DataSettings
    metaeval: MetaevalSettings
    ratescore: RaTEScoreSettings
    baselines: BaselineSettings
    er2: ER2Settings
    tables: dict  # table name -> TableSettings

    def table(self, name: str) -> TableSettings:
        return self.tables.get(name) or TableSettings()

    def label(self, kind: str) -> str:
        return str(getattr(self.labels, kind, None) or kind)


def _run(value, where: str) -> RunSpec:
    spec = RunSpec(tuple([value] if isinstance(value, str) else value)) if isinstance(value, (str, list)) else value
    if not isinstance(spec, RunSpec) or not spec.configs or not all(spec.configs):
        raise ProfileError(f"{where}: a run is a list of configs or {{configs, overrides, name}}; got {value!r}")
    bad = [o for o in spec.overrides if not (o.startswith("--") and "=" in o)]
    if bad:
        raise ProfileError(f"{where}.overrides: {bad} are not of the form --key=value")
    if spec.name is not None and (not spec.name or "/" in spec.name or spec.name.startswith(".")):
        raise ProfileError(f"{where}.name: {spec.name!r} is not a run folder name")
    return spec


def _encoder(value, where: str) -> EncoderSpec:
    if not isinstance(value, (str, EncoderSpec)):
        raise ProfileError(f"{where}: an encoder is a model id or {{encoder, pooling, trust_remote_code}}; "
                           f"got {value!r}")
    return EncoderSpec(value) if isinstance(value, str) else value


def _table(name: str, settings: TableSettings, where: str) -> TableSettings:
    if name not in PAPER_TABLES:
        raise ProfileError(f"tables: unknown table {name!r}; expected some of {list(PAPER_TABLES)}")
    if name not in RUN_TABLES + ENCODER_TABLES:
        if settings.rows or settings.extra:
            raise ProfileError(f"{where}: table {name!r} takes no rows from a profile (its rows are metrics)")
        return settings
    parse, extra_kind = (_run, ExtraRun) if name in RUN_TABLES else (_encoder, ExtraEncoder)
    paper_keys = [r.key for r in PAPER_TABLES[name].rows]
    for key in settings.rows:
        if key not in paper_keys:
            raise ProfileError(f"{where}.rows: {key!r} is not a row of the paper's table; rows: {paper_keys}")
    width = len(PAPER_TABLES[name].key_columns)
    for k, item in enumerate(settings.extra):
        if not isinstance(item, extra_kind):
            kind = "run" if parse is _run else "encoder"
            raise ProfileError(f"{where}.extra[{k}]: expected a {kind} row, got {item!r}")
        parse(item.spec, f"{where}.extra[{k}]")
        if len(item.label) != width:
            raise ProfileError(f"{where}.extra[{k}].label: {len(item.label)} value(s) for the {width} key column(s) "
                               f"{list(PAPER_TABLES[name].key_columns)}")
    return replace(settings, rows={k: parse(v, f"{where}.rows.{k}") for k, v in settings.rows.items()})


def profile_parser():
    """The jsonargparse parser of a profile: ``--config FILE`` (repeatable) and one option per key."""
    from jsonargparse import ArgumentParser

    parser = ArgumentParser(exit_on_error=False)
    parser.add_argument("--config", action="config")
    parser.add_argument("--profile", type=str | None, default=None)
    parser.add_argument("--runs_root", type=str, default="checkpoints")
    parser.add_argument("--output", type=str | None, default=None)
    parser.add_argument("--run_overrides", type=dict[str, list[str]], default={})
    for name, cls in SECTIONS.items():
        parser.add_argument(f"--{name}", type=cls, default=cls())
    parser.add_argument("--tables", type=dict[str, TableSettings], default={})
    return parser


def _build(ns, paths) -> Profile:
    name = ns.profile or Path(paths[-1]).stem
    rs, er2 = ns.ratescore, ns.er2
    return Profile(
        name=name, source=" + ".join(map(str, paths)), labels=ns.labels, runs_root=Path(ns.runs_root),
        output=Path(ns.output or Path("checkpoints") / "ablations" / name),
        run_overrides={task: tuple(v) for task, v in ns.run_overrides.items()},
        data=ns.data, metaeval=ns.metaeval, baselines=ns.baselines,
        ratescore=replace(rs, ner_run=_run(rs.ner_run, "ratescore.ner_run") if rs.ner_run else None),
        er2=replace(er2, run=_run(er2.run, "er2.run") if er2.run else None),
        tables={t: _table(t, s, f"tables.{t}") for t, s in ns.tables.items()})


def load_profile(*paths: str | Path) -> Profile:
    """The profile of ``paths`` composed in order."""
    if not paths:
        raise TypeError("load_profile(*paths): one or more profile files")
    return compose(profile_parser(), paths, lambda ns: _build(ns, paths), (), ProfileError)


def profile_path(name: str) -> Path:
    """``configs/ablations/<name>.yaml`` for a profile name."""
    return PROFILES_DIR / f"{name}.yaml"

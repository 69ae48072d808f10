"""A profile of the ablation tables (``configs/ablations/{sample,paper}.yaml``): which data, models and
training runs produce our column of each table.

Sections and keys::

    profile:      name (sample | paper | any)
    labels:       rexval, rate_eval, ner: what the data are, printed in every table's header
                  (data made by data.synth are labelled SYNTHETIC whatever the label says)
    runs_root:    run folders are <runs_root>/<run name> (default checkpoints, as python -m train)
    output:       default checkpoints/ablations/<profile name>
    run_overrides: {ner: [...], reward: [...]}: command-line overrides added to every run of a task
    data:         synthetic (folder where data.synth's default sets are written when missing, or null),
                  rexval (folder), rate_eval (folder or Hub dataset id), rexval_significant_only,
                  task1_splits, task2_splits, ner_eval_subset
    metaeval:     bootstrap_resamples, confidence, seed, composite_test_fraction
    ratescore:    ner_run, encoder, pooling, penalty, splitter, empty_score, batch_size,
                  paragraph_matrix, sentence_matrix
    baselines:    bertscore_model
    er2:          run, dtype, batch_size
    tables:       <table>: {rows: {<paper row key>: spec}, extra: [{label: [...], <spec keys>}], notes: [...]}

A run spec is a list of configs (``python -m train <task> fit --config A --config B``; the run is
named after the last config's stem) or ``{configs: [...], overrides: [...], name: ...}``. An
encoder spec (table ``encoders``) is a model id or ``{encoder: ..., pooling: cls|mean,
trust_remote_code: true|false}`` (the last for encoders that ship their own modelling code). A paper
row the profile does not map shows "needs the paper profile". Unknown keys are errors naming the
file and the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

from train.ablations.paper import PAPER_TABLES

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
    pooling: str = "cls"
    trust_remote_code: bool = False  # run the repository's own modelling code (opt-in)


@dataclass(frozen=True)
class ExtraRow:
    """A row of ours only (no paper number), e.g. the sample profile's MiniLM rows."""

    label: tuple[str, ...]
    spec: RunSpec | EncoderSpec


@dataclass
class TableSettings:
    rows: dict = field(default_factory=dict)   # paper row key -> RunSpec | EncoderSpec
    extra: list = field(default_factory=list)  # ExtraRow
    notes: list = field(default_factory=list)  # printed under the table (e.g. shortened runs)


@dataclass
class DataSettings:
    synthetic: str | None = None
    rexval: str | None = None
    rate_eval: str | None = None
    rexval_significant_only: bool = False
    task1_splits: list = field(default_factory=lambda: ["test"])
    task2_splits: list = field(default_factory=lambda: ["test"])
    ner_eval_subset: str = "all"


@dataclass
class MetaevalSettings:
    bootstrap_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    composite_test_fraction: float = 0.2


@dataclass
class RaTEScoreSettings:
    ner_run: RunSpec | None = None
    encoder: str = "packaged:all-MiniLM-L6-v2"
    pooling: str = "cls"
    penalty: str = "official"
    splitter: str = "rush"  # RaTEScore's default; the committed configs/ablations choose "radiology"
    empty_score: float = 0.5
    batch_size: int = 64
    paragraph_matrix: str = "long"
    sentence_matrix: str = "short"


@dataclass
class BaselineSettings:
    bertscore_model: str = "packaged:all-MiniLM-L6-v2"


@dataclass
class ER2Settings:
    run: RunSpec | None = None
    dtype: str | None = None
    batch_size: int = 16


@dataclass
class Profile:
    name: str
    source: str
    labels: dict
    runs_root: Path
    output: Path
    run_overrides: dict
    data: DataSettings
    metaeval: MetaevalSettings
    ratescore: RaTEScoreSettings
    baselines: BaselineSettings
    er2: ER2Settings
    tables: dict  # table name -> TableSettings

    def table(self, name: str) -> TableSettings:
        return self.tables.get(name) or TableSettings()

    def label(self, kind: str) -> str:
        return str(self.labels.get(kind) or kind)


def _mapping(raw, where: str) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: expected a mapping, got {type(raw).__name__}")
    return raw


def _section(cls, raw, where: str, **converted):
    raw = _mapping(raw, where)
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ProfileError(f"{where}: unknown key(s) {unknown}; expected some of {sorted(known)}")
    try:
        return cls(**{**raw, **converted})
    except TypeError as err:
        raise ProfileError(f"{where}: {err}") from None


def _strings(value, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ProfileError(f"{where}: expected a list of strings, got {value!r}")
    return tuple(value)


def run_spec(raw, where: str) -> RunSpec:
    if isinstance(raw, (list, str)):
        raw = {"configs": raw}
    raw = _mapping(raw, where)
    unknown = sorted(set(raw) - {"configs", "overrides", "name"})
    if unknown or "configs" not in raw:
        raise ProfileError(f"{where}: a run is a list of configs or {{configs, overrides, name}}; got {raw!r}")
    configs = _strings(raw["configs"], f"{where}.configs")
    overrides = _strings(raw.get("overrides") or [], f"{where}.overrides")
    bad = [o for o in overrides if not (o.startswith("--") and "=" in o)]
    if bad:
        raise ProfileError(f"{where}.overrides: {bad} are not of the form --key=value")
    name = raw.get("name")
    if name is not None and (not isinstance(name, str) or not name or "/" in name or name.startswith(".")):
        raise ProfileError(f"{where}.name: {name!r} is not a run folder name")
    return RunSpec(configs, overrides, name)


def encoder_spec(raw, where: str) -> EncoderSpec:
    if isinstance(raw, str):
        return EncoderSpec(raw)
    spec = _section(EncoderSpec, raw, where)
    if spec.pooling not in ("cls", "mean"):
        raise ProfileError(f"{where}.pooling: {spec.pooling!r} is not cls or mean")
    return spec


def _table_settings(name: str, raw, where: str) -> TableSettings:
    raw = _mapping(raw, where)
    unknown = sorted(set(raw) - {"rows", "extra", "notes"})
    if unknown:
        raise ProfileError(f"{where}: unknown key(s) {unknown}; expected rows, extra and notes")
    notes = list(_strings(raw["notes"], f"{where}.notes")) if raw.get("notes") else []
    if name not in RUN_TABLES + ENCODER_TABLES:
        if raw.get("rows") or raw.get("extra"):
            raise ProfileError(f"{where}: table {name!r} takes no rows from a profile (its rows are metrics)")
        return TableSettings(notes=notes)
    parse = run_spec if name in RUN_TABLES else encoder_spec
    paper_keys = [r.key for r in PAPER_TABLES[name].rows]
    rows = {}
    for key, value in _mapping(raw.get("rows"), f"{where}.rows").items():
        if key not in paper_keys:
            raise ProfileError(f"{where}.rows: {key!r} is not a row of the paper's table; rows: {paper_keys}")
        rows[key] = parse(value, f"{where}.rows.{key}")
    extra = []
    for k, item in enumerate(raw.get("extra") or []):
        item = dict(_mapping(item, f"{where}.extra[{k}]"))
        label = _strings(item.pop("label", None), f"{where}.extra[{k}].label")
        width = len(PAPER_TABLES[name].key_columns)
        if len(label) != width:
            raise ProfileError(f"{where}.extra[{k}].label: {len(label)} value(s) for the {width} key column(s) "
                               f"{list(PAPER_TABLES[name].key_columns)}")
        extra.append(ExtraRow(label, parse(item, f"{where}.extra[{k}]")))
    return TableSettings(rows, extra, notes)


def load_profile(path: str | Path) -> Profile:
    """Read and check a profile file."""
    from train.lightning.configs import ConfigError, load_config

    path = Path(path)
    if not path.is_file():
        raise ProfileError(f"{path}: profile file not found")
    try:
        raw = load_config(path)  # a profile may overlay another (base:, train/lightning/configs.py)
    except ConfigError as err:
        raise ProfileError(str(err)) from None
    raw = _mapping(raw, str(path))
    known = {"profile", "labels", "runs_root", "output", "run_overrides", "data", "metaeval", "ratescore",
             "baselines", "er2", "tables"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ProfileError(f"{path}: unknown section(s) {unknown}; expected some of {sorted(known)}")
    name = str(raw.get("profile") or path.stem)
    where = lambda key: f"{path}: {key}"  # noqa: E731
    rs_raw = dict(_mapping(raw.get("ratescore"), where("ratescore")))
    ner_run = run_spec(rs_raw.pop("ner_run"), where("ratescore.ner_run")) if rs_raw.get("ner_run") else None
    rs_raw.pop("ner_run", None)
    er2_raw = dict(_mapping(raw.get("er2"), where("er2")))
    er2_run = run_spec(er2_raw.pop("run"), where("er2.run")) if er2_raw.get("run") else None
    er2_raw.pop("run", None)
    overrides = {task: _strings(v, where(f"run_overrides.{task}"))
                 for task, v in _mapping(raw.get("run_overrides"), where("run_overrides")).items()}
    tables_raw = _mapping(raw.get("tables"), where("tables"))
    bad = sorted(set(tables_raw) - set(PAPER_TABLES))
    if bad:
        raise ProfileError(f"{path}: tables: unknown table(s) {bad}; expected some of {list(PAPER_TABLES)}")
    labels = _mapping(raw.get("labels"), where("labels"))
    bad = sorted(set(labels) - {"rexval", "rate_eval", "ner"})
    if bad:
        raise ProfileError(f"{path}: labels: unknown key(s) {bad}; expected rexval, rate_eval and ner")
    profile = Profile(
        name=name, source=str(path), labels=dict(labels),
        runs_root=Path(raw.get("runs_root") or "checkpoints"),
        output=Path(raw.get("output") or Path("checkpoints") / "ablations" / name),
        run_overrides=overrides,
        data=_section(DataSettings, raw.get("data"), where("data")),
        metaeval=_section(MetaevalSettings, raw.get("metaeval"), where("metaeval")),
        ratescore=_section(RaTEScoreSettings, rs_raw, where("ratescore"), ner_run=ner_run),
        baselines=_section(BaselineSettings, raw.get("baselines"), where("baselines")),
        er2=_section(ER2Settings, er2_raw, where("er2"), run=er2_run),
        tables={t: _table_settings(t, v, where(f"tables.{t}")) for t, v in tables_raw.items()})
    m = profile.metaeval
    if int(m.bootstrap_resamples) < 1 or not 0.0 < float(m.confidence) < 1.0 \
            or not 0.0 < float(m.composite_test_fraction) < 1.0:
        raise ProfileError(f"{path}: metaeval: bootstrap_resamples must be >= 1, confidence and "
                           "composite_test_fraction in (0, 1)")
    for key in ("task1_splits", "task2_splits"):
        splits = getattr(profile.data, key)
        if not splits or not set(splits) <= {"train", "test"}:
            raise ProfileError(f"{path}: data.{key}: expected some of [train, test], got {splits!r}")
    return profile


def profile_path(name: str) -> Path:
    """``configs/ablations/<name>.yaml`` for a profile name."""
    return PROFILES_DIR / f"{name}.yaml"

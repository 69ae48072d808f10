"""The metrics radscore knows, one entry each: everything that runs a scorer (the ``radscore``
CLI, Ray, the RadEval and TRL adapters, ``python -m train publish`` and the rehearsal) reads this
table instead of switching on a metric's name.

Adding a metric is a module with a :class:`radscore.scorer.Scorer` subclass and one call::

    from radscore.registry import ExportKind, MetricSpec, register
    register(MetricSpec(name="toy", scorer="mypackage.toy:ToyScore", display_name="ToyScore",
                        headline="score", export_keyword="model",
                        kinds=(ExportKind("toy", "text-classification", "ToyScore regression"),)))

Importing this module imports no model code: scorer classes are named as ``"module:Class"``
strings and imported on first use.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class ExportKind:
    """An export kind (the manifest's ``kind``, :data:`radscore.export.KINDS`) that a metric loads,
    with what ``python -m train publish`` writes for it."""

    kind: str
    task_type: str  # model-index task type
    task_name: str  # model-index task name and the card's description
    usage: str = ""  # the card's usage section; "{repo_id}" is filled in
    dry_run_check: str | None = None  # "module:function"(folder) -> list of what was left unchecked,
    #                                   or None when a full load fetches nothing (a publish dry run)


@dataclass(frozen=True)
class MetricSpec:
    """One metric: how to build its scorer and how to present its scores."""

    name: str  # --metric NAME, make_scorer(NAME)
    scorer: str  # "module:Class", a radscore.scorer.Scorer subclass
    display_name: str  # the summary's label; RadEval's display name adds " (radscore)"
    headline: str  # the record key of the headline value
    export_keyword: str  # the scorer's argument that takes an export folder or Hub id
    kinds: tuple[ExportKind, ...] = ()  # export kinds it loads
    extra: str | None = None  # pip extra of radscore that it needs (pip install 'radscore[EXTRA]')
    label: str | None = None  # the headline's label in summaries and comparisons (default: display_name)
    cli_options: str | None = None  # "module:function"(argparse namespace) -> scorer options, for
    #                                metrics with flags of their own; default {export_keyword: --model,
    #                                device, and batch_size when --batch-size is given}
    defaults: dict = field(default_factory=dict)  # options make_scorer adds unless given
    shared_references: dict = field(default_factory=dict)  # options added when one scorer scores several
    #                                systems against the same references (radscore compare)
    explain: str | None = None  # what `radscore score --explain` shows; None: not supported
    radeval_class: str | None = None  # class name in radscore.integrations.radeval (default from the name)

    @property
    def headline_label(self) -> str:
        return self.label or self.display_name

    @property
    def radeval_name(self) -> str:
        return f"radscore_{self.name}"

    @property
    def radeval_class_name(self) -> str:
        return self.radeval_class or f"Radscore{self.name.title().replace('_', '')}Metric"

    def scorer_class(self) -> type:
        """The scorer class (imported now); an ImportError names the pip extra when there is one."""
        try:
            return load(self.scorer)
        except ImportError as err:
            if self.extra is None:
                raise
            raise ImportError(f"{self.display_name} needs pip install 'radscore[{self.extra}]' ({err})") from err

    def kind(self, kind: str) -> ExportKind:
        return next(k for k in self.kinds if k.kind == kind)


def load(target: str) -> Any:
    """The object a ``"module:name"`` string names."""
    module, sep, attr = target.partition(":")
    if not sep:
        raise ValueError(f"{target!r}: expected 'module:name'")
    return getattr(importlib.import_module(module), attr)


_METRICS: dict[str, MetricSpec] = {}


def register(spec: MetricSpec, replace: bool = False) -> MetricSpec:
    """Add a metric (its name and export kinds must be new unless ``replace``)."""
    if not replace:
        if spec.name in _METRICS:
            raise ValueError(f"metric {spec.name!r} is already registered")
        taken = {k.kind for s in _METRICS.values() for k in s.kinds} & {k.kind for k in spec.kinds}
        if taken:
            raise ValueError(f"export kinds {sorted(taken)} already belong to another metric")
    _METRICS[spec.name] = spec
    return spec


def unregister(name: str) -> MetricSpec:
    """Remove a metric (e.g. one a test registered)."""
    return _METRICS.pop(get(name).name)


def get(name: str) -> MetricSpec:
    """The entry of a metric name; a ValueError lists the known names."""
    try:
        return _METRICS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown metric {name!r}; expected one of {names()}") from None


def names() -> list[str]:
    """The registered metric names, in registration order."""
    return list(_METRICS)


def specs() -> list[MetricSpec]:
    return list(_METRICS.values())


def make_scorer(name: str, **options: Any):
    """The scorer of a metric, built with ``options`` (the scorer class's own arguments, after the
    entry's defaults)."""
    spec = get(name)
    return spec.scorer_class()(**{**spec.defaults, **options})


def from_export(name: str, source: str, **options: Any):
    """The scorer of a metric for an export folder or Hub id (the class's ``from_export``, after
    the entry's defaults)."""
    spec = get(name)
    return spec.scorer_class().from_export(source, **{**spec.defaults, **options})


def spec_for_kind(kind: str) -> MetricSpec:
    """The metric that loads exports of ``kind``."""
    for spec in _METRICS.values():
        if any(k.kind == kind for k in spec.kinds):
            return spec
    raise ValueError(f"no metric loads exports of kind {kind!r}; known kinds: "
                     f"{[k.kind for s in _METRICS.values() for k in s.kinds]}")


def spec_of(scorer: Any) -> MetricSpec:
    """The entry of a scorer instance (its class or a base class is an entry's scorer)."""
    for cls in type(scorer).__mro__:
        target = f"{cls.__module__}:{cls.__qualname__}"
        for spec in _METRICS.values():
            if spec.scorer == target:
                return spec
    raise ValueError(f"not a registered radscore scorer: {type(scorer).__name__} (metrics: {names()})")


def metric_of(scorer: Any) -> str:
    """The metric name of a scorer instance."""
    return spec_of(scorer).name


def options_from_args(spec: MetricSpec, args: Any) -> dict:
    """The scorer options of the ``radscore`` command's arguments (:attr:`MetricSpec.cli_options`)."""
    if spec.cli_options:
        builder: Callable = load(spec.cli_options)
        return builder(args)
    if not args.model:
        raise ValueError(f"--metric {spec.name} needs --model (an export folder or a Hub id)")
    options = {spec.export_keyword: args.model, "device": args.device}
    if args.batch_size is not None:  # else the scorer's own default (for radscore's: by device)
        options["batch_size"] = args.batch_size
    return options


_EXAMPLE = '(["No pleural effusion."], ["Small left pleural effusion."])'
_NER_USAGE = ("```python\nfrom radscore import RaTEScore\n\nscorer = RaTEScore(ner=\"{repo_id}\")\n"
              f"scorer.compute_score{_EXAMPLE}\n```\n")

register(MetricSpec(
    name="ratescore", scorer="radscore.ratescore:RaTEScore", display_name="RaTEScore", headline="f1",
    export_keyword="ner", cli_options="radscore.ratescore:options_from_cli",
    shared_references={"cache_size": 1_000_000}, explain="RaTEScore's entity matches",
    radeval_class="RadscoreRaTEScoreMetric",
    kinds=(ExportKind("ner-iob", "token-classification", "RaTE NER (IOB)", _NER_USAGE + (
               "\nThe folder is a standard token-classification model with the RaTE-NER labels, so the "
               "released `ratescore` package loads it too:\n\n"
               "```python\nfrom RaTEScore import RaTEScore\n\nscorer = RaTEScore(bert_model=\"{repo_id}\")\n```\n")),
           ExportKind("ner-span", "token-classification", "RaTE NER (span)", _NER_USAGE),
           ExportKind("ratescore", "text-classification",
                      "RaTEScore scorer bundle (NER export, entity encoder, tuned W and p)",
                      "```python\nfrom radscore import RaTEScore\n\nscorer = RaTEScore.from_bundle(\"{repo_id}\")\n"
                      f"scorer.compute_score{_EXAMPLE}\n```\n"))))
register(MetricSpec(
    name="bleurt", scorer="radscore.bleurt:ClinicalBLEURT", display_name="ClinicalBLEURT", headline="score",
    export_keyword="model", radeval_class="RadscoreBLEURTMetric",
    kinds=(ExportKind("bleurt", "text-classification", "ClinicalBLEURT regression",
                      "```python\nfrom radscore import ClinicalBLEURT\n\nmodel = ClinicalBLEURT(\"{repo_id}\")\n"
                      f"model.score{_EXAMPLE}\n```\n"),)))
register(MetricSpec(
    name="er2", scorer="radscore.er2score:ER2Score", display_name="ER2Score", headline="total",
    label="ER2Score total", export_keyword="export", extra="er2", defaults={"progress": False},
    radeval_class="RadscoreER2ScoreMetric",
    kinds=(ExportKind("reward", "text-classification", "ER2Score reward model",
                      "```python\nfrom radscore import ER2Score\n\nmodel = ER2Score(\"{repo_id}\")\n"
                      f"model.score{_EXAMPLE}\n```\n", dry_run_check="radscore.reward_model:dry_run_check"),)))

"""radscore's metrics inside RadEval (PyPI ``radeval``), in the shape of RadEval's own metric
classes and registry.

    import radscore.integrations.radeval as rr
    rr.register()                       # adds radscore_ratescore, radscore_bleurt, radscore_er2
    from radeval import RadEval
    evaluator = RadEval(metrics={"radscore_ratescore": {},          # the official recipe
                                 "radscore_bleurt": {"model": "checkpoints/bleurt/sample/export"}})
    evaluator(refs=refs, hyps=hyps)     # {"radscore_ratescore": 0.61, "radscore_bleurt": 0.47}

Every metric of :mod:`radscore.registry` gets a RadEval name ``radscore_<metric>`` and a class
here (``RadscoreRaTEScoreMetric``, ``RadscoreBLEURTMetric``, ``RadscoreER2ScoreMetric``, and one
per metric registered later), made when :func:`register` runs or the class is first imported.
The options of each entry are the scorer's own arguments (:class:`radscore.RaTEScore`,
:class:`radscore.ClinicalBLEURT` with ``model=``, :class:`radscore.ER2Score` with ``export=``).
Unlike RadEval's bundled ``ratescore`` (a copy of the released scorer, which drops reports without
entities and shifts every later score), every pair keeps its own score in its own place, and the
scorer batches across reports. ``detailed=True`` adds the mean of each of the scorer's
``subscore_names`` (RaTEScore's precision and recall, ER²Score's sub-scores); ER²Score's direction
follows its scoring system (RadCliQ error counts: lower is better). The registered names also work
with ``radeval.make_reward_fn``.
"""

from __future__ import annotations

from radscore import registry
from radscore.integrations import make_scorer, per_pair


def _metric_base():
    from radscore.optional import require

    require("radeval")
    from radeval.metrics._base import MetricBase

    return MetricBase


class _RadscoreMetric(_metric_base()):
    """A RadEval metric computed by a radscore scorer (see the module doc)."""

    name = ""
    display_name = ""
    is_api_based = False
    metric = ""  # the radscore metric name

    def __init__(self, **scorer_options):
        self._scorer = make_scorer(self.metric, **scorer_options)

    def _extra_keys(self) -> list[str]:
        return list(self._scorer.subscore_names)

    def metric_keys(self, detailed: bool = False) -> list[str]:
        return [self.name] + ([f"{self.name}_{k}" for k in self._extra_keys()] if detailed else [])

    def progress_total(self, n: int) -> int:
        return 1  # one advance when the whole batch is scored

    def _compute_raw(self, refs, hyps, on_progress=None) -> dict:
        values = per_pair(self._scorer, hyps, refs)
        if on_progress is not None:
            on_progress()
        n = len(values["score"])
        mean = (lambda v: sum(v) / n if n else float("nan"))
        return {self.name: {"aggregate": mean(values["score"]), "per_sample": values["score"],
                            "detailed": {f"{self.name}_{k}": mean(values[k]) for k in self._extra_keys()}}}


_CLASSES: dict[str, type] = {}  # class name -> the class made for a registry entry


def metric_class(spec: registry.MetricSpec) -> type:
    """The RadEval metric class of a registry entry (made once)."""
    cls = _CLASSES.get(spec.radeval_class_name)
    if cls is None or cls.metric != spec.name:
        cls = type(spec.radeval_class_name, (_RadscoreMetric,),
                   {"name": spec.radeval_name, "display_name": f"{spec.display_name} (radscore)",
                    "metric": spec.name, "__module__": __name__,
                    "__doc__": f"{spec.display_name} (radscore) as a RadEval metric."})
        _CLASSES[spec.radeval_class_name] = cls
    return cls


def __getattr__(name: str):
    # the classes of registry entries, by class name (RadEval's registry imports them this way)
    for spec in registry.specs():
        if spec.radeval_class_name == name:
            return metric_class(spec)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register() -> list[str]:
    """Add every radscore metric to RadEval's registry (idempotent); returns their names."""
    from radeval.metrics._registry import METRIC_REGISTRY

    for spec in registry.specs():
        metric_class(spec)
        METRIC_REGISTRY[spec.radeval_name] = (__name__, spec.radeval_class_name)
    return [spec.radeval_name for spec in registry.specs()]

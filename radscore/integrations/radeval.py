"""radscore's metrics inside RadEval (PyPI ``radeval``), in the shape of RadEval's own metric
classes and registry.

    import radscore.integrations.radeval as rr
    rr.register()                       # adds radscore_ratescore, radscore_bleurt, radscore_er2
    from radeval import RadEval
    evaluator = RadEval(metrics={"radscore_ratescore": {},          # the official recipe
                                 "radscore_bleurt": {"model": "checkpoints/bleurt_sample/export"}})
    evaluator(refs=refs, hyps=hyps)     # {"radscore_ratescore": 0.61, "radscore_bleurt": 0.47}

The options of each entry are the scorer's own arguments (:class:`radscore.RaTEScore`,
:class:`radscore.ClinicalBLEURT` with ``model=``, :class:`radscore.ER2Score` with ``export=``).
Unlike RadEval's bundled ``ratescore`` (a copy of the released scorer, which drops reports without
entities and shifts every later score), every pair keeps its own score in its own place, and the
scorer batches across reports. ``detailed=True`` adds RaTEScore's mean precision and recall, and
ER²Score's mean sub-scores; ER²Score's direction follows its scoring system (RadCliQ error
counts: lower is better). The registered names also work with ``radeval.make_reward_fn``.
"""

from __future__ import annotations

from radscore.integrations import make_scorer, per_pair

NAMES = {"radscore_ratescore": ("ratescore", "RaTEScore (radscore)"),
         "radscore_bleurt": ("bleurt", "ClinicalBLEURT (radscore)"),
         "radscore_er2": ("er2", "ER2Score (radscore)")}
CLASSES = {"radscore_ratescore": "RadscoreRaTEScoreMetric", "radscore_bleurt": "RadscoreBLEURTMetric",
           "radscore_er2": "RadscoreER2ScoreMetric"}


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

    def __init__(self, **scorer_options):
        self.metric = NAMES[self.name][0]
        self._scorer = make_scorer(self.metric, **scorer_options)

    def _extra_keys(self) -> list[str]:
        if self.metric == "ratescore":
            return ["precision", "recall"]
        if self.metric == "er2":
            return list(self._scorer.system.items)
        return []

    def metric_keys(self, detailed: bool = False) -> list[str]:
        return [self.name] + ([f"{self.name}_{k}" for k in self._extra_keys()] if detailed else [])

    def progress_total(self, n: int) -> int:
        return 1  # one advance when the whole batch is scored

    def _compute_raw(self, refs, hyps, on_progress=None) -> dict:
        values = per_pair(self.metric, self._scorer, hyps, refs)
        if on_progress is not None:
            on_progress()
        n = len(values["score"])
        mean = (lambda v: sum(v) / n if n else float("nan"))
        return {self.name: {"aggregate": mean(values["score"]), "per_sample": values["score"],
                            "detailed": {f"{self.name}_{k}": mean(values[k]) for k in self._extra_keys()}}}


class RadscoreRaTEScoreMetric(_RadscoreMetric):
    name, display_name = "radscore_ratescore", NAMES["radscore_ratescore"][1]


class RadscoreBLEURTMetric(_RadscoreMetric):
    name, display_name = "radscore_bleurt", NAMES["radscore_bleurt"][1]


class RadscoreER2ScoreMetric(_RadscoreMetric):
    name, display_name = "radscore_er2", NAMES["radscore_er2"][1]


def register() -> list[str]:
    """Add the three metrics to RadEval's registry (idempotent); returns their names."""
    _metric_base()
    from radeval.metrics._registry import METRIC_REGISTRY

    for name, cls in CLASSES.items():
        METRIC_REGISTRY[name] = (__name__, cls)
    return list(CLASSES)

"""radscore's metrics as TRL reward functions (GRPO, RLOO, online DPO, ...).

    from radscore.integrations.trl import reward_function
    reward = reward_function("ratescore", reference_column="reference")   # the official recipe
    trainer = GRPOTrainer(model=..., reward_funcs=[reward], train_dataset=dataset)  # dataset: prompt, reference

TRL calls ``reward(prompts=..., completions=..., completion_ids=..., **columns)`` with every other
dataset column as a keyword; the reference report comes from ``reference_column``. Completions
may be plain strings or conversations (a list of ``{"role", "content"}`` messages: the last
assistant message is scored). One call scores the whole batch with one scorer (batched inside).

Direction: a reward must grow with quality. RaTEScore and ClinicalBLEURT already do; a scorer
whose ``higher_is_better`` is false (an ER²Score export whose scoring system is lower-is-better,
RadCliQ: error counts) returns the negated headline.
``scale`` multiplies the result (e.g. to weigh several reward functions).
"""

from __future__ import annotations

from typing import Any, Sequence

from radscore.integrations import make_scorer, metric_of, per_pair


def completion_texts(completions: Sequence[Any]) -> list[str]:
    """The text of each completion: a string, or the last assistant message of a conversation."""
    out = []
    for k, c in enumerate(completions):
        if isinstance(c, str):
            out.append(c)
            continue
        if isinstance(c, (list, tuple)):
            texts = [m.get("content") for m in c if isinstance(m, dict) and m.get("role", "assistant") == "assistant"]
            if texts and isinstance(texts[-1], str):
                out.append(texts[-1])
                continue
        raise ValueError(f"completions[{k}]: expected a string or a list of messages with an assistant "
                         f"'content', got {type(c).__name__}")
    return out


class RadscoreReward:
    """A TRL reward function (see the module doc). ``__name__`` is what TRL logs it under."""

    def __init__(self, scorer, reference_column: str = "reference", scale: float = 1.0, name: str | None = None):
        self.scorer, self.metric = scorer, metric_of(scorer)
        self.reference_column, self.scale = reference_column, float(scale)
        self.sign = 1.0 if scorer.higher_is_better else -1.0
        self.__name__ = name or f"radscore_{self.metric}"

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> list[float]:
        if self.reference_column not in kwargs:
            raise KeyError(f"{self.__name__}: no dataset column {self.reference_column!r} among the reward "
                           f"function's arguments {sorted(kwargs)}; set reference_column=")
        candidates = completion_texts(completions)
        references = list(kwargs[self.reference_column])
        scores = per_pair(self.scorer, candidates, references)["score"]
        return [self.sign * self.scale * float(s) for s in scores]


def reward_function(metric_or_scorer: Any = "ratescore", reference_column: str = "reference",
                    scale: float = 1.0, **scorer_options: Any) -> RadscoreReward:
    """A reward function from a metric name of :mod:`radscore.registry` (``ratescore``, ``bleurt``
    with ``model=``, ``er2`` with ``export=``; other options go to the scorer) or from a scorer
    already built."""
    scorer = (make_scorer(metric_or_scorer, **scorer_options) if isinstance(metric_or_scorer, str)
              else metric_or_scorer)
    return RadscoreReward(scorer, reference_column, scale)

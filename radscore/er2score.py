"""``ER2Score``: score candidate reports against references with a trained ER²Score export.

Each pair gets the N rewards of the model converted back to the scoring system's native units
(:meth:`radscore.systems.ScoringSystem.to_native`): for RadCliQ, predicted error counts per
category and their sum (lower is better); for MRScore, the points kept per item and the total
out of 100 (higher is better). The total is the system's total of the heads (SPEC §3.3: the sum of
the N rewards, in native units). Rewards are continuous: they are model scores in the units of
the labels, not rounded counts.

Pairs are processed in length-sorted batches of ``batch_size`` (less padding), returned in input
order; a progress bar shows the work on long inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import torch

from radscore.device import resolve_batch_size, resolve_device
from radscore.inputs import check_reports, pair_arguments
from radscore.reward_model import MultiRewardModel
from radscore.scorer import Scorer


@dataclass
class RewardScore:
    """The score of one candidate: sub-scores by name and the total, both in native units;
    ``rewards`` are the raw head outputs (internal, higher is better)."""

    subscores: dict[str, float]
    total: float
    rewards: list[float]
    higher_is_better: bool = True  # the scoring system's direction

    def to_dict(self) -> dict:
        return {"subscores": self.subscores, "total": self.total, "rewards": self.rewards}

    def to_record(self) -> dict:
        """The pair's record (:class:`radscore.scorer.Scorer`): sub-scores by name, the total and
        the system's direction."""
        return {**self.subscores, "total": self.total, "higher_is_better": self.higher_is_better}


class ER2Score(Scorer):
    """An ER²Score export loaded for scoring.

    Args:
        export: export folder (``python -m train fit`` writes ``<run folder>/export``)
            or the Hub id it was published under (the snapshot is downloaded or taken from the
            Hub cache).
        base_model: overrides the base model id recorded in the export (e.g. a local copy).
        batch_size: prompts per forward pass; ``None`` (default): the device's default, 16
            (:data:`radscore.device.DEFAULT_BATCH_SIZES`).
        device: ``None`` picks CUDA when present, else the CPU; ``"cpu"``, ``"cuda"``, ``"cuda:1"``
            or a :class:`torch.device`. The model and every input go there; CUDA where torch sees
            none is a ``ValueError``.
        dtype: dtype of the base model (e.g. ``"bfloat16"`` for 7-8B backbones); None = float32.
        progress: show a tqdm progress bar while scoring.
    """

    def __init__(self, export: str | Path, base_model: str | None = None, batch_size: int | None = None,
                 device=None, dtype: str | None = None, progress: bool = True):
        self.device = resolve_device(device, "ER2Score")
        self.batch_size = resolve_batch_size(batch_size, "ER2Score", self.device)
        self.model = MultiRewardModel.from_export(export, base_model=base_model, dtype=dtype).to(self.device)
        self.export, self.progress = str(export), progress
        self.base_model = base_model
        self.system = self.model.system
        self.truncated = 0  # prompts cut to max_length by the last call of score() (reference first)
        self.truncated_candidates = 0  # of those, prompts whose candidate was cut too

    @classmethod
    def from_export(cls, source: str | Path, **options) -> "ER2Score":
        """The scorer of an export folder or Hub id (``export=source``)."""
        return cls(source, **options)

    @property
    def higher_is_better(self) -> bool:
        """The scoring system's direction (RadCliQ's error counts: lower is better)."""
        return self.system.higher_is_better

    @property
    def subscore_names(self) -> tuple[str, ...]:
        return tuple(self.system.items)

    def headline_detail(self) -> str:
        return f"{self.system.name}, {'higher' if self.system.higher_is_better else 'lower'} is better"

    def signature(self) -> dict:
        """What produced the scores: export, base model, system and the radscore version."""
        from radscore.version import __version__

        from radscore.hub import fingerprint

        return {"radscore": __version__, "export": fingerprint(self.export),
                "base_model": fingerprint(self.base_model or self.model.base_model),
                "higher_is_better": self.system.higher_is_better,
                "system": self.system.name, "prompt_template": self.model.prompt_template,
                "candidate_format": self.model.candidate_format,
                "device": str(self.device), "batch_size": self.batch_size}

    @torch.no_grad()
    def rewards(self, candidates: Sequence[str], references: Sequence[str],
                progress: bool | None = None) -> torch.Tensor:
        """Raw rewards (pairs, N), internal units, in input order; ``progress`` (default: the
        scorer's ``progress``) shows a progress bar."""
        candidates, references = check_reports(candidates, references)
        from tqdm.auto import tqdm

        ids, cuts = self.model.encode(references, candidates)
        self.truncated, self.truncated_candidates = cuts.prompts, cuts.candidates
        if cuts:
            import warnings

            warnings.warn(f"ER2Score: {cuts.describe(len(ids), self.model.max_length)}", stacklevel=3)
        out = torch.empty((len(ids), self.system.n), dtype=torch.float32)
        order = sorted(range(len(ids)), key=lambda k: len(ids[k]))
        show = self.progress if progress is None else progress
        with tqdm(total=len(ids), disable=not show, unit="pair", desc="ER2Score") as bar:
            for lo in range(0, len(order), self.batch_size):
                chunk = order[lo : lo + self.batch_size]
                batch = self.model.pad([ids[k] for k in chunk])
                rewards = self.model(batch["input_ids"].to(self.device), batch["attention_mask"].to(self.device))
                out[torch.tensor(chunk)] = rewards.float().cpu()
                bar.update(len(chunk))
        return out

    def score(self, candidates: Sequence[str] | None = None, references: Sequence[str] | None = None,
              **aliases) -> list[RewardScore]:
        """Per pair: the named sub-scores and the total in the system's native units (sides by
        position or by any name of :mod:`radscore.inputs`)."""
        candidates, references = pair_arguments(candidates, references, **aliases)
        return list(self.iter_score(candidates, references, progress=None))

    def iter_score(self, candidates: Sequence[str], references: Sequence[str],
                   progress: bool | None = True) -> Iterator[RewardScore]:
        """:meth:`score` as an iterator. The whole call is one set of length-sorted batches (the
        scores of a pair depend only on its batch), so every pair is scored before the first
        result comes; ``progress=None`` follows the scorer's ``progress``."""
        up = self.system.higher_is_better
        for row in self.rewards(candidates, references, progress).tolist():
            yield RewardScore(self.system.to_native(row), self.system.total_to_native(row), row, up)

    def compute_score(self, candidates: Sequence[str] | None = None, references: Sequence[str] | None = None,
                      **aliases) -> list[float]:
        """Just the totals, in input order (native units; see :attr:`higher_is_better`)."""
        return [s.total for s in self.score(candidates, references, **aliases)]

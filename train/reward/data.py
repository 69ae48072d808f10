"""ER² pairs for Lightning: rows -> reference-group splits -> pairs (SPEC §3.2) -> prompt ids.

Rows are read with :func:`data.ratings.read_er2_jsonl` (one candidate a line). Without explicit
``val_rows``/``test_rows`` files, the reference groups of ``rows`` are split at random (seeded)
into train/val/test, so no reference is in two splits. Pairs come from
:func:`data.ratings.pair_er2_rows`: pairs with equal totals are skipped and counted, and the
pairing summary of every split is printed. Each distinct candidate prompt is tokenized once.

A batch holds B pairs: ``input_ids``/``attention_mask`` of the batch's distinct prompts with
``index_w``/``index_l`` pointing each pair's accepted and rejected candidate into them,
``subscores_w``/``subscores_l`` (B, N) and ``totals_w``/``totals_l`` (B,) in internal
(higher-is-better) units, and the row ids of both sides (for candidate-level correlations).
With ``cross_reference_pairs`` (opt-in, training batches only) the batch's candidates of
different references are paired too, by their totals (:meth:`RewardDataModule.collate`), and
``cross`` (B',) marks those pairs; the paper pairs only candidates of one reference (SPEC §3.2).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from pathlib import Path
from typing import Literal

import pytorch_lightning as pl
import torch
from pytorch_lightning.utilities import rank_zero_info, rank_zero_warn
from torch.utils.data import DataLoader

from data.rated import RatedSplit
from data.ratings import ER2Row, pair_er2_rows, read_er2_jsonl
from radscore.models import PACKAGED_MINILM
from radscore.reward_model import DEFAULT_PROMPT_TEMPLATE, check_template, encode_prompts, load_tokenizer
from radscore.systems import ScoringSystem, load_system
from radscore.text import check_candidate_format
from train.lightning.module import SPLIT_BY, keep_train_groups, resolve_split_by, split_by_column
from train.lightning.samplers import EpochSeededSampler, LengthGroupedSampler, split_loader

SPLITS = ("train", "val", "test")
DEFAULT_ROWS = "checkpoints/synthetic/synthetic_er2/radcliq_synthetic.jsonl"


@dataclass
class PairItem:
    ids_w: list[int]
    ids_l: list[int]
    subscores_w: list[float]  # internal units, head order
    subscores_l: list[float]
    total_w: float
    total_l: float
    row_w: str
    row_l: str
    group: str


class ReferenceGroupedSampler(EpochSeededSampler):
    """Random order that keeps the pairs of one reference together, so a batch shares candidates
    (each distinct candidate of a batch is encoded once: with 3 candidates a reference, 3 pairs
    cost 3 forward passes, not 6). Seeded per epoch (:class:`~train.lightning.samplers.EpochSeededSampler`)."""

    def __init__(self, groups: list[str], seed: int | None = None):
        super().__init__(len(groups), seed)
        self.members: dict[str, list[int]] = {}
        for k, g in enumerate(groups):
            self.members.setdefault(g, []).append(k)

    def __iter__(self):
        gen = self.generator()
        keys = list(self.members)
        for g in torch.randperm(len(keys), generator=gen).tolist():
            idx = self.members[keys[g]]
            yield from (idx[k] for k in torch.randperm(len(idx), generator=gen).tolist())


def split_groups(groups: list[str], val_fraction: float, test_fraction: float, seed: int) -> dict[str, set]:
    """Seeded random split of reference groups; val and test get at least one group each when
    their fraction is positive and there are enough groups."""
    if not 0 <= val_fraction < 1 or not 0 <= test_fraction < 1 or val_fraction + test_fraction >= 1:
        raise ValueError(f"val_fraction={val_fraction} and test_fraction={test_fraction} must be in [0, 1) "
                         "and sum to less than 1")
    order = sorted(set(groups))
    random.Random(seed).shuffle(order)
    n_val = max(1, round(val_fraction * len(order))) if val_fraction > 0 else 0
    n_test = max(1, round(test_fraction * len(order))) if test_fraction > 0 else 0
    if n_val + n_test >= len(order):
        raise ValueError(f"{len(order)} reference groups are too few for a train/val/test split "
                         f"({n_val} val, {n_test} test)")
    return {"val": set(order[:n_val]), "test": set(order[n_val:n_val + n_test]),
            "train": set(order[n_val + n_test:])}


class RewardDataModule(pl.LightningDataModule):
    """ER²Score training pairs of one scoring system.

    Args:
        rows: ER² JSONL file(s) (``reference, candidate, system, subscores, total`` per line).
        val_rows, test_rows: explicit validation/test files; when absent, ``rows`` is split as
            ``split_by`` says.
        split_by: ``auto`` (default): ``column`` when every row carries a ``split`` key, ``group``
            when none does, an error naming a row without it when only some do
            (:func:`~train.lightning.module.resolve_split_by`); ``group``: the reference groups of
            ``rows`` are split at random with ``val_fraction``/``test_fraction`` and ``split_seed``;
            ``column``: every row's ``split`` key decides (``train``, ``dev``/``val``, ``test``; the
            SYNTHETIC rows carry the corpus split of :mod:`data.split`, so no test report is trained on).
        system: scoring system (built-in name, YAML/JSON path or dict); rows of other systems
            are an error. Linked from the model by the CLI.
        prompt_template, backbone, max_length, candidate_format: as the model's (given from the model by the CLI).
        batch_size: pairs per training batch (each pair is two prompts).
        order: training order: ``by_reference`` keeps the pairs of one reference together (they
            share candidates, encoded once per batch), ``by_length`` batches pairs of similar
            prompt length (less padding), ``random`` shuffles.
        cross_reference_pairs: our opt-in addition to SPEC §3.2, off by default: each training
            batch also pairs its candidates of *different* references whose totals differ (the
            better total accepted, margins as for the paper's pairs). It costs no forward pass (the
            candidates are in the batch already) and ties the reward's level across references,
            which the paper's within-reference pairs leave free. Evaluation pairs are unchanged.
        train_fraction, train_fraction_seed: train on a seeded share of the training split's reference
            groups (1, the default: all of them); val and test stay whole. For learning curves
            (``benchmarks/quality/learning_curve.py``); the shallow learner of the test table is fitted on
            the same share.
    """

    def __init__(self, rows: str | list[str] = DEFAULT_ROWS, val_rows: str | list[str] | None = None,
                 test_rows: str | list[str] | None = None, val_fraction: float = 0.15, test_fraction: float = 0.15,
                 split_seed: int = 0, split_by: Literal["auto", "group", "column"] = "auto",
                 system: str | dict = "radcliq",
                 prompt_template: str = DEFAULT_PROMPT_TEMPLATE, backbone: str = PACKAGED_MINILM,
                 max_length: int = 512, batch_size: int = 8, eval_batch_size: int = 16, num_workers: int = 0,
                 order: Literal["random", "by_length", "by_reference"] = "by_reference",
                 cross_reference_pairs: bool = False, train_fraction: float = 1.0, train_fraction_seed: int = 0,
                 candidate_format: Literal["plain", "diff_marked", "diff_only"] = "plain"):
        super().__init__()
        self.rows, self.val_rows, self.test_rows = rows, val_rows, test_rows
        self.val_fraction, self.test_fraction, self.split_seed = val_fraction, test_fraction, split_seed
        if split_by not in SPLIT_BY:
            raise ValueError(f"split_by={split_by!r}; expected one of {list(SPLIT_BY)}")
        self.split_by = split_by
        self.system: ScoringSystem = load_system(system)
        self.prompt_template = check_template(prompt_template)
        self.backbone, self.max_length = backbone, int(max_length)
        self.candidate_format = check_candidate_format(candidate_format)
        self.batch_size, self.eval_batch_size, self.num_workers = batch_size, eval_batch_size, num_workers
        if order not in ("random", "by_length", "by_reference"):
            raise ValueError(f"order={order!r}; expected random, by_length or by_reference")
        self.order = order
        self.cross_reference_pairs = bool(cross_reference_pairs)
        if not 0 < float(train_fraction) <= 1:
            raise ValueError(f"train_fraction={train_fraction}; expected a share in (0, 1]")
        self.train_fraction, self.train_fraction_seed = float(train_fraction), int(train_fraction_seed)
        self.tokenizer = None
        self.splits: dict[str, list[PairItem]] = {}
        self.summaries: dict[str, object] = {}
        self.pairs: dict[str, list] = {}  # split -> its ER2Pairs (texts, for the baselines)

    # --- reading and splitting --------------------------------------------------------------------
    def _read(self, files) -> list[ER2Row]:
        files = [files] if isinstance(files, (str, Path)) else list(files)
        rows = []
        for f in files:
            got = read_er2_jsonl(f, {self.system.name: self.system})
            other = sorted({r.system for r in got} - {self.system.name})
            if other:
                raise ValueError(f"{f}: rows of system(s) {other}, expected only {self.system.name!r}")
            rows += got
        return rows

    def split_rows(self) -> dict[str, list[ER2Row]]:
        rows = self._read(self.rows)
        explicit = {"val": self.val_rows, "test": self.test_rows}
        if all(explicit.values()):
            out = {"train": rows}
        elif resolve_split_by(self.split_by, rows, str(self.rows)) == "column":
            out = split_by_column(rows, str(self.rows))
        else:
            parts = split_groups([r.group for r in rows], 0 if self.val_rows else self.val_fraction,
                                 0 if self.test_rows else self.test_fraction, self.split_seed)
            out = {k: [r for r in rows if r.group in parts[k]] for k in SPLITS}
        for k, files in explicit.items():
            if files:
                out[k] = self._read(files)
        out["train"] = keep_train_groups(out["train"], self.train_fraction, self.train_fraction_seed, str(self.rows))
        return out

    def setup(self, stage: str | None = None) -> None:
        if self.tokenizer is None:
            self.tokenizer = load_tokenizer(self.backbone)
        if self.splits:
            return
        rows = self.split_rows()
        lines = []
        for split in SPLITS:
            pairs, summary = pair_er2_rows(rows[split], {self.system.name: self.system})
            self.summaries[split], self.pairs[split] = summary, pairs
            seen = Counter(r.id for r in rows[split])
            repeated = sorted(k for k, v in seen.items() if v > 1)
            if repeated:
                raise ValueError(f"{split}: row ids must be unique; repeated: {repeated[:5]}")
            distinct = {row.id: row for p in pairs for row in (p.accepted, p.rejected)}
            ids, cut = encode_prompts(self.tokenizer, self.prompt_template, self.max_length,
                                      [r.reference for r in distinct.values()],
                                      [r.candidate for r in distinct.values()], self.candidate_format)
            by_id = dict(zip(distinct, ids))
            if cut:
                rank_zero_warn(f"{split}: {cut.describe(len(ids), self.max_length)}")
            s = self.system
            self.splits[split] = [
                PairItem(by_id[p.accepted.id], by_id[p.rejected.id], s.to_internal(p.accepted.subscores),
                         s.to_internal(p.rejected.subscores), s.total_to_internal(p.accepted.total),
                         s.total_to_internal(p.rejected.total), p.accepted.id, p.rejected.id,
                         p.accepted.group)
                for p in pairs]
            lines.append(f"{split:<6} {summary.rows:>6} {summary.groups:>7} {summary.pairs:>6} "
                         f"{summary.tied:>11} {cut.prompts:>11} {cut.candidates:>10}")
        rank_zero_info(f"ER² pairs ({self.system.name}):\nsplit    rows  groups  pairs  tied(skip)  prompts cut  cand. cut\n"
                       + "\n".join(lines))
        for split in ("train", "val"):
            if not self.splits[split]:
                raise ValueError(f"the {split} split has no pair (rows {self.summaries[split]})")

    def rated_split(self, split: str) -> RatedSplit:
        """The rows of ``split``'s pairs, each once, in pair order, with their totals in internal
        (higher-is-better) units as the target, the labels of the per-row predictions file and the
        pairs as (accepted, rejected) row indices: what the model is measured on there."""
        s, pairs = self.system, self.pairs[split]
        rows = list({row.id: row for p in pairs for row in (p.accepted, p.rejected)}.values())
        where = {r.id: k for k, r in enumerate(rows)}
        target = [s.total_to_internal(r.total) for r in rows]
        labels = [{"label_total": t, "label_subscores": dict(zip(s.items, s.to_internal(r.subscores))),
                   "label_total_native": r.total} for r, t in zip(rows, target)]
        return RatedSplit([r.id for r in rows], [r.group for r in rows], [r.reference for r in rows],
                          [r.candidate for r in rows], target, labels,
                          [(where[p.accepted.id], where[p.rejected.id]) for p in pairs])

    # --- batches -----------------------------------------------------------------------------------
    def collate(self, items: list[PairItem], cross: bool = False) -> dict:
        """Each distinct candidate of the batch is encoded once: ``input_ids`` holds the distinct
        prompts, ``index_w``/``index_l`` (B,) point each pair's sides into them. With ``cross``, the
        pairs of the batch's candidates of different references with different totals follow the
        batch's own pairs, and ``cross`` (B',) is True on them."""
        position: dict[str, int] = {}
        prompts, sides = [], []  # sides: per distinct row (row id, sub-scores, total, group)
        for item in items:
            for row, ids, subs, total in ((item.row_w, item.ids_w, item.subscores_w, item.total_w),
                                          (item.row_l, item.ids_l, item.subscores_l, item.total_l)):
                if row not in position:
                    position[row] = len(prompts)
                    prompts.append(ids)
                    sides.append((row, subs, total, item.group))
        pairs = [((i.row_w, i.subscores_w, i.total_w), (i.row_l, i.subscores_l, i.total_l)) for i in items]
        n_own = len(pairs)
        if cross:
            for a, b in combinations(sides, 2):
                if a[3] != b[3] and a[2] != b[2]:
                    w, l = (a, b) if a[2] > b[2] else (b, a)
                    pairs.append((w[:3], l[:3]))
        padded = self.tokenizer.pad({"input_ids": prompts}, return_tensors="pt")
        f = torch.float32
        return {"input_ids": padded["input_ids"], "attention_mask": padded["attention_mask"],
                "index_w": torch.tensor([position[w[0]] for w, _ in pairs]),
                "index_l": torch.tensor([position[l[0]] for _, l in pairs]),
                "subscores_w": torch.tensor([w[1] for w, _ in pairs], dtype=f),
                "subscores_l": torch.tensor([l[1] for _, l in pairs], dtype=f),
                "totals_w": torch.tensor([w[2] for w, _ in pairs], dtype=f),
                "totals_l": torch.tensor([l[2] for _, l in pairs], dtype=f),
                "cross": torch.arange(len(pairs)) >= n_own,
                "rows_w": [w[0] for w, _ in pairs], "rows_l": [l[0] for _, l in pairs]}

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        items = self.splits[split]
        sampler = None
        if shuffle and self.order == "by_length":
            sampler = LengthGroupedSampler([max(len(i.ids_w), len(i.ids_l)) for i in items], self.batch_size)
        elif shuffle and self.order == "by_reference":
            sampler = ReferenceGroupedSampler([i.group for i in items])
        cross = shuffle and self.cross_reference_pairs  # training batches only
        return split_loader(self, items, shuffle, sampler, partial(self.collate, cross=cross))

    def train_dataloader(self):
        return self._loader("train", True)

    def val_dataloader(self):
        return self._loader("val", False)

    def test_dataloader(self):
        if not self.splits.get("test"):
            raise ValueError(f"the test split has no pair (rows {self.summaries.get('test')})")
        return self._loader("test", False)

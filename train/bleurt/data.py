"""ClinicalBLEURT data for Lightning: rated section pairs, encoded as the scorer encodes them.

Rows are read with :func:`data.clinical_bleurt.read_clinical_bleurt_jsonl` (target computed from
error counts with the configured weights, or BLEURT's ``score``; empty sections removed and
counted). Splits: a split with its own file uses it; the splits without a file are cut from the
training file **by reference group** (``reference_id``, else the reference text), so no reference
is seen in two splits, in the proportions of ``split_fractions``, seeded by ``split_seed``.

Pairs are tokenized by :func:`radscore.bleurt.encode_pairs`, the function the scorer uses, so a
pair longer than ``max_length`` pieces is cut by the same longest-first rule in training and at
scoring; the number of such pairs is reported for every split.

With ``generate_synthetic: true`` a missing ``train_path`` of the generator's layout
(``<out>/synthetic_bleurt/clinical_bleurt_synthetic.jsonl``) is first generated with
:func:`data.synth.generate_default` (the SYNTHETIC default sets, seed 0).
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytorch_lightning as pl
import torch
from pytorch_lightning.utilities import rank_zero_info
from torch.utils.data import DataLoader

from data.clinical_bleurt import check_weights, read_clinical_bleurt_jsonl
from data.rated import RatedSplit
from data.ratings import RatedPair
from radscore.bleurt import EncodedPair, collate_pairs, encode_pairs
from radscore.models import PACKAGED_MINILM
from radscore.text import check_candidate_format
from train.lightning.module import SPLIT_BY, keep_train_groups, resolve_split_by, split_by_column
from train.lightning.samplers import LengthGroupedSampler, split_loader

log = logging.getLogger(__name__)
SPLITS = ("train", "val", "test")
SYNTHETIC_FILE = ("synthetic_bleurt", "clinical_bleurt_synthetic.jsonl")
SYNTHETIC_BLEURT = "checkpoints/synthetic/" + "/".join(SYNTHETIC_FILE)


@dataclass
class PairItem:
    pair: RatedPair
    encoded: EncodedPair


def split_by_group(pairs: list[RatedPair], fractions: dict[str, float], seed: int) -> dict[str, list[RatedPair]]:
    """Cut ``pairs`` into the named splits by group, in proportion to ``fractions`` (of groups).
    Every split gets at least one group; rows keep their file order within a split."""
    names = [n for n, f in fractions.items() if f > 0]
    groups = sorted({p.group for p in pairs})
    if len(groups) < len(names):
        raise ValueError(f"{len(groups)} reference groups cannot fill the {len(names)} splits {names}")
    random.Random(seed).shuffle(groups)
    total = sum(fractions[n] for n in names)
    assign, start = {}, 0
    for k, name in enumerate(names):
        left = len(names) - k - 1  # splits still to fill after this one: one group each at least
        end = len(groups) if not left else round(len(groups) * sum(fractions[n] for n in names[:k + 1]) / total)
        end = min(max(end, start + 1), len(groups) - left)
        assign.update({g: name for g in groups[start:end]})
        start = end
    out = {n: [] for n in fractions}
    for p in pairs:
        out[assign[p.group]].append(p)
    return out


class BleurtDataModule(pl.LightningDataModule):
    """Rated (reference, candidate) section pairs for the ClinicalBLEURT regressor.

    Args:
        train_path: JSONL rows (see :mod:`data.clinical_bleurt`).
        val_path, test_path: their own files; ``None`` cuts them from ``train_path`` by group.
        split_fractions: ``(train, val, test)`` shares of the groups, used for the splits cut
            from ``train_path``.
        split_seed: seed of the group split.
        split_by: ``auto`` (default: ``column`` when every row of ``train_path`` carries a ``split``
            key, ``group`` when none does, an error naming a row without it when only some do;
            :func:`~train.lightning.module.resolve_split_by`), ``group`` (cut by reference group with
            ``split_fractions``) or ``column`` (every row's ``split`` key: ``train``, ``dev``/``val``,
            ``test``; the SYNTHETIC rows carry the corpus split of :mod:`data.split`).
        generate_synthetic: generate the SYNTHETIC default sets when ``train_path`` is missing.
        weights: error weights of the target (default critical 1, non-critical 1/3,
            spelling 1/12: SPEC §4).
        prefer: the target of a row holding both error counts and a score.
        backbone: model whose tokenizer is used (given from the model by the CLI).
        max_length: longest pair in pieces (given from the model by the CLI).
        candidate_format: how the candidate is read (given from the model by the CLI).
        group_by_length: batch training pairs of similar length (less padding, faster on CPU).
        train_fraction, train_fraction_seed: train on a seeded share of the training split's reference
            groups (1, the default: all of them); val and test stay whole. For learning curves
            (``benchmarks/quality/learning_curve.py``); the shallow learner of the test table is fitted on
            the same share.
    """

    def __init__(self, train_path: str = SYNTHETIC_BLEURT, val_path: str | None = None,
                 test_path: str | None = None,
                 split_fractions: tuple[float, float, float] = (0.8, 0.1, 0.1), split_seed: int = 0,
                 split_by: Literal["auto", "group", "column"] = "auto",
                 generate_synthetic: bool = False, weights: dict[str, float] | None = None,
                 prefer: Literal["counts", "score"] = "counts", backbone: str = PACKAGED_MINILM,
                 max_length: int = 512, batch_size: int = 16, eval_batch_size: int = 64,
                 num_workers: int = 0, group_by_length: bool = True, train_fraction: float = 1.0,
                 train_fraction_seed: int = 0, candidate_format: Literal["plain", "diff_marked", "diff_only"] = "plain"):
        super().__init__()
        self.save_hyperparameters()
        if len(split_fractions) != 3 or any(f < 0 for f in split_fractions):
            raise ValueError(f"split_fractions must be three shares >= 0 (train, val, test), got {split_fractions}")
        self.paths = {"train": train_path, "val": val_path, "test": test_path}
        self.fractions = dict(zip(SPLITS, map(float, split_fractions)))
        for name in ("train", *[s for s in SPLITS[1:] if self.paths[s] is None]):
            if self.fractions[name] <= 0:
                raise ValueError(f"the {name} split is cut from train_path but its share in "
                                 f"split_fractions is {self.fractions[name]}")
        self.split_seed, self.generate_synthetic = split_seed, generate_synthetic
        if split_by not in SPLIT_BY:
            raise ValueError(f"split_by={split_by!r}; expected one of {list(SPLIT_BY)}")
        self.split_by = split_by
        self.weights, self.prefer = check_weights(weights), prefer
        self.backbone, self.max_length = backbone, max_length
        self.candidate_format = check_candidate_format(candidate_format)
        self.batch_size, self.eval_batch_size, self.num_workers = batch_size, eval_batch_size, num_workers
        self.group_by_length = group_by_length
        if not 0 < float(train_fraction) <= 1:
            raise ValueError(f"train_fraction={train_fraction}; expected a share in (0, 1]")
        self.train_fraction, self.train_fraction_seed = float(train_fraction), int(train_fraction_seed)
        self.tokenizer = None
        self.rows: dict[str, list[RatedPair]] = {}
        self.splits: dict[str, list[PairItem]] = {}

    def prepare_data(self) -> None:
        train = Path(self.paths["train"])
        if not self.generate_synthetic or train.is_file():
            return
        if tuple(train.parts[-2:]) != SYNTHETIC_FILE:
            raise ValueError(f"generate_synthetic: train_path {train} is not the generator's layout "
                             f"<folder>/{'/'.join(SYNTHETIC_FILE)}")
        from data.synth import generate_default

        rank_zero_info(f"{train} is missing: generating the SYNTHETIC default sets in {train.parent.parent}")
        generate_default(train.parent.parent)

    def read_splits(self) -> dict[str, list[RatedPair]]:
        """Every split's rows (read once); logs what was kept and removed."""
        if self.rows:
            return self.rows
        read = {}
        for split, path in self.paths.items():
            if path is None:
                continue
            rows, summary = read_clinical_bleurt_jsonl(path, self.weights, self.prefer)
            if summary.removed:
                log.warning("%s", summary.describe())
            else:
                rank_zero_info(summary.describe())
            read[split] = rows
        cut = ["train", *[s for s in SPLITS[1:] if s not in read]]
        if len(cut) > 1 and resolve_split_by(self.split_by, read["train"], str(self.paths["train"])) == "column":
            sides = split_by_column(read["train"], self.paths["train"])
            read.update({s: sides[s] for s in cut})
        elif len(cut) > 1:
            read.update(split_by_group(read["train"], {s: self.fractions[s] for s in cut}, self.split_seed))
        read["train"] = keep_train_groups(read["train"], self.train_fraction, self.train_fraction_seed,
                                          str(self.paths["train"]))
        for split in SPLITS:
            if not read.get(split):
                raise ValueError(f"the {split} split is empty (from {self.paths[split] or self.paths['train']})")
        self.rows = read
        return read

    def setup(self, stage: str | None = None) -> None:
        from train.bleurt.convert import load_tokenizer

        if self.tokenizer is None:
            self.tokenizer = load_tokenizer(self.backbone)
            limit = getattr(self.tokenizer, "model_max_length", None)
            if limit and limit < self.max_length:
                log.warning("max_length=%d exceeds the tokenizer's limit %d: using %d", self.max_length, limit, limit)
                self.max_length = int(limit)
        wanted = {"fit": ("train", "val"), "validate": ("val",), "test": ("test",)}.get(stage, SPLITS)
        rows = self.read_splits()
        for split in wanted:
            if split not in self.splits:
                self.splits[split] = self.encode(rows[split], split)
        self.print_summary(wanted)

    def encode(self, pairs: list[RatedPair], split: str = "") -> list[PairItem]:
        encoded = encode_pairs(self.tokenizer, [p.reference for p in pairs], [p.candidate for p in pairs],
                               self.max_length, self.candidate_format)
        cut = sum(e.truncated for e in encoded)
        if cut:
            log.warning("%s: %d of %d pairs are longer than max_length=%d pieces and were truncated "
                        "longest first", split, cut, len(pairs), self.max_length)
        return [PairItem(p, e) for p, e in zip(pairs, encoded)]

    def print_summary(self, splits) -> None:
        lines = [f"{'split':6} {'pairs':>6} {'groups':>6} {'mean target':>11} {'truncated':>9}"]
        for s in splits:
            items = self.splits[s]
            mean = sum(i.pair.rating for i in items) / len(items)
            lines.append(f"{s:6} {len(items):6d} {len({i.pair.group for i in items}):6d} {mean:11.3f} "
                         f"{sum(i.encoded.truncated for i in items):9d}")
        rank_zero_info("ClinicalBLEURT data (max_length %d pieces)\n%s" % (self.max_length, "\n".join(lines)))

    def rated_split(self, split: str) -> RatedSplit:
        """The rows of ``split`` with their quality target and the labels of the per-row predictions file."""
        rows = self.read_splits()[split]
        target = [p.rating for p in rows]
        return RatedSplit([p.id for p in rows], [p.group for p in rows], [p.reference for p in rows],
                          [p.candidate for p in rows], target, [{"label": t} for t in target])

    def collate(self, items: list[PairItem]) -> dict:
        pad = self.tokenizer.pad_token_id
        batch = collate_pairs([i.encoded for i in items], 0 if pad is None else pad)
        batch["target"] = torch.tensor([i.pair.rating for i in items], dtype=torch.float32)
        batch["ids"] = [i.pair.id for i in items]
        return batch

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        items = self.splits[split]
        sampler = (LengthGroupedSampler([len(i.encoded.input_ids) for i in items], self.batch_size)
                   if shuffle and self.group_by_length else None)
        return split_loader(self, items, shuffle, sampler)

    def train_dataloader(self):
        return self._loader("train", True)

    def val_dataloader(self):
        return self._loader("val", False)

    def test_dataloader(self):
        return self._loader("test", False)

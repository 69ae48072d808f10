"""The samplers and DataLoader that every task's datamodule shares: orders seeded per epoch
(the same on every DDP rank, never drawn from the global RNG) and the split loader."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader


class EpochSeededSampler(torch.utils.data.Sampler):
    """A sampler whose order is a function of ``(seed, epoch)`` only: each epoch draws from its own
    ``torch.Generator`` seeded with ``seed + epoch``, never from the global RNG. ``seed`` defaults
    to ``torch.initial_seed()`` (what ``seed_everything`` set), so every DDP rank draws the same
    order and Lightning's ``DistributedSamplerWrapper`` hands each rank a disjoint shard;
    ``set_epoch`` (Lightning calls it, and forwards it through the wrapper) changes the order each
    epoch. Without ``set_epoch`` calls, each pass advances the epoch by one."""

    def __init__(self, n: int, seed: int | None = None):
        self.n = n
        self.seed = torch.initial_seed() if seed is None else int(seed)
        self.epoch = 0

    def __len__(self) -> int:
        return self.n

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def generator(self) -> torch.Generator:
        g = torch.Generator().manual_seed((self.seed + self.epoch) % (2**63))
        self.epoch += 1  # the next pass, unless set_epoch says otherwise
        return g


class LengthGroupedSampler(EpochSeededSampler):
    """Random order in which neighbouring sentences have similar lengths, so batches carry little
    padding: shuffle, cut into chunks of ``group`` batches, sort each chunk by length, then shuffle
    the batches (seeded per epoch: :class:`EpochSeededSampler`)."""

    def __init__(self, lengths: list[int], batch_size: int, group: int = 50, seed: int | None = None):
        super().__init__(len(lengths), seed)
        self.lengths, self.batch_size, self.group = lengths, batch_size, group

    def __iter__(self):
        g = self.generator()
        order = torch.randperm(len(self.lengths), generator=g).tolist()
        chunk = self.batch_size * self.group
        batches = []
        for c in range(0, len(order), chunk):
            part = sorted(order[c : c + chunk], key=lambda i: self.lengths[i])
            batches += [part[b : b + self.batch_size] for b in range(0, len(part), self.batch_size)]
        for k in torch.randperm(len(batches), generator=g).tolist():
            yield from batches[k]


def split_loader(dm, items: list, shuffle: bool, sampler=None, collate=None) -> DataLoader:
    """The DataLoader every task's datamodule uses: evaluation keeps the file order at
    ``dm.eval_batch_size``; training uses ``sampler`` when given, else plain shuffling.
    ``collate`` defaults to ``dm.collate``."""
    collate = collate or dm.collate
    if not shuffle:
        return DataLoader(items, batch_size=dm.eval_batch_size, collate_fn=collate, num_workers=dm.num_workers)
    return DataLoader(items, batch_size=dm.batch_size, shuffle=sampler is None, sampler=sampler,
                      collate_fn=collate, num_workers=dm.num_workers)

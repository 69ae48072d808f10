"""Under DDP (Lightning wraps a custom sampler in ``DistributedSamplerWrapper``), the two ranks of
every task's training sampler see disjoint shards whose union is the epoch, and a new order each
epoch, whatever the global RNG of each rank has done."""

import pytest
import torch
from lightning_fabric.utilities.distributed import DistributedSamplerWrapper

from train.lightning.samplers import LengthGroupedSampler
from train.reward.data import ReferenceGroupedSampler

LENGTHS = [(7 * k) % 23 + 1 for k in range(40)]
GROUPS = [f"ref{k // 3}" for k in range(42)]


def rank_sampler(kind: str, rank: int):
    torch.manual_seed(42)  # seed_everything on every rank
    sampler = (LengthGroupedSampler(LENGTHS, batch_size=4, group=2) if kind == "length"
               else ReferenceGroupedSampler(GROUPS))
    torch.rand(17 * (rank + 1))  # the ranks' global RNGs drift apart (dropout, augmentation, ...)
    return DistributedSamplerWrapper(sampler, num_replicas=2, rank=rank, shuffle=False)


@pytest.mark.parametrize("kind", ["length", "reference"])
def test_two_ranks_see_disjoint_shards_covering_the_epoch_in_a_new_order_each_epoch(kind):
    n = len(LENGTHS) if kind == "length" else len(GROUPS)
    ranks = [rank_sampler(kind, r) for r in range(2)]
    epochs = []
    for epoch in range(3):
        shards = []
        for wrapper in ranks:
            wrapper.set_epoch(epoch)  # what Lightning's fit loop calls; forwarded to our sampler
            shards.append(list(wrapper))
        assert not set(shards[0]) & set(shards[1])
        assert sorted(shards[0] + shards[1]) == list(range(n))
        epochs.append(shards)
    assert epochs[0] != epochs[1] != epochs[2]
    again = [rank_sampler(kind, r) for r in range(2)]  # a resumed run: same seed, same epoch, same shard
    again[0].set_epoch(2)
    assert list(again[0]) == epochs[2][0]


def test_without_set_epoch_each_pass_is_a_new_order_and_batches_stay_length_grouped():
    sampler = LengthGroupedSampler(LENGTHS, batch_size=4, group=2, seed=0)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(len(LENGTHS))) and first != second
    spread = [max(LENGTHS[i] for i in first[b:b + 4]) - min(LENGTHS[i] for i in first[b:b + 4])
              for b in range(0, len(first), 4)]
    shuffled = torch.randperm(len(LENGTHS), generator=torch.Generator().manual_seed(0)).tolist()
    plain = [max(LENGTHS[i] for i in shuffled[b:b + 4]) - min(LENGTHS[i] for i in shuffled[b:b + 4])
             for b in range(0, len(shuffled), 4)]
    assert sum(spread) < sum(plain)  # less padding than plain shuffling

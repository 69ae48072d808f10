"""split_by 'auto' (the default): the rows' own ``split`` key when every row carries one, else the
seeded random split by reference group; a mix is an error naming a row."""

from __future__ import annotations

import json

import pytest

from data.ratings import RatedPair
from train.lightning.module import resolve_split_by

HEADS = ("false_prediction", "omission", "incorrect_location", "incorrect_severity", "added_comparison",
         "omitted_comparison")
SIDES = ("train", "dev", "test")


def _er2(path, n_refs=30, split=lambda k: SIDES[k % 3]):
    with path.open("w") as fh:
        for k in range(n_refs):
            for j in range(3):
                row = {"id": f"r{k}-{j}", "reference": f"Reference {k}. No effusion.",
                       "candidate": f"Candidate {k} {j}." + " Effusion." * j, "system": "radcliq",
                       "subscores": dict(zip(HEADS, [j, 0, 0, 0, 0, 0])), "total": float(j)}
                side = split(k)
                if side is not None:
                    row["split"] = side
                fh.write(json.dumps(row) + "\n")
    return str(path)


def _bleurt(path, n_refs=30, split=lambda k: SIDES[k % 3]):
    with path.open("w") as fh:
        for k in range(n_refs):
            for j in range(2):
                row = {"id": f"b{k}-{j}", "reference": f"Reference {k}. No effusion.",
                       "candidate": f"Candidate {k} {j}.", "score": 1.0 - 0.3 * j}
                side = split(k)
                if side is not None:
                    row["split"] = side
                fh.write(json.dumps(row) + "\n")
    return str(path)


def _pair(k, split=None):
    return RatedPair(f"p{k}", "ref", "cand", 1.0, f"g{k}", {} if split is None else {"split": split})


def test_resolve_split_by_auto_column_group_and_a_mix():
    every = [_pair(0, "train"), _pair(1, "test")]
    none = [_pair(0), _pair(1)]
    assert resolve_split_by("auto", every, "f") == "column"
    assert resolve_split_by("auto", none, "f") == "group"
    assert resolve_split_by("group", every, "f") == "group"  # explicit values kept
    assert resolve_split_by("column", none, "f") == "column"
    with pytest.raises(ValueError, match="row 'p1' does not"):
        resolve_split_by("auto", [_pair(0, "train"), _pair(1)], "f")
    with pytest.raises(ValueError, match="expected one of"):
        resolve_split_by("random", every, "f")


def _reward(rows, **kw):
    from train.reward.data import RewardDataModule

    return RewardDataModule(rows=rows, **kw).split_rows()


def _bleurt_splits(rows, **kw):
    from train.bleurt.data import BleurtDataModule

    return BleurtDataModule(train_path=rows, **kw).read_splits()


def _ids(splits):
    return {k: [r.id for r in v] for k, v in splits.items()}


@pytest.mark.parametrize("write, read, missing", [(_er2, _reward, "r7-0"), (_bleurt, _bleurt_splits, "b7-0")],
                         ids=["reward", "bleurt"])
def test_rows_default_to_their_split_column(tmp_path, write, read, missing):
    rows = write(tmp_path / "rows.jsonl")
    auto = read(rows)
    assert _ids(auto) == _ids(read(rows, split_by="column"))
    assert {r.meta["split"] for r in auto["test"]} == {"test"} and {r.meta["split"] for r in auto["val"]} == {"dev"}
    assert _ids(read(rows, split_by="group")) != _ids(auto)  # explicit: the random split still
    # no split key anywhere: the random group split, as before
    bare = write(tmp_path / "bare.jsonl", split=lambda k: None)
    assert _ids(read(bare)) == _ids(read(bare, split_by="group"))
    # some rows only: an error naming one without it
    mixed = write(tmp_path / "mixed.jsonl", split=lambda k: None if k == 7 else SIDES[k % 3])
    with pytest.raises(ValueError, match=f"row '{missing}' does not"):
        read(mixed)


def test_the_datamodules_default_is_auto():
    import inspect

    from train.bleurt.data import BleurtDataModule
    from train.reward.data import RewardDataModule

    for cls in (RewardDataModule, BleurtDataModule):
        assert inspect.signature(cls).parameters["split_by"].default == "auto"


def test_tune_pairs_default_to_their_published_split():
    from train.tune.config import SplitSettings
    from train.tune.data import split_pairs

    assert SplitSettings().by == "auto"
    pairs = [_pair(k, "train" if k % 4 else "test") for k in range(20)]
    auto = split_pairs(pairs, SplitSettings())
    published = split_pairs(pairs, SplitSettings(by="published"))
    assert auto.train.tolist() == published.train.tolist() and auto.test.tolist() == published.test.tolist()
    bare = [_pair(k) for k in range(20)]
    assert split_pairs(bare, SplitSettings()).test.tolist() == split_pairs(bare, SplitSettings(by="group")).test.tolist()
    with pytest.raises(ValueError, match="pair 'p3' does not"):
        split_pairs([_pair(k, None if k == 3 else "train") for k in range(20)], SplitSettings())

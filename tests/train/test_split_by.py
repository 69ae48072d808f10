"""split_by 'auto' (the default): the rows' own ``split`` key when every row carries one, else the
seeded random split by reference group; a mix is an error naming a row (issue #29)."""

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


def test_reward_rows_default_to_their_split_column(tmp_path):
    from train.reward.data import RewardDataModule

    rows = _er2(tmp_path / "rows.jsonl")
    auto = RewardDataModule(rows=rows).split_rows()
    assert RewardDataModule(rows=rows).split_by == "auto"
    column = RewardDataModule(rows=rows, split_by="column").split_rows()
    assert {k: [r.id for r in v] for k, v in auto.items()} == {k: [r.id for r in v] for k, v in column.items()}
    assert {r.meta["split"] for r in auto["test"]} == {"test"} and {r.meta["split"] for r in auto["val"]} == {"dev"}
    group = RewardDataModule(rows=rows, split_by="group").split_rows()  # explicit: the random split still
    assert {k: [r.id for r in v] for k, v in group.items()} != {k: [r.id for r in v] for k, v in auto.items()}
    # no split key anywhere: the random group split, as before
    bare = _er2(tmp_path / "bare.jsonl", split=lambda k: None)
    got = RewardDataModule(rows=bare).split_rows()
    want = RewardDataModule(rows=bare, split_by="group").split_rows()
    assert {k: [r.id for r in v] for k, v in got.items()} == {k: [r.id for r in v] for k, v in want.items()}
    # some rows only: an error naming one without it
    mixed = _er2(tmp_path / "mixed.jsonl", split=lambda k: None if k == 7 else SIDES[k % 3])
    with pytest.raises(ValueError, match="row 'r7-0' does not"):
        RewardDataModule(rows=mixed).split_rows()


def test_bleurt_rows_default_to_their_split_column(tmp_path):
    from train.bleurt.data import BleurtDataModule

    rows = _bleurt(tmp_path / "rows.jsonl")
    auto = BleurtDataModule(train_path=rows).read_splits()
    column = BleurtDataModule(train_path=rows, split_by="column").read_splits()
    assert {k: [r.id for r in v] for k, v in auto.items()} == {k: [r.id for r in v] for k, v in column.items()}
    assert {r.meta["split"] for r in auto["test"]} == {"test"}
    bare = _bleurt(tmp_path / "bare.jsonl", split=lambda k: None)
    got = BleurtDataModule(train_path=bare).read_splits()
    want = BleurtDataModule(train_path=bare, split_by="group").read_splits()
    assert {k: [r.id for r in v] for k, v in got.items()} == {k: [r.id for r in v] for k, v in want.items()}
    mixed = _bleurt(tmp_path / "mixed.jsonl", split=lambda k: None if k == 4 else SIDES[k % 3])
    with pytest.raises(ValueError, match="row 'b4-0' does not"):
        BleurtDataModule(train_path=mixed).read_splits()


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

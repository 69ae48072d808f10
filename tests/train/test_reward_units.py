"""ER²Score training pieces: pairing summary, splits, batches, metrics, what a step changes,
and checkpoints that hold the trainable parameters only."""

import math
from itertools import combinations

import numpy as np
import pytest
import pytorch_lightning as pl
import torch

from data.ratings import ER2Row, pair_er2_rows
from radscore.systems import RADCLIQ
from train.reward import ER2RewardModel, RewardDataModule
from train.reward.data import split_groups
from train.reward.metrics import correlation_metrics, pair_metrics

TEMPLATE = "ref: {reference} [SEP] cand: {candidate}"


@pytest.fixture(scope="module")
def er2_rows(tmp_path_factory):
    """A small SYNTHETIC ER² set: 36 rows per system (12 references x 3 quality tiers)."""
    from data.synth.generate import generate

    out = tmp_path_factory.mktemp("synthetic")
    generate(out, 0, {"rexval": 0, "task1": 0, "task2": 0, "task3": 0, "er2": 36, "bleurt": 0})
    return out / "synthetic_er2"


def row(id, group, total, **subs):
    s = {k: 0 for k in RADCLIQ.items} | subs
    assert sum(s.values()) == total
    return ER2Row(id, f"ref {group}", f"cand {id}", "radcliq", s, float(total), group)


def test_pairing_counts_ties_and_orients_margins():
    rows = [row("a", "g1", 0), row("b", "g1", 2, omission=2), row("c", "g1", 2, added_comparison=2),
            row("d", "g2", 1, omission=1)]
    pairs, summary = pair_er2_rows(rows)
    assert (summary.rows, summary.groups, summary.pairs, summary.tied, summary.single) == (4, 2, 2, 1, 1)
    assert "1 pairs skipped for equal totals" in str(summary)
    ab = next(p for p in pairs if p.rejected.id == "b")
    assert ab.accepted.id == "a" and ab.margin == 2.0  # fewer errors is better: margin in internal units
    assert ab.sub_margins["omission"] == 2.0 and ab.sub_margins["false_prediction"] == 0.0


def test_group_split_is_disjoint_seeded_and_checked():
    groups = [f"g{k}" for k in range(20)] * 3
    a, b = split_groups(groups, 0.2, 0.1, 0), split_groups(groups, 0.2, 0.1, 0)
    assert a == b and (len(a["val"]), len(a["test"]), len(a["train"])) == (4, 2, 14)
    assert not (a["val"] & a["test"]) and not (a["train"] & (a["val"] | a["test"]))
    assert split_groups(groups, 0.2, 0.1, 1) != a
    with pytest.raises(ValueError, match="too few"):
        split_groups(["g1", "g2"], 0.5, 0.4, 0)


def test_metrics_by_hand():
    dr = np.array([[1.0, -1.0], [-0.5, 0.2], [0.3, 0.0]])  # totals 0, -0.3, 0.3
    m = np.array([[1.0, 0.0], [-1.0, 1.0], [2.0, -1.0]])
    out = pair_metrics(dr, m, ("a", "b"))
    assert out["pair_acc"] == pytest.approx(1 / 3)  # a tie (row 0) counts as wrong
    assert out["reward_margin"] == pytest.approx(0.0)
    assert out["pair_acc/a"] == 1.0 and out["pairs/a"] == 3
    assert out["pair_acc/b"] == 0.5 and out["pairs/b"] == 2  # row 0 has m_b = 0: not counted
    pred = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    gold = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 0.0]])
    c = correlation_metrics(pred, gold, gold.sum(1), ("a", "b"))
    assert c["kendall"] == pytest.approx(1 / 3) and c["spearman"] == pytest.approx(0.5)
    assert c["kendall/a"] == pytest.approx(1.0)
    assert math.isnan(c["kendall/b"])  # constant predictions: no correlation, said so


def test_datamodule_batches_share_candidates(er2_rows, tiny_backbone):
    dm = RewardDataModule(rows=str(er2_rows / "radcliq_synthetic.jsonl"), backbone=tiny_backbone,
                          prompt_template=TEMPLATE, max_length=128, batch_size=3, val_fraction=0.2, test_fraction=0.2)
    dm.setup("fit")
    assert sum(len(v) for v in dm.splits.values()) == sum(s.pairs for s in dm.summaries.values())
    item = dm.splits["train"][0]
    assert item.total_w > item.total_l and item.total_w <= 0  # internal units: minus the error count
    pl.seed_everything(0)
    batch = next(iter(dm.train_dataloader()))
    assert batch["subscores_w"].shape == (3, 6)
    assert batch["input_ids"].shape[0] == len(set(batch["rows_w"]) | set(batch["rows_l"]))
    assert batch["input_ids"].shape[0] < 6  # the pairs of one reference share candidates
    with pytest.raises(ValueError, match="rows of system"):
        bad = RewardDataModule(rows=str(er2_rows / "mrscore_synthetic.jsonl"), backbone=tiny_backbone, system="radcliq")
        bad.setup("fit")


def test_cross_reference_pairs_pair_a_training_batchs_candidates_of_different_references(er2_rows, tiny_backbone):
    kw = dict(rows=str(er2_rows / "radcliq_synthetic.jsonl"), backbone=tiny_backbone, prompt_template=TEMPLATE,
              max_length=128, batch_size=6, val_fraction=0.2, test_fraction=0.2)
    plain, cross = RewardDataModule(**kw), RewardDataModule(**kw, cross_reference_pairs=True)
    plain.setup("fit"), cross.setup("fit")
    assert plain.splits["train"] == cross.splits["train"]  # the paper's pairs are unchanged
    pl.seed_everything(0)
    a = next(iter(plain.train_dataloader()))
    pl.seed_everything(0)
    b = next(iter(cross.train_dataloader()))
    assert not a["cross"].any() and b["cross"][:6].logical_not().all() and b["cross"][6:].all()
    for key in ("input_ids", "index_w", "index_l", "totals_w", "totals_l", "subscores_w", "subscores_l"):
        assert torch.equal(b[key][:6], a[key]), key  # the batch's own pairs come first, as without
    group = {row: item.group for item in cross.splits["train"] for row in (item.row_w, item.row_l)}
    total = {row: t for item in cross.splits["train"] for row, t in ((item.row_w, item.total_w),
                                                                       (item.row_l, item.total_l))}
    added = list(zip(b["rows_w"][6:], b["rows_l"][6:]))
    distinct = list(dict.fromkeys(b["rows_w"][:6] + b["rows_l"][:6]))
    expected = {tuple(sorted(p)) for p in combinations(distinct, 2)
                if group[p[0]] != group[p[1]] and total[p[0]] != total[p[1]]}
    assert added and {tuple(sorted(p)) for p in added} == expected and len(added) == len(expected)
    assert all(total[w] > total[l] for w, l in added)  # the better total is accepted
    assert torch.equal(b["totals_w"][6:], torch.tensor([total[w] for w, _ in added]))
    assert b["input_ids"].shape == a["input_ids"].shape  # no extra prompt to encode
    assert not next(iter(cross.val_dataloader()))["cross"].any()  # evaluation pairs stay the paper's
    from train.reward.losses import mre_loss

    model = tiny_model(tiny_backbone)
    rw, rl = model.pair_rewards(b)
    expected_loss = mre_loss(rw, rl, b["subscores_w"], b["subscores_l"], b["totals_w"], b["totals_l"])
    assert rw.shape[0] == len(b["cross"]) > 6
    assert model.training_step(b, 0).item() == pytest.approx(expected_loss.item())  # every pair trains
    per_pair = mre_loss(rw, rl, b["subscores_w"], b["subscores_l"], b["totals_w"], b["totals_l"], reduction="none")
    half = tiny_model(tiny_backbone, cross_weight=0.5)
    assert half.loss(b, rw, rl).item() == pytest.approx((per_pair[:6].sum() + 0.5 * per_pair[6:].sum()).item())
    assert half.loss(a, *model.pair_rewards(a)).item() == pytest.approx(model.loss(a, *model.pair_rewards(a)).item())
    with pytest.raises(ValueError, match="cross_weight"):
        tiny_model(tiny_backbone, cross_weight=-1.0)


def tiny_model(backbone, **kw):
    return ER2RewardModel(backbone=backbone, prompt_template=TEMPLATE, max_length=128, lora_r=4,
                          lora_target_modules=["query", "value"], lr=1e-2, **kw)


def test_a_step_changes_only_lora_and_head(er2_rows, tiny_backbone, tmp_path):
    pl.seed_everything(0)
    dm = RewardDataModule(rows=str(er2_rows / "radcliq_synthetic.jsonl"), backbone=tiny_backbone,
                          prompt_template=TEMPLATE, max_length=128, batch_size=6)
    model = tiny_model(tiny_backbone)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    trainer = pl.Trainer(max_steps=1, accelerator="cpu", logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False, limit_val_batches=0)
    trainer.fit(model, dm)
    changed = [k for k, v in model.state_dict().items() if not torch.equal(v, before[k])]
    assert changed and all("lora_" in k or "modules_to_save" in k for k in changed)
    assert any("lora_B" in k for k in changed) and any("modules_to_save" in k for k in changed)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert set(changed) <= trainable
    assert all("lora_" in n or "modules_to_save" in n for n in trainable)


def test_checkpoint_holds_trainable_parameters_and_reloads_identically(er2_rows, tiny_backbone, tmp_path):
    pl.seed_everything(0)
    dm = RewardDataModule(rows=str(er2_rows / "radcliq_synthetic.jsonl"), backbone=tiny_backbone,
                          prompt_template=TEMPLATE, max_length=128, batch_size=6)
    model = tiny_model(tiny_backbone)
    trainer = pl.Trainer(max_steps=2, accelerator="cpu", logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False, limit_val_batches=1)
    trainer.fit(model, dm)
    trainer.save_checkpoint(tmp_path / "m.ckpt")
    state = torch.load(tmp_path / "m.ckpt", weights_only=False)
    assert set(state["state_dict"]) == set(model.trainable_keys())
    assert state["radscore"]["task"] == "reward" and state["radscore"]["system"]["name"] == "radcliq"
    again = ER2RewardModel.load_from_checkpoint(tmp_path / "m.ckpt", map_location="cpu").eval()
    model.eval()
    batch = next(iter(dm.val_dataloader()))
    with torch.no_grad():
        torch.testing.assert_close(again(batch["input_ids"], batch["attention_mask"]),
                                   model(batch["input_ids"], batch["attention_mask"]), rtol=0, atol=0)

    other = dict(state, radscore={**state["radscore"], "task": "ner-iob"})
    torch.save(other, tmp_path / "other.ckpt")
    with pytest.raises(ValueError, match="checkpoint of task 'ner-iob', expected 'reward'"):
        ER2RewardModel.load_from_checkpoint(tmp_path / "other.ckpt", map_location="cpu")
    with pytest.raises(ValueError, match="lacks .* trainable parameter"):
        ER2RewardModel.load_from_checkpoint(tmp_path / "m.ckpt", map_location="cpu",
                                            lora_target_modules=["query", "key", "value"])
    with pytest.raises(ValueError, match="scoring system 'radcliq'"):
        ER2RewardModel.load_from_checkpoint(tmp_path / "m.ckpt", map_location="cpu", system="mrscore")


def test_full_fine_tuning_trains_the_whole_backbone_with_the_head_at_its_own_rate(er2_rows, tiny_backbone, tmp_path):
    pl.seed_everything(0)
    dm = RewardDataModule(rows=str(er2_rows / "radcliq_synthetic.jsonl"), backbone=tiny_backbone,
                          prompt_template=TEMPLATE, max_length=128, batch_size=6)
    model = ER2RewardModel(backbone=tiny_backbone, prompt_template=TEMPLATE, max_length=128, finetune="full",
                           modules_to_save=["pooler"], lr=1e-4, head_lr=1e-2)
    assert all(p.requires_grad for p in model.parameters()) and not any("lora_" in n for n, _ in model.named_parameters())
    before = {k: v.clone() for k, v in model.state_dict().items()}
    trainer = pl.Trainer(max_steps=2, accelerator="cpu", logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False, limit_val_batches=1)
    trainer.fit(model, dm)
    changed = {k for k, v in model.state_dict().items() if not torch.equal(v, before[k])}
    assert "reward.model.bert.encoder.layer.0.attention.self.query.weight" in changed
    assert "reward.model.classifier.weight" in changed and "reward.model.bert.pooler.dense.weight" in changed
    body, head = trainer.optimizers[0].param_groups
    named = {id(p): n for n, p in model.named_parameters()}
    assert {named[id(p)] for p in head["params"]} == {n for n in named.values() if ".classifier." in n or ".pooler." in n}
    assert len(body["params"]) + len(head["params"]) == len(named)
    assert body["initial_lr"] == 1e-4 and head["initial_lr"] == 1e-2
    trainer.save_checkpoint(tmp_path / "full.ckpt")
    again = ER2RewardModel.load_from_checkpoint(tmp_path / "full.ckpt", map_location="cpu").eval()
    batch = next(iter(dm.val_dataloader()))
    with torch.no_grad():
        torch.testing.assert_close(again(batch["input_ids"], batch["attention_mask"]),
                                   model.eval()(batch["input_ids"], batch["attention_mask"]), rtol=0, atol=0)
    with pytest.raises(ValueError, match="finetune"):
        ER2RewardModel(backbone=tiny_backbone, finetune="partial")


def test_the_module_loss_is_specs_sum_by_default_and_mean_on_request(tiny_backbone):
    from train.reward.losses import mre_loss

    torch.manual_seed(0)
    rw, rl = torch.randn(5, 6), torch.randn(5, 6)
    batch = {"subscores_w": torch.randint(-3, 1, (5, 6)).float(), "subscores_l": torch.randint(-3, 1, (5, 6)).float(),
             "totals_w": torch.full((5,), -1.0), "totals_l": torch.full((5,), -4.0)}
    per_pair = mre_loss(rw, rl, batch["subscores_w"], batch["subscores_l"], batch["totals_w"], batch["totals_l"],
                        reduction="none")
    assert tiny_model(tiny_backbone).loss(batch, rw, rl).item() == pytest.approx(per_pair.sum().item())
    mean = tiny_model(tiny_backbone, reduction="mean")
    assert mean.loss(batch, rw, rl).item() == pytest.approx(per_pair.mean().item())
    with pytest.raises(ValueError, match="reduction"):
        tiny_model(tiny_backbone, reduction="max")


def test_reduction_has_one_default_the_specs_sum(tiny_backbone):
    import inspect

    assert inspect.signature(ER2RewardModel).parameters["reduction"].default == "sum"
    assert tiny_model(tiny_backbone).hparams.reduction == "sum"  # what loss() reads, no second default


def test_a_cross_weight_without_cross_pairs_is_warned_at_fit_start(tiny_backbone):
    import warnings
    from types import SimpleNamespace

    def fit_start(cross_weight, cross_reference_pairs):
        model = tiny_model(tiny_backbone, cross_weight=cross_weight)
        model._trainer = SimpleNamespace(datamodule=SimpleNamespace(cross_reference_pairs=cross_reference_pairs),
                                         loggers=[])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.on_fit_start()
        return [str(w.message) for w in caught if "cross_weight" in str(w.message)]

    said = fit_start(0.5, False)
    assert len(said) == 1 and "cross_weight=0.5" in said[0] and "cross_reference_pairs" in said[0]
    assert fit_start(0.5, True) == [] and fit_start(1.0, False) == []

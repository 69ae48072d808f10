"""The unseen-domain split holds its promise: no head, spine or breast report, and no sentence
only they have, reaches what a model or search trains or selects on; no evaluated text holds a sentence
only the training side has.

The data are made through the commands ``configs/unseen/README.md`` gives (``data.synth`` with
``--split data/samples/split_unseen.json``, ``build_samples`` with the same split) and read through the
configs' own data modules (``configs/unseen/*.yaml``), as ``tests/test_leakage.py`` does for the corpus split:
ids first (every source report of a training row on the training side and of no held-out anatomy), then
content (:mod:`data.leakage`, both directions), and a content mutation that must fail.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from data.annotation import read_reports
from data.samples import REPORTS
from data.split import UNSEEN_ANATOMIES, UNSEEN_SPLIT_FILE, make_held_out_split, read_split
from data.synth.provenance import pair_sources
from train.lightning.cli import resolve

ROOT = Path(__file__).resolve().parents[1]
#: the sets the unseen-domain experiment trains and evaluates on, at their default sizes; the others empty
SIZES = {"rexval": 0, "task1": 0, "task3": 0}


@pytest.fixture(scope="module")
def corpus():
    return {r.id: r for r in read_reports(REPORTS)}


@pytest.fixture(scope="module")
def split(corpus):
    split = read_split(UNSEEN_SPLIT_FILE)
    split.check(list(corpus.values()))
    return split


@pytest.fixture(scope="module")
def unseen_sets(tmp_path_factory):
    from data.synth.generate import generate

    out = tmp_path_factory.mktemp("synthetic_unseen")
    generate(out, 0, SIZES, split=UNSEEN_SPLIT_FILE)
    return out


@pytest.fixture(scope="module")
def sides(unseen_sets):
    """{model: its train + val rows}, {evaluation: its test rows}: read as configs/unseen/*.yaml read them."""
    from train.bleurt.data import BleurtDataModule
    from train.reward.data import RewardDataModule
    from train.tune.config import load_config
    from train.tune.data import read_pairs, split_pairs

    reward = dict(resolve(ROOT / "configs/reward/sample.yaml", ROOT / "configs/unseen/reward.yaml")["data"]["init_args"])
    reward["rows"] = str(unseen_sets / "synthetic_er2" / "radcliq_synthetic.jsonl")
    rows = RewardDataModule(**reward).split_rows()
    bleurt = dict(resolve(ROOT / "configs/bleurt/sample.yaml", ROOT / "configs/unseen/bleurt.yaml")["data"]["init_args"])
    bleurt["train_path"] = str(unseen_sets / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl")
    brows = BleurtDataModule(**bleurt).read_splits()
    cfg = load_config(ROOT / "configs/tune/sample.yaml", ROOT / "configs/unseen/tune.yaml",
                      overrides={"data.path": str(unseen_sets / "synthetic_rate_eval")})
    pairs = read_pairs(cfg.data)
    parts = split_pairs(pairs, cfg.split)
    trained = {"reward model": rows["train"] + rows["val"], "ClinicalBLEURT": brows["train"] + brows["val"],
               "W search": [pairs[i] for i in parts.train]}
    evaluated = {"reward test": rows["test"], "ClinicalBLEURT test": brows["test"],
                 "Task 2 held-out": [pairs[i] for i in parts.test]}
    for what, items in {**trained, **evaluated}.items():
        assert len(items) > 50, f"{what}: only {len(items)} rows"
    return trained, evaluated


def test_the_stored_split_is_the_rule_and_holds_out_exactly_the_named_anatomies(corpus, split):
    reports = list(corpus.values())
    assert split.held_out_anatomies == tuple(sorted(UNSEEN_ANATOMIES))
    assert split.sides == make_held_out_split(reports, UNSEEN_ANATOMIES).sides  # `python -m data split --check`
    test = {r.anatomy for r in reports if split.of(r.id) == "test"}
    training = {r.anatomy for r in reports if split.of(r.id) != "test"}
    assert set(UNSEEN_ANATOMIES) <= test and not set(UNSEEN_ANATOMIES) & training
    assert {split.of(r.id) for r in reports} == {"train", "dev", "test"}


@pytest.mark.slow  # the unseen-domain sets at their default sizes
def test_training_rows_come_from_training_reports_and_test_rows_from_held_out_ones(unseen_sets, sides, split, corpus):
    trained, evaluated = sides
    table = pair_sources(unseen_sets)

    def sources(rows, what):
        out = set()
        for r in rows:
            found = table.get((r.reference, r.candidate))
            assert found is not None, f"{what}: row {r.id} is not traceable to the corpus"
            out |= found
        return out

    for what, rows in trained.items():
        src = sources(rows, what)
        assert not {i for i in src if split.of(i) == "test"}, f"{what} trains on held-out reports"
        assert not {corpus[i].anatomy for i in src} & set(UNSEEN_ANATOMIES), f"{what} trains on a held-out anatomy"
    for what, rows in evaluated.items():
        src = sources(rows, what)
        assert src and all(split.of(i) == "test" for i in src), f"{what}: a source outside the test side"
        assert {corpus[i].anatomy for i in src} <= set(UNSEEN_ANATOMIES)


@pytest.fixture(scope="module")
def index(corpus, split):
    from data.leakage import SentenceIndex

    return SentenceIndex.from_split(corpus.values(), split)


def _texts(rows) -> list[tuple[str, str]]:
    return [(r.id, t) for r in rows for t in (r.reference, r.candidate)]


@pytest.fixture(scope="module")
def ner_training_texts(tmp_path_factory):
    from data.ratener import load_split
    from data.samples import build_samples

    out = tmp_path_factory.mktemp("ratener_unseen")
    build_samples(REPORTS, out, UNSEEN_SPLIT_FILE)  # what configs/unseen/ner.yaml trains on
    return [(f"{s.meta['report_id']} sentence", " ".join(s.tokens)) for part in ("train", "dev")
            for s in load_split(out, "all", part)]


@pytest.mark.slow  # the unseen-domain sets at their default sizes
def test_no_training_text_holds_a_held_out_only_sentence(sides, ner_training_texts, index):
    from data.leakage import find_copies

    trained, _ = sides
    texts = {what: _texts(rows) for what, rows in trained.items()}
    texts["NER"] = ner_training_texts
    copies = find_copies(texts, index, "held_out")
    assert not copies, "\n".join(map(str, copies[:20]))


@pytest.mark.slow  # the unseen-domain sets at their default sizes
def test_no_evaluated_text_holds_a_training_only_sentence(sides, index):
    from data.leakage import find_copies

    _, evaluated = sides
    copies = find_copies({what: _texts(rows) for what, rows in evaluated.items()}, index, "training")
    assert not copies, "\n".join(map(str, copies[:20]))


@pytest.mark.slow  # the unseen-domain sets at their default sizes
def test_mutation_a_reward_training_row_holding_a_held_out_reference_fails(sides, index):
    """The ids of the row stay a training row's; its reference is a held-out (head, spine or breast) test row's."""
    from data.leakage import find_copies

    trained, evaluated = sides
    train, test = trained["reward model"], evaluated["reward test"]
    mutated = [dataclasses.replace(train[0], reference=test[0].reference), *train[1:]]
    copies = find_copies({"reward model (mutated)": _texts(mutated)}, index, "held_out")
    assert copies and {c.item for c in copies} == {train[0].id}

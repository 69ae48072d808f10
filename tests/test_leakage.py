"""No evaluated report is ever seen in training (issue: one corpus, one split).

For every pair the sample profile evaluates (the demo's held-out pairs and triads, the sample
ablation tables' ReXVal-layout pairs, Task 1, Task 2 and Task 3, the tune report's test pairs, the
reward model's and ClinicalBLEURT's test rows), every corpus report behind it (its reference, the
report its candidate was edited from, every inserted sentence's source; read back from the SYNTHETIC
manifests) must lie outside the training data of every model and search whose output is scored on
it: the NER model (its train and dev files), the W and p search (its training pairs), the reward
model and ClinicalBLEURT (their train and val rows). Reports are compared by case group, so a
near-duplicate case cannot cross either. Each side is obtained through the same code and configs a
user runs (``configs/*/sample.yaml``, ``train.demo.held_out``, the ablation ``Evaluator``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from data.annotation import read_reports
from data.ratener import load_split
from data.samples import RATENER_DIR, REPORTS
from data.split import read_split
from data.synth.provenance import pair_sources
from train.lightning.configs import load_config as resolve_config  # base: resolved

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from data.synth.generate import generate_default

    out = tmp_path_factory.mktemp("synthetic")
    generate_default(out)  # the default sizes the configs use
    return out


@pytest.fixture(scope="module")
def corpus_split():
    split = read_split()
    split.check(read_reports(REPORTS))
    return split


def _data_section(config: str) -> dict:
    return dict(resolve_config(ROOT / config)["data"])


def _sources(pairs, table: dict, what: str) -> list[set]:
    """The corpus reports behind each pair; a pair the manifests do not know fails the test (so an
    untraceable pair cannot pass unchecked)."""
    out, unknown = [], []
    for ref, cand in pairs:
        found = table.get((ref, cand))
        if found is None:
            unknown.append(cand[:60])
        else:
            out.append(found)
    assert not unknown, f"{what}: {len(unknown)} pair(s) not traceable to the corpus, e.g. {unknown[:2]}"
    assert out, f"{what}: no pairs"
    return out


def _cases(ids, split) -> set:
    return {split.case(i) for i in ids}


@pytest.fixture(scope="module")
def sides(synthetic, corpus_split):
    """(training cases per model, evaluated sources per evaluation), all from the real code paths."""
    from train.ablations.evaluate import Evaluator
    from train.ablations.profile import load_profile
    from train.bleurt.data import BleurtDataModule
    from train.demo import held_out
    from train.reward.data import RewardDataModule
    from train.tune.config import load_config
    from train.tune.data import read_pairs, split_pairs

    table = pair_sources(synthetic)
    trained, evaluated = {}, {}

    # NER: the files configs/ner/iob_sample.yaml trains (train) and selects on (dev)
    ner = resolve_config(ROOT / "configs/ner/iob_sample.yaml")["data"]
    assert Path(ner["data_dir"]) == Path("data/samples/ratener") and ner["subset"] == "all"
    seen = {s.meta["report_id"] for part in ("train", "dev") for s in load_split(RATENER_DIR, "all", part)}
    trained["NER"] = _cases(seen, corpus_split)
    evaluated["NER test sentences"] = [{s.meta["report_id"]} for s in load_split(RATENER_DIR, "all", "test")]

    # W and p: the tune config's own split; the demo evaluates through train.demo.held_out
    cfg = load_config(ROOT / "configs/tune/sample.yaml",
                      {"data.path": str(synthetic / "synthetic_rate_eval"), "data.generate_synthetic": None})
    pairs = read_pairs(cfg.data)
    split = split_pairs(pairs, cfg.split)
    train_pairs = [(pairs[i].reference, pairs[i].candidate) for i in split.train]
    trained["W search"] = _cases(set().union(*_sources(train_pairs, table, "tune train")), corpus_split)
    test_pairs, triads = held_out(cfg)
    evaluated["tune report / demo pairs"] = _sources([(p.reference, p.candidate) for p in test_pairs], table, "demo")
    evaluated["demo triads"] = _sources([(t.original, t.synonym) for t in triads]
                                        + [(t.original, t.opposite) for t in triads], table, "triads")

    # ER²Score: configs/reward/sample.yaml's data section
    reward = _data_section("configs/reward/sample.yaml")
    reward["rows"] = str(synthetic / "synthetic_er2" / "radcliq_synthetic.jsonl")
    rows = RewardDataModule(**reward).split_rows()
    trained["reward model"] = _cases(set().union(*_sources(
        [(r.reference, r.candidate) for part in ("train", "val") for r in rows[part]], table, "reward train")), corpus_split)
    evaluated["reward test rows"] = _sources([(r.reference, r.candidate) for r in rows["test"]], table, "reward test")

    # ClinicalBLEURT: configs/bleurt/sample.yaml's data section
    bleurt = _data_section("configs/bleurt/sample.yaml")
    bleurt.update(train_path=str(synthetic / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl"),
                  generate_synthetic=False)
    brows = BleurtDataModule(**bleurt).read_splits()
    trained["ClinicalBLEURT"] = _cases(set().union(*_sources(
        [(p.reference, p.candidate) for part in ("train", "val") for p in brows[part]], table, "bleurt train")), corpus_split)
    evaluated["ClinicalBLEURT test rows"] = _sources([(p.reference, p.candidate) for p in brows["test"]], table,
                                                     "bleurt test")

    # the sample ablation tables: the Evaluator's own readers, on the profile's data settings
    profile = load_profile(ROOT / "configs/ablations/sample.yaml")
    data = dataclasses.replace(profile.data, synthetic=None, rexval=str(synthetic / "synthetic_rexval"),
                               rate_eval=str(synthetic / "synthetic_rate_eval"))
    ev = Evaluator(dataclasses.replace(profile, data=data), runs=None, progress=False)
    evaluated["ablations ReXVal layout"] = _sources([(p.reference, p.candidate) for p in ev.rexval()], table, "rexval")
    for n in (1, 2):
        evaluated[f"ablations Task {n}"] = _sources([(p.reference, p.candidate) for p in ev.task(n)], table, f"task{n}")
    evaluated["ablations Task 3"] = _sources([(t.original, t.synonym) for t in ev.task(3)], table, "task3")
    return trained, evaluated


def test_no_evaluated_report_was_trained_on(sides, corpus_split):
    trained, evaluated = sides
    problems = []
    for what, sources in evaluated.items():
        cases = set().union(*(_cases(s, corpus_split) for s in sources))
        for model, seen in trained.items():
            leaked = cases & seen
            if leaked:
                problems.append(f"{what}: {len(leaked)} of {len(cases)} source case(s) are training data of "
                                f"the {model}, e.g. {sorted(leaked)[:3]}")
        assert cases, f"{what}: no source reports"
    assert not problems, "\n".join(problems)


def test_evaluated_reports_are_test_split_and_training_reports_are_not(sides, corpus_split):
    trained, evaluated = sides
    for what, sources in evaluated.items():
        off = {i for s in sources for i in s if corpus_split.of(i) != "test"}
        assert not off, f"{what}: reports outside the test split {sorted(off)[:5]}"
    test_cases = _cases(corpus_split.ids("test"), corpus_split)
    for model, seen in trained.items():
        assert seen, f"{model}: no training data found"
        assert not seen & test_cases, f"{model} trains on test-split cases {sorted(seen & test_cases)[:5]}"


def test_every_inserted_sentence_comes_from_the_same_side(synthetic, corpus_split):
    n = 0
    for path in Path(synthetic).rglob("manifest_synthetic.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            edits = rec.get("edits") or (rec.get("synonym_edits", []) + rec.get("opposite_edits", []))
            for e in edits:
                source = (e.get("detail") or {}).get("source") if isinstance(e.get("detail"), dict) else None
                if source:
                    n += 1
                    assert corpus_split.of(source) == corpus_split.of(rec["reference_id"]), (rec["id"], source)
                    assert corpus_split.case(source) != corpus_split.case(rec["reference_id"]), rec["id"]
    assert n > 50, f"only {n} inserted sentences: the check saw too little"


def test_no_evaluated_sentence_pair_is_training_text(synthetic, corpus_split):
    """Task 1 is scored sentence by sentence: an evaluated reference sentence never occurs word for
    word in a training report (the generator skips test sentences like a common "No pneumothorax."
    that training reports also contain), so no evaluated pair can also be a training pair."""
    from data.rate_eval import read_rate_eval_task1

    training_text = {s.text for r in read_reports(REPORTS) if corpus_split.of(r.id) != "test"
                     for s in r.findings + r.impression}
    test_pairs = read_rate_eval_task1(synthetic / "synthetic_rate_eval", "test")
    assert test_pairs
    seen = [p.reference for p in test_pairs if p.reference in training_text]
    assert not seen, seen[:3]
    train_pairs = {(p.reference, p.candidate) for p in read_rate_eval_task1(synthetic / "synthetic_rate_eval", "train")}
    assert not train_pairs & {(p.reference, p.candidate) for p in test_pairs}

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

Ids prove where an item says it comes from; the content checks below read what it holds: every
evaluated reference is the text of the test report it names, and (:mod:`data.leakage`, both sides)
no training text holds a (near) copy of a test-only sentence and no evaluated text one of a
training-only sentence. Three mutations that passed the id checks are fixtures here.
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
from data.synth.provenance import MANIFEST as MANIFEST_NAME, pair_records, pair_sources, reference_texts
from train.lightning.configs import config_chain
from train.lightning.cli import resolve

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def synthetic(default_synthetic):
    return default_synthetic  # the default sizes the configs use (tests/conftest.py); read only


@pytest.fixture(scope="module")
def corpus_split():
    split = read_split()
    split.check(read_reports(REPORTS))
    return split


def _data_section(config: str) -> dict:
    """The data module's arguments as the training CLI resolves ``config`` (its base first)."""
    return dict(resolve(*config_chain(ROOT / config))["data"]["init_args"])


EVALUATED_PAIRS: dict[str, list] = {}  # what -> its evaluated (reference, candidate) pairs, for the content checks
#: model or search -> (item id, text) of every text it trains or selects on (train and dev rows:
#: references and candidates; the NER files' sentences), for the content check of the training side
TRAINING_TEXTS: dict[str, list] = {}
#: the rows behind those texts, for the mutation fixtures (the objects the real readers return)
TRAINING_ROWS: dict[str, list] = {}


def _sources(pairs, table: dict, what: str, record: bool = True) -> list[set]:
    """The corpus reports behind each pair; a pair the manifests do not know fails the test (so an
    untraceable pair cannot pass unchecked). Records the pairs of an evaluation (``what`` not ending
    in "train") for the content checks."""
    pairs = list(pairs)
    if record and not what.endswith("train"):
        EVALUATED_PAIRS.setdefault(what, []).extend(pairs)
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


def _texts(rows) -> list[tuple[str, str]]:
    """(row id, text) of the reference and the candidate of each row."""
    return [(r.id, t) for r in rows for t in (r.reference, r.candidate)]


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
    ner = _data_section("configs/ner/iob_sample.yaml")
    assert Path(ner["data_dir"]) == Path("data/samples/ratener") and ner["subset"] == "all"
    ner_sentences = [s for part in ("train", "dev") for s in load_split(RATENER_DIR, "all", part)]
    TRAINING_TEXTS["NER"] = [(f"{s.meta['report_id']} sentence", " ".join(s.tokens)) for s in ner_sentences]
    seen = {s.meta["report_id"] for s in ner_sentences}
    trained["NER"] = _cases(seen, corpus_split)
    evaluated["NER test sentences"] = [{s.meta["report_id"]} for s in load_split(RATENER_DIR, "all", "test")]

    # W and p: the tune config's own split; the demo evaluates through train.demo.held_out
    cfg = load_config(ROOT / "configs/tune/sample.yaml",
                      overrides={"data.path": str(synthetic / "synthetic_rate_eval"), "data.generate_synthetic": None})
    pairs = read_pairs(cfg.data)
    split = split_pairs(pairs, cfg.split)
    train_pairs = [(pairs[i].reference, pairs[i].candidate) for i in split.train]
    TRAINING_ROWS["W search"] = [pairs[i] for i in split.train]
    TRAINING_TEXTS["W search"] = _texts(TRAINING_ROWS["W search"])
    trained["W search"] = _cases(set().union(*_sources(train_pairs, table, "tune train")), corpus_split)
    test_pairs, triads = held_out(cfg)
    evaluated["tune report / demo pairs"] = _sources([(p.reference, p.candidate) for p in test_pairs], table, "demo")
    evaluated["demo triads"] = _sources([(t.original, t.synonym) for t in triads]
                                        + [(t.original, t.opposite) for t in triads], table, "triads")

    # ER²Score: configs/reward/sample.yaml's data section
    reward = _data_section("configs/reward/sample.yaml")
    reward["rows"] = str(synthetic / "synthetic_er2" / "radcliq_synthetic.jsonl")
    rows = RewardDataModule(**reward).split_rows()
    TRAINING_ROWS["reward model"] = rows["train"] + rows["val"]
    TRAINING_ROWS["reward test"] = rows["test"]
    TRAINING_TEXTS["reward model"] = _texts(TRAINING_ROWS["reward model"])
    trained["reward model"] = _cases(set().union(*_sources(
        [(r.reference, r.candidate) for part in ("train", "val") for r in rows[part]], table, "reward train")), corpus_split)
    evaluated["reward test rows"] = _sources([(r.reference, r.candidate) for r in rows["test"]], table, "reward test")

    # ClinicalBLEURT: configs/bleurt/sample.yaml's data section
    bleurt = _data_section("configs/bleurt/sample.yaml")
    bleurt.update(train_path=str(synthetic / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl"),
                  generate_synthetic=False)
    brows = BleurtDataModule(**bleurt).read_splits()
    TRAINING_TEXTS["ClinicalBLEURT"] = _texts(brows["train"] + brows["val"])
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


# --- leakage by content: the evaluated texts themselves, not only the ids the manifests name ---------
# An id check alone passes an item built from a TRAINING report's text but labelled with a test
# report's id (an audit of the evaluations). These checks read the texts: each evaluated reference must be the
# text the generator renders from the test report its id names (data.synth.provenance.reference_texts,
# the generator's own Draft), and no sentence of a training-split report may occur in an evaluated
# text unless a test-split report has the same sentence, or the manifest's edit records made it from
# a test sentence (a meaning-preserving rewrite that happens to equal a training sentence).
# Sentences are the corpus's annotated sentences (Report.findings + Report.impression), the units
# the generator edits and joins with single spaces; a training sentence "occurs" in a text when it
# stands there between text boundaries or spaces.


def _sentence_index(reports, split) -> tuple[dict, set]:
    """(first token -> training-only sentences, test-split sentences)."""
    test = {s.text for r in reports if split.of(r.id) == "test" for s in r.findings + r.impression}
    only_train: dict[str, set] = {}
    for r in reports:
        if split.of(r.id) != "test":
            for s in r.findings + r.impression:
                if s.text not in test:
                    only_train.setdefault(s.text.split(" ", 1)[0], set()).add(s.text)
    return only_train, test


def _occurrences(text: str, index: dict):
    """(start, end, sentence) of every indexed sentence standing in ``text`` between boundaries."""
    starts = [0] + [k + 1 for k, ch in enumerate(text) if ch == " "]
    for a in starts:
        for sent in index.get(text[a:].split(" ", 1)[0], ()):
            b = a + len(sent)
            if text.startswith(sent, a) and (b == len(text) or text[b] == " "):
                yield a, b, sent


def _undo(text: str, a: int, b: int, edits) -> tuple[str, list] | None:
    """The text of ``text[a:b]`` before the edits whose candidate spans lie inside it (None when no
    edit touches it or one crosses its bounds), with those edits. A ``reorder`` (two whole
    sentences swapped) moves the sentence without changing its text: it is not undone."""
    inside, crossing = [], False
    for e in edits:
        cs = e.get("candidate_span")
        if not cs or cs[1] <= a or cs[0] >= b or (e["kind"] == "reorder" and cs[0] <= a and cs[1] >= b):
            continue
        if cs[0] < a or cs[1] > b:
            crossing = True
        inside.append(e)
    if not inside or crossing:
        return None
    out = text[a:b]
    for e in sorted(inside, key=lambda e: -e["candidate_span"][0]):
        s, t = e["candidate_span"][0] - a, e["candidate_span"][1] - a
        if out[s:t] != e["after"]:
            return None
        out = out[:s] + e["before"] + out[t:]
    return out, inside


def content_problems(evaluated: dict, records: dict, reports: dict, split) -> tuple[list[str], dict]:
    """(problems, allowed): ``evaluated`` maps an evaluation to its (reference, candidate) pairs,
    ``records`` is :func:`data.synth.provenance.pair_records` of the folder they were read from.
    ``allowed`` maps each training sentence found in an evaluated candidate to why it may be there
    (the edit record that made it from a test sentence)."""
    only_train, _ = _sentence_index(reports.values(), split)
    problems, allowed = [], {}
    for what, pairs in evaluated.items():
        for ref, cand in dict.fromkeys(pairs):
            recs = records.get((ref, cand))
            if not recs:
                problems.append(f"{what}: pair not in the manifests: {cand[:60]!r}")
                continue
            for rec, edits in recs:
                rid = str(rec["reference_id"])
                if rid not in reports or split.of(rid) != "test":
                    problems.append(f"{what} {rec['id']}: reference id {rid} is not a test-split report")
                elif ref not in reference_texts(reports[rid], rec):
                    problems.append(f"{what} {rec['id']}: the reference is not the text of {rid}, "
                                    f"the test report it names: {ref[:60]!r}")
                for a, b, sent in _occurrences(ref, only_train):
                    problems.append(f"{what} {rec['id']}: the reference holds the training sentence {sent!r}")
                for a, b, sent in _occurrences(cand, only_train):
                    undone = _undo(cand, a, b, edits)
                    # undone, it must stand in the (test report's) reference between boundaries:
                    # a whole sentence, or the end of one after a heading ("IMPRESSION: No PE.")
                    if undone is None or not any(True for _ in _occurrences(ref, {undone[0].split(" ", 1)[0]: {undone[0]}})):
                        problems.append(f"{what} {rec['id']}: the candidate holds the training sentence "
                                        f"{sent!r}, not made by an edit of a test sentence")
                        continue
                    before, by = undone
                    allowed.setdefault(sent, set()).add(
                        f"{rec['set']} edit(s) {', '.join(e['kind'] for e in by)} of the test sentence {before!r} "
                        f"(test report {rid})")
    return problems, allowed


#: the training-only sentences the seed-0 default sets contain, each made by a recorded edit of a
#: test sentence (checked by content_problems: undoing the edit gives the test report's text)
ALLOWED_SEED0 = {
    "Heart and mediastinum are normal.": "synonym of the test sentence 'Heart and mediastinum are unremarkable.'",
    "No pulmonary embolism.": "synonym of the test sentence 'No PE.' (after 'IMPRESSION: ')",
    "The craniocervical junction is normal.": "synonym of 'The craniocervical junction is unremarkable.'",
    "There is no intrahepatic biliary dilatation.": "rephrase_normal of 'No intrahepatic biliary dilatation.'",
}


@pytest.fixture(scope="module")
def evaluated_pairs(sides):
    assert EVALUATED_PAIRS, "the sides fixture recorded no evaluated pair"
    return {k: v for k, v in EVALUATED_PAIRS.items()}


@pytest.fixture(scope="module")
def corpus():
    return {r.id: r for r in read_reports(REPORTS)}


def test_evaluated_texts_are_test_report_texts_and_hold_no_training_sentence(synthetic, evaluated_pairs,
                                                                             corpus, corpus_split):
    problems, allowed = content_problems(evaluated_pairs, pair_records(synthetic), corpus, corpus_split)
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems[:20])
    # what is allowed, and why: training sentences that a recorded meaning-preserving rewrite of a
    # test sentence happens to produce (seed 0, default sizes). Printed with -s; a new one must be
    # made by an edit record too (checked above), never by copying a training report's text.
    for sent, why in sorted(allowed.items()):
        print(f"allowed {sent!r}: {sorted(why)[0]}" + (f" (+{len(why) - 1} more)" if len(why) > 1 else ""))
    unexpected = sorted(set(allowed) - set(ALLOWED_SEED0))
    assert not unexpected, (f"training sentences made by edits of test sentences that nobody has reviewed "
                            f"(add them to ALLOWED_SEED0 with the reason once checked): "
                            + "; ".join(f"{s!r}: {sorted(allowed[s])[0]}" for s in unexpected))
    n = sum(len(v) for v in evaluated_pairs.values())
    assert n > 500, f"only {n} evaluated pairs: the check saw too little"


def _mutated_copy(synthetic: Path, dest: Path, corpus: dict, split) -> tuple[Path, str, str]:
    """A copy of the ReXVal-layout set whose first study's reference (and its candidates) is a
    TRAINING report's text, with the manifest still naming the test report's id."""
    import csv
    import shutil

    from data.synth.draft import Draft

    folder = dest / "synthetic_rexval"
    shutil.copytree(synthetic / "synthetic_rexval", folder)
    gt = folder / "50_samples_gt_and_candidates.csv"
    with gt.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    header, first = rows[0], rows[1]
    manifest = [json.loads(line) for line in (folder / MANIFEST_NAME).read_text(encoding="utf-8").splitlines()]
    old_ref = manifest[0]["reference"]
    test_id = manifest[0]["reference_id"]
    donor = next(r for r in corpus.values() if split.of(r.id) == "train"
                 and corpus[test_id].anatomy == r.anatomy)
    new_ref = Draft.from_report(donor).reference
    ref_col = header.index("gt_report")
    assert first[ref_col] == old_ref
    first[ref_col] = new_ref
    for k in range(ref_col + 1, ref_col + 5):  # every candidate of the study: the training text too
        first[k] = new_ref + " No change."
    for rec in manifest:
        if rec["study_number"] == 0:
            rec.update(reference=new_ref, candidate=new_ref + " No change.", edits=[])
            assert rec["reference_id"] == test_id  # the test report's id is kept
    with gt.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    (folder / MANIFEST_NAME).write_text("".join(json.dumps(r) + "\n" for r in manifest), encoding="utf-8")
    return dest, test_id, donor.id


def test_a_training_text_under_a_test_id_passes_the_id_check_and_fails_the_content_checks(
        synthetic, corpus, corpus_split, tmp_path):
    from data.rexval import read_rexval

    folder, test_id, donor = _mutated_copy(Path(synthetic), tmp_path, corpus, corpus_split)
    pairs = [(p.reference, p.candidate) for p in read_rexval(folder / "synthetic_rexval")]
    # the id-based check (as test_evaluated_reports_are_test_split_and_training_reports_are_not) passes it
    sources = _sources(pairs, pair_sources(folder), "mutated rexval", record=False)
    assert not {i for s in sources for i in s if corpus_split.of(i) != "test"}
    # the content checks fail it: the reference is not the test report's text, and it (and its
    # candidates) hold the training report's sentences
    problems, _ = content_problems({"mutated rexval": pairs}, pair_records(folder), corpus, corpus_split)
    assert any(f"is not the text of {test_id}" in p for p in problems), problems[:3]
    assert any("the reference holds the training sentence" in p for p in problems), problems[:3]
    assert any("the candidate holds the training sentence" in p for p in problems), problems[:3]
    # and only the mutated study: the untouched ones pass
    assert all("synthetic-0000:" in p for p in problems), [p for p in problems if "synthetic-0000:" not in p][:3]


# --- leakage by content on both sides, near copies included ----------------------
# data.leakage.find_copies reads every text a model or search trains or selects on (TRAINING_TEXTS:
# the ER² and ClinicalBLEURT train and dev rows, references and candidates; the W search's train
# pairs; the NER train and dev sentences) and every evaluated text (EVALUATED_PAIRS and the NER test
# sentences), split into sentence units. A training text fails when a unit is a copy, or a near copy,
# of a sentence that only test-split reports have; an evaluated text fails when a unit is one of a
# sentence that only training (train or dev) reports have. THRESHOLD (data.leakage.max_edits): a
# near copy is at most 1 token edit from a 5-7-token sentence, 2 from a sentence of 8 tokens or more
# (short sentences: word for word only), and strictly closer to it than to any sentence of its own
# side. A sentence that reports on both sides hold (boilerplate) is nobody's leak.
# The split is an argument (SentenceIndex.from_split / from_sides): a second split is checked by
# building its index and passing the texts of the models trained on it.

#: reviewed coincidences (seed 0, default sizes), unit -> why. Each is a recorded edit of a sentence of
#: its own side (read in the sets' manifests) that happens to produce the other side's sentence.
ALLOWED_COPIES = {
    "held_out": {  # in training texts: edits of train-split sentences
        "the craniocervical junction is unremarkable": "synonym normal -> unremarkable of the train sentence "
                                                       "'The craniocervical junction is normal.' (radcliq-01554, bleurt-01474)",
        "no pe": "synonym 'pulmonary embolism' -> 'PE' of a train sentence 'No pulmonary embolism.' "
                 "(radcliq-00427, radcliq-01294)",
        "there is pulmonary vascular congestion and interstitial edema":
            "unnegate of the train sentence 'No pulmonary vascular congestion or interstitial edema.' "
            "(radcliq-01192); 2 edits from the test sentence '... with mild interstitial edema'",
        "the left hip is unremarkable": "laterality right -> left and synonym normal -> unremarkable of a train "
                                        "sentence (bleurt-00418); 1 edit from the test 'The left breast is unremarkable.'",
    },
    "training": {  # in evaluated texts: edits of test-split sentences (ALLOWED_SEED0 above, checked by edit record)
        "heart and mediastinum are normal": ALLOWED_SEED0["Heart and mediastinum are normal."],
        "the craniocervical junction is normal": ALLOWED_SEED0["The craniocervical junction is normal."],
        "there is no intrahepatic biliary dilatation": ALLOWED_SEED0["There is no intrahepatic biliary dilatation."],
        # ("No pulmonary embolism." is not here: a test report also holds it after a heading, which
        # the units drop, so it is no training-only sentence for this check)
    },
}


@pytest.fixture(scope="module")
def sentence_index(corpus, corpus_split):
    from data.leakage import SentenceIndex

    return SentenceIndex.from_split(corpus.values(), corpus_split)


@pytest.fixture(scope="module")
def evaluated_texts(evaluated_pairs):
    out = {what: [(f"pair {k}", t) for k, pair in enumerate(dict.fromkeys(pairs)) for t in pair]
           for what, pairs in evaluated_pairs.items()}
    out["NER test sentences"] = [(f"{s.meta['report_id']} sentence", " ".join(s.tokens))
                                 for s in load_split(RATENER_DIR, "all", "test")]
    return out


def _describe(copies) -> str:
    return f"{len(copies)} (near) copies:\n" + "\n".join(map(str, copies[:20]))


def test_no_training_text_holds_a_test_only_sentence(sides, sentence_index):
    from data.leakage import find_copies

    assert set(TRAINING_TEXTS) == {"NER", "W search", "reward model", "ClinicalBLEURT"}
    assert all(TRAINING_TEXTS.values())
    copies = find_copies(TRAINING_TEXTS, sentence_index, "held_out", ALLOWED_COPIES["held_out"])
    assert not copies, _describe(copies)


def test_no_evaluated_text_holds_a_training_only_sentence(evaluated_texts, sentence_index):
    from data.leakage import find_copies

    copies = find_copies(evaluated_texts, sentence_index, "training", ALLOWED_COPIES["training"])
    assert not copies, _describe(copies)


def test_the_allowed_coincidences_are_still_needed(sides, evaluated_texts, sentence_index):
    """A reviewed coincidence the sets no longer produce is dropped from the list, so that the list
    stays the small set a reader can check."""
    from data.leakage import find_copies

    found = {"held_out": {c.unit for c in find_copies(TRAINING_TEXTS, sentence_index, "held_out")},
             "training": {c.unit for c in find_copies(evaluated_texts, sentence_index, "training")}}
    for direction, allowed in ALLOWED_COPIES.items():
        assert found[direction] <= set(allowed), sorted(found[direction] - set(allowed))
        assert set(allowed) <= found[direction], f"no longer produced, drop them: {sorted(set(allowed) - found[direction])}"


# The three content mutations that passed the id checks (an audit of the split), built from the rows the real
# readers return and fed to the same checker: each must fail it.

def test_mutation_a_task2_train_pair_with_a_test_reference_under_a_train_id_fails(sides, sentence_index):
    from data.leakage import find_copies

    train = TRAINING_ROWS["W search"]
    test_ref = EVALUATED_PAIRS["demo"][0][0]  # a held-out Task 2 reference (test split)
    mutated = [dataclasses.replace(train[0], reference=test_ref), *train[1:]]
    assert mutated[0].id == train[0].id  # the train pair's own id: an id check sees a train pair
    copies = find_copies({"W search (mutated)": _texts(mutated)}, sentence_index, "held_out",
                         ALLOWED_COPIES["held_out"])
    assert copies and {c.item for c in copies} == {train[0].id}, _describe(copies)


def test_mutation_b_an_er2_train_row_with_a_reference_of_test_rows_fails(sides, sentence_index):
    from collections import Counter

    from data.leakage import find_copies

    train, test = TRAINING_ROWS["reward model"], TRAINING_ROWS["reward test"]
    shared, n = Counter(r.reference for r in test).most_common(1)[0]
    assert n >= 2  # a reference several test rows hold
    mutated = [dataclasses.replace(train[0], reference=shared), *train[1:]]
    copies = find_copies({"reward model (mutated)": _texts(mutated)}, sentence_index, "held_out",
                         ALLOWED_COPIES["held_out"])
    assert copies and {c.item for c in copies} == {train[0].id}, _describe(copies)


def test_mutation_c_a_test_candidate_with_a_training_only_sentence_one_word_changed_fails(
        evaluated_texts, sentence_index, corpus, corpus_split):
    from data.leakage import find_copies, units

    # a training-only sentence of 8+ tokens; one word (the last before the full stop) changed
    sentence = next(s.text for r in corpus.values() if corpus_split.of(r.id) == "train"
                    for s in r.findings + r.impression
                    if len(units(s.text)) == 1 and units(s.text)[0] in sentence_index.only("training")
                    and len(units(s.text)[0]) >= 8 and s.text.endswith(".") and " " in s.text)
    head, last = sentence[:-1].rsplit(" ", 1)
    changed = f"{head} {'unchanged' if last != 'unchanged' else 'stable'}."
    assert units(changed)[0] not in sentence_index.held_out | sentence_index.training  # a new sentence
    what = next(iter(evaluated_texts))
    (name, ref), (_, cand) = evaluated_texts[what][:2]
    mutated = {what: [(name, ref), ("mutated candidate", f"{cand} {changed}"), *evaluated_texts[what][2:]]}
    copies = find_copies(mutated, sentence_index, "training", ALLOWED_COPIES["training"])
    assert [(c.item, c.distance) for c in copies] == [("mutated candidate", 1)], _describe(copies)


def test_the_checker_finds_near_copies_by_its_stated_threshold():
    """SYNTHETIC reports: 1 edit of a 5-7-token sentence and 2 of an 8+-token one are near copies;
    3 edits, or 1 edit of a 4-token sentence, are not; a sentence both sides hold is nobody's."""
    from types import SimpleNamespace as NS

    from data.leakage import SentenceIndex, find_copies

    def report(rid, *texts):
        return NS(id=rid, findings=[NS(text=t) for t in texts], impression=[])

    reports = [report("t1", "Moderate right pleural effusion with adjacent compressive atelectasis noted.",
                      "Small left apical nodule.", "No pneumothorax."),
               report("r1", "No pneumothorax.", "Heart size is normal.")]
    index = SentenceIndex.from_sides(reports, ["t1"], ["r1"])

    def found(text):
        return [c.distance for c in find_copies({"x": [text]}, index, "held_out")]

    assert found("Moderate right pleural effusion with adjacent compressive atelectasis noted.") == [0]
    assert found("Large right pleural effusion with adjacent compressive atelectasis noted.") == [1]
    assert found("Large right pleural effusion with adjacent atelectasis noted.") == [2]
    assert found("Large left pleural effusion with adjacent atelectasis noted.") == []  # 3 edits
    assert found("Small right apical nodule.") == []  # 4 tokens: word for word only
    assert found("No pneumothorax. Heart size is normal.") == []  # both sides / training side
    with pytest.raises(ValueError, match="both sides"):
        SentenceIndex.from_sides(reports, ["t1"], ["t1", "r1"])

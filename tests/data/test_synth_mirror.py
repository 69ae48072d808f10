"""Generator v3: the meaning-preserving edits that look like errors, the contradiction error, and the
surface plan that gives each operation to both label classes (data/synth/mirror.py, catalog.py)."""

from __future__ import annotations

import copy
import random
from collections import Counter

import pytest

from data.annotation import parse_annotated
from data.synth import mirror
from data.synth.catalog import PLANNED_MEANING_KINDS, SURFACE, planned_edits
from data.synth.draft import Draft, apply
from data.synth.lexicon import load_lexicon

LEX = load_lexicon()


def _draft(*sentences, section="findings", sections=None):
    sections = sections or [section] * len(sentences)
    return Draft.from_sentences("r1", [(sec, parse_annotated(s)) for sec, s in zip(sections, sentences)],
                                "chest", "X-ray")


def _results(draft, options):
    out = []
    for o in options:
        d = copy.deepcopy(draft)
        apply(d, o)
        out.append(d.finalize())
    return out


def _types(result):
    return sorted(ty for s in result["candidate_sentences"] for _, ty in parse_annotated(s["annotated"]).entity_texts())


def _same_types(draft, results):
    ref = sorted(ty for _, s in draft.ref_sentences for _, ty in s.entity_texts())
    return all(_types(r) == ref for r in results)


def test_negation_cues_are_reworded_and_no_type_changes():
    d = _draft("No [pleural effusion|NON-ABNORMALITY] or [pneumothorax|NON-DISEASE].",
               "[Lungs|ANATOMY] are [clear|NON-ABNORMALITY] without [focal consolidation|NON-ABNORMALITY].")
    got = {r["candidate"] for r in _results(d, mirror.find_negation_cue(d, LEX))}
    assert got == {
        "No evidence of pleural effusion or pneumothorax. Lungs are clear without focal consolidation.",
        "Negative for pleural effusion or pneumothorax. Lungs are clear without focal consolidation.",
        "Pleural effusion or pneumothorax are not seen. Lungs are clear without focal consolidation.",
        "No pleural effusion or pneumothorax. Lungs are clear with no focal consolidation.",
    }
    assert _same_types(d, _results(d, mirror.find_negation_cue(d, LEX)))


def test_negated_antonyms_go_both_ways_and_stay_normal_statements():
    d = _draft("[Hila|ANATOMY] are [normal in size|NON-ABNORMALITY].", "[Heart|ANATOMY] is not [enlarged|NON-ABNORMALITY].")
    results = _results(d, mirror.find_negated_antonym(d, LEX))
    assert {r["candidate"] for r in results} == {"Hila are not enlarged. Heart is not enlarged.",
                                                  "Hila are normal in size. Heart is normal in size."}
    assert _same_types(d, results)
    # an attributive normal word has no predicate before it: "A normal heart" never becomes "A not abnormal heart"
    d = _draft("A [normal|NON-ABNORMALITY] [heart|ANATOMY].")
    assert mirror.find_negated_antonym(d, LEX) == []


def test_there_is_and_is_seen_swap_for_present_findings_only():
    d = _draft("There is a [small left pleural effusion|ABNORMALITY].", "[Mild cardiomegaly|ABNORMALITY] is seen.",
               "There is no [pneumothorax|NON-DISEASE].")
    results = _results(d, mirror.find_there_is_seen(d, LEX))
    assert [r["candidate"].split(". ")[:2] for r in results] == [
        ["A small left pleural effusion is seen", "Mild cardiomegaly is seen"],
        ["There is a small left pleural effusion", "There is mild cardiomegaly"]]
    assert _same_types(d, results)


def test_measurements_change_unit_not_value():
    d = _draft("A [1.4 cm nodule|ABNORMALITY] in the [right upper lobe|ANATOMY].", "[Nodule|ABNORMALITY] measures 14 mm.",
               "[Cyst|ABNORMALITY] of 4 mm.")
    got = [r["candidate"] for r in _results(d, mirror.find_measurement(d, LEX))]
    assert got == ["A 14 mm nodule in the right upper lobe. Nodule measures 14 mm. Cyst of 4 mm.",
                   "A 1.4 cm nodule in the right upper lobe. Nodule measures 1.4 cm. Cyst of 4 mm."]


def test_list_order_keeps_every_span_with_its_type():
    d = _draft("[Atelectasis|ABNORMALITY] and [effusion|NON-ABNORMALITY] at the [bases|ANATOMY].")
    assert mirror.find_list_order(d, LEX) == []  # a present and a negated finding are no list
    d = _draft("[Atelectasis|ABNORMALITY] and [effusion|ABNORMALITY] at the [bases|ANATOMY].")
    (r,) = _results(d, mirror.find_list_order(d, LEX))
    assert r["candidate_sentences"][0]["annotated"] == "[Effusion|ABNORMALITY] and [atelectasis|ABNORMALITY] at the [bases|ANATOMY]."


def test_sentences_merge_into_one_and_lose_no_statement():
    d = _draft("No [pneumothorax|NON-DISEASE].", "No [pleural effusion|NON-ABNORMALITY].",
               "[Heart|ANATOMY] is [normal|NON-ABNORMALITY].")
    results = _results(d, mirror.find_merge_sentences(d, LEX))
    assert [[s["annotated"] for s in r["candidate_sentences"]] for r in results] == [
        ["No [pneumothorax|NON-DISEASE] or [pleural effusion|NON-ABNORMALITY].", "[Heart|ANATOMY] is [normal|NON-ABNORMALITY]."],
        ["No [pneumothorax|NON-DISEASE].", "No [pleural effusion|NON-ABNORMALITY]; [heart|ANATOMY] is [normal|NON-ABNORMALITY]."]]
    assert _same_types(d, results)
    assert all(e["category"] is None for r in results for e in r["edits"])


def test_restatements_are_added_and_dropped_without_an_error():
    sections = ["findings", "findings", "impression"]
    d = _draft("[Small left pleural effusion|ABNORMALITY].", "[Mild cardiomegaly|ABNORMALITY].",
               "[Mild cardiomegaly|ABNORMALITY].", sections=sections)
    (restate,) = _results(d, mirror.find_restate(d, LEX))  # cardiomegaly is already in the impression
    assert restate["candidate"].endswith("Mild cardiomegaly. Small left pleural effusion.")
    (drop,) = _results(d, mirror.find_drop_restatement(d, LEX))
    assert drop["candidate"] == "Small left pleural effusion. Mild cardiomegaly."
    # the removal of a restatement is never an omission error
    from data.synth.edits import find_remove_finding
    assert all(o.slot != 2 for o in find_remove_finding(d, LEX))


def test_a_contradicting_negative_is_an_error_weighed_as_the_denied_finding():
    d = _draft("[Small left pleural effusion|ABNORMALITY].", "[Pneumothorax|DISEASE] at the [apex|ANATOMY].",
               sections=["findings", "impression"])
    donors = [("r2", "findings", parse_annotated("No [pleural effusion|NON-ABNORMALITY].")),
              ("r3", "findings", parse_annotated("No [pneumothorax|NON-DISEASE].")),
              ("r4", "findings", parse_annotated("No [consolidation|NON-ABNORMALITY]."))]
    options = mirror.find_insert_contradiction(d, LEX, donors)
    assert {o.detail[0][1] for o in options} == {"r2", "r3"}
    by_source = {o.detail[0][1]: o for o in options}
    assert by_source["r2"].category == 2 and by_source["r2"].weight == 2
    assert by_source["r3"].weight == 3  # pneumothorax is critical


def _surface_shares(n_drafts=60, seed=0):
    from data.synth.generate import Generator, load_corpus, corpus_paths
    gen = Generator(load_corpus(corpus_paths()))
    rng = random.Random(seed)
    counts = {True: Counter(), False: Counter()}
    for rep in gen.test_reports[:n_drafts]:
        d = Draft.from_report(rep)
        planned_edits(d, rng, LEX, rng.randint(0, 6), 9, gen._donors(rep, rng),
                      gen._donors(rep, rng, table=gen.negatives))
        for e in d.edits:
            counts[e["category"] is not None][e["surface"]] += 1
    return {k: {s: c[s] / sum(c.values()) for s in ("rewrite", "insert", "delete")} for k, c in counts.items()}


def test_the_plan_gives_each_surface_operation_to_errors_and_rewrites_at_comparable_rates():
    shares = _surface_shares()
    for op in ("rewrite", "insert", "delete"):
        assert abs(shares[True][op] - shares[False][op]) <= 0.12, (op, shares)
    assert set(PLANNED_MEANING_KINDS) >= {"negation_cue", "merge_sentences", "restate"}
    assert set(SURFACE.values()) == {"rewrite", "insert", "delete", "move"}


@pytest.mark.parametrize("kind", ["negation_cue", "negated_antonym", "there_is_seen", "measurement", "list_order",
                                  "merge_sentences", "restate", "drop_restatement"])
def test_every_mirror_rewrite_occurs_in_a_generated_set(kind, tmp_path_factory):
    rows = _generated(tmp_path_factory)
    kinds = Counter(e["kind"] for r in rows for e in r["edits"])
    assert kinds[kind] > 0, kinds


_CACHE: dict = {}


def _generated(tmp_path_factory):
    if "rows" not in _CACHE:
        import json
        from data.synth import generate
        folder = tmp_path_factory.mktemp("mirror")
        generate(folder, seed=5, sizes={"rexval": 120, "task1": 0, "task2": 0, "task3": 0, "er2": 0, "bleurt": 0})
        _CACHE["rows"] = [json.loads(line) for line in
                          (folder / "synthetic_rexval" / "manifest_synthetic.jsonl").read_text().splitlines()]
    return _CACHE["rows"]

"""The clinical weight model of the SYNTHETIC generator (data/synth/edits.py module doc) and the
grammar of its opposite rewrites, on small hand-made reports: what an edit changes decides its
weight (minor 1, major 2, critical 3; significant iff >= 2), not how much text it touches."""

import pytest

from data.annotation import parse_annotated
from data.synth import edits
from data.synth import rewrites
from data.synth.draft import Draft, apply
from tests.data.test_synth_edits import LEX, annotated, report, run

ETT = "[Endotracheal tube|ANATOMY] terminates 4 cm above the [carina|ANATOMY], [in satisfactory position|NON-ABNORMALITY]."


def test_critical_lexicon_is_loaded():
    assert LEX.critical.search("Small left pneumothorax")
    assert LEX.incidental.search("Mild degenerative changes") and not LEX.critical.search("Mild degenerative changes")
    assert LEX.devices.search("Endotracheal tube terminates") and not LEX.devices.search("Catheter-associated thrombus")


# -- one-word edits that are critical ------------------------------------------------------------
def test_left_to_right_on_a_pneumothorax_is_critical():
    out, e = run(report(["[Small left pneumothorax|DISEASE]."]), edits.find_laterality, slot=0)
    assert out["candidate"].startswith("Small right pneumothorax.")
    assert (e["category"], e["weight"], e["weight_class"], e["significant"]) == (3, 3, "critical", True)
    assert e["why"].startswith("critical:")


def test_left_to_right_on_an_ordinary_finding_is_major():
    _, e = run(report(["[Small left pleural effusion|ABNORMALITY]."]), edits.find_laterality, slot=0)
    assert (e["weight_class"], e["significant"]) == ("major", True)


def test_a_dropped_no_before_a_critical_finding_is_critical():
    rep = report(["No [pneumothorax|NON-DISEASE]."])
    out, e = run(rep, rewrites.find_unnegate, slot=0)
    assert out["candidate"].startswith("There is pneumothorax.")
    assert (e["kind"], e["category"], e["weight_class"], e["significant"]) == ("unnegate", 1, "critical", True)
    _, e = run(report(["No [pleural effusion|NON-ABNORMALITY]."]), rewrites.find_unnegate, slot=0)
    assert e["weight_class"] == "major"


def test_negating_a_critical_finding_is_critical():
    rep = report(["[Large right pneumothorax|DISEASE] with [mediastinal shift|ABNORMALITY]."])
    _, e = run(rep, rewrites.find_negate, slot=0, cue="")
    assert (e["category"], e["weight_class"]) == (2, "critical")


@pytest.mark.parametrize("to, weight_class", [("large", "critical"), ("moderate", "minor"), ("trace", "minor")])
def test_severity_of_a_critical_finding(to, weight_class):
    rep = report(["[Small left pneumothorax|DISEASE]."])
    draft = Draft.from_report(rep)
    option = next(o for o in edits.find_severity(draft, LEX) if o.text.lower() == to)
    apply(draft, option)
    e = draft.finalize()["edits"][0]
    assert e["weight_class"] == weight_class and e["significant"] is (weight_class != "minor")


# -- tubes and lines ------------------------------------------------------------------------------
def test_a_misplaced_tube_is_critical():
    out, e = run(report([ETT]), rewrites.find_antonyms, slot=0)
    assert out["candidate"].startswith("Endotracheal tube terminates 4 cm above the carina, malpositioned.")
    assert (e["category"], e["weight_class"]) == (1, "critical")
    draft = Draft.from_report(report([ETT]))
    option = next(o for o in edits.find_size(draft, LEX) if o.text == "8")
    assert option.weight == 3 and option.significant
    assert all(o.weight == 1 for o in edits.find_size(draft, LEX) if dict(o.detail)["ratio"] < 1.5)


def test_a_thrombus_named_after_a_catheter_is_no_device_sentence():
    rep = report(["[Catheter-associated thrombus|DISEASE] in the [left basilic vein|ANATOMY]."])
    _, e = run(rep, edits.find_laterality, slot=0)
    assert e["weight_class"] == "major"


# -- large edits that are trivial -----------------------------------------------------------------
def test_an_inserted_degenerative_change_is_insignificant():
    donors = [("d1", "findings", parse_annotated(
        "[Mild degenerative changes|ABNORMALITY] of the [mid thoracic spine|ANATOMY]."))]
    draft = Draft.from_report(report(["[Small right pleural effusion|ABNORMALITY]."]))
    options = edits.find_insert_finding(draft, LEX, donors)
    assert options and all((o.weight, o.significant) == (1, False) for o in options)
    apply(draft, options[0])
    e = draft.finalize()["edits"][0]
    assert (e["kind"], e["category"], e["weight_class"], e["significant"]) == ("insert_finding", 1, "minor", False)
    assert len(e["after"]) > 40  # a whole sentence, yet minor


def test_an_inserted_critical_finding_is_critical():
    donors = [("d1", "findings", parse_annotated("[Small left apical pneumothorax|DISEASE]."))]
    draft = Draft.from_report(report(["[Small right pleural effusion|ABNORMALITY]."]))
    assert {o.weight for o in edits.find_insert_finding(draft, LEX, donors)} == {3}


def test_removed_sentences_weigh_their_heaviest_present_finding():
    rep = report(["[Mild degenerative changes|ABNORMALITY] of the [spine|ANATOMY].",
                  "No [pneumothorax|NON-DISEASE].",
                  "[Small pneumothorax|DISEASE] and [degenerative changes|ABNORMALITY]."])
    draft = Draft.from_report(rep)
    weights = {o.slot: o.weight for o in edits.find_remove_finding(draft, LEX)}
    assert weights == {0: 1, 1: 1, 2: 3, 3: 1}


def test_negating_only_an_incidental_finding_is_minor():
    rep = report(["[Mild degenerative changes|ABNORMALITY] of the [spine|ANATOMY]."])
    out, e = run(rep, rewrites.find_negate, slot=0)
    assert out["candidate"].startswith("No mild degenerative changes of the spine.")
    assert (e["weight_class"], e["significant"]) == ("minor", False)


# -- grammatical opposite rewrites ----------------------------------------------------------------
@pytest.mark.parametrize("sentence, finder, expected", [
    # a list stated as present is joined by "and", not "or"
    ("No [rupture|NON-DISEASE] or [dissection|NON-DISEASE].", rewrites.find_unnegate,
     "There is [rupture|DISEASE] and [dissection|DISEASE]."),
    ("There is no [periaortic stranding|NON-ABNORMALITY] or [hemothorax|NON-DISEASE] to suggest "
     "impending [rupture|NON-DISEASE].", rewrites.find_unnegate,
     "There is [periaortic stranding|ABNORMALITY] and [hemothorax|DISEASE] to suggest impending "
     "[rupture|NON-DISEASE]."),
    # "No X is seen." keeps its verb: no "There is X is seen."
    ("No [focal lesion|NON-ABNORMALITY] is seen.", rewrites.find_unnegate, "[Focal lesion|ABNORMALITY] is seen."),
    # agreement with a plural finding
    ("No [pleural effusions|NON-ABNORMALITY].", rewrites.find_unnegate, "There are [pleural effusions|ABNORMALITY]."),
    # a "No " prefix lower-cases a hyphenated first word too
    ("[Catheter-associated thrombus|DISEASE] in the [left basilic vein|ANATOMY].", rewrites.find_negate,
     "No [catheter-associated thrombus|NON-DISEASE] in the [left basilic vein|ANATOMY]."),
    # ... but never an acronym
    ("[DVT|DISEASE] in the [left popliteal vein|ANATOMY].", rewrites.find_negate,
     "No [DVT|NON-DISEASE] in the [left popliteal vein|ANATOMY]."),
    # a negated list is joined by "or"
    ("There are [pleural effusions|ABNORMALITY] and [atelectasis|ABNORMALITY].", rewrites.find_negate,
     "There are no [pleural effusions|NON-ABNORMALITY] or [atelectasis|NON-ABNORMALITY]."),
])
def test_opposite_rewrites_are_grammatical(sentence, finder, expected):
    draft = Draft.from_report(report([sentence]))
    options = [o for o in finder(draft, LEX) if o.slot == 0]
    assert options
    apply(draft, options[0])
    assert annotated(draft.finalize())[0] == expected

"""Each synthetic edit on small hand-made reports: exact candidate text, labels and spans."""

import pytest

from data.annotation import parse_annotated, parse_report
from data.synth import edits
from data.synth import rewrites
from data.synth.draft import FLIP, Draft, EditConflict, apply
from data.synth.lexicon import LEXICON_DIR, LexiconError, load_lexicon

LEX = load_lexicon()


def report(findings, impression=("No [acute abnormality|NON-ABNORMALITY].",), anatomy="chest"):
    return parse_report({"id": "t1", "modality": "X-ray", "anatomy": anatomy, "style": "clinical",
                         "findings": list(findings), "impression": list(impression)})


def pick(options, slot=None, **detail):
    """The single option of ``slot`` whose detail has the given values."""
    hits = [o for o in options if (slot is None or o.slot == slot)
            and all(dict(o.detail).get(k) == v for k, v in detail.items())]
    assert len(hits) == 1, hits
    return hits[0]


def run(rep, finder, slot=None, **detail):
    draft = Draft.from_report(rep)
    apply(draft, pick(finder(draft, LEX), slot, **detail))
    out = draft.finalize()
    for e in out["edits"]:  # every span points at the text it claims
        if e["candidate_span"]:
            assert out["candidate"][slice(*e["candidate_span"])] == e["after"]
        if e["reference_span"]:
            assert out["reference"][slice(*e["reference_span"])] == e["before"]
    return out, out["edits"][0]


def annotated(out):
    return [s["annotated"] for s in out["candidate_sentences"]]


EFFUSION = ["[Small right pleural effusion|ABNORMALITY].", "No [pneumothorax|NON-DISEASE].",
            "[Heart|ANATOMY] size is [normal|NON-ABNORMALITY]."]


# -- category 3: location ------------------------------------------------------------------------
def test_laterality_in_a_sentence_with_a_present_finding_is_significant():
    out, e = run(report(EFFUSION), edits.find_laterality, slot=0)
    assert out["candidate"].startswith("Small left pleural effusion. No pneumothorax.")
    assert annotated(out)[0] == "[Small left pleural effusion|ABNORMALITY]."
    assert (e["kind"], e["category"], e["significant"]) == ("laterality", 3, True)
    assert (e["candidate_span"], e["reference_span"], e["before"], e["after"]) == ([6, 10], [6, 11], "right", "left")
    assert e["section"] == "findings"


def test_laterality_in_a_normal_statement_is_insignificant():
    rep = report(["[Left lung|ANATOMY] is [clear|NON-ABNORMALITY]."])
    out, e = run(rep, edits.find_laterality, slot=0)
    assert out["candidate"] == "Right lung is clear. No acute abnormality."
    assert (e["before"], e["after"], e["significant"]) == ("Left", "Right", False)


def test_site_swap_uses_the_anatomy_groups():
    rep = report(["[Right upper lobe|ANATOMY] [consolidation|ABNORMALITY]."])
    out, e = run(rep, edits.find_site, to="middle lobe")
    assert annotated(out)[0] == "[Right middle lobe|ANATOMY] [consolidation|ABNORMALITY]."
    assert (e["kind"], e["category"], e["significant"]) == ("site", 3, True)
    spine = report(["[Disc bulge|ABNORMALITY] at [L4-L5|ANATOMY]."], anatomy="spine")
    out, _ = run(spine, edits.find_site, to="L5-S1")
    assert out["candidate"].startswith("Disc bulge at L5-S1.")


# -- category 4: severity and size ---------------------------------------------------------------
@pytest.mark.parametrize("to, significant", [("Minimal", True), ("Mild", False), ("Severe", False)])
def test_severity_ladder_steps(to, significant):
    out, e = run(report(["[Moderate pleural effusion|ABNORMALITY]."]), edits.find_severity, to=to)
    assert annotated(out)[0] == f"[{to} pleural effusion|ABNORMALITY]."
    assert (e["category"], e["significant"], e["before"]) == (4, significant, "Moderate")


def test_two_rung_ladder_change_is_significant():
    rep = report(["[Partial occlusion|ABNORMALITY] of the [left popliteal artery|ANATOMY]."], anatomy="vascular")
    out, e = run(rep, edits.find_severity, to="Complete")
    assert out["candidate"].startswith("Complete occlusion of the left popliteal artery.")
    assert e["significant"] is True


@pytest.mark.parametrize("to, significant", [("8", True), ("2", True), ("5", False), ("3.2", False), ("12", True)])
def test_size_scaling(to, significant):
    rep = report(["A [4 mm nodule|ABNORMALITY] in the [left upper lobe|ANATOMY]."])
    out, e = run(rep, edits.find_size, to=to)
    assert annotated(out)[0] == f"A [{to} mm nodule|ABNORMALITY] in the [left upper lobe|ANATOMY]."
    assert (e["kind"], e["category"], e["significant"], e["before"], e["after"]) == ("size", 4, significant, "4", to)


def test_size_without_a_present_finding_is_insignificant():
    rep = report(["[Right kidney|ANATOMY] measures 10.5 cm and is [normal|NON-ABNORMALITY]."],
                 anatomy="genitourinary")
    out, e = run(rep, edits.find_size, to="21.0")
    assert out["candidate"].startswith("Right kidney measures 21.0 cm and is normal.")
    assert e["significant"] is False


# -- categories 5 and 6: comparisons -------------------------------------------------------------
def test_added_comparison_change_vs_stability():
    rep = report(["[Mild cardiomegaly|DISEASE]."])
    out, e = run(rep, edits.find_add_comparison, slot=0, placement="end",
                 phrase="increased compared with the prior study")
    assert out["candidate"].startswith("Mild cardiomegaly, increased compared with the prior study.")
    assert (e["category"], e["significant"], e["weight_class"], e["before"]) == (5, True, "major", "")
    assert e["after"] == ", increased compared with the prior study" and e["reference_span"] == [17, 17]
    _, e = run(rep, edits.find_add_comparison, slot=0, placement="end",
               phrase="unchanged from yesterday's radiograph")
    assert (e["significant"], e["weight_class"]) == (False, "minor")


def test_added_comparisons_vary_in_wording_and_position():
    """Not a fixed phrase appended to the sentence end: clauses name different prior studies (by
    the report's modality), and the comparison also goes right after the finding, before it as
    a modifier (with its article made to agree) or at the start of the sentence."""
    rep = report(["There is a [small right pleural effusion|ABNORMALITY] with adjacent "
                  "[atelectasis|ABNORMALITY].", "[Mild cardiomegaly|DISEASE]."])
    draft = Draft.from_report(rep)
    options = edits.find_add_comparison(draft, LEX)
    placements = {dict(o.detail)["placement"] for o in options}
    assert placements == {"end", "after", "before", "opening"}
    phrases = {dict(o.detail)["phrase"] for o in options}
    assert len(phrases) >= 30
    assert any("radiograph" in p for p in phrases) and not any("{" in p for p in phrases)
    expected = {
        ("after", "new since yesterday's radiograph"):
            "There is a small right pleural effusion (new since yesterday's radiograph) with "
            "adjacent atelectasis.",
        ("before", "enlarging"): "There is an enlarging small right pleural effusion with adjacent atelectasis.",
        ("opening", "Compared with the prior study"):
            "Compared with the prior study, there is a small right pleural effusion with adjacent atelectasis.",
    }
    for (placement, phrase), text in expected.items():
        where = {} if placement == "opening" else {"finding": "small right pleural effusion"}
        out, e = run(rep, edits.find_add_comparison, slot=0, placement=placement, phrase=phrase, **where)
        assert out["candidate"].startswith(text), out["candidate"]
        assert e["category"] == 5
    out, e = run(rep, edits.find_add_comparison, slot=1, placement="before", phrase="new")
    assert annotated(out)[1] == "New [mild cardiomegaly|DISEASE]."
    assert e["weight_class"] == "major"
    _, e = run(rep, edits.find_add_comparison, slot=0, placement="opening", phrase="Compared with the prior study")
    assert e["weight_class"] == "minor"  # names the prior study, states no change
    verb = Draft.from_report(report(["[Velocities|ANATOMY] are [elevated|ABNORMALITY] in the [ICA|ANATOMY]."]))
    assert not [o for o in edits.find_add_comparison(verb, LEX) if dict(o.detail)["placement"] == "before"]


def test_no_change_phrase_for_normal_statements_and_no_second_comparison():
    draft = Draft.from_report(report(["No [pneumothorax|NON-DISEASE].",
                                      "[Small effusion|ABNORMALITY], unchanged."]))
    options = edits.find_add_comparison(draft, LEX)
    assert {o.slot for o in options} == {0, 2}  # slot 1 already has a comparison
    assert all(not o.significant for o in options if o.slot == 0)


def test_removed_comparison_clause():
    rep = report(["[Small left pleural effusion|ABNORMALITY], decreased since the prior study."])
    out, e = run(rep, edits.find_remove_comparison, slot=0, removed="decreased since the prior study")
    assert out["candidate"].startswith("Small left pleural effusion. No acute abnormality.")
    assert (e["category"], e["significant"]) == (6, True)
    assert (e["before"], e["after"]) == (", decreased since the prior study", "")
    out, e = run(rep, edits.find_remove_comparison, slot=0, removed="since the prior study")
    assert out["candidate"].startswith("Small left pleural effusion, decreased. No")
    assert e["significant"] is False  # the change word stays; only the prior study is dropped
    rep = report(["[Nodule|ABNORMALITY] in the [right lower lobe|ANATOMY] is unchanged compared with the CT of 2021."])
    out, e = run(rep, edits.find_remove_comparison, slot=0)
    assert out["candidate"].startswith("Nodule in the right lower lobe is unchanged. No")
    assert e["significant"] is False


def test_removed_comparison_sentence():
    rep = report(["[Cardiomediastinal silhouette|ANATOMY] is unchanged.", "No [pneumothorax|NON-DISEASE]."])
    out, e = run(rep, edits.find_remove_comparison, slot=0)
    assert out["candidate"] == "No pneumothorax. No acute abnormality."
    assert (e["candidate_span"], e["reference_span"]) == (None, [0, 42])
    assert e["significant"] is False


# -- categories 1 and 2: whole sentences ---------------------------------------------------------
def test_removed_finding_sentence():
    out, e = run(report(EFFUSION), edits.find_remove_finding, slot=1)
    assert out["candidate"] == "Small right pleural effusion. Heart size is normal. No acute abnormality."
    assert (e["kind"], e["category"], e["significant"]) == ("remove_finding", 2, False)
    assert (e["candidate_span"], e["reference_span"], e["before"]) == (None, [30, 46], "No pneumothorax.")
    _, e = run(report(EFFUSION), edits.find_remove_finding, slot=0)
    assert e["significant"] is True
    draft = Draft.from_report(report(["[Mild edema|ABNORMALITY], increased since the prior study.", EFFUSION[1]]))
    assert [o.slot for o in edits.find_remove_finding(draft, LEX)] == [1, 2]  # never with a comparison


def test_inserted_finding_from_a_donor():
    donors = [("d1", "findings", parse_annotated("[Left lower lobe|ANATOMY] [atelectasis|ABNORMALITY].")),
              ("d2", "findings", parse_annotated("[Mild edema|ABNORMALITY], new since the prior study.")),
              ("d3", "findings", parse_annotated("This [mass|ABNORMALITY] is large.")),
              ("d4", "findings", parse_annotated("[Small right pleural effusion|ABNORMALITY].")),
              ("t1", "findings", parse_annotated("[Rib fracture|DISEASE]."))]
    draft = Draft.from_report(report(EFFUSION))
    options = edits.find_insert_finding(draft, LEX, donors)
    assert {dict(o.detail)["source"] for o in options} == {"d1"}
    assert sorted((o.section, o.slot) for o in options) == [
        ("findings", 0), ("findings", 1), ("findings", 2), ("findings", 3),
        ("impression", 3), ("impression", 4)]
    apply(draft, next(o for o in options if (o.section, o.slot) == ("findings", 3)))
    out = draft.finalize()
    e = out["edits"][0]
    assert out["candidate"] == ("Small right pleural effusion. No pneumothorax. Heart size is normal. "
                                "Left lower lobe atelectasis. No acute abnormality.")
    assert (e["category"], e["significant"], e["reference_span"], e["after"]) == (
        1, True, None, "Left lower lobe atelectasis.")
    assert out["candidate"][slice(*e["candidate_span"])] == e["after"]
    assert out["candidate_sentences"][3] == {
        "section": "findings", "annotated": "[Left lower lobe|ANATOMY] [atelectasis|ABNORMALITY]."}


# -- opposite rewrites (categories 1 and 2) ------------------------------------------------------
def test_unnegate_flips_the_whole_list():
    rep = report(["No [pleural effusion|NON-ABNORMALITY] or [pneumothorax|NON-DISEASE]."])
    out, e = run(rep, rewrites.find_unnegate, slot=0)
    assert annotated(out)[0] == "There is [pleural effusion|ABNORMALITY] and [pneumothorax|DISEASE]."
    assert (e["kind"], e["category"], e["significant"]) == ("unnegate", 1, True)
    assert (e["before"], e["after"]) == ("No pleural effusion or pneumothorax",
                                        "There is pleural effusion and pneumothorax")


@pytest.mark.parametrize("sentence, expected", [
    ("[Lungs|ANATOMY] are [clear|NON-ABNORMALITY] without [focal consolidation|NON-ABNORMALITY].",
     "[Lungs|ANATOMY] are [clear|NON-ABNORMALITY] with [focal consolidation|ABNORMALITY]."),
    ("The [optic chiasm|ANATOMY] is not [compressed|NON-ABNORMALITY].",
     "The [optic chiasm|ANATOMY] is [compressed|ABNORMALITY]."),
    ("[Liver|ANATOMY] is [normal|NON-ABNORMALITY], with no [focal lesion|NON-ABNORMALITY].",
     "[Liver|ANATOMY] is [normal|NON-ABNORMALITY], with [focal lesion|ABNORMALITY]."),
])
def test_unnegate_cues(sentence, expected):
    out, _ = run(report([sentence]), rewrites.find_unnegate, slot=0)
    assert annotated(out)[0] == expected


def test_negate_prefix_and_cue():
    rep = report(["[Right lower lobe|ANATOMY] [consolidation|ABNORMALITY] concerning for [pneumonia|DISEASE]."])
    out, e = run(rep, rewrites.find_negate, slot=0, cue="")
    assert annotated(out)[0] == ("No [right lower lobe|ANATOMY] [consolidation|NON-ABNORMALITY] "
                                 "concerning for [pneumonia|DISEASE].")
    assert (e["kind"], e["category"], e["significant"]) == ("negate", 2, True)
    out, _ = run(rep, rewrites.find_negate, slot=0, cue="concerning for ")
    assert annotated(out)[0] == ("[Right lower lobe|ANATOMY] [consolidation|ABNORMALITY] "
                                 "not concerning for [pneumonia|NON-DISEASE].")
    out, _ = run(report(["[Liver|ANATOMY] is enlarged with [mild steatosis|DISEASE]."]), rewrites.find_negate)
    assert annotated(out)[0] == "[Liver|ANATOMY] is enlarged without [mild steatosis|NON-DISEASE]."


def test_antonyms_both_ways():
    out, e = run(report(["[Portal vein|ANATOMY] is [patent|NON-ABNORMALITY]."]), rewrites.find_antonyms)
    assert annotated(out)[0] == "[Portal vein|ANATOMY] is [occluded|ABNORMALITY]."
    assert (e["category"], e["significant"]) == (1, True)
    out, e = run(report(["[Left popliteal artery|ANATOMY] is [occluded|ABNORMALITY]."]), rewrites.find_antonyms)
    assert annotated(out)[0] == "[Left popliteal artery|ANATOMY] is [patent|NON-ABNORMALITY]."
    assert e["category"] == 2


OPPOSITE_REPORT = report(
    ["No [pleural effusion|NON-ABNORMALITY] or [pneumothorax|NON-DISEASE].",
     "[Right lower lobe|ANATOMY] [consolidation|ABNORMALITY] concerning for [pneumonia|DISEASE].",
     "[Portal vein|ANATOMY] is [patent|NON-ABNORMALITY].",
     "There is a [small hiatal hernia|DISEASE] with [mild esophagitis|ABNORMALITY]."],
    ["No [acute fracture|NON-DISEASE]."])


def test_every_opposite_rewrite_flips_at_least_one_type():
    base = Draft.from_report(OPPOSITE_REPORT)
    options = rewrites.find_opposites(base, LEX)
    assert len(options) >= 6
    for option in options:
        draft = Draft.from_report(OPPOSITE_REPORT)
        apply(draft, option)
        before = [s.types() for s in base.slots]
        after = [s.types() for s in draft.slots]
        changed = [(a, b) for x, y in zip(before, after) for a, b in zip(x, y) if a != b]
        assert changed and all(FLIP[a] == b for a, b in changed), option
        assert [len(x) for x in before] == [len(y) for y in after]


# -- meaning-preserving rewrites -----------------------------------------------------------------
SYNONYM_REPORT = report(
    ["[Heart size|ANATOMY] is [normal|NON-ABNORMALITY].",
     "[Kidneys|ANATOMY] are [normal in size|NON-ABNORMALITY].",
     "A [pulmonary nodule|ABNORMALITY] is seen, consistent with a [granuloma|DISEASE]."],
    ["No [pleural effusion|NON-ABNORMALITY]."])


def test_synonym_rewrites_keep_every_entity_type():
    base = Draft.from_report(SYNONYM_REPORT)
    options = rewrites.find_synonyms(base, LEX)
    texts = set()
    for option in options:
        draft = Draft.from_report(SYNONYM_REPORT)
        apply(draft, option)
        out = draft.finalize()
        assert out["candidate"] != out["reference"]
        assert [s.types() for s in draft.slots] == [s.types() for s in base.slots]
        assert out["edits"][0]["category"] is None and out["edits"][0]["significant"] is False
        texts.add(out["candidate"].split(". ")[0 if option.slot == 0 else option.slot])
    assert {"Cardiac size is normal", "Heart size is within normal limits",
            "Heart size is unremarkable"} <= texts
    assert not any(o.slot == 1 for o in options)  # "normal in size": `final` group does not match
    out, _ = run(SYNONYM_REPORT, rewrites.find_synonyms, slot=2, to="lung nodule")
    assert annotated(out)[2] == "A [lung nodule|ABNORMALITY] is seen, consistent with a [granuloma|DISEASE]."


def test_reorder_swaps_neighbours_and_records_both_spans():
    rep = report(["[Heart|ANATOMY] is [normal|NON-ABNORMALITY].", "No [pneumothorax|NON-DISEASE].",
                  "It is [stable|NON-ABNORMALITY]."])
    draft = Draft.from_report(rep)
    options = rewrites.find_reorder(draft, LEX)
    assert [(o.slot, o.other) for o in options] == [(0, 1)]  # "It" points back: never moved
    apply(draft, options[0])
    out = draft.finalize()
    e = out["edits"][0]
    assert out["candidate"].startswith("No pneumothorax. Heart is normal. It is stable.")
    assert (e["kind"], e["category"], e["candidate_span"], e["reference_span"]) == ("reorder", None, [0, 33], [0, 33])


# -- other meaning-preserving rewrites -----------------------------------------------------------
def _meaning_preserving(e):
    assert e["category"] is None and e["significant"] is False


def _each_way(rep, finder, expected: dict):
    """Apply ``finder``'s option on each slot of ``expected`` alone: the slot reads as given and
    the edit is meaning-preserving."""
    for slot, text in expected.items():
        out, e = run(rep, finder, slot=slot)
        assert annotated(out)[slot] == text
        _meaning_preserving(e)


def test_abbreviations_expand_and_contract_with_the_case_of_their_place():
    rep = report(["[RLL|ANATOMY] [pneumonia|DISEASE].",
                  "Stable [nodule|ABNORMALITY] in the [RUL|ANATOMY].",
                  "[Opacity|ABNORMALITY] in the [right upper lobe|ANATOMY]."])
    out, e = run(rep, rewrites.find_synonyms, slot=0, to="Right lower lobe")
    assert annotated(out)[0] == "[Right lower lobe|ANATOMY] [pneumonia|DISEASE]."
    _meaning_preserving(e)
    out, _ = run(rep, rewrites.find_synonyms, slot=1, to="right upper lobe")
    assert annotated(out)[1] == "Stable [nodule|ABNORMALITY] in the [right upper lobe|ANATOMY]."
    out, _ = run(rep, rewrites.find_synonyms, slot=2, to="RUL")
    assert annotated(out)[2] == "[Opacity|ABNORMALITY] in the [RUL|ANATOMY]."


def test_negative_statements_are_rephrased_both_ways_without_changing_a_type():
    rep = report(["No [pneumothorax|NON-DISEASE].", "There is no [pleural effusion|NON-ABNORMALITY].",
                  "No [enlarged lymph nodes|NON-ABNORMALITY].", "No [fracture|NON-DISEASE] is seen."])
    draft = Draft.from_report(rep)
    options = rewrites.find_rephrase_normal(draft, LEX)
    assert sorted(o.slot for o in options) == [0, 1, 2, 4]  # "... is seen" (3) has a verb of its own
    _each_way(rep, rewrites.find_rephrase_normal, {0: "There is no [pneumothorax|NON-DISEASE].",
                                            1: "No [pleural effusion|NON-ABNORMALITY].",
                                            2: "There are no [enlarged lymph nodes|NON-ABNORMALITY]."})


def test_a_list_of_negated_findings_takes_one_cue_or_two():
    rep = report(["No [pneumothorax|NON-DISEASE] or [pleural effusion|NON-ABNORMALITY].",
                  "No [mass|NON-ABNORMALITY] and no [adenopathy|NON-ABNORMALITY].",
                  "No [focal consolidation|NON-ABNORMALITY], [effusion|NON-ABNORMALITY] or [pneumothorax|NON-DISEASE]."])
    draft = Draft.from_report(rep)
    assert sorted(o.slot for o in rewrites.find_negation_list(draft, LEX)) == [0, 1]  # not after a comma list
    _each_way(rep, rewrites.find_negation_list, {
        0: "No [pneumothorax|NON-DISEASE] and no [pleural effusion|NON-ABNORMALITY].",
        1: "No [mass|NON-ABNORMALITY] or [adenopathy|NON-ABNORMALITY]."})


def test_section_headers_are_added_or_removed_and_never_moved():
    rep = report(["FINDINGS: [Lungs|ANATOMY] are [clear|NON-ABNORMALITY].", "No [pneumothorax|NON-DISEASE]."],
                 ["No [acute abnormality|NON-ABNORMALITY]."])
    draft = Draft.from_report(rep)
    donors = [("d1", "findings", parse_annotated("[Left lower lobe|ANATOMY] [atelectasis|ABNORMALITY].")),
              ("d2", "findings", parse_annotated("No [pleural effusion|NON-ABNORMALITY]."))]
    # an inserted sentence never goes above a section's header
    assert sorted((o.section, o.slot) for o in edits.find_insert_finding(draft, LEX, donors[:1])) == [
        ("findings", 1), ("findings", 2), ("impression", 2), ("impression", 3)]
    assert sorted(o.slot for o in rewrites.find_add_negative(draft, LEX, donors[1:])) == [1, 2]
    assert sorted(o.slot for o in rewrites.find_header(draft, LEX)) == [0, 2]  # each section's first sentence
    assert rewrites.find_reorder(draft, LEX) == []  # the header sentence stays at the top
    _each_way(rep, rewrites.find_header, {0: "[Lungs|ANATOMY] are [clear|NON-ABNORMALITY].",
                                   2: "IMPRESSION: No [acute abnormality|NON-ABNORMALITY]."})


def test_an_added_pertinent_negative_is_no_error_and_never_names_a_mentioned_finding():
    rep = report(EFFUSION)
    donors = [("d1", "findings", parse_annotated("No [pleural effusion|NON-ABNORMALITY].")),  # named already
              ("d2", "findings", parse_annotated("No [focal consolidation|NON-ABNORMALITY].")),
              ("d3", "findings", parse_annotated("It is [unchanged|NON-ABNORMALITY]."))]  # points back
    draft = Draft.from_report(rep)
    options = rewrites.find_add_negative(draft, LEX, donors)
    assert options and {dict(o.detail)["source"] for o in options} == {"d2"}
    apply(draft, options[-1])
    out = draft.finalize()
    assert "No focal consolidation." in out["candidate"]
    _meaning_preserving(out["edits"][0])


# -- spelling and grammar ------------------------------------------------------------------------
def test_spelling_inside_an_entity_keeps_the_span():
    rep = report(["No [pneumothorax|NON-DISEASE]."])
    out, e = run(rep, rewrites.find_spelling, slot=0, typo="swap")
    assert annotated(out)[0] == "No [pneumtohorax|NON-DISEASE]."
    assert (e["kind"], e["category"], e["detail"]["in_entity"]) == ("spelling", None, True)


def test_grammar_agreement_and_article():
    rep = report(["[Heart|ANATOMY] size is [normal|NON-ABNORMALITY] on the [frontal view|ANATOMY]."])
    out, e = run(rep, rewrites.find_grammar, slot=0, to="are")
    assert out["candidate"].startswith("Heart size are normal on the frontal view.")
    out, e = run(rep, rewrites.find_grammar, slot=0, to="")
    assert annotated(out)[0] == "[Heart|ANATOMY] size is [normal|NON-ABNORMALITY] on [frontal view|ANATOMY]."
    assert (e["before"], e["detail"]["in_entity"]) == ("the ", False)


# -- several edits, conflicts --------------------------------------------------------------------
def test_two_edits_in_one_sentence_keep_exact_spans():
    rep = report(["[Small right pleural effusion|ABNORMALITY]."])
    draft = Draft.from_report(rep)
    apply(draft, pick(edits.find_severity(draft, LEX), to="Moderate"))
    options = edits.find_laterality(draft, LEX)
    apply(draft, pick(options, slot=0))
    out = draft.finalize()
    sev, lat = out["edits"]
    assert out["candidate"].startswith("Moderate left pleural effusion.")
    assert (sev["candidate_span"], sev["reference_span"]) == ([0, 8], [0, 5])
    assert (lat["candidate_span"], lat["reference_span"]) == ([9, 13], [6, 11])
    assert (lat["before"], lat["after"]) == ("right", "left")
    assert not edits.find_severity(draft, LEX)  # the changed word is not edited again


def test_conflicts_are_refused():
    draft = Draft.from_report(report(["[Small right pleural effusion|ABNORMALITY]."]))
    slot = draft.slots[0]
    slot.replace(6, 11, "left", 0)
    with pytest.raises(EditConflict, match="overlaps an earlier edit"):
        slot.replace(8, 12, "x", 1)
    with pytest.raises(EditConflict, match="cuts through the span"):
        slot.replace(20, 28, "", 1)
    with pytest.raises(EditConflict, match="no sentence left"):
        one = Draft.from_sentences("s", [("findings", parse_annotated("No [effusion|NON-ABNORMALITY]."))])
        one.delete(one.slots[0], 0)


def test_malformed_lexicon_names_the_file_and_key(tmp_path):
    import shutil

    folder = tmp_path / "lex"
    shutil.copytree(LEXICON_DIR, folder)
    path = folder / "severity.yaml"
    path.write_text(path.read_text().replace("ladders:", "rungs:"))
    with pytest.raises(LexiconError, match=r"severity.yaml: missing key 'ladders'"):
        load_lexicon(folder)
    shutil.copy(LEXICON_DIR / "severity.yaml", path)
    path = folder / "comparisons.yaml"
    path.write_text(path.read_text().replace("change_words: '\\b(", "change_words: '\\b(("))
    with pytest.raises(LexiconError, match=r"comparisons.yaml: change_words: invalid regular expression"):
        load_lexicon(folder)

"""The ``diff_marked`` candidate format (an opt-in input of the learned metrics): the marking
itself, and that a model trained with it is scored with it by the thin package (its export says so), while
``plain`` (the papers' input) stays the default and leaves the text untouched."""

from __future__ import annotations

import json

import pytest
import torch

import radscore
from radscore.reward_model import encode_prompts
from radscore.text import CANDIDATE_FORMATS, format_inputs, mark_differences
from radscore.systems import RADCLIQ


def test_each_kind_of_edit_is_marked_where_it_happens():
    ref = "No pleural effusion. Heart size is normal."
    assert mark_differences(ref, "Small pleural effusion. Heart size is normal.") == \
        "[- No -] [+ Small +] pleural effusion. Heart size is normal."  # a replacement: deleted run first
    assert mark_differences(ref, "No pleural effusion. Heart size is enlarged. New opacity.") == \
        "No pleural effusion. Heart size is [- normal. -] [+ enlarged. New opacity. +]"
    assert mark_differences(ref, "No pleural effusion.") == "No pleural effusion. [- Heart size is normal. -]"
    assert mark_differences(ref, "No large pleural effusion. Heart size is normal.") == \
        "No [+ large +] pleural effusion. Heart size is normal."
    assert mark_differences(ref, "  No pleural\neffusion.  Heart size is normal. ") == "No pleural effusion. Heart size is normal."
    assert mark_differences("", "New opacity.") == "[+ New opacity. +]"
    assert mark_differences("Normal chest.", "") == "[- Normal chest. -]"
    # exact words: case and attached punctuation count
    assert mark_differences("No effusion.", "no effusion") == "[- No effusion. -] [+ no effusion +]"


def test_plain_is_the_default_and_untouched_and_an_unknown_format_is_refused():
    refs, cands = ["a b c", "x"], ["a  b d", "x"]
    assert CANDIDATE_FORMATS[0] == "plain"
    assert format_inputs("plain", refs, cands) == (refs, cands)
    assert format_inputs("diff_marked", refs, cands) == (refs, ["a b [- c -] [+ d +]", "x"])
    assert format_inputs("diff_only", refs, cands) == (["", ""], ["a b [- c -] [+ d +]", "x"])
    with pytest.raises(ValueError, match="candidate_format='marked'; expected one of"):
        format_inputs("marked", refs, cands)


def test_a_diff_marked_reward_export_is_scored_on_marked_prompts(tiny_backbone, tmp_path):
    from train.rehearsal.tiny import build_tiny_reward_export

    refs = ["Small right pleural effusion.", "Small right pleural effusion.", "Normal chest."]
    cands = ["No pleural effusion.", "Large right pleural effusion.", "Normal chest."]
    model = build_tiny_reward_export(tmp_path / "m", tiny_backbone, RADCLIQ, candidate_format="diff_marked")
    assert json.loads((tmp_path / "m" / "reward_model.json").read_text())["candidate_format"] == "diff_marked"
    scorer = radscore.ER2Score(tmp_path / "m", progress=False)
    assert scorer.model.candidate_format == "diff_marked" and scorer.signature()["candidate_format"] == "diff_marked"
    marked_ids, _ = model.encode(refs, cands)
    plain_ids, _ = encode_prompts(model.tokenizer, model.prompt_template, model.max_length, refs, cands)
    assert marked_ids[0] != plain_ids[0] and marked_ids[2] == plain_ids[2]  # an equal pair carries no mark
    assert marked_ids[0] == model.tokenizer(model.prompt_template.format(
        reference=refs[0], candidate=mark_differences(refs[0], cands[0])))["input_ids"]
    with torch.no_grad():
        expected = torch.cat([model(**model.pad([x])) for x in marked_ids])
    got = scorer.score(cands, refs)
    for k, s in enumerate(got):
        torch.testing.assert_close(torch.tensor(s.rewards), expected[k], rtol=0, atol=1e-5)
    # an export from before the key reads plain
    cfg = json.loads((tmp_path / "m" / "reward_model.json").read_text())
    del cfg["candidate_format"]
    (tmp_path / "m" / "reward_model.json").write_text(json.dumps(cfg))
    assert radscore.ER2Score(tmp_path / "m", progress=False).model.candidate_format == "plain"


def test_diff_only_leaves_the_reference_out_of_the_prompt_and_the_pair(tiny_backbone, tmp_path):
    """``diff_only``: the marked candidate alone (every word of both reports once), the reference's
    place empty, in the reward prompt and in ClinicalBLEURT's pair; shorter than ``diff_marked``."""
    from transformers import AutoTokenizer

    from radscore.bleurt import encode_pairs
    from train.rehearsal.tiny import build_tiny_reward_export

    refs = ["Small right pleural effusion. Heart size is normal.", "Normal chest."]
    cands = ["No pleural effusion. Heart size is normal.", "Normal chest."]
    model = build_tiny_reward_export(tmp_path / "m", tiny_backbone, RADCLIQ, candidate_format="diff_only")
    only_ids, _ = model.encode(refs, cands)
    marked_ids, _ = encode_prompts(model.tokenizer, model.prompt_template, model.max_length, refs, cands,
                                   "diff_marked")
    for k in range(len(refs)):
        assert only_ids[k] == model.tokenizer(model.prompt_template.format(
            reference="", candidate=mark_differences(refs[k], cands[k])))["input_ids"]
        assert len(only_ids[k]) < len(marked_ids[k])
    assert radscore.ER2Score(tmp_path / "m", progress=False).model.candidate_format == "diff_only"

    tokenizer = AutoTokenizer.from_pretrained(tiny_backbone)
    pairs = encode_pairs(tokenizer, refs, cands, 128, "diff_only")
    expected = tokenizer([""] * 2, [mark_differences(r, c) for r, c in zip(refs, cands)])["input_ids"]
    assert [list(p.input_ids) for p in pairs] == expected

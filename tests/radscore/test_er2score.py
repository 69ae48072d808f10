"""Scoring systems (native <-> internal units, YAML), the reward model's pad/pooling rules, and
radscore.ER2Score on an export made from a tiny random model."""

import json

import pytest
import torch

import radscore
from radscore.export import write_manifest
from radscore.reward_model import (LoraSettings, MultiRewardModel, check_template, ensure_pad_token,
                                   load_tokenizer)
from radscore.systems import MRSCORE, RADCLIQ, ScoringSystem, ScoringSystemError, load_system
from train.rehearsal.tiny import build_tiny_reward_export

# --- scoring systems ------------------------------------------------------------------------------


def test_radcliq_counts_are_negated_internally_and_converted_back():
    counts = {k: 0 for k in RADCLIQ.items} | {"omission": 2, "incorrect_severity": 1}
    internal = RADCLIQ.to_internal(counts)
    assert internal == [0.0, -2.0, 0.0, -1.0, 0.0, 0.0]
    assert RADCLIQ.to_native(internal) == {k: float(v) for k, v in counts.items()}
    assert RADCLIQ.total(counts) == 3.0 and RADCLIQ.total_to_internal(3) == -3.0
    assert RADCLIQ.total_to_native(internal) == 3.0
    assert not RADCLIQ.higher_is_better and RADCLIQ.tiers == ((0, 2), (3, 4), (5, 6))


def test_mrscore_points_kept_sum_to_100_minus_weighted_errors():
    errors = {"impression_consistency": 1, "grammar": 1}  # S_i = 1: an error
    kept = {k: w * (1 - errors.get(k, 0)) for k, w in zip(MRSCORE.items, MRSCORE.weights)}
    assert MRSCORE.total(kept) == 100 - 30 - 5
    assert MRSCORE.to_internal(kept) == [kept[k] for k in MRSCORE.items]  # higher is better already
    assert MRSCORE.to_native(MRSCORE.to_internal(kept)) == kept
    assert MRSCORE.error_flags(kept) == {k: float(errors.get(k, 0)) for k in MRSCORE.items}
    MRSCORE.check_subscores(kept)
    with pytest.raises(ScoringSystemError, match="must be 0 or 30"):
        MRSCORE.check_subscores(kept | {"impression_consistency": 15.0})


def test_a_user_system_from_yaml_with_a_weighted_total(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\nhigher_is_better: false\ntotal_rule: weighted_sum\ninteger: true\n"
                    "tiers: [[0, 2], [3, 8]]\nitems:\n"
                    "  - {name: missed, description: a missed finding, weight: 2, upper: 4}\n"
                    "  - {name: wrong_side, weight: 3}\n")
    system = load_system(str(path))
    assert system.items == ("missed", "wrong_side") and system.coefficients == (2.0, 3.0)
    native = {"missed": 1, "wrong_side": 2}
    assert system.total(native) == 8.0
    internal = system.to_internal(native)
    assert internal == [-2.0, -6.0] and sum(internal) == system.total_to_internal(8.0)
    assert system.to_native(internal) == {"missed": 1.0, "wrong_side": 2.0}
    assert system.total_to_native(internal) == 8.0
    assert load_system(system.to_dict()) == system  # the export stores it as JSON
    with pytest.raises(ScoringSystemError, match="outside"):
        system.check_subscores({"missed": 5, "wrong_side": 0})


@pytest.mark.parametrize("spec, message", [
    ({"name": "x", "items": ["a"]}, "missing key 'higher_is_better'"),
    ({"name": "x", "items": ["a", "a"], "higher_is_better": True}, "item names repeat"),
    ({"name": "x", "items": ["a"], "higher_is_better": True, "total_rule": "max"}, "total_rule 'max'"),
    ({"name": "x", "items": ["a"], "higher_is_better": True, "total_rule": "weighted_sum"}, "non-zero weight"),
    ({"name": "x", "items": [{"name": "a", "weight": 1}, "b"], "higher_is_better": True}, "every item or for none"),
    ({"name": "x", "items": [{"name": "a", "wieght": 1}], "higher_is_better": True}, r"unknown key\(s\) \['wieght'\]"),
    ({"name": "x", "items": ["a"], "higher_is_better": "yes"}, "true or false"),
])
def test_bad_system_definitions_are_named(spec, message):
    with pytest.raises(ScoringSystemError, match=message):
        load_system(spec)


def test_unknown_system_name():
    with pytest.raises(ScoringSystemError, match="neither a built-in"):
        load_system("radcliq2")


def test_data_ratings_keeps_its_names():
    from data import ratings

    assert ratings.RADCLIQ is RADCLIQ and ratings.MRSCORE is MRSCORE and ratings.SYSTEMS["radcliq"] is RADCLIQ
    assert ratings.ScoringSystem is ScoringSystem


# --- the model: template, pad token, pooled position ---------------------------------------------

def test_template_needs_both_fields():
    assert check_template("{reference} vs {candidate} {{json}}")
    for bad in ("{reference} only", "{reference} {candidate} {extra}", "{reference {candidate}"):
        with pytest.raises(ValueError, match="prompt template"):
            check_template(bad)


@pytest.fixture(scope="module")
def tiny_decoder(tmp_path_factory):
    """A tiny random Llama with a word-level tokenizer that has an end-of-sequence token and no pad."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = ["<unk_eos>"] + "reference candidate report effusion left right small large no the is a".split()
    tok = Tokenizer(models.WordLevel({w: k for k, w in enumerate(words)}, unk_token="<unk_eos>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<unk_eos>")
    folder = tmp_path_factory.mktemp("tiny_llama")
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(words), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
    LlamaForCausalLM(config).save_pretrained(folder)
    return str(folder)


def test_a_decoder_gets_a_real_pad_token_and_pools_the_last_real_token(tiny_decoder):
    tok = load_tokenizer(tiny_decoder)
    assert tok.pad_token == "<|pad|>" and tok.pad_token_id != tok.eos_token_id  # added: no pad, unk = eos
    model = MultiRewardModel.build(tiny_decoder, RADCLIQ, "{reference} {candidate}", 32, LoraSettings(r=2)).eval()
    base = model.model.get_base_model()
    assert base.config.pad_token_id == tok.pad_token_id
    assert base.get_input_embeddings().weight.shape[0] == len(tok)
    ids, _ = model.encode(["small left effusion", "no effusion"], ["large right effusion is the report", "no"])
    with torch.no_grad():
        together = model(**model.pad(ids))
        alone = torch.cat([model(**model.pad([x])) for x in ids])
    torch.testing.assert_close(together, alone, rtol=0, atol=1e-5)  # padding never changes a reward
    for side in ("left", "right"):
        model.tokenizer.padding_side = side
        with torch.no_grad():
            torch.testing.assert_close(model(**model.pad(ids)), alone, rtol=0, atol=1e-5)


def test_a_16_bit_backbone_trains_its_head_in_float32_and_the_export_loads_it_unrounded(tiny_decoder, tmp_path):
    """``dtype: bfloat16`` (the paper profile): LoRA and the reward head are trained in float32 while
    the backbone stays in bf16. A bf16 head would lose AdamW's small updates (below half a unit in the
    last place of its weights, 2^-9 of them), and an export reloaded in bf16 would round the head."""
    model = MultiRewardModel.build(tiny_decoder, RADCLIQ, "{reference} {candidate}", 32,
                                   LoraSettings(r=2, target_modules=["q_proj", "v_proj"]), dtype="bfloat16")
    trainable = {n: p for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all(p.dtype == torch.float32 for p in trainable.values()), \
        {n: p.dtype for n, p in trainable.items()}
    assert model.base.get_input_embeddings().weight.dtype == torch.bfloat16  # frozen: as loaded
    head = model.base.score.modules_to_save["default"].weight
    before = head.detach().clone()
    ids, _ = model.encode(["small left effusion", "no effusion"], ["large right effusion", "no"])
    opt = torch.optim.AdamW(trainable.values(), lr=1e-5, weight_decay=0.0)
    model.train()
    rewards = model(**model.pad(ids))
    assert rewards.dtype == torch.float32
    rewards.sum().backward()
    opt.step()  # Adam's first update moves every weight by lr (1e-5): bf16 rounds it away at |w| > 2.6e-3
    assert (head.detach() != before).float().mean() > 0.9

    model.eval()
    with torch.no_grad():
        trained = model(**model.pad(ids))
    model.save(tmp_path / "export")
    write_manifest(tmp_path / "export", "reward")
    loaded = MultiRewardModel.from_export(tmp_path / "export", base_model=tiny_decoder, dtype="bfloat16")
    loaded_head = loaded.base.score.modules_to_save["default"].weight
    assert loaded_head.dtype == torch.float32 and torch.equal(loaded_head, head.detach())
    with torch.no_grad():
        torch.testing.assert_close(loaded(**loaded.pad(ids)), trained, rtol=0, atol=0)


def test_existing_pad_tokens_are_kept(tiny_backbone):
    tok = load_tokenizer(tiny_backbone)
    assert ensure_pad_token(tok) == "existing" and tok.pad_token == "[PAD]"


# --- ER2Score on an export ------------------------------------------------------------------------

CANDIDATES = ["No pleural effusion.", "Large left pleural effusion with adjacent atelectasis.", ""]
REFERENCES = ["Small right pleural effusion.", "Small right pleural effusion.", "Normal chest."]


@pytest.mark.parametrize("system", [RADCLIQ, MRSCORE], ids=lambda s: s.name)
def test_er2score_gives_native_subscores_and_totals_in_order(system, tiny_backbone, tmp_path, capsys):
    model = build_tiny_reward_export(tmp_path / "export", tiny_backbone, system)
    scorer = radscore.ER2Score(tmp_path / "export", batch_size=2)
    assert scorer.system == system
    scores = scorer.score(CANDIDATES, REFERENCES)
    assert "ER2Score" in capsys.readouterr().err  # the progress bar
    ids, _ = model.encode(REFERENCES, CANDIDATES)
    with torch.no_grad():
        expected = torch.cat([model(**model.pad([x])) for x in ids])
    for k, s in enumerate(scores):
        torch.testing.assert_close(torch.tensor(s.rewards), expected[k], rtol=0, atol=1e-5)
        assert list(s.subscores) == list(system.items)
        assert s.subscores == pytest.approx(system.to_native(expected[k].tolist()), abs=1e-5)
        assert s.total == pytest.approx(sum(s.subscores.values()), abs=1e-5)  # both systems: total = sum
        assert s.total == pytest.approx(system.sign * expected[k].sum().item(), abs=1e-5)
    one_by_one = radscore.ER2Score(tmp_path / "export", batch_size=1, progress=False)
    again = one_by_one.score(CANDIDATES[::-1], REFERENCES[::-1])[::-1]
    for a, b in zip(scores, again):
        assert a.rewards == pytest.approx(b.rewards, abs=1e-5)
    assert json.loads(json.dumps(scores[0].to_dict()))["total"] == pytest.approx(scores[0].total)


def test_er2score_input_checks_and_export_kind(tiny_backbone, tmp_path):
    build_tiny_reward_export(tmp_path / "export", tiny_backbone, RADCLIQ)
    scorer = radscore.ER2Score(tmp_path / "export", progress=False)
    with pytest.raises(ValueError, match="candidates must be a sequence of strings"):
        scorer.score("a", ["b"])
    with pytest.raises(ValueError, match=r"references\[1\] is None"):
        scorer.score(["a", "b"], ["c", None])
    with pytest.raises(ValueError, match="must pair up"):
        scorer.score(["a"], ["b", "c"])
    write_manifest(tmp_path / "export", "bleurt")
    with pytest.raises(ValueError, match="expected reward"):
        radscore.ER2Score(tmp_path / "export")


def test_a_fully_fine_tuned_export_carries_its_whole_model(tiny_backbone, tmp_path):
    model = build_tiny_reward_export(tmp_path / "export", tiny_backbone, RADCLIQ, full=True)
    assert not (tmp_path / "export" / "adapter").exists() and (tmp_path / "export" / "model" / "config.json").is_file()
    assert json.loads((tmp_path / "export" / "reward_model.json").read_text())["finetune"] == "full"
    scores = radscore.ER2Score(tmp_path / "export", batch_size=2, progress=False).score(CANDIDATES, REFERENCES)
    ids, _ = model.encode(REFERENCES, CANDIDATES)
    with torch.no_grad():
        expected = torch.cat([model(**model.pad([x])) for x in ids])
        fresh = MultiRewardModel.build(tiny_backbone, RADCLIQ, model.prompt_template, model.max_length, full=True).eval()
        untrained = torch.cat([fresh(**fresh.pad([x])) for x in ids])
    assert not torch.allclose(expected, untrained, atol=1e-3)  # the saved weights, not the backbone's, are scored
    torch.testing.assert_close(torch.tensor([s.rewards for s in scores]), expected, rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="does not apply"):
        radscore.ER2Score(tmp_path / "export", base_model=tiny_backbone)


# --- prompts longer than max_length: the reference is cut first ----------------------------------

@pytest.mark.parametrize("source", ["minilm", "decoder"])
def test_long_prompts_lose_the_reference_first_and_keep_the_candidate(source, tiny_decoder):
    from radscore.models import PACKAGED_MINILM, resolve_model_path
    from radscore.reward_model import encode_prompts

    tok = load_tokenizer(resolve_model_path(PACKAGED_MINILM) if source == "minilm" else tiny_decoder)
    template = "reference report {reference} candidate report {candidate}"
    reference = " ".join(["small left effusion"] * 40)
    candidate = "large right effusion is the report"
    short = encode_prompts(tok, template, 512, [reference], [candidate])
    assert not short[1] and short[0][0] == tok(template.format(reference=reference, candidate=candidate))["input_ids"]
    n_candidate = len(tok(candidate, add_special_tokens=False)["input_ids"])
    (ids,), cuts = encode_prompts(tok, template, 40, [reference], [candidate])
    assert (cuts.prompts, cuts.candidates) == (1, 0) and len(ids) <= 40
    text = tok.decode(ids, skip_special_tokens=True)
    assert text.replace(" ", "").endswith("candidatereport" + candidate.replace(" ", ""))  # whole
    assert text.replace(" ", "").startswith("referencereportsmallleft")  # the reference's start kept
    assert len(ids) >= 40 - 3  # cut at token boundaries, nothing more than needed
    # a candidate that cannot fit even with an empty reference is cut too, and counted
    (ids,), cuts = encode_prompts(tok, template, 12, [reference], [" ".join([candidate] * 5)])
    assert (cuts.prompts, cuts.candidates) == (1, 1) and len(ids) <= 12
    assert "reference report candidate report large right" in tok.decode(ids, skip_special_tokens=True)


def test_er2score_counts_cut_prompts(tiny_backbone, tmp_path):
    build_tiny_reward_export(tmp_path / "export", tiny_backbone, RADCLIQ, max_length=48)
    scorer = radscore.ER2Score(tmp_path / "export", progress=False)
    with pytest.warns(UserWarning, match="references were cut"):
        scorer.score(["No effusion.", "Effusion."], [" ".join(["Small right pleural effusion."] * 30), "Normal."])
    assert (scorer.truncated, scorer.truncated_candidates) == (1, 0)

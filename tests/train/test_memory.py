"""The GPU memory estimate: each named term by its formula, and the activation terms against what
autograd really keeps for the backward pass of tiny BERT / DeBERTa-v2 / Llama models (counted with
``saved_tensors_hooks``), and ``python -m train memory-probe`` end to end."""

import json

import pytest
import torch

from train.lightning.memory import ACTIVATION_TERMS, GIB, Architecture, estimate_training_memory, precision_bytes


def test_precision_bytes():
    assert precision_bytes("32-true", None) == (4, 4)
    assert precision_bytes("bf16-mixed", None) == (4, 2)  # mixed precision keeps fp32 weights
    assert precision_bytes("bf16-mixed", "bfloat16") == (2, 2)  # a backbone loaded in bf16
    assert precision_bytes("bf16-true", None) == (2, 2)


def test_a_bert_layer_at_16_bit_on_cuda_is_korthikanti_et_al():
    """f = 4h, eager attention, dropout, 16-bit, 1-byte CUDA masks: s·b·h·(34 + 5·a·s/h) per layer
    (plus the LayerNorms' mean/rstd, which the paper leaves out)."""
    s, b, h, a = 128, 3, 64, 4
    out = estimate_training_memory(1000, 1000, Architecture(hidden=h, layers=2, heads=a), b, s, "bf16-true")
    per_layer = out["assumptions"]["activations_per_layer"]
    assert per_layer == s * b * h * (34 + 5 * a * s / h) + 2 * 8 * b * s
    assert out["bytes"]["weights"] == 2000 and out["bytes"]["gradients"] == 2000 and out["bytes"]["optimizer"] == 4000
    assert out["bytes"]["activations"] == sum(out["bytes"][k] for k in ACTIVATION_TERMS)
    assert out["gib"] == pytest.approx((sum(out["bytes"].values()) - out["bytes"]["activations"]) / GIB, abs=0.05)


def test_sdpa_on_cuda_keeps_no_scores_and_checkpointing_keeps_layer_inputs():
    arch = Architecture(hidden=64, layers=4, heads=4, attention="sdpa")
    full = estimate_training_memory(1000, 1000, arch, 2, 256, "bf16-true")["bytes"]
    assert full["attention_scores"] == 0
    ckpt = estimate_training_memory(1000, 1000, arch, 2, 256, "bf16-true", gradient_checkpointing=True)["bytes"]
    assert ckpt["checkpointed_layer_inputs"] == 2 * 256 * 2 * 64 * 4
    assert ckpt["checkpoint_recompute"] == sum(full[k] for k in ("attention_block", "mlp", "layer_norms",
                                                                  "dropout_masks")) // 4
    assert ckpt["mlp"] == 0


def test_an_8b_lora_reward_config_is_dominated_by_its_bf16_weights():
    llama3_8b = Architecture(hidden=4096, layers=32, heads=32, intermediate=14336, kv_heads=8, family="llama",
                             attention="sdpa", vocab=128256, hidden_dropout=False, attention_dropout=False,
                             num_labels=6, head="sequence")
    out = estimate_training_memory(8_030_261_248, 6_815_744, llama3_8b, batch_size=12, seq_len=1024,
                                   trainer_precision="bf16-mixed", model_dtype="bfloat16",
                                   gradient_checkpointing=True, lora_targets=("q_proj", "v_proj"), lora_rank=16)
    assert out["bytes"]["weights"] == 2 * (8_030_261_248 - 6_815_744) + 4 * 6_815_744  # LoRA adapters in fp32
    assert out["bytes"]["autocast_weight_copies"] == 0  # the backbone is already bf16
    assert 16 < out["gib"] < 24


def test_describe_config_uses_the_named_terms():
    from pathlib import Path

    from train.rehearsal.standins import describe_config

    ner = describe_config(Path("configs/ner/iob_deberta_v3.yaml"))["memory"]["bytes"]
    assert ner["relative_positions"] > 0 and ner["attention_scores"] > 0
    reward = describe_config(Path("configs/reward/paper_llama3.yaml"))["memory"]
    assert reward["bytes"]["checkpointed_layer_inputs"] > 0 and reward["assumptions"]["lora_targets"] == ["q_proj", "v_proj"]


# --- the activation terms against autograd's saved tensors -----------------------------------------
H, A, F, L, V, LABELS = 64, 4, 128, 2, 100, 5


def tiny(family: str, attention: str):
    from transformers import (AutoModelForSequenceClassification, AutoModelForTokenClassification, BertConfig,
                              DebertaV2Config, LlamaConfig)

    common = dict(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=A, intermediate_size=F)
    if family == "bert":
        model = AutoModelForTokenClassification.from_config(
            BertConfig(**common, num_labels=LABELS, attn_implementation=attention))
        arch = Architecture(H, L, A, intermediate=F, attention=attention, vocab=V, num_labels=LABELS)
    elif family == "deberta-v2":
        model = AutoModelForTokenClassification.from_config(DebertaV2Config(
            **common, num_labels=LABELS, max_position_embeddings=512, relative_attention=True, position_buckets=16,
            norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"], position_biased_input=False,
            type_vocab_size=0))
        arch = Architecture(H, L, A, intermediate=F, family="deberta-v2", vocab=V, position_buckets=16,
                            num_labels=LABELS)
    else:
        model = AutoModelForSequenceClassification.from_config(LlamaConfig(
            **common, num_key_value_heads=2, num_labels=6, pad_token_id=0, attn_implementation=attention))
        arch = Architecture(H, L, A, intermediate=F, kv_heads=2, family="llama", attention=attention, vocab=V,
                            hidden_dropout=False, attention_dropout=False, num_labels=6, head="sequence")
    return model, arch


def measured_and_estimated(family, attention, b, s, checkpointing, precision="32-true"):
    from train.lightning.memory_probe import saved_for_backward

    torch.manual_seed(0)
    model, arch = tiny(family, attention)
    if checkpointing:
        model.gradient_checkpointing_enable()
    model.train()
    ids = torch.randint(1, V, (b, s))
    mask = torch.ones_like(ids)

    def run():
        if family == "llama":
            return model(input_ids=ids, attention_mask=mask).logits.float().pow(2).mean()
        return model(input_ids=ids, attention_mask=mask, labels=torch.randint(0, LABELS, (b, s))).loss

    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision.endswith("mixed")):
        loss, saved, copies = saved_for_backward(model, run)
    loss.backward()
    n = sum(p.numel() for p in model.parameters())
    est = estimate_training_memory(n, n, arch, b, s, precision, None, checkpointing, device="cpu")
    return saved, est["bytes"]["activations"] - est["bytes"]["checkpoint_recompute"], copies, est


CASES = [("bert", "eager"), ("bert", "sdpa"), ("deberta-v2", "eager"), ("llama", "eager"), ("llama", "sdpa")]


@pytest.mark.parametrize("family,attention", CASES)
@pytest.mark.parametrize("checkpointing", [False, True])
@pytest.mark.parametrize("b,s", [(1, 32), (4, 48)])
def test_activation_terms_match_the_saved_tensors(family, attention, checkpointing, b, s):
    saved, estimate, _, _ = measured_and_estimated(family, attention, b, s, checkpointing)
    assert saved == pytest.approx(estimate, rel=0.15), (saved, estimate)


@pytest.mark.parametrize("family,attention", CASES)
def test_mixed_precision_activations_and_weight_copies_match(family, attention):
    saved, estimate, copies, est = measured_and_estimated(family, attention, 2, 64, False, "bf16-mixed")
    assert saved == pytest.approx(estimate, rel=0.15), (saved, estimate)
    assert copies == pytest.approx(est["bytes"]["autocast_weight_copies"], rel=0.15)


def test_the_deberta_check_needs_the_relative_position_term(monkeypatch):
    """Without its relative-position tensors the estimate misses DeBERTa's activations by > 15%."""
    saved, estimate, _, est = measured_and_estimated("deberta-v2", "eager", 4, 48, False)
    assert saved == pytest.approx(estimate, rel=0.15)
    assert not saved == pytest.approx(estimate - est["bytes"]["relative_positions"], rel=0.15)


# --- the probe command ------------------------------------------------------------------------------
def test_memory_probe_runs_end_to_end_and_writes_json(tmp_path, capsys):
    from train.__main__ import main

    out = tmp_path / "probe.json"
    assert main(["memory-probe", "--config", "configs/ner/iob_deberta_v3.yaml", "--layers", "2", "--batch-size", "2",
                 "--max-length", "32", "--hidden", "64", "--heads", "4", "--intermediate", "128", "--vocab", "100",
                 "--position-buckets", "16", "--device", "cpu", "--steps", "2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "activations saved" in text and "relative_positions" in text and "tokens/s" in text
    r = json.loads(out.read_text())
    assert r["layers"] == 2 and r["batch_size"] == 2 and r["max_length"] == 32 and r["device"] == "cpu"
    assert {"estimate", "measured", "ratio", "torch", "date", "config"} <= set(r)
    assert r["ratio"]["activations_saved"] == pytest.approx(1, abs=0.15)
    assert r["ratio"]["optimizer"] == pytest.approx(1, abs=0.01) and r["ratio"]["weights"] == pytest.approx(1, abs=0.01)


def test_memory_probe_builds_the_lora_reward_model_with_checkpointing(tmp_path):
    from train.lightning.memory_probe import probe

    r = probe("configs/reward/paper_llama3.yaml", steps=1, batch_size=1, max_length=32, layers=1, device="cpu",
              width={"hidden": 64, "heads": 4, "kv_heads": 2, "intermediate": 128, "vocab": 100})
    assert r["lora_r"] == 16 and r["gradient_checkpointing"] and r["rows"] == 2
    assert r["params_trainable"] < r["params_total"] / 2
    assert r["ratio"]["activations_saved"] == pytest.approx(1, abs=0.15)

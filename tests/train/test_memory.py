"""The GPU memory estimate: each named term by its formula, and the activation terms against what
autograd really keeps for the backward pass of tiny BERT / DeBERTa-v2 / Llama models (counted with
``saved_tensors_hooks``), and ``python -m train memory-probe`` end to end."""

import json

import pytest
import torch

from train.lightning.memory import ACTIVATION_TERMS, GIB, Architecture, estimate_training_memory, precision_bytes
from train.lightning.module import enable_activation_checkpointing


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
    assert out["gib"] == round(max(out["phases"].values()) / GIB, 1)


def test_the_phases_follow_lightnings_order():
    """The forward phase holds the last step's gradients (Lightning zeroes them after training_step)
    and, with checkpointing, peaks in the top layer's MLP before the head runs or at its end; the backward phase holds none of them at the top layer (but that layer, recomputed with
    checkpointing, and its gradients' worst moment) and all of them at the end; the optimizer step
    holds the gradients and AdamW's temporaries (none for the fused kernel)."""
    arch = Architecture(hidden=64, layers=4, heads=4, intermediate=256)
    out = estimate_training_memory(10_000_000, 10_000_000, arch, 2, 128, "32-true", device="cpu")
    t, ph = out["bytes"], out["phases"]
    state = t["weights"] + t["optimizer"]
    top = t["activations"] - t["head"] + t["backward_transient"]
    assert ph["forward"] == state + t["gradients"] + t["activations"] and t["forward_transient"] == 0
    assert ph["backward"] == state + max(top, t["gradients"]) == state + t["gradients"]  # 40 MB of gradients
    assert ph["optimizer_step"] == state + t["gradients"] and t["optimizer_transient"] == 0
    assert out["peak_phase"] == "forward"
    ckpt = estimate_training_memory(10_000, 10_000, arch, 2, 128, "32-true", device="cpu", gradient_checkpointing=True)
    t, ph = ckpt["bytes"], ckpt["phases"]
    state = t["weights"] + t["optimizer"]
    assert t["forward_transient"] > 0 and t["checkpoint_recompute"] > 0
    saved = t["activations"] - t["checkpoint_recompute"]
    # the top layer's MLP temporaries come before the head's tensors exist (here they outweigh them)
    assert t["forward_transient"] > t["head"]
    assert ph["forward"] == state + t["gradients"] + saved - t["head"] + t["forward_transient"]
    assert ph["backward"] == state + t["activations"] - t["head"] + t["backward_transient"]
    assert ckpt["peak_phase"] == "backward"  # a recomputed layer and its gradients outweigh 40 kB of gradients


def test_backward_and_optimizer_transients():
    from train.lightning.memory import backward_transient_bytes, mlp_transient_bytes, optimizer_transient_bytes

    b, s, h, f = 2, 128, 64, 256
    sbf, sbh = b * s * f, b * s * h
    gelu = Architecture(hidden=h, layers=2, heads=4, intermediate=f)
    gated = Architecture(hidden=h, layers=2, heads=4, intermediate=f, family="llama", attention="sdpa")
    phi = Architecture(hidden=h, layers=2, heads=4, intermediate=f, family="phi", attention="sdpa")
    # frozen (LoRA) MLPs: the activation's incoming and outgoing gradients, plus the layer's output gradient
    assert backward_transient_bytes(gelu, b, s, 2, 2, True, True, "cpu", 4) == 2 * sbh + 2 * 2 * sbf
    assert backward_transient_bytes(gated, b, s, 2, 2, True, True, "cpu", 4) == 2 * sbh + 3 * 2 * sbf
    assert backward_transient_bytes(phi, b, s, 2, 2, True, True, "cpu", 4) == 2 * sbh + 3 * 2 * sbf
    assert backward_transient_bytes(phi, b, s, 2, 2, True, True, "cuda", 4) == 2 * sbh + 3 * 4 * sbf  # fp32 chain
    # forward (a checkpointed layer's un-saved pass): Phi's 0.5·x lives beside x and the chain; what the
    # MLP's output is added to lives too (Llama: the residual after the attention, r = 4 under autocast;
    # Phi: the attention's output, e)
    assert mlp_transient_bytes(phi, b, s, 2, 4, True, "cpu", forward=True) == 4 * sbh + 2 * sbh + 4 * 2 * sbf
    assert mlp_transient_bytes(gated, b, s, 2, 4, True, "cpu", forward=True) == 4 * sbh + 4 * sbh + 3 * 2 * sbf
    # a trained down projection has released its input and made its weight's gradient
    assert backward_transient_bytes(gelu, b, s, 4, 4, False, False, "cpu", 4) == 4 * sbh + 4 * sbf + 4 * h * f
    assert optimizer_transient_bytes("fused", 1000, 100, 4) == 0
    assert optimizer_transient_bytes("foreach", 1000, 100, 4) == 4000
    assert optimizer_transient_bytes("single", 1000, 100, 4) == 800
    with pytest.raises(ValueError, match="optimizer must be one of"):
        optimizer_transient_bytes("sgd", 1000, 100, 4)


def test_the_adamw_kernel_is_the_training_modules_choice():
    """Fused wherever torch has the kernel, except with gradient clipping under mixed precision, where
    Lightning refuses a fused optimiser and torch's default runs (multi-tensor on CUDA, one tensor at a
    time on the CPU): what the estimate's optimizer_transient and the probe's optimizer follow."""
    from train.lightning.module import adamw_kernel

    assert adamw_kernel("cuda", None, "bf16-mixed") == adamw_kernel("cpu", 0.0, "bf16-mixed") == "fused"
    assert adamw_kernel("cuda", 1.0, "32-true") == "fused"
    assert adamw_kernel("cuda", 1.0, "bf16-mixed") == "foreach"
    assert adamw_kernel("cpu", 1.0, "16-mixed") == "single"


def test_lightning_holds_the_last_gradients_through_training_step():
    """The forward phase's premise, checked on the installed Lightning: at training_step the previous
    step's gradients exist; at the backward pass they have been zeroed (set to None)."""
    import pytorch_lightning as pl

    seen = {"forward": [], "backward": []}

    class Tiny(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            seen["forward"].append(self.layer.weight.grad is not None)
            return self.layer(batch[0]).pow(2).mean()

        def on_before_backward(self, loss):
            seen["backward"].append(self.layer.weight.grad is not None)

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-3)

    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 4)), batch_size=2)
    pl.Trainer(max_steps=3, accelerator="cpu", logger=False, enable_checkpointing=False, enable_progress_bar=False,
               enable_model_summary=False).fit(Tiny(), data)
    assert seen == {"forward": [False, True, True], "backward": [False, False, False]}


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
                              DebertaV2Config, GemmaConfig, LlamaConfig, MPNetConfig, PhiConfig, Qwen2Config)

    common = dict(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=A, intermediate_size=F)
    decoder = dict(hidden_dropout=False, attention_dropout=False, num_labels=6, head="sequence")
    if family == "bert":
        model = AutoModelForTokenClassification.from_config(
            BertConfig(**common, num_labels=LABELS, attn_implementation=attention))
        arch = Architecture(H, L, A, intermediate=F, attention=attention, vocab=V, num_labels=LABELS)
    elif family == "mpnet":  # eager attention with a relative-position bias (BioLORD)
        model = AutoModelForTokenClassification.from_config(MPNetConfig(**common, num_labels=LABELS))
        arch = Architecture(H, L, A, intermediate=F, family="mpnet", attention="eager", vocab=V, num_labels=LABELS)
    elif family == "deberta-v2":
        model = AutoModelForTokenClassification.from_config(DebertaV2Config(
            **common, num_labels=LABELS, max_position_embeddings=512, relative_attention=True, position_buckets=16,
            norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"], position_biased_input=False,
            type_vocab_size=0))
        arch = Architecture(H, L, A, intermediate=F, family="deberta-v2", vocab=V, position_buckets=16,
                            num_labels=LABELS)
    elif family == "gemma":  # heads · head_dim = 3 · hidden, as Gemma-7B's 16 · 256 is 4/3 of 3072
        model = AutoModelForSequenceClassification.from_config(GemmaConfig(
            **common, num_key_value_heads=A, head_dim=48, num_labels=6, pad_token_id=0, attn_implementation=attention))
        arch = Architecture(H, L, A, intermediate=F, family="gemma", head_dim=48, attention=attention, vocab=V, **decoder)
    elif family == "phi":  # attention and MLP in parallel under one LayerNorm, partial RoPE, gelu_new
        model = AutoModelForSequenceClassification.from_config(PhiConfig(
            **common, partial_rotary_factor=0.5, num_labels=6, pad_token_id=0, attn_implementation=attention))
        arch = Architecture(H, L, A, intermediate=F, family="phi", rotary_fraction=0.5, attention=attention, vocab=V,
                            **decoder)
    else:  # llama, qwen2 (Llama's layer with biased Q, K, V)
        cfg = (Qwen2Config if family == "qwen2" else LlamaConfig)(
            **common, num_key_value_heads=2, num_labels=6, pad_token_id=0, attn_implementation=attention)
        model = AutoModelForSequenceClassification.from_config(cfg)
        arch = Architecture(H, L, A, intermediate=F, kv_heads=2, family="llama", attention=attention, vocab=V, **decoder)
    return model, arch


def measured_and_estimated(family, attention, b, s, checkpointing, precision="32-true"):
    from train.lightning.memory_probe import saved_for_backward

    torch.manual_seed(0)
    model, arch = tiny(family, attention)
    if checkpointing:
        enable_activation_checkpointing(model)
    model.train()
    ids = torch.randint(1, V, (b, s))
    mask = torch.ones_like(ids)

    def run():
        if arch.head == "sequence":
            return model(input_ids=ids, attention_mask=mask).logits.float().pow(2).mean()
        return model(input_ids=ids, attention_mask=mask, labels=torch.randint(0, LABELS, (b, s))).loss

    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision.endswith("mixed")):
        loss, saved, copies = saved_for_backward(model, run)
    loss.backward()
    n = sum(p.numel() for p in model.parameters())
    est = estimate_training_memory(n, n, arch, b, s, precision, None, checkpointing, device="cpu")
    return saved, est["bytes"]["activations"] - est["bytes"]["checkpoint_recompute"], copies, est


CASES = [("bert", "eager"), ("bert", "sdpa"), ("deberta-v2", "eager"), ("llama", "eager"), ("llama", "sdpa"),
         ("mpnet", "eager"), ("qwen2", "sdpa"), ("gemma", "sdpa"), ("gemma", "eager"), ("phi", "sdpa")]


@pytest.mark.parametrize("family,attention", CASES)
@pytest.mark.parametrize("checkpointing", [False, True])
@pytest.mark.parametrize("b,s", [(1, 32), (4, 48)])
def test_activation_terms_match_the_saved_tensors(family, attention, checkpointing, b, s):
    if checkpointing and family == "mpnet":
        pytest.skip("transformers' MPNet has no gradient checkpointing (and no config here asks for it)")
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


def lora_measured_and_estimated(family, b, s, bf16_weights):
    """A LoRA reward-style backbone (frozen base, r 4 on q_proj and v_proj, fp32 adapters), with its
    input marked as requiring grad as the reward model does under gradient checkpointing, but run
    without checkpointing so that every layer's frozen-base terms are counted."""
    import peft

    from train.lightning.memory_probe import saved_for_backward

    torch.manual_seed(0)
    model, arch = tiny(family, "sdpa")
    n = sum(p.numel() for p in model.parameters())
    if bf16_weights:
        model = model.to(torch.bfloat16)
    model = peft.get_peft_model(model, peft.LoraConfig(task_type=peft.TaskType.SEQ_CLS, r=4, lora_alpha=8,
                                                       lora_dropout=0.05, target_modules=["q_proj", "v_proj"],
                                                       modules_to_save=["score"]))
    model.enable_input_require_grads()
    model.train()
    ids = torch.randint(1, V, (b, s))
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16_weights):
        loss, saved, _ = saved_for_backward(
            model, lambda: model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits.float().pow(2).mean())
    loss.backward()
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    precision, dtype = ("bf16-mixed", "bfloat16") if bf16_weights else ("32-true", None)
    est = estimate_training_memory(n, trainable, arch, b, s, precision, dtype, False, device="cpu",
                                   lora_targets=("q_proj", "v_proj"), lora_rank=4)
    return saved, est["bytes"]["activations"], est


@pytest.mark.parametrize("family", ["llama", "qwen2", "gemma", "phi"])
@pytest.mark.parametrize("bf16_weights", [False, True])
@pytest.mark.parametrize("b,s", [(1, 32), (4, 48)])
def test_lora_layer_terms_match_the_saved_tensors(family, bf16_weights, b, s):
    """The frozen-base terms of the reward configs' layers (the recomputed layer under gradient
    checkpointing): SDPA's saved output, peft's fp32 dropout mask, Gemma's wide heads, Phi's MLP."""
    saved, estimate, _ = lora_measured_and_estimated(family, b, s, bf16_weights)
    assert saved == pytest.approx(estimate, rel=0.05), (saved, estimate)


def test_gemma_and_phi_need_their_own_terms():
    """Without head_dim (Gemma's 16 heads of 256 on a hidden size of 3072) or with Phi taken as a
    BERT layer, the estimate misses what autograd keeps by more than 15%."""
    from dataclasses import replace

    saved, estimate, _, est = measured_and_estimated("gemma", "sdpa", 4, 48, False)
    assert saved == pytest.approx(estimate, rel=0.05)
    _, arch = tiny("gemma", "sdpa")
    n = est["bytes"]["weights"] // 4
    wrong = estimate_training_memory(n, n, replace(arch, head_dim=None), 4, 48, "32-true", None, device="cpu")
    assert not saved == pytest.approx(wrong["bytes"]["activations"], rel=0.15)
    saved, estimate, _, est = measured_and_estimated("phi", "sdpa", 4, 48, False)
    assert saved == pytest.approx(estimate, rel=0.05)
    _, arch = tiny("phi", "sdpa")
    wrong = estimate_training_memory(n, n, replace(arch, family="bert"), 4, 48, "32-true", None, device="cpu")
    assert not saved == pytest.approx(wrong["bytes"]["activations"], rel=0.15)


def span_measured_and_estimated(b, s, precision):
    from transformers import AutoModel, BertConfig

    from radscore.span_model import SPAN_CLASSES, SpanClassifierHead, SpanNERModel, enumerate_spans
    from train.lightning.memory import SpanHead
    from train.lightning.memory_probe import saved_for_backward

    torch.manual_seed(0)
    encoder = AutoModel.from_config(BertConfig(vocab_size=V, hidden_size=H, num_hidden_layers=L,
                                               num_attention_heads=A, intermediate_size=F))
    model = SpanNERModel(encoder, SpanClassifierHead(H, max_span_width=8, width_dim=16, mlp_hidden=48, mlp_layers=3,
                                                     dropout=0.2))
    model.train()
    spans = enumerate_spans(s - 2, 8)  # every piece a word
    starts = torch.tensor([[a + 1 for a, _ in spans]] * b)
    ends = torch.tensor([[e + 1 for _, e in spans]] * b)
    labels = torch.randint(0, len(SPAN_CLASSES), starts.shape)
    ids = torch.randint(1, V, (b, s))
    ce = torch.nn.CrossEntropyLoss(ignore_index=-100)

    def run():
        logits = model(ids, torch.ones_like(ids), starts, ends, ends - starts)
        return ce(logits.reshape(-1, len(SPAN_CLASSES)), labels.reshape(-1))

    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision.endswith("mixed")):
        loss, saved, copies = saved_for_backward(model, run)
    loss.backward()
    n = sum(p.numel() for p in model.parameters())
    arch = Architecture(H, L, A, intermediate=F, attention="sdpa", vocab=V, head="span", num_labels=len(SPAN_CLASSES),
                        span=SpanHead(8, 16, 48, 3, True, len(SPAN_CLASSES)))
    est = estimate_training_memory(n, n, arch, b, s, precision, None, False, device="cpu")
    return saved, copies, est["bytes"]


@pytest.mark.parametrize("precision", ["32-true", "bf16-mixed"])
@pytest.mark.parametrize("b,s", [(1, 32), (4, 48)])
def test_the_span_head_term_matches_the_saved_tensors(precision, b, s):
    """The PURE head over every span of up to 8 words is most of what a span NER step keeps: the
    estimate with it is within 5%, without it far off."""
    saved, copies, est = span_measured_and_estimated(b, s, precision)
    assert saved == pytest.approx(est["activations"], rel=0.05), (saved, est["activations"])
    assert not saved == pytest.approx(est["activations"] - est["span_head"], rel=0.15)
    if precision == "bf16-mixed":
        assert copies == pytest.approx(est["autocast_weight_copies"], rel=0.05)


def test_span_count_is_enumerate_spans():
    from radscore.span_model import enumerate_spans
    from train.lightning.memory import SpanHead

    head = SpanHead(max_width=8)
    for words in (0, 1, 5, 8, 9, 510):
        assert head.spans(words) == len(enumerate_spans(words, 8))


def test_a_cast_of_an_input_leaf_is_not_a_weight_copy():
    """``enable_input_require_grads`` makes the embedding output a leaf that requires grad; its fp32
    cast (RMSNorm's ``.to(float32)``) is an activation, a parameter's cast is a weight copy."""
    from train.lightning.memory_probe import _is_weight_copy

    weight = torch.nn.Parameter(torch.ones(4, 4))
    leaf = torch.ones(4, 4, dtype=torch.bfloat16, requires_grad=True)
    assert _is_weight_copy(weight.to(torch.bfloat16).t(), {id(weight)})
    assert not _is_weight_copy(leaf.to(torch.float32), {id(weight)})


def test_phi_cuda_autocast_terms_follow_the_autocast_op_lists():
    """On CUDA, autocast runs ``pow`` and ``layer_norm`` in fp32 (their CUDA fp32 lists; the CPU lists
    have neither): Phi's gelu_new keeps 4 + 4 + 2 + 4 bytes per MLP element instead of 4 × 2, and its
    LayerNorm an fp32 copy of its input. A GPU session's probe measures what this predicts."""
    from train.lightning.memory import _layer_terms, gelu_tanh_saved

    assert gelu_tanh_saved(2, True, "cuda") == 14 and gelu_tanh_saved(2, True, "cpu") == 8
    assert gelu_tanh_saved(4, False, "cuda") == 16
    arch = Architecture(2560, 32, 32, intermediate=10240, family="phi", rotary_fraction=0.4, attention="sdpa",
                        hidden_dropout=False, attention_dropout=False, num_labels=6, head="sequence")
    b, s = 2, 128
    args = dict(e=2, r=2, m_h=1, m_a=1, mixed=False, lora_targets=("q_proj", "v_proj"), lora_rank=16)
    cuda = _layer_terms(arch, b, s, device="cuda", autocast=True, **args)
    cpu = _layer_terms(arch, b, s, device="cpu", autocast=True, **args)
    assert cuda["mlp"] - cpu["mlp"] == 6 * s * b * 10240
    assert cuda["layer_norms"] - cpu["layer_norms"] == 2 * s * b * 2560


def test_every_trained_decoder_records_its_published_sizes():
    """The estimate and the probe read the MLP width and vocabulary from the table: a decoder without
    them would be estimated with f = 4h (16,384 where Llama-2-7B and Qwen1.5-7B have 11,008)."""
    from train.lightning.architectures import REAL, architecture

    decoders = [k for k, v in REAL.items() if v.config_class in ("LlamaConfig", "Qwen2Config", "GemmaConfig", "PhiConfig")]
    assert len(decoders) == 6
    for hub_id in decoders:
        assert REAL[hub_id].intermediate and REAL[hub_id].vocab, hub_id
    gemma = architecture(REAL["google/gemma-7b"], {"model": {"class_path": "train.reward.RewardModule"}})
    assert (gemma.family, gemma.qw, gemma.f, gemma.hidden_dropout) == ("gemma", 4096, 24576, False)
    phi = architecture(REAL["microsoft/phi-2"], {"model": {"class_path": "train.reward.RewardModule"}})
    assert (phi.family, phi.rotary_fraction) == ("phi", 0.4)


def test_span_configs_get_the_span_head_and_mpnet_its_eager_attention():
    from pathlib import Path

    from train.rehearsal.standins import describe_config

    biolord = describe_config(Path("configs/ner/span_biolord.yaml"))["memory"]
    assert biolord["assumptions"]["family"] == "mpnet" and biolord["bytes"]["attention_scores"] > 0
    assert biolord["bytes"]["span_head"] > 0 and biolord["bytes"]["head"] == 0
    iob = describe_config(Path("configs/ner/iob_deberta_v3.yaml"))["memory"]["bytes"]
    assert iob["span_head"] == 0 and iob["head"] > 0


# --- the probe command ------------------------------------------------------------------------------
def test_memory_probe_runs_end_to_end_and_writes_json(tmp_path, capsys):
    from train.__main__ import main

    out = tmp_path / "probe.json"
    assert main(["memory-probe", "--config", "configs/ner/iob_deberta_v3.yaml", "--layers", "2", "--batch-size", "2",
                 "--max-length", "32", "--hidden", "64", "--heads", "4", "--intermediate", "128", "--vocab", "100",
                 "--position-buckets", "16", "--device", "cpu", "--warmup-steps", "2", "--steps", "2", "--max-steps", "3",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "activations saved" in text and "relative_positions" in text and "tokens/s" in text
    r = json.loads(out.read_text())
    assert r["layers"] == 2 and r["batch_size"] == 2 and r["max_length"] == 32 and r["device"] == "cpu"
    assert {"estimate", "measured", "ratio", "torch", "date", "config"} <= set(r)
    from radscore.environment import REQUIRED

    assert set(REQUIRED) <= set(r["environment"]) and r["environment"]["precision"] == r["precision"]
    assert r["ratio"]["activations_saved"] == pytest.approx(1, abs=0.15)
    assert r["ratio"]["optimizer"] == pytest.approx(1, abs=0.01) and r["ratio"]["weights"] == pytest.approx(1, abs=0.01)
    # the CPU allocator's peak over one more step, beside the estimate's peak (the GPU session's bar)
    assert 0.85 <= r["ratio"]["peak_allocated"] <= 1.15, r["ratio"]
    assert set(r["phases"]) == {"forward", "backward", "optimizer_step"}
    assert "peak allocated" in text and "phase backward" in text
    # the step times: 2 warm-up, then 2 or 3 timed (3 is the cap; the window of 5 is never reached)
    assert r["warmup_steps"] == 2 and len(r["warmup_step_times_s"]) == 2
    assert len(r["step_times_s"]) == r["timed_steps"] == 3 and r["steps"] == 5 and r["stable"] is False
    assert r["stability"]["stopped"] == "max_steps" and r["stability"]["window"] == 5
    assert r["step_s"] == pytest.approx(sorted(r["step_times_s"])[1])  # the median of the last (up to) 5
    assert "NOT stable, stopped at max_steps" in text


def test_the_probe_makes_the_model_on_the_probed_device():
    """An 8B model's random initialisation takes minutes on a CPU and a second on a GPU: the probe
    builds under ``with device``. Here the process's default device is ``meta`` (weights without
    storage): a model made there could not be moved to the CPU, one made under the probed device can."""
    from train.lightning.memory_probe import probe

    width = {"hidden": 64, "heads": 4, "intermediate": 128, "vocab": 100}
    torch.set_default_device("meta")
    try:
        r = probe("configs/bleurt/paper.yaml", steps=1, max_steps=1, warmup_steps=1, batch_size=1,
                  max_length=16, layers=1, device="cpu",
                  width=width)
    finally:
        torch.set_default_device(None)
    assert r["device"] == "cpu" and r["measured"]["weights"] > 0


def test_cpu_phase_peaks_are_the_most_held_at_once_in_each_phase():
    from train.lightning.memory_probe import cpu_phase_peaks

    kept = []

    def two_at_once():
        a = torch.empty(1_000_000)  # 4 MB
        b = torch.empty(1_000_000)
        del a
        kept.extend([b, torch.empty(500_000)])

    def one_after_another():
        for _ in range(3):
            torch.empty(1_000_000)

    def release():
        kept.clear()
        torch.empty(250_000)

    out = cpu_phase_peaks([("two", two_at_once), ("seq", one_after_another), ("release", release),
                           ("after", one_after_another)])
    # the running total since the first phase began (a few hundred kB of other allocations may join)
    assert 8_000_000 <= out["two"]["peak"] < 9_000_000  # not 10 MB: a was freed before c
    assert 10_000_000 <= out["seq"]["peak"] < 11_000_000  # 6 MB still held + 4 MB, each freed in turn
    assert 6_000_000 <= out["release"]["peak"] < 7_000_000  # what it held when it began
    assert 4_000_000 <= out["after"]["peak"] < 5_000_000  # the 6 MB were released before
    assert "empty" in out["two"]["at"]
    # the profiler's running total outlives a profile: a block allocated under this one and freed
    # outside it must not count in the next
    kept.append(torch.empty(2_000_000))
    cpu_phase_peaks([("keep", lambda: kept.append(torch.empty(2_000_000)))])
    kept.clear()
    again = cpu_phase_peaks([("one", lambda: torch.empty(1_000_000))])
    assert 4_000_000 <= again["one"]["peak"] < 5_000_000


@pytest.mark.parametrize("case", ["full fine-tuning, large vocabulary", "LoRA with checkpointing"])
def test_each_phase_of_a_probed_step_matches_its_estimate(case):
    """The CPU allocator's peak per phase of a Lightning-ordered step, against the estimate's phases,
    on tiny models built so that the term under test is a large share: the fp32 gradients of a
    30,000-word embedding (held through the forward pass, made by the end of the backward pass) and
    the gradients of a wide gated MLP's backward (``backward_transient``). Each phase within 5%;
    without the term, off by more than 15%."""
    from train.lightning.memory_probe import probe

    if case.startswith("full"):
        r = probe("configs/bleurt/paper.yaml", steps=1, max_steps=1, warmup_steps=1, batch_size=2,
                  max_length=64, layers=2, device="cpu",
                  width={"hidden": 64, "heads": 4, "intermediate": 256, "vocab": 30000})
        term, phase = "gradients", "forward"
    else:
        r = probe("configs/reward/paper_llama3.yaml", steps=1, max_steps=1, warmup_steps=1, batch_size=1,
                  max_length=128, layers=2, device="cpu",
                  width={"hidden": 64, "heads": 4, "kv_heads": 2, "intermediate": 1024, "vocab": 100})
        term, phase = "backward_transient", "backward"
    for name, v in r["phases"].items():
        assert v["peak"] == pytest.approx(v["estimate"], rel=0.05), (name, v)
    ph = r["phases"][phase]
    assert not ph["peak"] == pytest.approx(ph["estimate"] - r["estimate"][term], rel=0.15)
    assert r["ratio"]["peak_allocated"] == pytest.approx(1, abs=0.05)


def test_memory_probe_builds_the_lora_reward_model_with_checkpointing(tmp_path):
    from train.lightning.memory_probe import probe

    r = probe("configs/reward/paper_llama3.yaml", steps=1, max_steps=1, warmup_steps=1, batch_size=1,
              max_length=32, layers=1, device="cpu",
              width={"hidden": 64, "heads": 4, "kv_heads": 2, "intermediate": 128, "vocab": 100})
    assert r["lora_r"] == 16 and r["gradient_checkpointing"] and r["rows"] == 2
    assert r["params_trainable"] < r["params_total"] / 2
    assert r["ratio"]["activations_saved"] == pytest.approx(1, abs=0.15)


def test_memory_probe_builds_the_span_model_of_a_span_config(tmp_path):
    """A span config is probed as what SpanTagger trains (an AutoModel and the config's PURE head over
    every span), not as a token classifier; MPNet (BioLORD) with its eager attention. One sentence of 16
    pieces (84 spans; 2 × 32 pieces are 424): the head keeps the config's sizes, and its passes over
    every span set this test's time. Probed in 32-true instead of the config's bf16-mixed: a CPU without
    AVX512-BF16 has no fast kernel for the head's bf16 products (about 10 s a step on the AVX2 class), and
    the mixed-precision terms are tested on small models above. Measured at 1 × 16: activations saved 1.0005
    of the estimate, span_head 9.5 MB against attention_block 20 kB, 20.1M parameters."""
    from train.lightning.memory_probe import probe

    r = probe("configs/ner/span_biolord.yaml", steps=1, max_steps=1, warmup_steps=1, batch_size=1,
              max_length=16, layers=1, device="cpu", precision="32-true",
              width={"hidden": 64, "heads": 4, "intermediate": 128, "vocab": 100})
    assert r["precision"] == "32-true" and r["estimate"]["autocast_weight_copies"] == 0
    assert r["estimate"]["span_head"] > r["estimate"]["attention_block"] > 0 and r["estimate"]["head"] == 0
    assert r["assumptions"]["family"] == "mpnet" and r["estimate"]["attention_scores"] > 0
    assert r["ratio"]["activations_saved"] == pytest.approx(1, abs=0.05)
    # the head at the config's sizes: 3 layers of 3,096 units (2 × 3,096² alone is 19.2M parameters)
    assert r["params_total"] > 19e6


def test_architecture_refuses_what_transformers_cannot_build():
    with pytest.raises(ValueError, match="eager attention only"):
        Architecture(64, 2, 4, family="mpnet", attention="sdpa")
    with pytest.raises(ValueError, match="not one of"):
        Architecture(64, 2, 4, family="roberta")
    with pytest.raises(ValueError, match="SpanHead"):
        Architecture(64, 2, 4, head="span")


def test_activation_checkpointing_is_switched_on_without_a_deprecation_warning():
    import warnings

    model, _ = tiny("llama", "sdpa")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # transformers >= 5.2x warns at the old name
        enable_activation_checkpointing(model)
    assert [m for m in model.modules() if getattr(m, "gradient_checkpointing", False)]


# --- the probe's step timing ------------------------------------------------------------------------
def fake_clock(step_times):
    """A clock that advances by the next of ``step_times`` at each step (read twice a step)."""
    now, pending = [0.0], list(step_times)

    def clock():
        return now[0]

    def step():
        now[0] += pending.pop(0)
    return clock, step


def test_timing_stops_when_the_last_five_step_times_agree_within_five_percent():
    from train.lightning.memory_probe import time_steps

    # slow first steps, then 1.00-1.04 s: stable once the last five are all in that band
    clock, step = fake_clock([3.0, 2.0, 1.0, 1.04, 1.02, 1.01, 1.03, 1.0, 9.9])
    out = time_steps(step, min_steps=2, max_steps=30, time_budget_s=None, clock=clock)
    assert out["stable"] and out["stopped"] == "stable"
    assert out["times"] == pytest.approx([3.0, 2.0, 1.0, 1.04, 1.02, 1.01, 1.03])
    # 6% apart is not stable: the cap stops it
    clock, step = fake_clock([1.0, 1.06] * 10)
    out = time_steps(step, min_steps=2, max_steps=12, time_budget_s=None, clock=clock)
    assert (out["stable"], out["stopped"], len(out["times"])) == (False, "max_steps", 12)
    # the time budget stops it too, never before the minimum of steps
    clock, step = fake_clock([10.0, 20.0] * 10)
    out = time_steps(step, min_steps=3, max_steps=30, time_budget_s=25, clock=clock)
    assert (out["stable"], out["stopped"], len(out["times"])) == (False, "time_budget", 3)
    # at least min_steps, even when the first five already agree
    clock, step = fake_clock([1.0] * 10)
    assert len(time_steps(step, min_steps=7, max_steps=30, clock=clock)["times"]) == 7


def test_the_probe_refuses_step_counts_that_make_no_sense():
    from train.lightning.memory_probe import probe, time_steps

    with pytest.raises(SystemExit, match="--warmup-steps must be >= 1"):
        probe("configs/bleurt/paper.yaml", warmup_steps=0, device="cpu")
    with pytest.raises(SystemExit, match=r"--steps \(6\) <= --max-steps \(5\)"):
        probe("configs/bleurt/paper.yaml", steps=6, max_steps=5, device="cpu")
    with pytest.raises(ValueError, match="window"):
        time_steps(lambda: None, window=1)


def test_more_timed_steps_leave_the_memory_figures_as_they_are():
    """Each phase's peak is taken in one more step after the timed ones, all with the same shapes:
    timing 6 steps instead of 1 moves no memory figure."""
    from train.lightning.memory_probe import probe

    width = {"hidden": 64, "heads": 4, "intermediate": 256, "vocab": 3000}
    one, many = (probe("configs/bleurt/paper.yaml", steps=k, max_steps=k, warmup_steps=1, batch_size=2,
                       max_length=32, layers=2, device="cpu", width=width) for k in (1, 6))
    assert (one["timed_steps"], many["timed_steps"]) == (1, 6)
    for key in ("weights", "gradients", "optimizer", "activations_saved", "peak_allocated"):
        assert many["measured"][key] == pytest.approx(one["measured"][key], rel=0.01), key
    for phase, v in one["phases"].items():
        assert many["phases"][phase]["peak"] == pytest.approx(v["peak"], rel=0.01), phase

"""The GPU memory estimate of the rehearsal report: each part by its formula."""

import pytest

from train.lightning.memory import GIB, Architecture, estimate_training_memory, precision_bytes


def test_precision_bytes():
    assert precision_bytes("32-true", None) == (4, 4)
    assert precision_bytes("bf16-mixed", None) == (4, 2)  # mixed precision keeps fp32 weights
    assert precision_bytes("bf16-mixed", "bfloat16") == (2, 2)  # a backbone loaded in bf16
    assert precision_bytes("bf16-true", None) == (2, 2)


def test_parts_follow_the_formula():
    arch = Architecture(hidden=64, layers=2, heads=4)
    out = estimate_training_memory(1000, 100, arch, batch_size=3, seq_len=16, trainer_precision="32-true")
    per_layer_16 = 16 * 3 * 64 * (34 + 5 * 4 * 16 / 64)
    assert out["bytes"] == {"weights": 4000, "gradients": 400, "optimizer": 800,
                            "activations": int(per_layer_16 * 2 * 2)}  # fp32 activations: twice 16-bit
    checkpointed = estimate_training_memory(1000, 100, arch, 3, 16, "bf16-mixed", gradient_checkpointing=True)
    assert checkpointed["bytes"]["activations"] == int(2 * 16 * 3 * 64 * 2 + per_layer_16)


def test_an_8b_lora_reward_config_is_dominated_by_its_bf16_weights():
    llama3_8b = Architecture(hidden=4096, layers=32, heads=32)
    out = estimate_training_memory(8_030_261_248, 6_815_744, llama3_8b, batch_size=6, seq_len=1024,
                                   trainer_precision="bf16-mixed", model_dtype="bfloat16",
                                   gradient_checkpointing=True)
    assert out["bytes"]["weights"] == 2 * 8_030_261_248
    assert 16 < out["gib"] < 24
    assert out["gib"] == pytest.approx(sum(out["bytes"].values()) / GIB, abs=0.05)

"""GPU memory a training config needs, estimated from the real model's architecture.

The estimate is the sum of four parts, each at the config's precision, batch size and sequence
length (``estimate_training_memory``):

- weights: every parameter, at the dtype the backbone is loaded in (``model.dtype`` when the
  config sets one, e.g. bf16 for the 7-8B reward backbones; else fp32: Lightning's mixed
  precision keeps fp32 weights);
- gradients: the trainable parameters, at the weight dtype;
- optimizer state: AdamW's two moments of the trainable parameters, in fp32 (8 bytes each);
- activations: per layer, ``s·b·h·(34 + 5·a·s/h)`` bytes in 16-bit (Korthikanti et al. 2022,
  "Reducing Activation Recomputation in Large Transformer Models", eq. 2, no tensor/sequence
  parallelism), doubled in fp32; with gradient checkpointing only each layer's input is kept
  (``2·s·b·h`` bytes per layer at 16-bit) plus one layer's full activations for the recomputation.
  No task here has a vocabulary-sized output (token classification, sequence regression, reward
  heads), so no logits term.

Activations are counted at the config's ``max_length`` (the worst case: batches are padded to
their longest row, and most NER sentences are far shorter). It ignores the CUDA context (~0.5 GiB),
allocator fragmentation and temporary buffers. The formula is a planning figure, not a measurement.
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 1024 ** 3
DTYPE_BYTES = {"float32": 4, "fp32": 4, "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2}


@dataclass(frozen=True)
class Architecture:
    """What the activation estimate needs of a transformer: hidden size, layers, attention heads."""

    hidden: int
    layers: int
    heads: int


def precision_bytes(trainer_precision: str | None, model_dtype: str | None) -> tuple[int, int]:
    """(bytes per weight, bytes per activation) for a Lightning precision string and a load dtype."""
    precision = str(trainer_precision or "32-true")
    weight = DTYPE_BYTES.get(str(model_dtype), 4) if model_dtype else (2 if precision in ("bf16-true", "16-true") else 4)
    activation = 2 if ("16" in precision or weight == 2) else 4
    return weight, activation


def estimate_training_memory(params_total: int, params_trainable: int, arch: Architecture, batch_size: int,
                             seq_len: int, trainer_precision: str | None = "32-true", model_dtype: str | None = None,
                             gradient_checkpointing: bool = False) -> dict:
    """Bytes per part and the total in GiB (see the module doc for the formula)."""
    weight_b, act_b = precision_bytes(trainer_precision, model_dtype)
    s, b, h, a, L = seq_len, batch_size, arch.hidden, arch.heads, arch.layers
    per_layer_16 = s * b * h * (34 + 5 * a * s / h)
    scale = act_b / 2
    if gradient_checkpointing:
        activations = (2 * s * b * h * L + per_layer_16) * scale
    else:
        activations = per_layer_16 * L * scale
    parts = {"weights": params_total * weight_b, "gradients": params_trainable * weight_b,
             "optimizer": params_trainable * 8, "activations": activations}
    return {"bytes": {k: int(v) for k, v in parts.items()},
            "gib": round(sum(parts.values()) / GIB, 1),
            "assumptions": {"weight_bytes": weight_b, "activation_bytes": act_b, "batch_size": b, "seq_len": s,
                            "gradient_checkpointing": gradient_checkpointing}}

"""bfloat16 on the CPU only where the CPU computes in bfloat16.

The sample configs train in ``32-true``: one precision gives one figure on every CPU class (the
AVX512-BF16 and AVX2-only classes run the same fp32 kernels). ``bf16-mixed`` is an opt-in overlay
(``configs/<task>/<sample>/bf16.yaml``): on a CPU with native bfloat16 instructions (AMX or
AVX512-BF16) autocast makes steps about 1.6x faster than fp32 and moves the figures (docs/demo.md, "Precision").
On a CPU without them (AVX2 only) PyTorch emulates bfloat16 and the same autocast is far *slower*: a
training step of the sample IOB model took 6.2 s in bf16 autocast against 0.36 s in fp32 on a 2-core
AVX2 EPYC (``benchmarks/training/bench_train_step.py``; the backward pass dominates). So when a bf16
run is on the CPU and the CPU lacks those instructions, :func:`effective_precision` trains in
``32-true`` instead and says so; ``RADSCORE_CPU_BF16=1`` keeps the configured precision. GPUs and CPUs
with native bfloat16 keep what the config says.
"""

from __future__ import annotations

import os

from radscore.environment import NATIVE_BF16_FLAGS, cpu_flags, cpu_has_native_bf16, cpu_name

BF16_PRECISIONS = ("bf16-mixed", "bf16-true", "bf16")
KEEP_ENV = "RADSCORE_CPU_BF16"

__all__ = ["BF16_PRECISIONS", "KEEP_ENV", "cpu_flags", "cpu_has_native_bf16", "cpu_name", "effective_precision",
           "runs_on_cpu"]


def runs_on_cpu(accelerator) -> bool:
    name = str(accelerator or "auto").lower()
    if name == "cpu":
        return True
    if name == "auto":
        import torch

        return not torch.cuda.is_available() and not torch.backends.mps.is_available()
    return False


def effective_precision(precision, accelerator, flags: set[str] | None = None) -> tuple[object, str | None]:
    """``(precision to use, reason when it differs from the configured one)``."""
    if str(precision) not in BF16_PRECISIONS or not runs_on_cpu(accelerator):
        return precision, None
    if os.environ.get(KEEP_ENV, "").strip() not in ("", "0"):
        return precision, None
    if cpu_has_native_bf16(flags) is not False:
        return precision, None
    return "32-true", (f"precision {precision} -> 32-true: this CPU has no native bfloat16 "
                       f"({' / '.join(NATIVE_BF16_FLAGS)} absent), where bf16 autocast is several "
                       f"times slower than fp32; set {KEEP_ENV}=1 to keep {precision}")

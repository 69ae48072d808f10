"""bfloat16 on the CPU only where the CPU computes in bfloat16.

The sample configs ask for ``precision: bf16-mixed``: on a CPU with native bfloat16 instructions
(AMX or AVX512-BF16) autocast makes steps about 1.6x faster than fp32. On a CPU without them
(AVX2 only, e.g. the AMD EPYC machines of this project's CI) PyTorch emulates bfloat16 and the same
autocast is far *slower*: a training step of the sample IOB model took 6.2 s in bf16 autocast
against 0.36 s in fp32 on a 2-core AVX2 EPYC (``benchmarks/training/bench_train_step.py``; the backward
pass dominates). So when a run is on
the CPU and the CPU lacks those instructions, :func:`effective_precision` trains in ``32-true``
instead and says so; ``RADSCORE_CPU_BF16=1`` keeps the configured precision. GPUs and CPUs with
native bfloat16 keep what the config says.
"""

from __future__ import annotations

import os
from pathlib import Path

BF16_PRECISIONS = ("bf16-mixed", "bf16-true", "bf16")
NATIVE_FLAGS = ("avx512_bf16", "amx_bf16")
KEEP_ENV = "RADSCORE_CPU_BF16"


def cpu_flags(cpuinfo: str | Path = "/proc/cpuinfo") -> set[str] | None:
    """The CPU's feature flags (Linux), or None where they cannot be read."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return None


def cpu_name(cpuinfo: str | Path = "/proc/cpuinfo") -> str:
    """The CPU's model name (Linux ``model name``), or "unknown"."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown"
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            return value.strip()
    return "unknown"


def cpu_has_native_bf16(flags: set[str] | None = None) -> bool | None:
    """True/False from the CPU flags; None when unknown (then nothing is changed)."""
    flags = cpu_flags() if flags is None else flags
    if flags is None:
        return None
    return any(f in flags for f in NATIVE_FLAGS)


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
                       f"({' / '.join(NATIVE_FLAGS)} absent), where bf16 autocast is several "
                       f"times slower than fp32; set {KEEP_ENV}=1 to keep {precision}")

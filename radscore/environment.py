"""What a figure was computed on: the environment record every run folder and results JSON carries.

:func:`environment` returns one flat-ish dict: the git commit of the checkout (and whether it had
uncommitted changes), the versions of Python, torch, transformers, Lightning and numpy, the CPU's
model, its hardware class and whether it computes bfloat16 natively, the vector instruction set
ATen's kernels run with, the thread count, the instruction-set caps and thread variables set in the
environment, the GPU when there is one, and the precision and seed the caller states.

The CPU facts (:func:`cpu_flags`, :func:`cpu_name`, :func:`cpu_has_native_bf16`, :func:`cpu_class`)
are read from ``/proc/cpuinfo`` (Linux); where it cannot be read they are None or ``"unknown"``.
"""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")
CLASS_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16")
#: variables that change which kernels run or how many threads they use (recorded when set)
KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS", "OMP_NUM_THREADS",
                    "MKL_NUM_THREADS", "RADSCORE_CPU_BF16", "CUBLAS_WORKSPACE_CONFIG")
PACKAGES = ("torch", "transformers", "pytorch-lightning", "numpy", "radscore")
REPO_ROOT = Path(__file__).resolve().parents[1]


def _cpuinfo(cpuinfo: str | Path = "/proc/cpuinfo") -> str | None:
    try:
        return Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def cpu_flags(cpuinfo: str | Path = "/proc/cpuinfo") -> set[str] | None:
    """The CPU's feature flags (Linux), or None where they cannot be read."""
    text = _cpuinfo(cpuinfo)
    for line in (text or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return None


def cpu_name(cpuinfo: str | Path = "/proc/cpuinfo") -> str:
    """The CPU's model name (Linux ``model name``), or ``"unknown"``."""
    text = _cpuinfo(cpuinfo)
    for line in (text or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            return value.strip()
    return "unknown"


def cpu_has_native_bf16(flags: set[str] | None = None) -> bool | None:
    """True/False from the CPU flags (AVX512-BF16 or AMX); None when unknown."""
    flags = cpu_flags() if flags is None else flags
    if flags is None:
        return None
    return any(f in flags for f in NATIVE_BF16_FLAGS)


def cpu_class(flags: set[str] | None = None) -> dict:
    """The flags that decide fp32 and bf16 speed here and the hardware class they make: ``amx``,
    ``avx512-bf16`` (native bf16 dot products), ``avx512``, ``avx2`` or ``baseline``."""
    flags = (cpu_flags() or set()) if flags is None else flags
    found = [f for f in CLASS_FLAGS if f in flags]
    name = ("amx" if "amx_bf16" in flags else "avx512-bf16" if "avx512_bf16" in flags
            else "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "baseline")
    return {"cpu_flags": found, "hardware_class": name}


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def git_commit(root: str | Path = REPO_ROOT) -> dict:
    """``{"commit": sha or None, "dirty": bool or None}`` of the checkout at ``root`` (None outside git)."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=20)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return {"commit": None, "dirty": None}
        status = git("status", "--porcelain", "--untracked-files=no")
        return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip()) if status.returncode == 0 else None}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def environment(precision: str | None = None, seed: int | None = None, threads: int | None = None) -> dict:
    """The environment record (module docstring). ``precision``: the precision actually used (after
    any fallback); ``seed``: the run's seed; ``threads``: torch's intra-op threads (read when None)."""
    import torch

    flags = cpu_flags()
    cuda = torch.cuda.is_available()
    repo = git_commit()
    return {
        "git_commit": repo["commit"], "git_dirty": repo["dirty"],
        "python": platform.python_version(),
        "versions": {p: _version(p) for p in PACKAGES},
        "cpu": cpu_name(), "cpu_count": os.cpu_count(), **cpu_class(flags or set()),
        "native_bf16": cpu_has_native_bf16(flags) if flags is not None else None,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "threads": torch.get_num_threads() if threads is None else threads,
        "variables": {k: os.environ[k] for k in KERNEL_VARIABLES if k in os.environ},
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
        "precision": None if precision is None else str(precision),
        "seed": seed,
    }


REQUIRED = ("git_commit", "versions", "cpu", "native_bf16", "threads", "precision", "seed")


def describe(env: dict) -> str:
    """One line for tables and logs: CPU, class, threads, precision, seed, commit."""
    commit = (env.get("git_commit") or "no git commit")[:10] + (" (modified)" if env.get("git_dirty") else "")
    capped = env.get("variables", {}).get("ATEN_CPU_CAPABILITY")
    cls = env.get("hardware_class", "unknown") + (f", kernels capped at {capped}" if capped else "")
    gpu = f", GPU {env['gpu']}" if env.get("gpu") else ""
    return (f"{env.get('cpu', 'unknown')} ({cls}; native bf16: {'yes' if env.get('native_bf16') else 'no'}){gpu}; "
            f"{env.get('threads')} threads; precision {env.get('precision') or 'n/a'}; seed {env.get('seed')}; "
            f"torch {env.get('versions', {}).get('torch')}; commit {commit}")

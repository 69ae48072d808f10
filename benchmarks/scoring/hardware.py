"""What a scoring benchmark ran on, and the instruction-set emulation: the CPU's hardware class
(:func:`cpu_class`), the device's facts (:func:`device_facts`), ``--emulate-isa``'s caps
(:func:`isa_environment`, :func:`rerun_capped`, :func:`check_capability`) and the result file named
after the class (:func:`result_path`). Shared by ``bench_ratescore.py``, ``profile_ratescore.py`` and
``bench_autocast.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from radscore.environment import CLASS_FLAGS  # noqa: F401  (the scoring benchmarks import it from here)

ROOT = Path(__file__).resolve().parents[2]

# --emulate-isa: cap every library's vector instructions at an older class on this machine, so that a
# host with AVX-512 can stand in for the AVX2-only CI class. ATen's own kernels, oneDNN and MKL each
# read their variable when they start, hence a fresh process (the whole run is re-executed).
# An emulation runs on this machine's cores, caches and clock: it isolates the instruction set, not
# the machine class, and every result it writes says so.
ISA_ENVIRONMENT = {"avx2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                            "MKL_ENABLE_INSTRUCTIONS": "AVX2"}}


def isa_environment(isa: str | None) -> dict[str, str]:
    """The variables that cap the instruction set at ``isa`` (empty for None)."""
    if isa is None:
        return {}
    if isa not in ISA_ENVIRONMENT:
        raise ValueError(f"cannot emulate {isa!r}; expected one of {sorted(ISA_ENVIRONMENT)}")
    return dict(ISA_ENVIRONMENT[isa])


def isa_is_applied(isa: str | None) -> bool:
    return all(os.environ.get(k) == v for k, v in isa_environment(isa).items())


def rerun_capped(isa: str, module: str, argv: list[str]) -> int:
    """Run ``python -m module argv`` again in a fresh process with the caps of ``isa`` set (the libraries
    read them when they start); its exit status."""
    env = {**os.environ, **isa_environment(isa)}
    return subprocess.run([sys.executable, "-m", module, *argv], env=env, cwd=ROOT).returncode


def emulate_in_result(result: dict, isa: str) -> None:
    """Mark ``result`` (which holds :func:`cpu_class`'s fields) as run with ``isa`` emulated."""
    result["isa_emulation"] = {
        "isa": isa, "environment": isa_environment(isa), "host_hardware_class": result["hardware_class"],
        "note": f"{isa.upper()} emulated on a {result['hardware_class']} host: the instruction set is capped, the "
                "cores, caches and clock are the host's; every process's ATen capability is checked "
                "(cpu_capability of each run)"}
    result["hardware_class"] = f"{isa}-emulated"


def torch_cpu_capability() -> str:
    """The vector instruction set ATen's CPU kernels run with in this process (e.g. ``AVX2``)."""
    import torch

    return torch.backends.cpu.get_cpu_capability()


def check_capability(run: dict, isa: str | None, what: str) -> dict:
    """``run`` unchanged, after checking that its process ran ATen at the emulated ``isa`` (a run
    that escaped the cap would be timed at the host's instruction set)."""
    if isa and str(run.get("cpu_capability", "")).lower() != isa:
        raise RuntimeError(f"--emulate-isa {isa}: {what} ran with ATen capability {run.get('cpu_capability')!r}")
    return run


def device_facts(device: str) -> dict:
    """What the run ran on: the CPU always, the GPU's name and torch's CUDA version on CUDA."""
    import torch

    facts = {"device": device, "torch": torch.__version__}
    if device == "cuda":
        facts.update({"device_name": torch.cuda.get_device_name(0), "cuda": torch.version.cuda,
                      "gpu_memory_gib": torch.cuda.get_device_properties(0).total_memory / 2**30})
    else:
        facts["device_name"] = cpu_name()
    return facts


def check_device(device: str) -> None:
    """Fail before any work when CUDA is asked for and torch sees none."""
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        build = f"built with CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
        sys.exit(f"bench_ratescore: --device cuda, but torch {torch.__version__} ({build}) sees no CUDA device")


def result_path(result: dict, prefix: str = "ratescore") -> Path:
    """``<prefix>_<hardware class>.json`` on the CPU, ``<prefix>_cuda_<GPU name>.json`` on CUDA."""
    if result["device"] == "cuda":
        tag = "cuda_" + "".join(c if c.isalnum() or c in "-." else "-" for c in result["device_name"]).strip("-")
    else:
        tag = result["hardware_class"]
    return ROOT / "benchmarks" / "results" / f"{prefix}_{tag}.json"


def cpu_name() -> str:
    from radscore.environment import cpu_name

    return cpu_name()


def cpu_class(flags: set[str] | None = None) -> dict:
    """The CPU's hardware class and the flags that make it (:func:`radscore.environment.cpu_class`)."""
    from radscore.environment import cpu_class

    return cpu_class(flags)

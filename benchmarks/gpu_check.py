"""What this project measures on a GPU, in one command: ``make gpu-check`` (``python -m benchmarks.gpu_check``).

    .venv/bin/python -m benchmarks.gpu_check [--only memory|rehearse|scoring ...] [--out benchmarks/results]

Run it from the repository root of an installed checkout on a machine with an NVIDIA GPU and a CUDA
build of torch. Without a CUDA device it prints one line to stderr and exits 2, running and writing
nothing. With one, it runs these steps, each in a subprocess on the first GPU; a step that fails is
reported and the next one runs:

- ``memory``: ``python -m train memory-probe --device cuda`` for one paper config per model family
  (:data:`PROBES`: the full model, except Phi-2 with 2 of its 32 layers and the BioLORD span tagger at
  batch 8), timed until the step time is stable: the allocator's peak per phase beside the estimate;
- ``rehearse``: ``python -m train rehearse --accelerator gpu --fast --no-ablations --no-ddp`` (one
  paper config per model family and data layout, end to end on stand-ins), its report copied;
- ``scoring``: ``benchmarks.scoring.bench_ratescore --device cuda`` (against the released ratescore
  package on the same GPU when its venv can be made, else radscore alone) and
  ``benchmarks.scoring.bench_autocast --device cuda``; both score with the trained sample NER export
  (``make train-ner`` makes it).

The JSONs go to ``--out`` with the GPU's name in the file name (:func:`gpu_slug`):
``memory_probe_cuda_<gpu>_<config>.json`` (the config's path under configs/, ``_`` for ``/``, e.g.
``reward_paper_llama3_phi_2``), ``rehearsal_gpu_<gpu>_report.json``, ``ratescore_cuda_<gpu>.json`` and
``autocast_cuda_<gpu>.json``. A summary table ends the run; the exit status is 1 when a step failed.
``python -m benchmarks.training.gpu_hours`` turns the probe JSONs into GPU-hours of the papers' runs.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NO_CUDA = ("gpu-check: no CUDA device visible to torch (torch.cuda.is_available() is False); run it on a machine "
           "with an NVIDIA GPU and a CUDA build of torch")
#: one config per paper model family, with what the probe builds smaller than the config (a paper overlay by its
#: path alone: memory-probe reads it after its base, the file named after its folder)
PROBES = (("configs/ner/iob_deberta_v3.yaml", ()),
          ("configs/ner/span_biolord.yaml", ("--batch-size", "8")),
          ("configs/reward/paper_llama3.yaml", ()),
          ("configs/reward/paper_llama3/phi_2.yaml", ("--layers", "2")),
          ("configs/bleurt/paper.yaml", ()))
#: 3 untimed steps, then at least 5 timed ones until the last 5 agree within 5% (at most 20, or 8 s of steps)
PROBE_TIMING = ("--warmup-steps", "3", "--steps", "5", "--max-steps", "20", "--time-budget-s", "8")
REHEARSAL_REPORT = ROOT / "checkpoints" / "rehearsal" / "report.json"
GROUPS = ("memory", "rehearse", "scoring")


def gpu_slug(name: str) -> str:
    """A file-name part from the GPU's name: ``NVIDIA H100 80GB HBM3`` -> ``nvidia-h100-80gb-hbm3``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def plan(gpu: str, out: Path, groups=GROUPS, released: bool = True) -> list[dict]:
    """The steps to run, in order: ``{"name", "argv"}`` (python's arguments), and for the rehearsal
    ``"copy"``: the report it writes and where it goes."""
    steps = []
    if "memory" in groups:
        for config, reduced in PROBES:
            name = Path(config).relative_to("configs").with_suffix("").as_posix().replace("/", "_")
            steps.append({"name": f"memory-probe {name}",
                          "argv": ["-m", "train", "memory-probe", "--config", config, "--device", "cuda", *PROBE_TIMING,
                                   *reduced, "--out", str(out / f"memory_probe_cuda_{gpu}_{name}.json")]})
    if "rehearse" in groups:
        steps.append({"name": "rehearse --fast",
                      "argv": ["-m", "train", "rehearse", "--accelerator", "gpu", "--fast", "--no-ablations",
                               "--no-ddp"],
                      "copy": (REHEARSAL_REPORT, out / f"rehearsal_gpu_{gpu}_report.json")})
    if "scoring" in groups:
        steps.append({"name": "bench_ratescore" + ("" if released else " (radscore alone)"),
                      "argv": ["-m", "benchmarks.scoring.bench_ratescore", "--device", "cuda",
                               *([] if released else ["--no-released"]),
                               "--out", str(out / f"ratescore_cuda_{gpu}.json")]})
        steps.append({"name": "bench_autocast",
                      "argv": ["-m", "benchmarks.scoring.bench_autocast", "--device", "cuda",
                               "--out", str(out / f"autocast_cuda_{gpu}.json")]})
    return steps


def run(argv: list[str]) -> int:
    """One step: this python with ``argv`` in the repository root, its output passed through."""
    return subprocess.run([sys.executable, *argv], cwd=ROOT).returncode


def released_available() -> bool:
    """Whether the released ratescore package's venv is there or can be made (first use: a few minutes, PyPI)."""
    from benchmarks.scoring.released_package import ensure_released_venv

    try:
        ensure_released_venv(log=lambda msg: print(f"gpu-check: {msg}", flush=True))
        return True
    except RuntimeError as err:
        print(f"gpu-check: {err}; bench_ratescore scores with radscore alone", flush=True)
        return False


def _modified(path: Path) -> int | None:
    """``path``'s modification time in nanoseconds, None when there is no such file."""
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", action="append", choices=GROUPS, help="run only these steps (repeatable; default all)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="where the JSONs go")
    args = p.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print(NO_CUDA, file=sys.stderr)
        return 2
    gpu_name = torch.cuda.get_device_name(0)
    groups = args.only or GROUPS
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    steps = plan(gpu_slug(gpu_name), out, groups, released="scoring" in groups and released_available())
    print(f"gpu-check on {gpu_name}: {len(steps)} steps, JSONs to {out}", flush=True)
    rows = []
    for step in steps:
        print(f"\n=== gpu-check: {step['name']}: python {' '.join(step['argv'])}", flush=True)
        before = _modified(step["copy"][0]) if "copy" in step else None
        t0 = time.time()
        code = run(step["argv"])
        status = "ok" if code == 0 else f"FAILED (exit {code})"
        if "copy" in step:
            report, wrote = step["copy"]
            # this run's report (failed configs included): one that is new or rewritten since the step began
            # (compared with its own earlier stamp, not the clock: a file's stamp can trail time.time())
            if report.is_file() and _modified(report) != before:
                shutil.copyfile(report, wrote)
            else:
                status = f"FAILED (exit {code}, no report)"
        else:
            wrote = Path(step["argv"][step["argv"].index("--out") + 1])
        rows.append((step["name"], status, time.time() - t0, wrote if wrote.is_file() else None))
    print(f"\ngpu-check on {gpu_name}:")
    print(f"{'step':<36} {'status':<24} {'seconds':>8}  wrote")
    for name, status, seconds, wrote in rows:
        print(f"{name:<36} {status:<24} {seconds:>8.0f}  {wrote or '-'}")
    failed = [r for r in rows if r[1] != "ok"]
    print(f"{len(rows) - len(failed)} of {len(rows)} steps ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

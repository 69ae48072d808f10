"""The docs' tables of memory probes: measured over estimated, per phase of a training step.

    .venv/bin/python -m benchmarks.training.memory_probe_table [--device cpu|cuda] [PROBE_JSON ...]

Default input: ``benchmarks/results/memory_probe_{device}_*.json`` (``python -m train memory-probe
--device ... --out ...``; ``cpu`` unless told). CPU: one markdown row per JSON, ordered by config
and batch: autograd's saved tensors over the estimate's activation terms, each phase's allocator
peak over that phase's estimate, and the step's peak over the estimate's (with the phase the
estimate peaks in and the measured GiB). CUDA (``cuda_table``): one row per JSON, ordered by config,
with what was built (a reduced build, fewer layers or another batch or length than the config's,
says so) and per phase and for the step's peak the measured ``max_memory_allocated`` and the
estimate in GiB and their ratio. docs/reproducing.md carries both outputs; ``tests/test_gpu_hours.py``
checks that it does. A probe JSON names its config by the path it was run with; :func:`current_config`
finds where that config lives now.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def current_config(recorded: str | Path) -> Path:
    """Where the config a probe JSON names (the path it was run with) lives now. A paper overlay that a probe
    recorded beside its base (``configs/reward/phi_2.yaml``, ``configs/ner/span_biomedbert.yaml``,
    ``configs/reward/paper_llama3_lambda0_5.yaml``) lives in the folder named after its base, under its own
    name less the folder's name or the folder's first word (``configs/reward/paper_llama3/phi_2.yaml``,
    ``configs/ner/span_biolord/biomedbert.yaml``, ``configs/reward/paper_llama3/lambda0_5.yaml``)."""
    path = Path(recorded)
    full = path if path.is_absolute() else ROOT / path
    if full.is_file():
        return full
    found = []
    for base in sorted(full.parent.glob("*.yaml")):
        folder = base.with_suffix("")
        for name in (path.stem, path.stem.removeprefix(folder.name + "_"),
                     path.stem.removeprefix(folder.name.split("_")[0] + "_")):
            moved = folder / f"{name}.yaml"
            if moved.is_file() and moved not in found:
                found.append(moved)
    if len(found) != 1:
        raise SystemExit(f"{recorded}: no such config, and {len(found) or 'no'} paper overlay"
                         f"{'s' if len(found) != 1 else ''} of that name{': ' if found else ''}"
                         f"{', '.join(map(str, found))}")
    return found[0]


HEADER = ("| config | batch | saved | forward | backward | optimizer step | peak (estimated phase, measured) |\n"
          "|---|---:|---:|---:|---:|---:|---:|")


def row(r: dict) -> str:
    ph = r["phases"]
    b = r["batch_size"]
    unit = (" pair" if b == 1 else " pairs") if r["rows"] == 2 * b else ""  # a reward batch counts pairs
    name = "/".join(Path(r["config"]).with_suffix("").parts[-2:])
    return (f"| `{name}` | {b}{unit} | {r['ratio']['activations_saved']:.3f} | "
            f"{ph['forward']['ratio']:.3f} | {ph['backward']['ratio']:.3f} | {ph['optimizer_step']['ratio']:.3f} | "
            f"{r['ratio']['peak_allocated']:.3f} ({r['estimate_peak_phase'].replace('_', ' ')}, "
            f"{r['measured']['peak_allocated'] / 2**30:.2f} GiB) |")


def _probes(paths: list[str], device: str | None = None) -> list[dict]:
    """The probe JSONs, by config and batch size; with ``device``, each must be a probe on it with per-phase peaks."""
    probes = [json.loads(Path(p).read_text()) for p in paths]
    for p, r in zip(paths, probes):
        if device and (r.get("device") != device or not r.get("phases")):
            raise SystemExit(f"memory_probe_table: {p}: not a {device.upper()} probe with per-phase peaks "
                             f"(device {r.get('device')!r})")
    return sorted(probes, key=lambda r: (r["config"], r["batch_size"]))


def table(paths: list[str]) -> str:
    return "\n".join([HEADER] + [row(r) for r in _probes(paths)])


CUDA_HEADER = ("| config | built (batch × length, layers) | forward | backward | optimizer step "
               "| peak (estimated phase) |\n|---|---|---:|---:|---:|---:|")


def built(r: dict) -> str:
    """What the probe built, and where it differs from the config as written."""
    from train.lightning.memory_probe import config_facts

    facts = config_facts(current_config(r["config"]))
    b, unit = r["batch_size"], " pairs" if r["rows"] == 2 * r["batch_size"] else ""
    reduced = ["layers"] if r["layers"] != r["real_layers"] else []
    if b != facts["batch_size"]:
        reduced.append(f"batch (config: {facts['batch_size']})")
    if r["max_length"] != facts["max_length"]:
        reduced.append(f"length (config: {facts['max_length']:,})")
    size = f"{b}{unit} × {r['max_length']:,}, {r['layers']} of {r['real_layers']} layers"
    return f"{size}; reduced: {', '.join(reduced)}" if reduced else f"{size} (the config)"


def cuda_row(r: dict) -> str:
    gib = lambda v: f"{v / 2**30:.2f}"
    cell = lambda ph: f"{gib(ph['peak'])} / {gib(ph['estimate'])} ({ph['ratio']:.3f})"
    ph = r["phases"]
    name = "/".join(Path(r["config"]).with_suffix("").parts[-2:])
    return (f"| `{name}` | {built(r)} | {cell(ph['forward'])} | {cell(ph['backward'])} | "
            f"{cell(ph['optimizer_step'])} | {gib(r['measured']['peak_allocated'])} / "
            f"{gib(r['estimate_peak_bytes'])} ({r['ratio']['peak_allocated']:.3f}, "
            f"{r['estimate_peak_phase'].replace('_', ' ')}) |")


def cuda_table(paths: list[str]) -> str:
    """Measured / estimated GiB (ratio) per phase and for the step's peak, one row per CUDA probe."""
    return "\n".join([CUDA_HEADER] + [cuda_row(r) for r in _probes(paths, "cuda")])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("probes", nargs="*", help="memory-probe JSONs (default: benchmarks/results/memory_probe_{device}_*.json)")
    a = ap.parse_args(argv)
    paths = a.probes or sorted(glob.glob(str(ROOT / f"benchmarks/results/memory_probe_{a.device}_*.json")))
    print(cuda_table(paths) if a.device == "cuda" else table(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())

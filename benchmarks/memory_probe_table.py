"""The docs' table of CPU memory probes: measured over estimated, per phase of a training step.

    .venv/bin/python benchmarks/memory_probe_table.py [PROBE_JSON ...]

Default input: ``benchmarks/results/memory_probe_cpu_*.json`` (``python -m train memory-probe --device
cpu --out ...``). One markdown row per JSON, ordered by config and batch: autograd's saved tensors
over the estimate's activation terms, each phase's allocator peak over that phase's estimate, and
the step's peak over the estimate's (with the phase the estimate peaks in and the measured GiB).
docs/reproducing.md carries this output; ``tests/test_gpu_hours.py`` checks that it does.
"""

from __future__ import annotations

import glob
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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


def table(paths: list[str]) -> str:
    probes = [json.loads(Path(p).read_text()) for p in paths]
    probes.sort(key=lambda r: (r["config"], r["batch_size"]))
    return "\n".join([HEADER] + [row(r) for r in probes])


def main(argv: list[str] | None = None) -> int:
    paths = (argv if argv is not None else sys.argv[1:]) or sorted(
        glob.glob(str(ROOT / "benchmarks/results/memory_probe_cpu_*.json")))
    print(table(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""GPU-hours of the papers' full training runs, predicted from ``python -m train memory-probe`` JSONs.

    .venv/bin/python -m benchmarks.training.gpu_hours [PROBE_JSON ...] [--out benchmarks/results/gpu_hours.json]

Default input: ``benchmarks/results/memory_probe_cuda_*.json`` (``python -m train memory-probe --device
cuda``; ``make gpu-check`` runs one per paper model family). For each probed config the prediction is

    hours = training rows × rows' prompts × max_length × epochs / tokens per second × real layers / built layers / 3600

with the training rows of the paper's run (``PAPER_RUNS``: dataset sizes as the papers give them), the
config's ``trainer.max_epochs`` and ``trainer.devices`` (GPU-hours = hours × devices), and the probe's
measured tokens/s. It is an upper bound of the training steps alone: the probe fills every position
(a real batch is padded only to its longest row), validation and checkpointing are not counted, and a
probe built with fewer layers than the model (``--layers K``) is scaled by the layer count (its
embedding and head are counted as if they scaled too). The table names the device and date of each
probe; a CPU probe's figure says what that CPU would take, not a GPU.

Timing: a row is provisional unless its probe timed the step until it was stable (``stable`` in the
JSON: ``memory-probe``'s rule, the last 5 step times within 5% of their median after its warm-up
steps). Probes from before that rule (no ``step_times_s``; the committed H100 probes have
``steps: 2``) timed one step after one warm-up step: their rows say so and are provisional.

Memory: the peak is the probe's ``max_memory_allocated`` when it built the config as written (every
layer, the config's batch and length); for a reduced build (``--layers``, ``--batch-size``,
``--max-length``) it is the memory model's estimate of the config as written
(``train.rehearsal.standins.describe_config``) times the probe's measured-over-estimated peak. The
GPU it fits is the smallest of ``GPU_SIZES_GB`` whose N × 10^9 bytes (a card sold as N GB holds at
least that) hold the peak × (1 + ``FRAGMENTATION``) + ``CONTEXT_GIB``: the allocator's caching and
fragmentation and the CUDA context, which ``max_memory_allocated`` does not count (an assumed
margin, not a measured one).
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from pathlib import Path

from benchmarks.results_file import write_result
from train.lightning.memory import GIB

ROOT = Path(__file__).resolve().parents[2]

# Training rows of each paper run, by what the config trains (its model class), with the source.
NER_ROWS = (40_600, "sentences", "RaTE-NER train split, about 40.6k sentences (RaTEScore paper)")
PAPER_RUNS = {
    "IOBTagger": NER_ROWS,
    "SpanTagger": NER_ROWS,
    # ~8,000 MIMIC-CXR references, three GPT-4 reports each, so three pairs a reference (ER2Score paper,
    # RadCliQ system); the whole set counted as training rows: an upper bound
    "ER2RewardModel": (24_000, "pairs", "about 8,000 references x 3 pairs (ER2Score paper, RadCliQ system)"),
    "ClinicalBLEURTRegressor": (17_852, "section pairs", "17,852 section pairs (ClinicalBLEURT paper)"),
}


GPU_SIZES_GB = (24, 40, 48, 80)  # common cards' memory as sold (N GB)
FRAGMENTATION = 0.10  # assumed: the caching allocator's reserve over what is allocated
CONTEXT_GIB = 0.5  # assumed: the CUDA context (train.lightning.memory's "~0.5 GiB")


def timing(probe: dict) -> dict:
    """Steps timed, warm-up steps and whether the step time is stable (older probes: not)."""
    if "step_times_s" in probe:
        return {"timed": int(probe["timed_steps"]), "warmup": int(probe["warmup_steps"]),
                "stable": bool(probe["stable"])}
    # before the stability rule: the first of ``steps`` steps was left out of the mean (one step alone was timed)
    steps = int(probe.get("steps") or 1)
    return {"timed": max(steps - 1, 1), "warmup": 1 if steps > 1 else 0, "stable": False}


def smallest_gpu(peak_bytes: float) -> tuple[float, int | None]:
    """(bytes needed with the margin, the smallest of GPU_SIZES_GB that holds them, or None)."""
    need = peak_bytes * (1 + FRAGMENTATION) + CONTEXT_GIB * GIB
    return need, next((g for g in GPU_SIZES_GB if need <= g * 10**9), None)


def peak_memory(probe: dict, run: dict) -> dict:
    """The peak the config as written holds: measured at full size, else estimated (see the module doc)."""
    measured = (probe.get("measured") or {}).get("peak_allocated")
    if measured is None:
        return {"peak_bytes": None, "basis": "not measured", "need_bytes": None, "fits_gb": None}
    full = (probe["layers"] == probe["real_layers"] and probe["batch_size"] == run["batch_size"]
            and probe["max_length"] == run["max_length"])
    if full:
        peak, basis = measured, "measured"
    else:
        from benchmarks.training.memory_probe_table import current_config
        from train.rehearsal.standins import describe_config

        est = describe_config(current_config(probe["config"]))["memory"]
        peak = est["phases"][est["peak_phase"]] * probe["ratio"]["peak_allocated"]
        basis = "estimated"
    need, fits = smallest_gpu(peak)
    return {"peak_bytes": peak, "basis": basis, "need_bytes": need, "fits_gb": fits}


def paper_run(config: str) -> dict:
    """Epochs, devices, batch and the paper's training rows of a config (a paper overlay read after its base;
    the path a probe recorded is found where it lives now: ``current_config`` of
    :mod:`benchmarks.training.memory_probe_table`)."""
    from benchmarks.training.memory_probe_table import current_config
    from train.lightning.configs import config_chain, init_args, read_configs

    cfg = read_configs(*config_chain(current_config(config)))
    class_name = str((cfg.get("model") or {}).get("class_path", "")).rsplit(".", 1)[-1]
    if class_name not in PAPER_RUNS:
        raise SystemExit(f"gpu_hours: {config}: no paper run is recorded for {class_name or 'its model'} "
                         f"(known: {', '.join(sorted(PAPER_RUNS))})")
    rows, unit, source = PAPER_RUNS[class_name]
    trainer = cfg.get("trainer") or {}
    devices = trainer.get("devices", 1)
    return {"rows": rows, "unit": unit, "source": source, "epochs": int(trainer.get("max_epochs") or 1),
            "devices": devices if isinstance(devices, int) else 1,
            "batch_size": int(init_args(cfg, "data").get("batch_size") or 1),
            "max_length": int(init_args(cfg, "model").get("max_length") or init_args(cfg, "data").get("max_length")
                              or 512)}


def predict(probe: dict) -> dict:
    """One row of the table from one probe JSON."""
    run = paper_run(probe["config"])
    prompts = probe["rows"] // probe["batch_size"]  # 2 for a reward pair, else 1
    tokens = run["rows"] * prompts * probe["max_length"] * run["epochs"]
    layer_scale = probe["real_layers"] / probe["layers"]
    hours = tokens / probe["tokens_per_s"] * layer_scale / 3600
    t = timing(probe)
    return {**{f"{k}_steps" if k != "stable" else k: v for k, v in t.items()}, "provisional": not t["stable"],
            **peak_memory(probe, run), "config": probe["config"], "model": probe["model"], "device": probe["device"],
            "device_name": probe.get("device_name", "not recorded"), "date": probe["date"],
            "probe_batch": probe["batch_size"], "max_length": probe["max_length"], "layers_built": probe["layers"],
            "real_layers": probe["real_layers"], "tokens_per_s": probe["tokens_per_s"], "step_s": probe["step_s"],
            "train_rows": run["rows"], "unit": run["unit"], "source": run["source"], "epochs": run["epochs"],
            "devices": run["devices"], "config_batch": run["batch_size"], "tokens": tokens,
            "hours": hours, "gpu_hours": hours * run["devices"]}


def steps_text(r: dict) -> str:
    plural = lambda n, word: f"{n} {word}{'s' if n != 1 else ''}"
    return (f"{plural(r['timed_steps'], 'step')} after {r['warmup_steps']} warm-up"
            + ("" if r["stable"] else ", provisional"))


def memory_text(r: dict) -> str:
    if r["peak_bytes"] is None:
        return "not measured | —"
    fits = f"{r['fits_gb']} GB" if r["fits_gb"] else f"none of {'/'.join(map(str, GPU_SIZES_GB))} GB"
    peak = f"{r['peak_bytes'] / GIB:.2f}" if r["basis"] == "measured" else f"≈ {r['peak_bytes'] / GIB:.2f} (est.)"
    return f"{peak} | {fits} ({r['need_bytes'] / GIB:.1f} GiB with margin)"


def table(rows: list[dict]) -> str:
    head = ("| config | measured on (date) | probe batch × length | layers built | steps timed | step s | tokens/s "
            "| paper run | predicted hours (upper bound) | GPU-hours | peak GiB | smallest GPU |\n"
            "|---|---|---|---:|---|---:|---:|---|---:|---:|---:|---|")
    body = [f"| `{Path(r['config']).parent.name}/{Path(r['config']).stem}` | {r['device_name']} ({r['date'][:10]}) "
            f"| {r['probe_batch']} × {r['max_length']:,} | {r['layers_built']} of {r['real_layers']} "
            f"| {steps_text(r)} | {r['step_s']:.2f} | {r['tokens_per_s']:,.0f} "
            f"| {r['train_rows']:,} {r['unit']} × {r['epochs']} epoch{'s' if r['epochs'] != 1 else ''} "
            f"| {r['hours']:,.2f}{' (provisional)' if r['provisional'] else ''} | {r['gpu_hours']:,.2f} "
            f"| {memory_text(r)} |" for r in rows]
    return "\n".join([head, *body])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("probes", nargs="*", help="memory-probe JSONs (default: benchmarks/results/memory_probe_cuda_*.json)")
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    a = ap.parse_args(argv)
    paths = a.probes or sorted(glob.glob(str(ROOT / "benchmarks" / "results" / "memory_probe_cuda_*.json")))
    if not paths:
        print("gpu_hours: no memory_probe_cuda_*.json yet: `make gpu-check` writes them on a GPU "
              "(or name CPU probe JSONs to see the arithmetic)", file=sys.stderr)
        return 1
    rows = [predict(json.loads(Path(p).read_text())) for p in paths]
    print(table(rows))
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        write_result(Path(a.out), {"rows": rows, "inputs": [str(p) for p in paths],
                                     "note": __doc__.split("\n\n")[2].replace("\n", " ")}, indent=2)
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

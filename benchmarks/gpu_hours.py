"""GPU-hours of the papers' full training runs, predicted from ``python -m train memory-probe`` JSONs.

    .venv/bin/python benchmarks/gpu_hours.py [PROBE_JSON ...] [--out benchmarks/results/gpu_hours.json]

Default input: ``benchmarks/results/memory_probe_cuda_*.json`` (what ``benchmarks/gpu_session.sh`` writes
on a GPU). For each probed config the prediction is

    hours = training rows × rows' prompts × max_length × epochs / tokens per second × real layers / built layers / 3600

with the training rows of the paper's run (``PAPER_RUNS``: dataset sizes as the papers give them), the
config's ``trainer.max_epochs`` and ``trainer.devices`` (GPU-hours = hours × devices), and the probe's
measured tokens/s. It is an upper bound of the training steps alone: the probe fills every position
(a real batch is padded only to its longest row), validation and checkpointing are not counted, and a
probe built with fewer layers than the model (``--layers K``) is scaled by the layer count (its
embedding and head are counted as if they scaled too). The table names the device and date of each
probe; a CPU probe's figure says what that CPU would take, not a GPU.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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


def paper_run(config: str) -> dict:
    """Epochs, devices, batch and the paper's training rows of a config."""
    from train.lightning.configs import load_config

    cfg = load_config(config)
    class_name = str((cfg.get("model") or {}).get("class_path", "")).rsplit(".", 1)[-1]
    if class_name not in PAPER_RUNS:
        raise SystemExit(f"gpu_hours: {config}: no paper run is recorded for {class_name or 'its model'} "
                         f"(known: {', '.join(sorted(PAPER_RUNS))})")
    rows, unit, source = PAPER_RUNS[class_name]
    trainer = cfg.get("trainer") or {}
    devices = trainer.get("devices", 1)
    return {"rows": rows, "unit": unit, "source": source, "epochs": int(trainer.get("max_epochs") or 1),
            "devices": devices if isinstance(devices, int) else 1,
            "batch_size": int((cfg.get("data") or {}).get("batch_size") or 1)}


def predict(probe: dict) -> dict:
    """One row of the table from one probe JSON."""
    run = paper_run(probe["config"])
    prompts = probe["rows"] // probe["batch_size"]  # 2 for a reward pair, else 1
    tokens = run["rows"] * prompts * probe["max_length"] * run["epochs"]
    layer_scale = probe["real_layers"] / probe["layers"]
    hours = tokens / probe["tokens_per_s"] * layer_scale / 3600
    return {"config": probe["config"], "model": probe["model"], "device": probe["device"],
            "device_name": probe.get("device_name", "not recorded"), "date": probe["date"],
            "probe_batch": probe["batch_size"], "max_length": probe["max_length"], "layers_built": probe["layers"],
            "real_layers": probe["real_layers"], "tokens_per_s": probe["tokens_per_s"], "step_s": probe["step_s"],
            "train_rows": run["rows"], "unit": run["unit"], "source": run["source"], "epochs": run["epochs"],
            "devices": run["devices"], "config_batch": run["batch_size"], "tokens": tokens,
            "hours": hours, "gpu_hours": hours * run["devices"]}


def table(rows: list[dict]) -> str:
    head = ("| config | measured on (date) | probe batch × length | layers built | tokens/s | paper run | "
            "predicted hours (upper bound) | device-hours |\n|---|---|---|---:|---:|---|---:|---:|")
    body = [f"| `{Path(r['config']).parent.name}/{Path(r['config']).stem}` | {r['device_name']} ({r['date'][:10]}) "
            f"| {r['probe_batch']} × {r['max_length']:,} | {r['layers_built']} of {r['real_layers']} "
            f"| {r['tokens_per_s']:,.0f} | {r['train_rows']:,} {r['unit']} × {r['epochs']} epoch{'s' if r['epochs'] != 1 else ''} "
            f"| {r['hours']:,.1f} | {r['gpu_hours']:,.1f} |" for r in rows]
    return "\n".join([head, *body])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("probes", nargs="*", help="memory-probe JSONs (default: benchmarks/results/memory_probe_cuda_*.json)")
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    a = ap.parse_args(argv)
    paths = a.probes or sorted(glob.glob(str(ROOT / "benchmarks" / "results" / "memory_probe_cuda_*.json")))
    if not paths:
        print("gpu_hours: no memory_probe_cuda_*.json yet: benchmarks/gpu_session.sh writes them on a GPU "
              "(or name CPU probe JSONs to see the arithmetic)", file=sys.stderr)
        return 1
    rows = [predict(json.loads(Path(p).read_text())) for p in paths]
    print(table(rows))
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps({"rows": rows, "inputs": [str(p) for p in paths],
                                           "note": __doc__.split("\n\n")[2].replace("\n", " ")}, indent=2) + "\n")
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

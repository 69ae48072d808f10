"""Where a training step of the sample IOB model spends its time on this CPU.

    .venv/bin/python -m benchmarks.training.bench_train_step [--steps 30] [--out benchmarks/results/train_step.json]

The sample IOB configuration (packaged all-MiniLM-L6-v2, batch 16, real length-grouped batches of
the shipped corpus's training split) timed for one optimizer step, split into forward, backward
and optimizer, in four settings: fp32 with torch's default AdamW (multi-tensor) and with the fused
AdamW kernel that :func:`train.lightning.module.adamw_linear_warmup` uses, and bf16 autocast with
each (what ``precision: bf16-mixed`` does on the CPU). Prints the CPU's bf16 flags, a table and
writes JSON: the figures behind ``train/lightning/precision.py`` (bf16 on a CPU without native bf16) and
the fused optimizer. Timings depend on the machine and its load; run it on a quiet one.
"""

from __future__ import annotations

import argparse
import contextlib
import platform
import time
from pathlib import Path

import torch

from benchmarks.results_file import write_result
from radscore.environment import cpu_has_native_bf16
from train.ner.data import NERDataModule
from train.ner.modules import IOBTagger

ROOT = Path(__file__).resolve().parents[2]


def batches(n: int) -> list[dict]:
    dm = NERDataModule(batch_size=16)
    dm.setup("fit")
    out = []
    for batch in dm.train_dataloader():
        out.append(batch)
        if len(out) == n:
            return out
    return out


def time_steps(model, data, fused: bool, bf16: bool, warmup: int = 3) -> dict:
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=2e-4, fused=fused or None)
    cast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    parts = {"forward": 0.0, "backward": 0.0, "optimizer": 0.0}
    for k, batch in enumerate(data[:warmup] + data):
        t0 = time.perf_counter()
        with cast:
            loss = model.compute_loss(batch)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        opt.zero_grad()
        t3 = time.perf_counter()
        if k >= warmup:
            for name, dt in zip(parts, (t1 - t0, t2 - t1, t3 - t2)):
                parts[name] += dt
    per_step = {name: round(v / len(data), 4) for name, v in parts.items()}
    per_step["step"] = round(sum(per_step.values()), 4)
    return per_step


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/train_step.json"))
    args = ap.parse_args(argv)
    data = batches(args.steps)
    tokens = sum(int(b["input_ids"].numel()) for b in data) / len(data)
    report = {"cpu": platform.processor() or platform.machine(), "threads": torch.get_num_threads(),
              "native_bf16": cpu_has_native_bf16(), "torch": torch.__version__,
              "batch": 16, "padded_tokens_per_batch": round(tokens, 1), "steps": len(data), "settings": {}}
    print(f"CPU native bf16: {report['native_bf16']}; {torch.get_num_threads()} threads; "
          f"{len(data)} batches of 16, {tokens:.0f} padded tokens each")
    print(f"{'setting':<26}{'step s':>9}{'forward':>9}{'backward':>9}{'optimizer':>10}")
    for name, fused, bf16 in [("fp32, AdamW default", False, False), ("fp32, AdamW fused", True, False),
                              ("bf16 autocast, default", False, True), ("bf16 autocast, fused", True, True)]:
        torch.manual_seed(0)
        model = IOBTagger(lr=2e-4)
        model.train()
        r = time_steps(model, data, fused, bf16)
        report["settings"][name] = r
        print(f"{name:<26}{r['step']:>9.3f}{r['forward']:>9.3f}{r['backward']:>9.3f}{r['optimizer']:>10.3f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_result(Path(args.out), report, precision="fp32 and bf16 autocast", seed=0, indent=2)
    print(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    main()

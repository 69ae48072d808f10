"""What bf16 autocast costs RaTEScore on a device, with and without autocast's cache of cast weights.

    .venv/bin/python -m benchmarks.scoring.bench_autocast [--device cpu|cuda] [--ner checkpoints/ner/iob_sample/export]
        [--encoder DIR] [--pairs 100] [--repeats 3] [--batch-size B] [--out benchmarks/results/autocast_<class>.json]

Three settings of one scorer on the same sample report pairs (``report_pairs.sample_pairs``):
``fp32``; ``bf16``, radscore's ``precision="bf16"`` as it is (autocast, its forward passes under
``torch.no_grad`` so that each weight is cast once per pass: :func:`radscore.device.no_grad_for`);
and ``bf16, inference_mode``, the same under ``torch.inference_mode``, where autocast caches nothing
and every forward pass casts every weight again (radscore's earlier behaviour). Each setting is scored
once untimed (recorded as ``cold_seconds``), then ``--repeats`` times in turn with the others; the
best time counts (warm: ``benchmarks/scoring/bench_ratescore.py``'s variants report the same, warm against
warm, beside their first pass). Also: the
casts (``aten::_to_copy``) of a NER pass over one batch and over six, under each bf16 setting (with
the cache a further batch casts only its activations), and max |Δscore| between the two bf16
settings (a cached cast is the same cast: 0 expected) and between bf16 and fp32.

The question it answers: bf16 autocast was measured *slower* than fp32 on an H200 (240 against 854
pairs/s). On this repository's 2-core AVX512-BF16 CPU the cache changed nothing measurable (0.94x and
1.06x in two runs; ``benchmarks/results/autocast_avx512-bf16.json``); whether the re-cast weights were
the GPU's slowdown needs ``--device cuda`` on a GPU. A table goes to stdout, the figures to JSON.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from benchmarks.results_file import write_result
from benchmarks.scoring.hardware import ROOT, cpu_class, device_facts, result_path
from benchmarks.scoring.report_pairs import sample_pairs

SETTINGS = ("fp32", "bf16", "bf16, inference_mode")
SENTENCES = ["Small left pleural effusion.", "No pneumothorax.", "Mild atelectasis at the bases.",
             "Heart size is normal.", "Lungs are clear.", "Stable right hilar opacity."]


def _inference_mode(device):
    return torch.inference_mode()


class Contexts:
    """Switch the context radscore's NER and encoder passes run in (module attribute ``no_grad_for``)."""

    def __init__(self):
        import radscore.encoder
        import radscore.ner

        self.modules = (radscore.ner, radscore.encoder)
        self.original = radscore.ner.no_grad_for

    def use(self, setting: str) -> None:
        fn = _inference_mode if setting == "bf16, inference_mode" else self.original
        for module in self.modules:
            module.no_grad_for = fn


def casts_per_pass(scorer, n_sentences: int) -> int:
    """``aten::_to_copy`` calls of one NER pass over ``n_sentences`` sentences, one batch each."""
    from torch.profiler import ProfilerActivity, profile

    batch_size, scorer.ner.batch_size = scorer.ner.batch_size, 1
    try:
        with profile(activities=[ProfilerActivity.CPU]) as prof, scorer._autocast():
            scorer.ner(SENTENCES[:n_sentences])
    finally:
        scorer.ner.batch_size = batch_size
    return sum(e.count for e in prof.key_averages() if e.key == "aten::_to_copy")


def measure(args) -> dict:
    from radscore import RaTEScore
    from radscore.models import PACKAGED_MINILM, resolve_model_path

    encoder = str(Path(args.encoder).resolve()) if args.encoder else resolve_model_path(PACKAGED_MINILM)
    cands, refs = sample_pairs(args.pairs)
    scorers = {p: RaTEScore(args.ner, encoder, "long", device=args.device, batch_size=args.batch_size, precision=p)
               for p in ("fp32", "bf16")}
    contexts = Contexts()
    seconds = {s: [] for s in SETTINGS}
    cold = {}
    scores = {}
    for rep in range(args.repeats + 1):  # the first round is the untimed warm-up
        for setting in SETTINGS:
            contexts.use(setting)
            scorer = scorers[setting.split(",")[0]]
            t0 = time.perf_counter()
            scores[setting] = scorer.compute_score(cands, refs)  # floats: the device has finished
            if rep:
                seconds[setting].append(time.perf_counter() - t0)
            else:
                cold[setting] = time.perf_counter() - t0
            print(f"round {rep}{' (warm-up)' if not rep else ''}: {setting}: {time.perf_counter() - t0:.2f} s",
                  flush=True)
    casts = {}
    for setting in SETTINGS[1:]:
        contexts.use(setting)
        casts[setting] = {"one_batch": casts_per_pass(scorers["bf16"], 1), "six_batches": casts_per_pass(scorers["bf16"], 6)}
    contexts.use("bf16")

    def delta(a, b):
        return max(abs(x - y) for x, y in zip(scores[a], scores[b]))

    best = {s: min(v) for s, v in seconds.items()}
    return {**device_facts(args.device), **cpu_class(), "ner": str(args.ner), "encoder": args.encoder or PACKAGED_MINILM,
            "pairs": len(cands), "batch_size": scorers["fp32"].ner.batch_size, "repeats": args.repeats,
            "seconds": seconds, "pairs_per_s": {s: len(cands) / t for s, t in best.items()},
            # the untimed round, for comparison with bench_ratescore's cold figures (fp32 pays the process's
            # first-call costs here, as it runs first)
            "cold_seconds": cold,
            "bf16_over_fp32_speed": best["fp32"] / best["bf16"],
            "cache_speedup": best["bf16, inference_mode"] / best["bf16"],
            "casts_per_ner_pass": casts,
            "max_abs_delta_bf16_cached_vs_uncached": delta("bf16", "bf16, inference_mode"),
            "max_abs_delta_bf16_vs_fp32": delta("bf16", "fp32")}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--ner", default=str(ROOT / "checkpoints" / "ner" / "iob_sample" / "export"))
    p.add_argument("--encoder", default=None, help="default: the packaged all-MiniLM-L6-v2")
    p.add_argument("--pairs", type=int, default=100)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=None, help="default: the device's (64 CPU, 256 CUDA)")
    p.add_argument("--out", default=None, help="default: benchmarks/results/autocast_<CPU hardware class or cuda_GPU>.json")
    args = p.parse_args(argv)
    if args.repeats < 1 or args.pairs < 1:
        p.error("--repeats and --pairs must be at least 1")
    if not Path(args.ner).is_dir():
        sys.exit(f"{args.ner}: no NER export there; train one with `make train-ner` or pass --ner")
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("bench_autocast: --device cuda, but torch sees no CUDA device")
    result = measure(args)
    out = Path(args.out) if args.out else result_path(result, "autocast")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_result(out, result, precision="fp32 and bf16 autocast", indent=1)
    print(f"\n{result['device_name']}: {result['pairs']} sample pairs, batch size {result['batch_size']}, "
          f"best of {result['repeats']}")
    for s in SETTINGS:
        c = result["casts_per_ner_pass"].get(s)
        extra = f"; casts of a NER pass: 1 batch {c['one_batch']}, 6 batches {c['six_batches']}" if c else ""
        print(f"{s:<22} {result['pairs_per_s'][s]:>8.1f} pairs/s{extra}")
    print(f"bf16 / fp32 speed {result['bf16_over_fp32_speed']:.2f}x; the cache's speed-up "
          f"{result['cache_speedup']:.2f}x; max |Δ| bf16 cached vs uncached "
          f"{result['max_abs_delta_bf16_cached_vs_uncached']:.1e}, bf16 vs fp32 {result['max_abs_delta_bf16_vs_fp32']:.1e}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

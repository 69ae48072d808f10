"""Where radscore's RaTEScore time goes, stage by stage, on the RaTEScore benchmark's workloads.

    .venv/bin/python -m benchmarks.scoring.profile_ratescore [--ner checkpoints/ner/iob_sample/export] [--encoder DIR]
        [--workloads sample distinct long] [--pairs 400 300 80] [--no-ops] [--emulate-isa avx2]
        [--out benchmarks/results/ratescore_profile_<hardware class>.json]

The workloads, models and defaults are ``benchmarks/scoring/bench_ratescore.py``'s (the same sentences,
the trained sample NER export, the packaged MiniLM encoder, the long matrix, fp32, the ``rush``
splitter, batch size 64). Each workload is scored by a fresh scorer whose stages are timed in
place (exclusive time: a stage's clock stops while a stage it calls runs, so the rows add up to
the total):

- ``split``: the sentence splitter and the cleaning of its sentences;
- ``NER tokenize``, ``NER forward``, ``NER rest`` (windows, batching, padding, arg-max, label
  names), ``NER spell entities`` (pieces back to entity text);
- ``encoder tokenize``, ``encoder forward``, ``encoder rest`` (de-duplication, padding, pooling);
- ``pair scoring`` (cosines, the matrix and the penalty, F1) and ``bookkeeping`` (the rest:
  de-duplicating sentences, chunking, building the results).

Beside them: the FLOPs the two models' forward passes computed with the padding they ran at,
the FLOPs without padding (the benchmark's fp32 floor counts these), the GEMM throughput measured
in the same run, and so how far each forward pass is from its own matrix-product floor. With ops
(the default) a second, untimed-for-the-table pass runs under ``torch.profiler`` and splits the
forward passes' CPU time into matrix products (``addmm``/``mm``/``bmm``/``baddbmm`` and SDPA's
kernels) and the rest (GELU, softmax, layer norm, adds, copies), which the floor does not count.

``--profile-trace`` (with ``--device cpu|cuda``) does something else: for each workload it scores the
pairs once untimed (the warm-up: the first call's one-off costs; ``--trace-cold``: no warm-up, the
first pass is traced), then once under ``torch.profiler``
(CPU activity, and CUDA activity on ``--device cuda``), and writes a JSON summary
(:func:`trace_summary`): the top operators by self CPU time and, on CUDA, by self CUDA time, the
wall time of the traced pass, and on CUDA the device's kernel timeline within it: the share of the
pass in which some kernel ran (GPU busy), the time between kernels (the device idle, waiting for
the host), and the longest such gaps. Default output ``benchmarks/results/ratescore_trace_<class or
cuda_GPU>.json``.

``--emulate-isa avx2`` runs the whole profile with torch, oneDNN and MKL capped at AVX2 (see the
benchmark's option of the same name): the CI class's instruction set on this machine's cores.
The JSON goes to ``benchmarks/results/ratescore_profile_<class>.json``; a table goes to stdout.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

from benchmarks.results_file import write_result
from benchmarks.scoring.compute_floor import add_gemm_rows_option, bert_flops, sample_gemm
from benchmarks.scoring.hardware import (ISA_ENVIRONMENT, ROOT, check_capability, cpu_class, device_facts,
                                         emulate_in_result, isa_is_applied, rerun_capped, result_path,
                                         torch_cpu_capability)
from benchmarks.scoring.report_pairs import make_workloads

STAGES = ("split", "NER tokenize", "NER forward", "NER rest", "NER spell entities", "encoder tokenize",
          "encoder forward", "encoder rest", "pair scoring", "bookkeeping")
MATMUL_OPS = ("aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm", "aten::_addmm_activation",
              "aten::_scaled_dot_product_flash_attention_for_cpu", "aten::_scaled_dot_product_attention_math")


class StageClock:
    """Exclusive wall time per stage: entering a stage stops the clock of the stage that called it."""

    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[str] = []
        self._since = 0.0

    def enter(self, stage: str) -> None:
        now = time.perf_counter()
        if self._stack:
            self.seconds[self._stack[-1]] += now - self._since
        self._stack.append(stage)
        self.calls[stage] += 1
        self._since = now

    def leave(self) -> None:
        now = time.perf_counter()
        self.seconds[self._stack.pop()] += now - self._since
        self._since = now

    def wrap(self, stage: str, fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            self.enter(stage)
            try:
                return fn(*args, **kwargs)
            finally:
                self.leave()

        return timed


class _Timed:
    """Stands in for an object whose ``__call__`` (and named methods) are timed; the rest passes through."""

    def __init__(self, obj, clock: StageClock, call_stage: str, methods: dict[str, str] | None = None):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_call", clock.wrap(call_stage, obj.__call__))
        for name, stage in (methods or {}).items():
            object.__setattr__(self, name, clock.wrap(stage, getattr(obj, name)))

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._obj, name)


def _count_forward(model, record: dict, n_labels: int):
    """Wrap ``model.forward`` so that each call adds its padded and unpadded FLOPs to ``record``."""
    forward = model.forward

    @functools.wraps(forward)
    def counted(*args, input_ids=None, attention_mask=None, **kwargs):
        b, t = input_ids.shape
        lengths = attention_mask.sum(1).tolist()
        record["padded_flops"] += bert_flops(model.config, [t] * b, n_labels)
        record["unpadded_flops"] += bert_flops(model.config, lengths, n_labels)
        record["padded_pieces"] += b * t
        record["pieces"] += int(sum(lengths))
        record["batches"] += 1
        return forward(*args, input_ids=input_ids, attention_mask=attention_mask, **kwargs)

    model.forward = counted


def instrument(scorer, clock: StageClock) -> dict:
    """Time ``scorer``'s stages with ``clock`` (in place); returns the forward passes' FLOP records."""
    flops = {side: defaultdict(float) for side in ("NER", "encoder")}
    ner, enc = scorer.ner, scorer.encoder
    _count_forward(ner.model, flops["NER"], len(ner.model.config.id2label))
    _count_forward(enc.model, flops["encoder"], 0)
    ner.model.forward = clock.wrap("NER forward", ner.model.forward)
    enc.model.forward = clock.wrap("encoder forward", enc.model.forward)
    ner.tokenizer = _Timed(ner.tokenizer, clock, "NER tokenize",
                           {"convert_ids_to_tokens": "NER spell entities",
                            "convert_tokens_to_string": "NER spell entities"})
    enc.tokenizer = _Timed(enc.tokenizer, clock, "encoder tokenize")
    scorer.ner = _Timed(ner, clock, "NER rest")
    scorer.encoder = _Timed(enc, clock, "encoder rest")
    scorer.sentences = clock.wrap("split", scorer.sentences)
    scorer._score_pair = clock.wrap("pair scoring", scorer._score_pair)
    return flops


def op_split(scorer, cands: list[str], refs: list[str]) -> dict:
    """Self CPU seconds of the models' operators over one scoring pass, matrix products apart."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        scorer.compute_score(cands, refs)
    ops = {e.key: e.self_cpu_time_total / 1e6 for e in prof.key_averages()}
    matmul = sum(v for k, v in ops.items() if k in MATMUL_OPS)
    other = {k: v for k, v in ops.items() if k.startswith("aten::") and k not in MATMUL_OPS}
    top = dict(sorted(other.items(), key=lambda kv: -kv[1])[:8])
    return {"matmul_seconds": matmul, "other_aten_seconds": sum(other.values()), "top_other_aten_ops": top,
            "note": "self CPU time under torch.profiler (its own overhead included), a separate pass"}


def profile_workload(name: str, cands: list[str], refs: list[str], args, encoder: str, peak: float) -> dict:
    from radscore import RaTEScore

    clock = StageClock()
    scorer = RaTEScore(args.ner, encoder, "long", splitter="rush", device="cpu")
    flops = instrument(scorer, clock)
    print(f"[{name}] {len(cands)} pairs ...", flush=True)
    clock.enter("bookkeeping")
    t0 = time.perf_counter()
    scorer.compute_score(cands, refs)
    total = time.perf_counter() - t0
    clock.leave()
    stages = {s: clock.seconds.get(s, 0.0) for s in STAGES}
    unpadded = flops["NER"]["unpadded_flops"] + flops["encoder"]["unpadded_flops"]
    forward = {}
    for side in ("NER", "encoder"):
        f, secs = flops[side], stages[f"{side} forward"]
        forward[side] = {**{k: f[k] for k in ("batches", "pieces", "padded_pieces")},
                         "padded_gflop": f["padded_flops"] / 1e9, "unpadded_gflop": f["unpadded_flops"] / 1e9,
                         "padding_factor": f["padded_flops"] / max(1.0, f["unpadded_flops"]),
                         "seconds": secs, "achieved_gflop_per_s": f["padded_flops"] / 1e9 / max(secs, 1e-9),
                         "distance_to_padded_floor": secs / (f["padded_flops"] / peak) if f["padded_flops"] else None}
    out = {"pairs": len(cands), "seconds": total, "pairs_per_s": len(cands) / total,
           "stages": {s: {"seconds": stages[s], "share": stages[s] / total, "calls": clock.calls.get(s, 0)}
                      for s in STAGES},
           "stages_sum_seconds": sum(stages.values()), "forward": forward,
           "necessary_gflop": unpadded / 1e9, "fp32_floor_seconds": unpadded / peak,
           "distance_to_floor": total / (unpadded / peak)}
    if args.ops:
        print(f"[{name}] operator split (torch.profiler pass) ...", flush=True)
        fresh = RaTEScore(args.ner, encoder, "long", splitter="rush", device="cpu")
        out["operators"] = op_split(fresh, cands, refs)
    return out


def busy_and_gaps(intervals: list[tuple[float, float]], start: float, end: float, top: int = 5) -> dict:
    """The device timeline of ``intervals`` (kernel ``(start, end)`` times, any order, possibly
    overlapping, e.g. on two streams) within the window ``[start, end]``: the time some kernel
    ran (their union), the rest as idle, the gaps between consecutive busy stretches (and before
    the first and after the last) and the ``top`` longest of them. Times in the units given."""
    if end <= start:
        raise ValueError(f"an empty window: start {start}, end {end}")
    merged: list[list[float]] = []
    for a, b in sorted((max(a, start), min(b, end)) for a, b in intervals):
        if b <= a:
            continue
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    busy = sum(b - a for a, b in merged)
    edges = [start] + [x for ab in merged for x in ab] + [end]
    gaps = [edges[k + 1] - edges[k] for k in range(0, len(edges), 2) if edges[k + 1] > edges[k]]
    return {"window": end - start, "busy": busy, "busy_share": busy / (end - start), "idle": (end - start) - busy,
            "kernel_stretches": len(merged), "gaps": len(gaps), "longest_gaps": sorted(gaps, reverse=True)[:top]}


def trace_summary(scorer, cands: list[str], refs: list[str], top: int = 15, warmup: bool = True) -> dict:
    """One scoring pass of ``scorer`` under ``torch.profiler``, after an untimed warm-up pass (none
    with ``warmup=False``: the process's first pass, its one-off costs included): the
    ``top`` operators by self CPU time (and by self CUDA time when the scorer is on CUDA) and, on
    CUDA, the kernel timeline within the pass (:func:`busy_and_gaps`: GPU busy share, host-bound
    idle time between kernels). The profiler's own overhead is in the wall time."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    device = scorer.ner.device
    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    warmup_seconds = None
    if warmup:
        t0 = time.perf_counter()
        scorer.compute_score(cands, refs)  # the warm-up pass, untimed in the summary's figures
        warmup_seconds = time.perf_counter() - t0
    with profile(activities=activities) as prof:
        t0 = time.perf_counter()
        scorer.compute_score(cands, refs)  # floats back on the host: the device has finished
        wall = time.perf_counter() - t0
    averages = prof.key_averages()

    def rows(key):
        ranked = sorted((e for e in averages if key(e) > 0), key=lambda e: -key(e))[:top]
        return [{"op": e.key, "self_ms": key(e) / 1e3, "calls": e.count} for e in ranked]

    out = {"device": str(device), "pairs": len(cands), "warmup_seconds": warmup_seconds, "traced_seconds": wall,
           "self_cpu_ms_total": sum(e.self_cpu_time_total for e in averages) / 1e3,
           "top_self_cpu": rows(lambda e: e.self_cpu_time_total),
           "note": "self times in ms under torch.profiler (its overhead included); one pass, "
                   + ("after a warm-up pass" if warmup else "the process's first (cold)")}
    if cuda:
        device_time = lambda e: getattr(e, "self_device_time_total", 0) or 0  # noqa: E731
        out["top_self_cuda"] = rows(device_time)
        events = prof.events()
        kernels = [(e.time_range.start, e.time_range.end) for e in events if e.device_type == DeviceType.CUDA]
        host = [e for e in events if e.device_type == DeviceType.CPU]
        start = min(e.time_range.start for e in host)
        end = max([e.time_range.end for e in host] + [b for _, b in kernels])
        line = busy_and_gaps(kernels, start, end)
        out["gpu_timeline_ms"] = {k: (v / 1e3 if k in ("window", "busy", "idle") else
                                      [g / 1e3 for g in v] if k == "longest_gaps" else v) for k, v in line.items()}
        out["gpu_busy_share"] = line["busy_share"]
        out["host_idle_between_kernels_ms"] = line["idle"] / 1e3
        out["kernels"] = len(kernels)
        torch.cuda.synchronize(device)
    return out


def trace_main(args, workloads: dict, encoder: str) -> dict:
    """``--profile-trace``: :func:`trace_summary` of each workload on ``args.device``."""
    from radscore import RaTEScore

    result = {"ner": args.ner, "encoder": args.encoder or "packaged:all-MiniLM-L6-v2", **device_facts(args.device),
              **cpu_class(), "workloads": {}}
    for name, (cands, refs) in workloads.items():
        scorer = RaTEScore(args.ner, encoder, "long", splitter="rush", device=args.device,
                           batch_size=args.batch_size, precision=args.precision)
        what = "the first pass" if args.trace_cold else "a warm-up pass, then one"
        print(f"[{name}] {len(cands)} pairs: {what} under torch.profiler ...", flush=True)
        result["workloads"][name] = {**trace_summary(scorer, cands, refs, args.top, warmup=not args.trace_cold),
                                     "batch_size": scorer.ner.batch_size, "precision": args.precision}
    return result


def print_trace(result: dict) -> None:
    for name, w in result["workloads"].items():
        busy = (f", GPU busy {w['gpu_busy_share']:.1%}, idle between kernels {w['host_idle_between_kernels_ms']:.0f} ms"
                if "gpu_busy_share" in w else "")
        warm = f"warm-up {w['warmup_seconds']:.2f} s" if w["warmup_seconds"] is not None else "cold: no warm-up"
        print(f"\n== {name}: {w['pairs']} pairs on {w['device']}, traced pass {w['traced_seconds']:.2f} s "
              f"({warm}){busy}")
        for key in ("top_self_cpu", "top_self_cuda"):
            if key in w:
                print(f"{key}: " + ", ".join(f"{r['op']} {r['self_ms']:.1f} ms" for r in w[key][:6]))


def print_table(result: dict) -> None:
    print(f"\nhardware class {result['hardware_class']}, ATen {result['cpu_capability']}, "
          f"GEMM {result['gemm_flops_per_s_for_floor'] / 1e9:.0f} GFLOP/s (best of the run)")
    if "isa_emulation" in result:
        print(f"EMULATION: {result['isa_emulation']['note']}")
    for name, w in result["workloads"].items():
        print(f"\n== {name}: {w['pairs']} pairs, {w['seconds']:.2f} s ({w['pairs_per_s']:.1f} pairs/s), "
              f"floor {w['fp32_floor_seconds']:.2f} s: {w['distance_to_floor']:.2f}x it")
        print(f"{'stage':<22} {'seconds':>8} {'share':>6} {'calls':>7}")
        for s, r in w["stages"].items():
            print(f"{s:<22} {r['seconds']:>8.2f} {r['share']:>6.1%} {r['calls']:>7}")
        for side, f in w["forward"].items():
            if f["padded_gflop"]:
                print(f"{side} forward: {f['batches']} batches, padding {f['padding_factor']:.2f}x the unpadded "
                      f"FLOPs, {f['achieved_gflop_per_s']:.0f} GFLOP/s on the padded work "
                      f"({f['distance_to_padded_floor']:.2f}x its own floor)")
        if "operators" in w:
            o = w["operators"]
            tops = ", ".join(f"{k.removeprefix('aten::')} {v:.2f}" for k, v in list(o["top_other_aten_ops"].items())[:5])
            print(f"operators: matrix products {o['matmul_seconds']:.2f} s, other aten {o['other_aten_seconds']:.2f} s "
                  f"({tops})")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ner", default=str(ROOT / "checkpoints" / "ner" / "iob_sample" / "export"))
    p.add_argument("--encoder", default=None, help="default: the packaged all-MiniLM-L6-v2")
    p.add_argument("--workloads", nargs="+", default=["sample", "distinct", "long"])
    p.add_argument("--pairs", type=int, nargs="+", default=[400, 300, 80], help="pairs per workload, in order")
    p.add_argument("--no-ops", dest="ops", action="store_false", help="skip the torch.profiler operator pass")
    add_gemm_rows_option(p)
    p.add_argument("--emulate-isa", choices=sorted(ISA_ENVIRONMENT), default=None,
                   help="cap torch, oneDNN and MKL at this instruction set (see hardware.py)")
    p.add_argument("--profile-trace", action="store_true",
                   help="instead of the stage table: per workload, one pass under torch.profiler after a warm-up "
                        "pass on --device, summarised (top ops by self CPU / CUDA time, GPU busy share)")
    p.add_argument("--trace-cold", action="store_true",
                   help="--profile-trace: trace each workload's first pass (no warm-up): where the one-off costs go")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="--profile-trace only (default cpu)")
    p.add_argument("--batch-size", type=int, default=None, help="--profile-trace only (default: the device's)")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32", help="--profile-trace only")
    p.add_argument("--top", type=int, default=15, help="--profile-trace: operators listed per ranking")
    p.add_argument("--out", default=None,
                   help="default: benchmarks/results/ratescore_profile_<hardware class>.json")
    args = p.parse_args(argv)
    if len(args.pairs) != len(args.workloads):
        p.error("give one --pairs value per workload")
    if not Path(args.ner).is_dir():
        sys.exit(f"{args.ner}: no NER export there; train one with `make train-ner` or pass --ner")
    if args.emulate_isa and not isa_is_applied(args.emulate_isa):
        sys.exit(rerun_capped(args.emulate_isa, __spec__.name, sys.argv[1:] if argv is None else list(argv)))
    from radscore.models import PACKAGED_MINILM, resolve_model_path

    encoder = str(Path(args.encoder).resolve()) if args.encoder else resolve_model_path(PACKAGED_MINILM)
    if not args.profile_trace and (args.device != "cpu" or args.batch_size or args.precision != "fp32"
                                   or args.trace_cold):
        p.error("--device, --batch-size and --precision are for --profile-trace (the stage profile is fp32 on the CPU)")
    if args.profile_trace and args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            sys.exit("profile_ratescore: --device cuda, but torch sees no CUDA device")
    print("building workloads ...", flush=True)
    workloads = make_workloads(args.workloads, args.pairs)
    if args.profile_trace:
        result = trace_main(args, workloads, encoder)
        if args.device == "cuda":
            out = Path(args.out) if args.out else result_path(result, "ratescore_trace")
        else:
            out = Path(args.out or ROOT / "benchmarks" / "results" / f"ratescore_trace_{result['hardware_class']}.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        write_result(out, result, precision=args.precision, indent=1)
        print_trace(result)
        print(f"wrote {out}")
        return
    result = {"ner": args.ner, "encoder": args.encoder or PACKAGED_MINILM, "cpu_count": os.cpu_count(),
              **cpu_class(), "cpu_capability": torch_cpu_capability(), "gemm_measurements": [], "workloads": {}}
    if args.emulate_isa:
        emulate_in_result(result, args.emulate_isa)
    sample_gemm(result["gemm_measurements"], isa=args.emulate_isa, rows=args.gemm_rows)
    for name, (cands, refs) in workloads.items():
        peak = max(g["flops_per_s"] for g in result["gemm_measurements"])  # replaced below by the run's best
        result["workloads"][name] = profile_workload(name, cands, refs, args, encoder, peak)
        sample_gemm(result["gemm_measurements"], isa=args.emulate_isa, rows=args.gemm_rows)
    # as in the benchmark, the floor divides by the best throughput measured in the run
    best = max(g["flops_per_s"] for g in result["gemm_measurements"])
    result["gemm_flops_per_s_for_floor"] = best
    for w in result["workloads"].values():
        w["fp32_floor_seconds"] = w["necessary_gflop"] * 1e9 / best
        w["distance_to_floor"] = w["seconds"] / w["fp32_floor_seconds"]
        for f in w["forward"].values():
            f["distance_to_padded_floor"] = (f["seconds"] / (f["padded_gflop"] * 1e9 / best)
                                             if f["padded_gflop"] else None)
    check_capability(result, args.emulate_isa, "the profile")
    out = Path(args.out or ROOT / "benchmarks" / "results" / f"ratescore_profile_{result['hardware_class']}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_result(out, result, precision="fp32", indent=1)
    print_table(result)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

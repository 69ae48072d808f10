"""Benchmark ``radscore.RaTEScore`` against the released ``ratescore`` 0.6.0 package on three workloads.

    .venv/bin/python -m benchmarks.scoring.bench_ratescore [--device cpu|cuda] [--ner checkpoints/ner/iob_sample/export]
        [--workloads sample distinct long] [--pairs 400 300 80] [--released-batch-sizes 8 32]
        [--no-released] [--batch-size B] [--radscore-batch-sizes 64 256 512]
        [--released-bs1-pairs 50] [--variants openvino-fp32 openvino-bf16 torch-bf16]
        [--big 20000] [--big-ner EXPORT] [--big-encoder MODEL] [--emulate-isa avx2] [--gemm-rows 4096]
        [--out benchmarks/results/ratescore.json]

Both scorers get the same NER export, the same encoder (the packaged all-MiniLM-L6-v2, or
``--encoder``) and the "long" matrix. Workloads (each pair: candidate, reference):

- ``sample``: two different sample reports of the same anatomy (findings, a line break, the
  impression). Repetitive: the 237 reports hold few distinct sentences, and radscore tags each
  distinct sentence of a call once, while the released package tags every occurrence.
- ``distinct``: reports of 4-9 sentences drawn without replacement from a pool of distinct
  sentences (every sentence of the sample reports and of freshly generated SYNTHETIC edited
  reports, split by the default splitter): no sentence occurs twice in the workload.
- ``long``: multi-section reports (INDICATION / TECHNIQUE / COMPARISON lines, a FINDINGS section
  of 12-20 lines, a numbered IMPRESSION of 2-4 items, line breaks), their sentences drawn without
  replacement from what the ``distinct`` workload left of the pool.

For each workload: the released package at each ``--released-batch-sizes`` (and at its default
``batch_size=1`` on the first ``--released-bs1-pairs`` sample pairs), each in a fresh process in
its own venv (``.venv-ratescore``, made on first use), timed from after model loading to the
scores; radscore with its defaults (``splitter="rush"``, fp32, torch) in a fresh process, timed
the same way, splitting included; then the opt-in approximate ``--variants``. Reported per
workload: pairs/s of each run, radscore's ratio to the released package at its best batch size,
max |Δscore| against it over aligned pairs that are not tie-ambiguous (those are counted, with
their own max |Δ|; see ``tests/radscore/test_parity.py``), how many texts radscore splits into
the released sentence lists, the sentence repetition factor (sentences in the pairs / distinct
sentences), and the fp32 compute floor: the FLOPs an exact implementation cannot avoid (every
distinct sentence through the NER model once and every distinct entity text through the encoder
once, no padding; the BERT layer's matrix products and attention, see :func:`bert_flops`) divided
by the fp32 matrix-multiply throughput measured in the same run (:func:`gemm_throughput`), with
radscore's time as a multiple of it. Each timed run also sits between GEMM samples of its own
(:func:`around_gemm`), which give each run's floor at the throughput the host had then, the ratio at
equal throughput (:func:`local_floors`). Radscore's default and each variant time their first pass
(cold) and then ``--warm-passes`` more passes over the same pairs in the same process (warm: the
first call's one-off costs gone; best and median; ``second_pass_seconds`` is the first of them).
Variants report their ratio against the fp32 default warm against warm (``ratio_vs_radscore_fp32``,
the steady state, what ``benchmarks/scoring/bench_autocast.py`` measures too) and cold against cold
(``..._cold``; see :func:`_timed_passes` for why the two differed by 6x for bf16 on an H100), and
their |Δscore| against the fp32 default; OpenVINO bf16 runs only on a CPU that OpenVINO reports bfloat16 support for (else
it would run f32 and say nothing about bf16), and the JSON says it was skipped and why. A last
run scores ``--big`` pairs, sampling RSS after every chunk, to show that memory stays flat
(tiny random models by default: the same streaming code in minutes).

``--device cuda`` runs both packages on the same GPU (the released one through its own ``use_gpu``
switch, i.e. ``cuda:0``; radscore with ``device="cuda"`` and the device's default batch size, 256),
each after a short untimed warm-up call; the JSON records the GPU's name, the released package's
device, radscore's peak GPU memory, and ``torch-bf16`` (autocast) against fp32 on that GPU; the
OpenVINO variants run on the CPU only and are skipped with that reason. ``--radscore-batch-sizes``
adds radscore runs at other batch sizes on the first workload (how the device default was chosen).
The fp32 floor then divides by the GPU's fp32 matrix-multiply throughput (TF32 off, torch's default).
``--no-released`` scores with radscore only (where the released package's venv cannot be made, e.g.
on a machine without PyPI); the JSON says so and leaves the ratios and |Δ| empty.

``--emulate-isa avx2`` stands in for the AVX2-only class on a newer CPU: the whole run (the released
package's processes included) is re-executed with ATen, oneDNN and MKL capped at AVX2, each run's
process reports the instruction set ATen used (checked), the OpenVINO variants are skipped (the cap
does not reach them), and the result is written as the ``avx2-emulated`` class with a note: the
instruction set is the class's, the cores, caches and clock are this machine's.

Results go to a JSON file and a table on stdout. This file holds the runs and the benchmark; beside it,
``report_pairs.py`` makes the workloads, ``released_package.py`` runs the released package in its venv
(the parity tests use both), ``compute_floor.py`` holds the fp32 floor and its GEMM samples, and
``hardware.py`` the hardware class, the device's facts and ``--emulate-isa``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.results_file import write_result
from benchmarks.scoring.compute_floor import (GEMM_SAMPLES, add_gemm_rows_option, around_gemm, local_floors,
                                              necessary_work, sample_gemm)
from benchmarks.scoring.hardware import (CLASS_FLAGS, ISA_ENVIRONMENT, check_capability, check_device, cpu_class,
                                         cpu_name, device_facts, emulate_in_result, isa_is_applied, rerun_capped,
                                         result_path, torch_cpu_capability)
from benchmarks.scoring.released_package import ensure_released_venv, run_released, tie_ambiguous
from benchmarks.scoring.report_pairs import make_workloads, shuffled_reports

ROOT = Path(__file__).resolve().parents[2]


# ---- radscore runs (each in its own process, like the released ones) ---------------------------
def _current_rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _ours_child(job_path: str, out_path: str) -> None:
    """Runs in a child process: score the job's pairs with radscore, timing the scoring only."""
    job = json.loads(Path(job_path).read_text())
    from radscore import RaTEScore

    sentences = job.get("sentences")
    splitter = (lambda text: sentences[text]) if sentences else job.get("splitter")
    device = job.get("device", "cpu")
    if job.get("backend") == "openvino":
        device = "cpu"
    scorer = RaTEScore(job["ner"], job["encoder"], job.get("matrix", "long"), splitter=splitter,
                       batch_size=job.get("batch_size"), chunk_size=job.get("chunk_size", 2048),
                       precision=job.get("precision", "fp32"), backend=job.get("backend", "torch"),
                       device=device)
    cands, refs = job["candidates"], job["references"]
    warm = int(job.get("warmup_pairs", 0))
    if warm:
        scorer.compute_score(cands[:warm], refs[:warm])
    cuda = scorer.ner.device.type == "cuda"
    out = {"signature": {k: v for k, v in scorer.signature().items() if k in ("splitter", "precision", "backend",
                                                                               "backend_precision", "device",
                                                                               "batch_size")},
           "warmup_pairs": warm, "cpu_capability": torch_cpu_capability()}
    if job.get("timed", True):
        out.update(_timed_passes(scorer, cands, refs, cuda, int(job.get("warm_passes", 0))))
    if job.get("flag_ties"):  # untimed: a pass with the explain output
        out["tie_ambiguous"] = [tie_ambiguous(p) for p in scorer.iter_score(cands, refs, explain=True)]
    if job.get("analyse"):  # untimed: the sentence lists and the necessary FLOPs
        out.update(necessary_work(scorer, cands + refs))
    Path(out_path).write_text(json.dumps(out))


def _timed_passes(scorer, cands: list[str], refs: list[str], cuda: bool, warm_passes: int = 0) -> dict:
    """The child's timed scoring: the first pass over the pairs (cold: the process's first call at
    these batch shapes, with whatever one-off costs that carries), its scores, seconds and memory;
    then ``warm_passes`` more timed passes over the same pairs in the same process (warm: the first
    pass was their warm-up), reported as their best and median.

    Why both: on CUDA the first pass pays per-process and per-shape costs (kernel loading, library
    heuristics and plans for each new matrix shape; NER batches sorted by length each have a width
    of their own) that a scorer kept alive pays once. On an H100 (random NER) the
    fp32 default took 1.09 s cold and 0.46 s warm over 300 sample pairs, and the ``torch-bf16``
    variant, timed cold only, came out at 0.32x fp32 while ``bench_autocast.py`` (best of passes
    after a full untimed warm-up) gave bf16 2.09x fp32: the two benchmarks timed different passes.
    The variants now report both; ``ratio_vs_radscore_fp32`` is the warm one (steady state)."""
    if cuda:
        import torch

        torch.cuda.reset_peak_memory_stats(scorer.ner.device)
    rss, scores = [], []
    t0 = time.perf_counter()
    for k, pair in enumerate(scorer.iter_score(cands, refs)):
        scores.append(pair.f1)
        if (k + 1) % scorer.chunk_size == 0 or k + 1 == len(cands):
            rss.append(round(_current_rss_mb(), 1))
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"scores": scores, "score_seconds": seconds, "peak_rss_mb": peak, "rss_after_chunk_mb": rss}
    if cuda:
        out["peak_gpu_allocated_mb"] = torch.cuda.max_memory_allocated(scorer.ner.device) / 2**20
    warm, delta = [], 0.0
    for _ in range(warm_passes):
        t0 = time.perf_counter()
        again = [pair.f1 for pair in scorer.iter_score(cands, refs)]  # floats: the device has finished
        warm.append(time.perf_counter() - t0)
        delta = max([delta, *(abs(a - b) for a, b in zip(again, scores))])
    if warm:
        out.update({"warm_seconds": warm, "warm_best_seconds": min(warm),
                    "warm_median_seconds": statistics.median(warm),
                    # the name of earlier JSONs: the first pass after the cold one
                    "second_pass_seconds": warm[0], "second_pass_max_abs_delta": delta})
    return out


def run_ours(candidates, references, ner, encoder, sentences=None, **options) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        job, out = Path(tmp, "in.json"), Path(tmp, "out.json")
        job.write_text(json.dumps({"candidates": candidates, "references": references, "ner": str(ner),
                                   "encoder": str(encoder), "sentences": sentences, **options}))
        done = subprocess.run([sys.executable, "-m", __spec__.name, "--child", str(job), str(out)],
                              capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            raise RuntimeError(f"radscore failed:\n{done.stderr[-3000:]}")
        return json.loads(out.read_text())


# ---- the benchmark -----------------------------------------------------------------------------
VARIANTS = {"openvino-fp32": {"backend": "openvino", "precision": "fp32"},
            "openvino-bf16": {"backend": "openvino", "precision": "bf16"},
            "torch-bf16": {"backend": "torch", "precision": "bf16"}}


def _openvino_bf16() -> str | None:
    """None when OpenVINO can run bf16 on this CPU, else why not."""
    try:
        import openvino as ov
    except ImportError:
        return "openvino is not installed"
    caps = ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    return None if "BF16" in caps else f"this CPU has no native bfloat16 (OpenVINO's CPU capabilities: {list(caps)})"


def _deltas(ours: dict, released: dict, ties: list[bool]) -> tuple[list[float], list[float]]:
    """|Δscore| over aligned pairs (the released package drops reports with no sentence): not
    tie-ambiguous ones, tie-ambiguous ones."""
    plain, tied = [], []
    for k, (c, r) in enumerate(released["alignment"]):
        if c == r:
            (tied if ties[c] else plain).append(abs(ours["scores"][c] - released["scores"][k]))
    return plain, tied


CUDA_WARMUP_PAIRS = 4  # scored once, untimed, before a timed call on CUDA (both packages)
TIMING_NOTE = ("cold: each process's first pass over the workload (after CUDA_WARMUP_PAIRS pairs on CUDA); warm: the "
               "later passes over the same pairs in the same process (best and median). Ratios to the released "
               "package are cold against cold; a variant's ratio_vs_radscore_fp32 is warm against warm")


def run_workload(name: str, cands: list[str], refs: list[str], args, encoder: str,
                 python: Path | None, gemm: list, first: bool = False) -> dict:
    """Every run of one workload (the released package's only when ``python`` is given), each between
    GEMM samples appended to ``gemm`` (:func:`around_gemm`); the floor is filled in by
    :func:`benchmark` (it needs every GEMM measurement of the run)."""
    n = len(cands)

    def around(run):
        return around_gemm(run, gemm, args.device, args.emulate_isa, args.gemm_rows)

    cuda = args.device == "cuda"
    warm = CUDA_WARMUP_PAIRS if cuda else 0
    runs, released = [], {}
    on = f" on {args.device}"
    for bs in args.released_batch_sizes if python else []:
        print(f"[{name}] released ratescore{on}, batch_size={bs}, {n} pairs ...", flush=True)
        released[bs] = around(lambda: check_capability(
            run_released(cands, refs, args.ner, encoder, batch_size=bs, python=python, use_gpu=cuda,
                         warmup_pairs=warm), args.emulate_isa, f"the released package (batch_size={bs})"))
        runs.append({"run": f"released ratescore 0.6.0, batch_size={bs}", "batch_size": bs, "pairs": n,
                     "device": released[bs]["device"],
                     "seconds": released[bs]["score_seconds"], "pairs_per_s": n / released[bs]["score_seconds"],
                     "peak_rss_mb": released[bs]["peak_rss_mb"],
                     "local_gemm_flops_per_s": released[bs]["local_gemm_flops_per_s"]})
    best_bs = min(released, key=lambda b: released[b]["score_seconds"]) if released else None
    best = released.get(best_bs)
    if python and name == "sample" and args.released_bs1_pairs:
        m = min(n, args.released_bs1_pairs)
        print(f"[{name}] released ratescore{on}, batch_size=1 (its default), {m} pairs ...", flush=True)
        r1 = around(lambda: check_capability(
            run_released(cands[:m], refs[:m], args.ner, encoder, batch_size=1, python=python, use_gpu=cuda,
                         warmup_pairs=warm), args.emulate_isa, "the released package (batch_size=1)"))
        runs.append({"run": f"released ratescore 0.6.0, batch_size=1 ({m} pairs)", "batch_size": 1, "pairs": m,
                     "device": r1["device"], "seconds": r1["score_seconds"], "pairs_per_s": m / r1["score_seconds"],
                     "peak_rss_mb": r1["peak_rss_mb"], "local_gemm_flops_per_s": r1["local_gemm_flops_per_s"]})
    print(f"[{name}] radscore{on}, defaults (rush splitter, fp32, torch) ...", flush=True)
    ours = around(lambda: check_capability(
        run_ours(cands, refs, args.ner, encoder, warm_passes=args.warm_passes, device=args.device,
                 batch_size=args.batch_size,
                 warmup_pairs=warm), args.emulate_isa, "radscore"))
    # untimed, in a process of its own, so that the GEMM samples after the timed run follow it at once: the
    # tie flags and the necessary work
    analysis = check_capability(run_ours(cands, refs, args.ner, encoder, timed=False, flag_ties=True, analyse=True,
                                         device=args.device, batch_size=args.batch_size),
                                args.emulate_isa, "radscore (untimed analysis)")
    ours.update({k: v for k, v in analysis.items() if k not in ("signature", "warmup_pairs", "cpu_capability")})
    runs.append({"run": "radscore defaults (exact)", "pairs": n, "seconds": ours["score_seconds"],
                 "pairs_per_s": n / ours["score_seconds"], "peak_rss_mb": ours["peak_rss_mb"],
                 "peak_gpu_allocated_mb": ours.get("peak_gpu_allocated_mb"), "signature": ours["signature"],
                 "local_gemm_flops_per_s": ours["local_gemm_flops_per_s"],
                 "second_pass_seconds": ours["second_pass_seconds"], "warm_best_seconds": ours["warm_best_seconds"],
                 "warm_median_seconds": ours["warm_median_seconds"]})
    result = {
        "pairs": n, "device": args.device, "radscore_batch_size": ours["signature"]["batch_size"],
        "timing": TIMING_NOTE,
        "radscore_pairs_per_s": n / ours["score_seconds"], "radscore_seconds": ours["score_seconds"],
        "radscore_warm_passes": len(ours["warm_seconds"]),
        "radscore_warm_best_seconds": ours["warm_best_seconds"],
        "radscore_warm_median_seconds": ours["warm_median_seconds"],
        "radscore_warm_pairs_per_s": n / ours["warm_best_seconds"],
        "radscore_peak_gpu_allocated_mb": ours.get("peak_gpu_allocated_mb"),
        "radscore_second_pass_seconds": ours["second_pass_seconds"],
        "radscore_second_pass_max_abs_delta": ours["second_pass_max_abs_delta"],
        "radscore_local_gemm_flops_per_s": ours["local_gemm_flops_per_s"],
        "released_best_local_gemm_flops_per_s": None,
        "released_best_batch_size": best_bs, "released_best_pairs_per_s": None, "ratio_vs_released_best": None,
        "max_abs_delta_vs_released": None, "aligned_pairs_compared": 0,
        "tie_ambiguous_pairs": int(sum(ours["tie_ambiguous"])), "tie_ambiguous_max_abs_delta": None,
        "texts": None, "texts_with_released_sentence_lists": None, "released_best_seconds": None,
        "released_versions": None,
        "sentences_in_pairs": ours["sentences_in_pairs"], "distinct_sentences": ours["distinct_sentences"],
        "repetition_factor": ours["sentences_in_pairs"] / max(1, ours["distinct_sentences"]),
        "ner_pieces": ours["ner_pieces"], "distinct_entity_texts": ours["distinct_entity_texts"],
        "encoder_pieces": ours["encoder_pieces"],
        "necessary_gflop": (ours["ner_flops"] + ours["encoder_flops"]) / 1e9,
        "batch_sizes": {}, "variants": {},
    }
    if best is not None:
        plain, tied = _deltas(ours, best, ours["tie_ambiguous"])
        same_sentences = sum(ours["sentences"][t] == best["sentences"][t] for t in best["sentences"])
        result.update({
            "released_device": best["device"], "released_best_pairs_per_s": n / best["score_seconds"],
            "ratio_vs_released_best": best["score_seconds"] / ours["score_seconds"],
            "max_abs_delta_vs_released": max(plain) if plain else None, "aligned_pairs_compared": len(plain),
            "tie_ambiguous_max_abs_delta": max(tied) if tied else None,
            "texts": len(best["sentences"]), "texts_with_released_sentence_lists": same_sentences,
            "released_best_seconds": best["score_seconds"], "released_versions": best["versions"],
            "released_best_local_gemm_flops_per_s": best["local_gemm_flops_per_s"]})
    for bs in args.radscore_batch_sizes if first else []:
        print(f"[{name}] radscore{on}, batch_size={bs} ...", flush=True)
        r = around(lambda: check_capability(run_ours(cands, refs, args.ner, encoder, device=args.device,
                                                     batch_size=bs, warmup_pairs=warm),
                                            args.emulate_isa, f"radscore batch_size={bs}"))
        d = [abs(x - y) for x, y in zip(r["scores"], ours["scores"])]
        runs.append({"run": f"radscore batch_size={bs}", "pairs": n, "seconds": r["score_seconds"],
                     "pairs_per_s": n / r["score_seconds"], "peak_rss_mb": r["peak_rss_mb"],
                     "peak_gpu_allocated_mb": r.get("peak_gpu_allocated_mb"), "signature": r["signature"],
                     "local_gemm_flops_per_s": r["local_gemm_flops_per_s"]})
        result["batch_sizes"][str(bs)] = {"pairs_per_s": n / r["score_seconds"],
                                          "peak_gpu_allocated_mb": r.get("peak_gpu_allocated_mb"),
                                          "max_abs_delta_vs_default": max(d) if d else None}
    bf16_reason = _openvino_bf16()
    for variant in args.variants:
        if VARIANTS[variant]["backend"] == "openvino" and cuda:
            result["variants"][variant] = {"skipped": "OpenVINO runs on the CPU only; this run is on CUDA"}
            continue
        if VARIANTS[variant]["backend"] == "openvino" and args.emulate_isa:
            result["variants"][variant] = {"skipped": "OpenVINO picks its kernels from the host's instruction set; "
                                                      "--emulate-isa does not reach it"}
            continue
        if variant == "openvino-bf16" and bf16_reason:
            result["variants"][variant] = {"skipped": bf16_reason}
            continue
        m = min(n, args.variant_pairs or n)
        print(f"[{name}] radscore {variant}{on}, {m} pairs ...", flush=True)
        r = around(lambda: check_capability(
            run_ours(cands[:m], refs[:m], args.ner, encoder, device=args.device, batch_size=args.batch_size,
                     warmup_pairs=warm, warm_passes=args.warm_passes, **VARIANTS[variant]),
            args.emulate_isa, f"radscore {variant}"))
        d = [abs(a - b) for a, b in zip(r["scores"], ours["scores"])]
        runs.append({"run": f"radscore {variant} (opt-in)" + (f" ({m} pairs)" if m < n else ""), "pairs": m,
                     "seconds": r["score_seconds"], "pairs_per_s": m / r["score_seconds"],
                     "warm_best_seconds": r["warm_best_seconds"], "warm_median_seconds": r["warm_median_seconds"],
                     "peak_rss_mb": r["peak_rss_mb"], "peak_gpu_allocated_mb": r.get("peak_gpu_allocated_mb"),
                     "signature": r["signature"], "local_gemm_flops_per_s": r["local_gemm_flops_per_s"]})
        # per pair, as the variant may score only the first m of the n pairs
        fp32_warm, fp32_warm_median = ours["warm_best_seconds"] / n, ours["warm_median_seconds"] / n
        result["variants"][variant] = {
            "pairs": m, "pairs_per_s": m / r["warm_best_seconds"], "pairs_per_s_cold": m / r["score_seconds"],
            # steady state: best warm pass against the fp32 default's best warm pass (the one answer)
            "ratio_vs_radscore_fp32": fp32_warm / (r["warm_best_seconds"] / m),
            "ratio_vs_radscore_fp32_warm_median": fp32_warm_median / (r["warm_median_seconds"] / m),
            # first pass against first pass, each in a fresh process (what this benchmark gave before)
            "ratio_vs_radscore_fp32_cold": (ours["score_seconds"] / n) / (r["score_seconds"] / m),
            "ratio_vs_released_best": ((m / r["score_seconds"]) / (n / best["score_seconds"])) if best else None,
            "max_abs_delta_vs_fp32": max(d), "mean_abs_delta_vs_fp32": sum(d) / m,
            "pairs_over_1e-5": sum(x > 1e-5 for x in d), "ran_as": r["signature"]}
    result["runs"] = runs
    return result


def benchmark(args) -> dict:
    from radscore.models import PACKAGED_MINILM, resolve_model_path

    encoder = str(Path(args.encoder).resolve()) if args.encoder else resolve_model_path(PACKAGED_MINILM)
    if args.no_released:
        python, released = None, {"ran": False, "reason": "--no-released: radscore only"}
    else:
        python = Path(args.released_python) if args.released_python else ensure_released_venv()
        released = {"ran": True, "python": str(python), "device": "cuda:0" if args.device == "cuda" else "cpu",
                    "how": "RaTEScore(use_gpu=True), the package's own switch" if args.device == "cuda"
                    else "RaTEScore(use_gpu=False)"}
    print("building workloads ...", flush=True)
    workloads = make_workloads(args.workloads, args.pairs)
    result = {"ner": str(args.ner), "encoder": args.encoder or PACKAGED_MINILM, "matrix": "long",
              **device_facts(args.device),
              "released_package": released, "cpu_count": os.cpu_count(), "cpu": cpu_name(), **cpu_class(),
              "gemm_measurements": [], "workloads": {}}
    if args.emulate_isa:
        emulate_in_result(result, args.emulate_isa)
    for k, (name, (cands, refs)) in enumerate(workloads.items()):
        # before each workload and at the end: how steady the machine was, and its best
        best = sample_gemm(result["gemm_measurements"], args.device, args.emulate_isa, rows=args.gemm_rows)
        print(f"fp32 GEMM throughput on {args.device}: {best / 1e9:.1f} GFLOP/s (best of {GEMM_SAMPLES})", flush=True)
        result["workloads"][name] = run_workload(name, cands, refs, args, encoder, python,
                                                 result["gemm_measurements"], first=k == 0)
    sample_gemm(result["gemm_measurements"], args.device, args.emulate_isa, rows=args.gemm_rows)
    # the floor divides by the highest throughput measured in the run (the machine's best)
    peak = max(g["flops_per_s"] for g in result["gemm_measurements"])
    result["gemm_flops_per_s_for_floor"] = peak
    for w in result["workloads"].values():
        w["fp32_floor_seconds"] = w["necessary_gflop"] * 1e9 / peak
        w["radscore_distance_to_floor"] = w["radscore_seconds"] / w["fp32_floor_seconds"]
        w["released_best_distance_to_floor"] = (w["released_best_seconds"] / w["fp32_floor_seconds"]
                                                if w["released_best_seconds"] else None)
        local_floors(w)
    result["load_average_1min_at_end"] = os.getloadavg()[0]
    if args.big:
        result.update(memory_runs(args, encoder))
    return result


def memory_runs(args, encoder: str) -> dict:
    big_ner, big_encoder = args.big_ner or args.ner, args.big_encoder or encoder
    if "tiny" in (args.big_ner, args.big_encoder):  # the streaming code path with small models
        from train.rehearsal.tiny import build_tiny_bert, build_tiny_iob_export

        tiny_dir = tempfile.mkdtemp(prefix="bench_tiny_")
        if args.big_ner == "tiny":
            big_ner = build_tiny_iob_export(Path(tiny_dir) / "ner", seed=0, head_std=0.3, o_bias=2.5)
        if args.big_encoder == "tiny":
            big_encoder = build_tiny_bert(Path(tiny_dir) / "encoder", seed=0)
    out = {}
    for size in (args.big // 10, args.big):
        print(f"radscore on {size} distinct pairs (memory, NER {big_ner}) ...", flush=True)
        reports = shuffled_reports(2 * size)
        r = run_ours(reports[:size], reports[size:], big_ner, big_encoder, device=args.device)
        out[f"memory_{size}_pairs"] = {"device": args.device,
                                       "ner": "tiny random" if args.big_ner == "tiny" else str(big_ner),
                                       "encoder": "tiny random" if args.big_encoder == "tiny" else str(big_encoder),
                                       "pairs_per_s": size / r["score_seconds"], "peak_rss_mb": r["peak_rss_mb"],
                                       "rss_after_chunk_mb": r["rss_after_chunk_mb"]}
    return out


def print_table(result: dict) -> None:
    print(f"\nCPU: {result['cpu']} x {result['cpu_count']}, hardware class {result['hardware_class']} "
          f"(flags {' '.join(result['cpu_flags']) or 'none of ' + ', '.join(CLASS_FLAGS)})")
    if "isa_emulation" in result:
        print(f"EMULATION: {result['isa_emulation']['note']}")
    print(f"device: {result['device']} ({result['device_name']}); released package: "
          + (f"on {result['released_package']['device']}" if result["released_package"]["ran"]
             else f"not run ({result['released_package']['reason']})"))
    for name, w in result["workloads"].items():
        print(f"\n== {name}: {w['pairs']} pairs, {w['distinct_sentences']} distinct sentences "
              f"(repetition {w['repetition_factor']:.2f}x), {w['necessary_gflop']:.0f} GFLOP necessary")
        print(f"{'run':<52} {'pairs/s':>8} {'peak RSS MB':>12}")
        for row in w["runs"]:
            print(f"{row['run']:<52} {row['pairs_per_s']:>8.2f} {row['peak_rss_mb']:>12.0f}")
        if w["ratio_vs_released_best"] is not None:
            print(f"radscore / released (batch_size={w['released_best_batch_size']}): {w['ratio_vs_released_best']:.2f}x; "
                  f"max |Δscore| {w['max_abs_delta_vs_released'] or 0:.1e} over {w['aligned_pairs_compared']} pairs "
                  f"({w['tie_ambiguous_pairs']} tie-ambiguous left out, their max |Δ| {w['tie_ambiguous_max_abs_delta'] or 0:.1e}); "
                  f"released sentence lists on {w['texts_with_released_sentence_lists']}/{w['texts']} texts")
        released = (f"released {w['released_best_distance_to_floor']:.2f}x"
                    if w["released_best_distance_to_floor"] is not None else "released not run")
        print(f"fp32 floor {w['fp32_floor_seconds']:.2f} s: radscore {w['radscore_distance_to_floor']:.2f}x it, {released}")
        local = (f", released {w['released_best_distance_to_local_floor']:.2f}x; ratio at equal throughput "
                 f"{w['ratio_vs_released_best_at_equal_throughput']:.2f}x"
                 if w["released_best_distance_to_local_floor"] is not None else "")
        print(f"at the GEMM throughput around each run: radscore {w['radscore_distance_to_local_floor']:.2f}x "
              f"({w['radscore_local_gemm_flops_per_s'] / 1e9:.0f} GFLOP/s), its second pass in the same process "
              f"{w['radscore_second_pass_distance_to_local_floor']:.2f}x{local}")
        print(f"radscore warm (best of {w['radscore_warm_passes']} passes after the first): "
              f"{w['radscore_warm_pairs_per_s']:.2f} pairs/s (cold {w['radscore_pairs_per_s']:.2f})")
        for bs, r in w["batch_sizes"].items():
            print(f"radscore batch_size={bs}: {r['pairs_per_s']:.1f} pairs/s, max |Δ| vs the default "
                  f"{r['max_abs_delta_vs_default'] or 0:.1e}")
        for v, r in w["variants"].items():
            if "skipped" in r:
                print(f"{v}: skipped ({r['skipped']})")
            else:
                vs_released = (f"{r['ratio_vs_released_best']:.2f}x the released, "
                               if r["ratio_vs_released_best"] is not None else "")
                print(f"{v}: {r['ratio_vs_radscore_fp32']:.2f}x radscore fp32 warm "
                      f"(cold {r['ratio_vs_radscore_fp32_cold']:.2f}x), {vs_released}|Δ| vs fp32 max "
                      f"{r['max_abs_delta_vs_fp32']:.1e}, mean {r['mean_abs_delta_vs_fp32']:.1e}")
    for key in [k for k in result if k.startswith("memory_")]:
        m = result[key]
        print(f"{key}: {m['pairs_per_s']:.0f} pairs/s, peak RSS {m['peak_rss_mb']:.0f} MB, "
              f"RSS after each chunk {m['rss_after_chunk_mb']}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="where both packages score (cuda: the first GPU, for both; default cpu)")
    p.add_argument("--no-released", action="store_true",
                   help="radscore only: skip the released package (e.g. where its venv cannot be made)")
    p.add_argument("--released-python", default=None,
                   help="an interpreter (or a wrapper script) that already imports the released package, used as "
                        "is instead of making .venv-ratescore (e.g. on a machine without PyPI)")
    p.add_argument("--batch-size", type=int, default=None,
                   help="radscore's batch size (default: the device's, 64 on the CPU and 256 on CUDA)")
    p.add_argument("--radscore-batch-sizes", type=int, nargs="*", default=[],
                   help="extra radscore runs at these batch sizes on the first workload")
    p.add_argument("--ner", default=str(ROOT / "checkpoints" / "ner" / "iob_sample" / "export"))
    p.add_argument("--encoder", default=None,
                   help="entity encoder folder for both packages (default: the packaged all-MiniLM-L6-v2)")
    p.add_argument("--workloads", nargs="+", default=["sample", "distinct", "long"])
    p.add_argument("--pairs", type=int, nargs="+", default=[400, 300, 80], help="pairs per workload, in order")
    p.add_argument("--released-batch-sizes", type=int, nargs="+", default=[8, 32])
    p.add_argument("--released-bs1-pairs", type=int, default=50,
                   help="sample pairs for the released package at its default batch_size=1 (0: skip)")
    p.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    p.add_argument("--warm-passes", type=int, default=2,
                   help="timed passes over the same pairs after the first (cold) one, in the same process, for "
                        "radscore's default and each variant: their best and median are the warm figures (min 1)")
    p.add_argument("--variant-pairs", type=int, default=0,
                   help="score only the first N pairs of each workload with the variants (0: all); torch bf16 "
                        "autocast is emulated, and slow, on CPUs without native bf16")
    p.add_argument("--big", type=int, default=20000, help="pairs for the memory run (0: skip)")
    add_gemm_rows_option(p)
    p.add_argument("--big-ner", default="tiny",
                   help="NER export for the memory run: 'tiny' (default: a tiny random export, so 20,000 pairs take "
                        "minutes; the streaming code is the same) or a folder, e.g. the --ner export")
    p.add_argument("--big-encoder", default="tiny",
                   help="entity encoder for the memory run: 'tiny' (default) or a model folder / packaged name")
    p.add_argument("--emulate-isa", choices=sorted(ISA_ENVIRONMENT), default=None,
                   help="cap torch, oneDNN and MKL at this instruction set (the whole run, the released package's "
                        "processes included; OpenVINO variants are skipped): a stand-in for that hardware class on "
                        "a newer CPU, written to ratescore_<isa>-emulated.json")
    p.add_argument("--out", default=None, help="default: benchmarks/results/ratescore_<hardware class>.json on the "
                   "CPU, ratescore_cuda_<GPU name>.json on CUDA (benchmarks/results/ratescore.json holds the "
                   "2-core AVX2-only run of 2026-11-26)")
    args = p.parse_args(argv)
    if len(args.pairs) != len(args.workloads):
        p.error("give one --pairs value per workload")
    if args.warm_passes < 1:
        p.error("--warm-passes must be at least 1")
    if not Path(args.ner).is_dir():
        sys.exit(f"{args.ner}: no NER export there; train one with `make train-ner` or pass --ner")
    if args.released_python and not os.access(args.released_python, os.X_OK):
        sys.exit(f"--released-python {args.released_python}: not an executable")
    if args.emulate_isa and args.device != "cpu":
        p.error("--emulate-isa is for the CPU")
    if args.emulate_isa and not isa_is_applied(args.emulate_isa):
        # the caps are read when each library starts: run the whole benchmark again in a process that has them
        sys.exit(rerun_capped(args.emulate_isa, __spec__.name, sys.argv[1:] if argv is None else list(argv)))
    check_device(args.device)
    result = benchmark(args)
    args.out = args.out or str(result_path(result))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_result(Path(args.out), result, precision=" and ".join(["fp32", *args.variants]), indent=1)
    print_table(result)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _ours_child(sys.argv[2], sys.argv[3])
    else:
        main()

"""The fp32 compute floor of the scoring benchmarks: the FLOPs an exact RaTEScore cannot avoid
(:func:`bert_flops`, :func:`necessary_work`) over the fp32 matrix-multiply throughput measured in the
same run (:func:`gemm_throughput`, sampled around every timed run: :func:`around_gemm`,
:func:`local_floors`). Shared by ``bench_ratescore.py`` and ``profile_ratescore.py``.
"""

from __future__ import annotations

import statistics
import time

from benchmarks.scoring.hardware import check_capability, torch_cpu_capability


def bert_flops(config, lengths: list[int], n_labels: int = 0) -> float:
    """FLOPs of a BERT-style encoder (plus a linear head of ``n_labels``) over unpadded sequences of
    ``lengths`` pieces: per layer and token the Q/K/V/output projections (4 H²) and the feed-forward
    (2 H I) multiply-adds, and per layer and sequence the two attention products (2 T² H); 2 FLOPs
    per multiply-add. Embedding look-ups, norms and softmax are left out (a few percent)."""
    h, i, n = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    per_token = n * 2 * (4 * h * h + 2 * h * i) + 2 * h * n_labels
    return float(sum(per_token * t + n * 4 * h * t * t for t in lengths))


def necessary_work(scorer, texts: list[str]) -> dict:
    """What any exact implementation must compute for ``texts``: each distinct sentence through the
    NER model once, each distinct entity text through the encoder once (unpadded lengths)."""
    split = {t: scorer.sentences(t) for t in dict.fromkeys(texts)}
    distinct = list(dict.fromkeys(s for ss in split.values() for s in ss))
    ner = scorer.ner
    content = ner.tokenizer(distinct, add_special_tokens=False, verbose=False)["input_ids"] if distinct else []
    special = len(ner.prefix) + len(ner.suffix)
    ner_lengths = [min(len(ids), ner.window) + special for ids in content]
    entity_texts = sorted({e.text for ents in scorer.entities(distinct) for e in ents})
    enc = scorer.encoder
    enc_lengths = [len(x) for x in enc.tokenizer(entity_texts, truncation=True, max_length=enc.max_length,
                                                 verbose=False)["input_ids"]] if entity_texts else []
    ner_config = ner.model.config
    encoder_config = enc.model.config
    return {"sentences": split, "sentences_in_pairs": sum(len(split[t]) for t in texts),
            "distinct_sentences": len(distinct), "ner_pieces": sum(ner_lengths),
            "distinct_entity_texts": len(entity_texts), "encoder_pieces": sum(enc_lengths),
            "ner_flops": bert_flops(ner_config, ner_lengths, len(ner_config.id2label)),
            "encoder_flops": bert_flops(encoder_config, enc_lengths)}


def gemm_throughput(hidden: int = 384, intermediate: int = 1536, rows: int = 4096, repeats: int = 5,
                    device: str = "cpu") -> dict:
    """fp32 matrix-multiply FLOP/s of this process (torch's default threads; on CUDA the GPU, TF32 as
    torch's default leaves it: off) on a transformer layer's products: rows x H @ H x H,
    rows x H @ H x I and rows x I @ I x H, best of ``repeats``."""
    import torch

    g = torch.Generator().manual_seed(0)
    shapes = [(rows, hidden, hidden), (rows, hidden, intermediate), (rows, intermediate, hidden)]
    mats = [(torch.randn(m, k, generator=g).to(device), torch.randn(k, n, generator=g).to(device))
            for m, k, n in shapes]
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)
    best = {}
    for (m, k, n), (a, b) in zip(shapes, mats):
        a @ b  # warm-up
        sync()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            a @ b
            sync()
            times.append(time.perf_counter() - t0)
        best[f"{m}x{k}@{k}x{n}"] = 2 * m * k * n / min(times)
    total_flops = sum(2 * m * k * n for m, k, n in shapes)
    mix = total_flops / sum(2 * m * k * n / best[f"{m}x{k}@{k}x{n}"] for m, k, n in shapes)
    return {"device": str(device), "threads": torch.get_num_threads(), "rows": rows, "per_shape_flops_per_s": best,
            "flops_per_s": mix, "cpu_capability": torch_cpu_capability()}


# Samples at each point of a run: this host's fp32 throughput moved between 114 and 174 GFLOP/s over 24
# samples 2 s apart with nothing else running, so one sample per point made the floor
# depend on the phase the sample fell in (the JSONs of earlier runs keep their single samples).
GEMM_SAMPLES = 5
#: rows of each GEMM sample's products: a transformer layer's work on a batch of 4,096 pieces
GEMM_ROWS = 4096


def add_gemm_rows_option(parser) -> None:
    """The ``--gemm-rows`` option of the scripts that sample GEMM throughput (a positive integer)."""
    def positive(text: str) -> int:
        value = int(text)
        if value < 1:
            raise ValueError(text)
        return value
    positive.__name__ = "positive integer"  # argparse names the type in its error message
    parser.add_argument("--gemm-rows", type=positive, default=GEMM_ROWS,
                        help=f"rows of the products each GEMM throughput sample times (default {GEMM_ROWS}: a "
                             "batch of that many pieces); fewer give a quicker, noisier floor, for a smoke run")


def sample_gemm(into: list, device: str = "cpu", isa: str | None = None, times: int = GEMM_SAMPLES,
                rows: int = GEMM_ROWS) -> float:
    """Append ``times`` :func:`gemm_throughput` measurements (products of ``rows`` rows) to ``into``
    (each checked against an emulated ``isa``); returns the best FLOP/s among them."""
    new = [check_capability(gemm_throughput(rows=rows, device=device), isa, "the GEMM measurement")
           for _ in range(times)]
    into.extend(new)
    return max(g["flops_per_s"] for g in new)


# Samples right before and right after each timed run: its own floor, at the throughput the machine had
# then. On this host the best of a whole run can be 35% above what a run in a slow phase could get
# (GEMM samples of one run spanned 127-193 GFLOP/s), which moves "times the floor" and the ratio alike.
AROUND_SAMPLES = 3


def around_gemm(run, into: list, device: str = "cpu", isa: str | None = None, rows: int = GEMM_ROWS) -> dict:
    """``run()`` (one timed run, returning its result dict) between :data:`AROUND_SAMPLES` GEMM samples
    before and as many after, all appended to ``into``; the result gets their FLOP/s as
    ``gemm_around_flops_per_s`` and their median as ``local_gemm_flops_per_s``."""
    start = len(into)
    sample_gemm(into, device, isa, AROUND_SAMPLES, rows)
    result = run()
    sample_gemm(into, device, isa, AROUND_SAMPLES, rows)
    result["gemm_around_flops_per_s"] = [g["flops_per_s"] for g in into[start:]]
    result["local_gemm_flops_per_s"] = statistics.median(result["gemm_around_flops_per_s"])
    return result


def local_floors(w: dict) -> None:
    """The workload's figures at the throughput each run had (its GEMM samples' median, see
    :data:`AROUND_SAMPLES`) beside those at the run's best: times the floor for radscore's first and
    second pass and the released package's best run, and the ratio with both sides brought to one
    throughput (each time scaled by its own median; a model of a compute-bound run, which these are:
    see ``benchmarks/scoring/profile_ratescore.py``)."""
    flops = w["necessary_gflop"] * 1e9
    ours = w["radscore_local_gemm_flops_per_s"]
    w["radscore_distance_to_local_floor"] = w["radscore_seconds"] * ours / flops
    w["radscore_second_pass_distance_to_local_floor"] = w["radscore_second_pass_seconds"] * ours / flops
    theirs = w["released_best_local_gemm_flops_per_s"]
    w["released_best_distance_to_local_floor"] = w["released_best_seconds"] * theirs / flops if theirs else None
    w["ratio_vs_released_best_at_equal_throughput"] = (w["ratio_vs_released_best"] * theirs / ours
                                                       if theirs else None)

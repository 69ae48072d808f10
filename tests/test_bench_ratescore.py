"""The RaTEScore benchmark's own arithmetic: the FLOP count behind the fp32 floor, workloads whose
sentences never repeat, and its --device option (``benchmarks/scoring/bench_ratescore.py``)."""

from __future__ import annotations

import statistics

import pytest
import torch

from benchmarks.scoring.bench_ratescore import main
from benchmarks.scoring.compute_floor import AROUND_SAMPLES, GEMM_SAMPLES, bert_flops, local_floors
from benchmarks.scoring.hardware import cpu_class, result_path
from benchmarks.scoring.report_pairs import distinct_pairs, long_pairs


@pytest.mark.parametrize("length", [1, 7, 30])
def test_bert_flops_equal_torchs_count_of_a_forward_pass(length):
    """The floor's FLOPs are the matrix products torch counts in a BERT forward (no pooler, no padding)."""
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import BertConfig, BertForTokenClassification

    config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=48, num_labels=11, attn_implementation="eager")
    model = BertForTokenClassification(config).eval()
    ids = torch.randint(5, 100, (1, length))
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(input_ids=ids, attention_mask=torch.ones_like(ids))
    assert bert_flops(config, [length], n_labels=11) == counter.get_total_flops()
    assert bert_flops(config, [length, length], n_labels=11) == 2 * counter.get_total_flops()


def test_distinct_and_long_workloads_never_repeat_a_sentence():
    pool = [f"Finding number {k} is stable." for k in range(2000)]
    cands, refs = distinct_pairs(pool, 40, seed=1)
    assert len(cands) == len(refs) == 40 and all(4 <= len(t.split(". ")) <= 9 for t in cands + refs)
    lc, lr = long_pairs(pool, 10, seed=1)
    lines = [line.split(": ", 1)[-1].split(". ", 1)[-1] if line[:1].isdigit() else line.split(": ", 1)[-1]
             for t in lc + lr for line in t.splitlines() if line and not line.endswith(":")]
    assert len(lines) == len(set(lines))  # every sentence once in the long workload
    assert all("FINDINGS:" in t and "\n1. " in t for t in lc + lr)
    every = [s for t in cands + refs for s in t.replace(". Finding", ".\nFinding").splitlines()]
    assert len(every) == len(set(every)) and not set(every) & set(lines)  # nor across the two
    with pytest.raises(ValueError, match="ran out"):
        distinct_pairs(pool[:10], 5)


def test_the_hardware_class_comes_from_the_cpu_flags():
    assert cpu_class({"avx2", "fma"}) == {"cpu_flags": ["avx2"], "hardware_class": "avx2"}
    assert cpu_class({"avx2", "avx512f", "avx512_bf16"})["hardware_class"] == "avx512-bf16"
    assert cpu_class({"avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16"})["hardware_class"] == "amx"
    assert cpu_class({"sse4_2"}) == {"cpu_flags": [], "hardware_class": "baseline"}
    here = cpu_class()  # this machine's /proc/cpuinfo
    assert here["hardware_class"] in ("amx", "avx512-bf16", "avx512", "avx2", "baseline")


def test_the_result_file_is_named_for_the_device():
    cpu = {"device": "cpu", "device_name": "AMD EPYC", "hardware_class": "avx512-bf16"}
    assert result_path(cpu).name == "ratescore_avx512-bf16.json"
    gpu = {"device": "cuda", "device_name": "NVIDIA H200", "hardware_class": "avx512"}
    assert result_path(gpu).name == "ratescore_cuda_NVIDIA-H200.json"
    assert result_path({**gpu, "device_name": "NVIDIA H100 80GB HBM3"}).name == "ratescore_cuda_NVIDIA-H100-80GB-HBM3.json"


def test_device_option_rejects_unknown_devices_and_cuda_without_cuda(tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit):
        main(["--device", "tpu", "--ner", str(tmp_path)])
    assert "invalid choice: 'tpu'" in capsys.readouterr().err
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="--device cuda, but torch .* sees no CUDA device"):
        main(["--device", "cuda", "--ner", str(tmp_path), "--no-released"])


@pytest.mark.slow
def test_a_small_cpu_run_records_the_device(tmp_path):
    """Radscore only (--no-released), two sample pairs, a tiny random NER export: the JSON says
    where it ran, that the released package did not, and which batch size radscore took."""
    import json

    from train.rehearsal.tiny import build_tiny_iob_export

    ner = build_tiny_iob_export(tmp_path / "ner", head_std=0.3, o_bias=-1.0)
    out = tmp_path / "bench.json"
    main(["--device", "cpu", "--no-released", "--ner", ner, "--workloads", "sample", "--pairs", "2",
          "--variants", "--big", "0", "--released-bs1-pairs", "0", "--gemm-rows", "256", "--out", str(out)])
    result = json.loads(out.read_text())
    assert {g["rows"] for g in result["gemm_measurements"]} == {256}  # small products, to keep the suite short
    assert result["device"] == "cpu" and result["device_name"] and result["torch"] == torch.__version__
    assert result["released_package"] == {"ran": False, "reason": "--no-released: radscore only"}
    w = result["workloads"]["sample"]
    assert w["device"] == "cpu" and w["radscore_batch_size"] == 64 and w["radscore_pairs_per_s"] > 0
    assert w["ratio_vs_released_best"] is None and w["max_abs_delta_vs_released"] is None
    assert [r["signature"]["device"] for r in w["runs"]] == ["cpu"]
    assert {g["device"] for g in result["gemm_measurements"]} == {"cpu"}
    # the run sits between its own GEMM samples (3 before, 3 after, also in the run's list), and its
    # floor at their median is given beside the floor at the run's best
    around = w["runs"][0]["local_gemm_flops_per_s"]
    samples = [g["flops_per_s"] for g in result["gemm_measurements"]]
    assert len(samples) == 2 * GEMM_SAMPLES + 2 * AROUND_SAMPLES
    assert around == statistics.median(samples[GEMM_SAMPLES:GEMM_SAMPLES + 2 * AROUND_SAMPLES])
    assert w["radscore_distance_to_local_floor"] == pytest.approx(
        w["radscore_seconds"] * around / (w["necessary_gflop"] * 1e9))
    assert w["radscore_second_pass_seconds"] > 0 and w["radscore_second_pass_max_abs_delta"] == 0.0
    assert w["radscore_warm_passes"] == 2 and w["radscore_warm_best_seconds"] <= w["radscore_second_pass_seconds"]
    assert w["released_best_distance_to_local_floor"] is None
    assert w["ratio_vs_released_best_at_equal_throughput"] is None


def test_local_floors_bring_both_runs_to_one_throughput():
    """A run in a slow phase (half the GEMM throughput) is not charged for it: at equal throughput the
    ratio is the ratio of the work each run did per FLOP/s available."""
    w = {"necessary_gflop": 100.0, "radscore_seconds": 2.0, "radscore_second_pass_seconds": 1.5,
         "radscore_local_gemm_flops_per_s": 50e9, "released_best_seconds": 10.0,
         "released_best_local_gemm_flops_per_s": 100e9, "ratio_vs_released_best": 5.0}
    local_floors(w)
    assert w["radscore_distance_to_local_floor"] == pytest.approx(1.0)
    assert w["radscore_second_pass_distance_to_local_floor"] == pytest.approx(0.75)
    assert w["released_best_distance_to_local_floor"] == pytest.approx(10.0)
    assert w["ratio_vs_released_best_at_equal_throughput"] == pytest.approx(10.0)


@pytest.mark.slow
def test_emulate_isa_caps_every_process_and_says_so(tmp_path):
    """--emulate-isa avx2 re-runs the benchmark with torch, oneDNN and MKL capped at AVX2: the GEMM
    measurements and the radscore run each report ATen's AVX2 kernels, the class says "emulated",
    and the OpenVINO variants (which the cap cannot reach) are skipped with the reason."""
    import json

    from benchmarks.scoring.hardware import check_capability, isa_environment
    from train.rehearsal.tiny import build_tiny_iob_export

    ner = build_tiny_iob_export(tmp_path / "ner", head_std=0.3, o_bias=-1.0)
    out = tmp_path / "bench.json"
    with pytest.raises(SystemExit) as done:  # the run happens in a fresh process with the caps set
        main(["--no-released", "--ner", ner, "--workloads", "sample", "--pairs", "2", "--emulate-isa", "avx2",
              "--variants", "openvino-fp32", "--big", "0", "--released-bs1-pairs", "0", "--gemm-rows", "256",
              "--out", str(out)])
    assert done.value.code == 0
    result = json.loads(out.read_text())
    assert result["hardware_class"] == "avx2-emulated"
    assert result["isa_emulation"]["environment"] == isa_environment("avx2")
    assert result["isa_emulation"]["host_hardware_class"] == cpu_class()["hardware_class"]
    assert {(g["cpu_capability"], g["rows"]) for g in result["gemm_measurements"]} == {("AVX2", 256)}
    w = result["workloads"]["sample"]
    assert "--emulate-isa does not reach it" in w["variants"]["openvino-fp32"]["skipped"]
    assert result_path(result).name == "ratescore_avx2-emulated.json"
    # a run that escaped the cap is an error, not a figure
    with pytest.raises(RuntimeError, match="ran with ATen capability 'AVX512'"):
        check_capability({"cpu_capability": "AVX512"}, "avx2", "radscore")
    with pytest.raises(ValueError, match="cannot emulate"):
        isa_environment("sse2")


class _Pass:
    """A stand-in scorer whose first pass is slow (the one-off costs) and the later ones fast."""

    chunk_size = 2048

    def __init__(self, seconds):
        self.seconds = list(seconds)

    def iter_score(self, cands, refs):
        import time
        from types import SimpleNamespace

        time.sleep(self.seconds.pop(0))
        return [SimpleNamespace(f1=0.5) for _ in cands]


def test_the_first_pass_is_timed_apart_from_the_warm_ones():
    from benchmarks.scoring.bench_ratescore import _timed_passes

    out = _timed_passes(_Pass([0.12, 0.03, 0.01]), ["a"], ["b"], cuda=False, warm_passes=2)
    assert out["score_seconds"] >= 0.12 and out["scores"] == [0.5]
    assert len(out["warm_seconds"]) == 2 and out["warm_best_seconds"] == min(out["warm_seconds"]) < 0.03 + 0.02
    assert out["warm_median_seconds"] == statistics.median(out["warm_seconds"])
    assert out["second_pass_seconds"] == out["warm_seconds"][0] and out["second_pass_max_abs_delta"] == 0.0
    assert "warm_seconds" not in _timed_passes(_Pass([0.0]), ["a"], ["b"], cuda=False)  # the memory runs: cold only


def test_a_variant_is_compared_warm_against_warm(monkeypatch):
    """bf16 slower than fp32 on the first pass and faster after it (what the H100 showed, figures made up
    here): the variant's ratio is the warm one, the cold one beside it, each per pair."""
    import argparse

    from benchmarks.scoring import bench_ratescore, compute_floor

    monkeypatch.setattr(compute_floor, "gemm_throughput",
                        lambda **kw: {"flops_per_s": 1e12, "cpu_capability": "AVX2", "device": "cpu"})
    timings = {"fp32": (2.0, [1.0, 1.2, 0.8]), "bf16": (3.0, [0.5, 0.4, 0.6])}  # seconds for 4 pairs

    def run_ours(cands, refs, ner, encoder, **options):
        if options.get("timed") is False:
            return {"tie_ambiguous": [False] * len(cands), "sentences": {}, "sentences_in_pairs": 8,
                    "distinct_sentences": 8, "ner_pieces": 80, "distinct_entity_texts": 10, "encoder_pieces": 30,
                    "ner_flops": 1e9, "encoder_flops": 1e8}
        assert options["warm_passes"] == 3
        cold, warm = timings[options.get("precision", "fp32")]
        scale = len(cands) / 4
        warm = [t * scale for t in warm]
        return {"scores": [0.5] * len(cands), "score_seconds": cold * scale, "peak_rss_mb": 1.0,
                "warm_seconds": warm, "warm_best_seconds": min(warm), "warm_median_seconds": statistics.median(warm),
                "second_pass_seconds": warm[0], "second_pass_max_abs_delta": 0.0,
                "signature": {"precision": options.get("precision", "fp32"), "batch_size": 64}}

    monkeypatch.setattr(bench_ratescore, "run_ours", run_ours)
    args = argparse.Namespace(device="cpu", emulate_isa=None, released_batch_sizes=[], released_bs1_pairs=0,
                              batch_size=None, radscore_batch_sizes=[], variants=["torch-bf16"], variant_pairs=2,
                              warm_passes=3, ner="ner", gemm_rows=4096)
    w = bench_ratescore.run_workload("sample", ["c"] * 4, ["r"] * 4, args, "enc", None, [])
    v = w["variants"]["torch-bf16"]
    assert v["pairs"] == 2 and v["pairs_per_s"] == pytest.approx(2 / 0.2) and v["pairs_per_s_cold"] == pytest.approx(2 / 1.5)
    assert v["ratio_vs_radscore_fp32"] == pytest.approx(0.8 / 0.4)  # warm best against warm best, per pair
    assert v["ratio_vs_radscore_fp32_warm_median"] == pytest.approx(1.0 / 0.5)
    assert v["ratio_vs_radscore_fp32_cold"] == pytest.approx(2.0 / 3.0)
    assert w["radscore_warm_pairs_per_s"] == pytest.approx(4 / 0.8) and w["radscore_pairs_per_s"] == pytest.approx(2.0)


@pytest.mark.parametrize("script", ["bench_ratescore", "profile_ratescore"])
@pytest.mark.parametrize("rows", ["0", "-4", "many"])
def test_gemm_rows_must_be_a_positive_integer(script, rows, tmp_path, capsys):
    import importlib

    run = importlib.import_module(f"benchmarks.scoring.{script}").main
    with pytest.raises(SystemExit):
        run(["--ner", str(tmp_path), "--gemm-rows", rows])
    assert f"argument --gemm-rows: invalid positive integer value: '{rows}'" in capsys.readouterr().err

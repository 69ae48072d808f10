"""The RaTEScore stage profile (``benchmarks/scoring/profile_ratescore.py``): its stages add up to the
scoring time, each stage is timed where it happens, and its forward passes' FLOPs without
padding are exactly the work the benchmark's fp32 floor counts."""

from __future__ import annotations

import json
import time

import pytest

from benchmarks.scoring.compute_floor import necessary_work
from benchmarks.scoring.profile_ratescore import STAGES, StageClock, main
from benchmarks.scoring.report_pairs import make_workloads


def test_the_stage_clock_counts_exclusive_time():
    clock = StageClock()
    inner = clock.wrap("inner", lambda: time.sleep(0.05))

    def outer():
        time.sleep(0.02)
        inner()

    clock.wrap("outer", outer)()
    assert 0.05 <= clock.seconds["inner"] < 0.07
    assert 0.02 <= clock.seconds["outer"] < 0.04  # the inner stage's time is not counted twice
    assert clock.calls == {"outer": 1, "inner": 1}


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    from train.rehearsal.tiny import build_tiny_bert, build_tiny_iob_export

    root = tmp_path_factory.mktemp("profile")
    return (build_tiny_iob_export(root / "ner", head_std=0.3, o_bias=-1.0), build_tiny_bert(root / "encoder"),
            root)


def test_a_profile_adds_up_and_counts_the_floors_work(tiny_models):
    from radscore import RaTEScore

    ner, encoder, root = tiny_models
    out = root / "profile.json"
    main(["--ner", ner, "--encoder", encoder, "--workloads", "sample", "--pairs", "6", "--gemm-rows", "256",
          "--out", str(out)])
    result = json.loads(out.read_text())
    assert {g["rows"] for g in result["gemm_measurements"]} == {256}
    w = result["workloads"]["sample"]
    assert list(w["stages"]) == list(STAGES)
    assert w["stages_sum_seconds"] == pytest.approx(w["seconds"], rel=0.05, abs=0.02)
    for stage in ("split", "NER tokenize", "NER forward", "encoder forward", "pair scoring"):
        assert w["stages"][stage]["seconds"] > 0 and w["stages"][stage]["calls"] > 0, stage
    cands, refs = make_workloads(["sample"], [6])["sample"]
    assert w["stages"]["split"]["calls"] == len(set(cands + refs))  # each distinct report split once
    work = necessary_work(RaTEScore(ner, encoder, "long", splitter="rush", device="cpu"), cands + refs)
    assert w["forward"]["NER"]["unpadded_gflop"] * 1e9 == pytest.approx(work["ner_flops"], rel=1e-12)
    assert w["forward"]["encoder"]["unpadded_gflop"] * 1e9 == pytest.approx(work["encoder_flops"], rel=1e-12)
    assert w["forward"]["NER"]["padding_factor"] >= 1.0
    assert w["necessary_gflop"] * 1e9 == pytest.approx(work["ner_flops"] + work["encoder_flops"], rel=1e-12)
    assert w["operators"]["matmul_seconds"] > 0 and w["operators"]["other_aten_seconds"] > 0
    assert result["cpu_capability"] and result["gemm_flops_per_s_for_floor"] > 0


def test_the_kernel_timeline_counts_busy_time_once_and_the_gaps_between():
    from benchmarks.scoring.profile_ratescore import busy_and_gaps

    # two overlapping kernels (two streams), one later, one cut by the window's end; times in µs
    line = busy_and_gaps([(5, 6), (0, 2), (1, 3), (9, 14)], start=0, end=10, top=2)  # busy 0-3, 5-6, 9-10
    assert line["busy"] == 5 and line["idle"] == 5 and line["busy_share"] == 0.5
    assert line["kernel_stretches"] == 3 and line["gaps"] == 2 and line["longest_gaps"] == [3, 2]
    idle = busy_and_gaps([], start=0, end=4)
    assert idle["busy_share"] == 0.0 and idle["longest_gaps"] == [4]
    with pytest.raises(ValueError, match="empty window"):
        busy_and_gaps([(0, 1)], start=3, end=3)


def test_profile_trace_summarises_one_pass_on_the_cpu(tiny_models):
    """--profile-trace on the CPU: a warm-up pass, a traced pass, the top operators by self CPU time;
    no CUDA figures where there is no CUDA activity."""
    ner, encoder, root = tiny_models
    out = root / "trace.json"
    main(["--profile-trace", "--device", "cpu", "--ner", ner, "--encoder", encoder, "--workloads", "sample",
          "--pairs", "3", "--top", "5", "--out", str(out)])
    result = json.loads(out.read_text())
    w = result["workloads"]["sample"]
    assert result["device"] == "cpu" and w["device"] == "cpu" and w["pairs"] == 3 and w["precision"] == "fp32"
    assert w["traced_seconds"] > 0 and w["warmup_seconds"] > 0 and w["batch_size"] == 64
    ops = [r["op"] for r in w["top_self_cpu"]]
    assert len(ops) == 5 and any(op in ops for op in ("aten::addmm", "aten::mm", "aten::linear", "aten::bmm"))
    assert [r["self_ms"] for r in w["top_self_cpu"]] == sorted((r["self_ms"] for r in w["top_self_cpu"]), reverse=True)
    assert all(r["calls"] > 0 for r in w["top_self_cpu"]) and w["self_cpu_ms_total"] >= w["top_self_cpu"][0]["self_ms"]
    assert "top_self_cuda" not in w and "gpu_busy_share" not in w
    main(["--profile-trace", "--trace-cold", "--precision", "bf16", "--batch-size", "2", "--ner", ner, "--encoder",
          encoder, "--workloads", "sample", "--pairs", "3", "--out", str(out)])  # the first pass, traced
    w = json.loads(out.read_text())["workloads"]["sample"]
    assert w["warmup_seconds"] is None and "first (cold)" in w["note"] and w["traced_seconds"] > 0
    assert w["precision"] == "bf16" and w["batch_size"] == 2 and w["top_self_cpu"]


def test_the_trace_options_belong_to_the_trace(tiny_models):
    ner, encoder, root = tiny_models
    for extra in (["--device", "cuda"], ["--trace-cold"], ["--precision", "bf16"]):
        with pytest.raises(SystemExit):
            main(["--ner", ner, *extra])

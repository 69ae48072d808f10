"""``make gpu-check`` (benchmarks/gpu_check.py): without CUDA one line and nothing else; with CUDA (stood in
for here: torch's answer and the step runner are replaced) the steps it runs and the files they leave."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from benchmarks import gpu_check

ROOT = Path(__file__).resolve().parents[1]
GPU = "NVIDIA H100 80GB HBM3"
SLUG = "nvidia-h100-80gb-hbm3"


def _results() -> dict[str, float]:
    return {p.name: p.stat().st_mtime for p in (ROOT / "benchmarks" / "results").iterdir()}


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_without_cuda_it_says_so_in_one_line_and_writes_nothing(tmp_path):
    before = _results()
    done = subprocess.run([sys.executable, "-m", "benchmarks.gpu_check", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [gpu_check.NO_CUDA] and "no CUDA device" in done.stderr
    assert not (tmp_path / "out").exists() and _results() == before


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_the_make_target_runs_the_module():
    done = subprocess.run(["make", "-n", "gpu-check"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "-m benchmarks.gpu_check" in done.stdout


@pytest.fixture()
def on_a_gpu(tmp_path, monkeypatch):
    """torch sees a CUDA device; each step is recorded instead of run, and writes what it names (the
    rehearsal its report, into tmp_path); ``failing`` names the steps that exit 1 without writing."""
    calls, failing = [], set()
    report = tmp_path / "rehearsal" / "report.json"

    def run(argv):
        calls.append(argv)
        if any(f in argv for f in failing):
            return 1
        if "rehearse" in argv:
            report.parent.mkdir(parents=True, exist_ok=True)
            report.write_text(json.dumps({"rehearsal": True, "configs": []}))
        else:
            Path(argv[argv.index("--out") + 1]).write_text("{}")
        return 0

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: GPU)
    monkeypatch.setattr(gpu_check, "run", run)
    monkeypatch.setattr(gpu_check, "REHEARSAL_REPORT", report)
    monkeypatch.setattr(gpu_check, "released_available", lambda: True)
    return calls, failing


def test_with_cuda_every_step_runs_with_its_arguments_and_leaves_its_file(on_a_gpu, tmp_path, capsys):
    calls, _ = on_a_gpu
    out = tmp_path / "out"
    assert gpu_check.main(["--out", str(out)]) == 0
    probes = [c for c in calls if c[:3] == ["-m", "train", "memory-probe"]]
    configs = [c[c.index("--config") + 1] for c in probes]
    assert configs == ["configs/ner/iob_deberta_v3.yaml", "configs/ner/span_biolord.yaml",
                       "configs/reward/paper_llama3.yaml", "configs/reward/paper_llama3/phi_2.yaml",
                       "configs/bleurt/paper.yaml"]
    assert all((ROOT / c).is_file() for c in configs)  # an overlay by its own path: memory-probe finds its base
    timing = ["--warmup-steps", "3", "--steps", "5", "--max-steps", "20", "--time-budget-s", "8"]
    for config, probe in zip(configs, probes):
        reduced = {"configs/reward/paper_llama3/phi_2.yaml": ["--layers", "2"],
                   "configs/ner/span_biolord.yaml": ["--batch-size", "8"]}.get(config, [])
        assert probe[3:7] == ["--config", config, "--device", "cuda"] and probe[7:-2] == timing + reduced
    assert ["-m", "train", "rehearse", "--accelerator", "gpu", "--fast", "--no-ablations", "--no-ddp"] in calls
    scoring = [c for c in calls if c[1].startswith("benchmarks.scoring.")]
    assert [c[1] for c in scoring] == ["benchmarks.scoring.bench_ratescore", "benchmarks.scoring.bench_autocast"]
    assert all(c[2:4] == ["--device", "cuda"] and "--no-released" not in c for c in scoring)
    assert len(calls) == 8
    assert sorted(p.name for p in out.iterdir()) == sorted([
        f"autocast_cuda_{SLUG}.json", f"memory_probe_cuda_{SLUG}_bleurt_paper.json",
        f"memory_probe_cuda_{SLUG}_ner_iob_deberta_v3.json", f"memory_probe_cuda_{SLUG}_ner_span_biolord.json",
        f"memory_probe_cuda_{SLUG}_reward_paper_llama3.json", f"memory_probe_cuda_{SLUG}_reward_paper_llama3_phi_2.json",
        f"ratescore_cuda_{SLUG}.json", f"rehearsal_gpu_{SLUG}_report.json"])
    assert json.loads((out / f"rehearsal_gpu_{SLUG}_report.json").read_text())["rehearsal"] is True
    assert "8 of 8 steps ok" in capsys.readouterr().out


def test_a_failing_step_is_reported_and_the_next_ones_still_run(on_a_gpu, tmp_path, capsys):
    calls, failing = on_a_gpu
    failing.update({"configs/reward/paper_llama3/phi_2.yaml", "rehearse"})
    assert gpu_check.main(["--out", str(tmp_path / "out")]) == 1
    assert len(calls) == 8 and calls[-1][1] == "benchmarks.scoring.bench_autocast"
    table = capsys.readouterr().out.split(f"gpu-check on {GPU}:")[-1]
    assert "memory-probe reward_paper_llama3_phi_2" in table and "FAILED (exit 1)" in table
    assert "FAILED (exit 1, no report)" in table and "6 of 8 steps ok" in table
    assert not (tmp_path / "out" / f"rehearsal_gpu_{SLUG}_report.json").exists()


def test_the_rehearsal_report_counts_when_this_run_wrote_it_whatever_its_stamp(on_a_gpu, tmp_path, monkeypatch):
    """A report left by an earlier rehearsal is not this run's; one the step wrote is, even when the file
    system stamps it a little before the step's clock reading (coarse file times)."""
    import os
    import time

    calls, failing = on_a_gpu
    report = gpu_check.REHEARSAL_REPORT
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps({"rehearsal": True, "configs": ["an earlier run"]}))
    os.utime(report, (time.time() - 3600, time.time() - 3600))
    failing.add("rehearse")
    assert gpu_check.main(["--only", "rehearse", "--out", str(tmp_path / "a")]) == 1  # it wrote nothing
    assert not (tmp_path / "a" / f"rehearsal_gpu_{SLUG}_report.json").exists()
    failing.clear()
    fake = gpu_check.run

    def writes_then_stamps_early(argv):  # the report's stamp trails the step's start by 5 ms
        started = time.time()
        code = fake(argv)
        os.utime(report, (started - 0.005, started - 0.005))
        return code

    monkeypatch.setattr(gpu_check, "run", writes_then_stamps_early)
    assert gpu_check.main(["--only", "rehearse", "--out", str(tmp_path / "b")]) == 0
    assert json.loads((tmp_path / "b" / f"rehearsal_gpu_{SLUG}_report.json").read_text())["configs"] == []


def test_only_runs_the_named_steps_and_without_the_released_package_radscore_alone(on_a_gpu, tmp_path, monkeypatch):
    calls, _ = on_a_gpu
    asked = []
    monkeypatch.setattr(gpu_check, "released_available", lambda: asked.append(1) or False)
    assert gpu_check.main(["--only", "memory", "--out", str(tmp_path / "a")]) == 0
    assert len(calls) == 5 and all(c[2] == "memory-probe" for c in calls) and asked == []
    calls.clear()
    assert gpu_check.main(["--only", "scoring", "--only", "rehearse", "--out", str(tmp_path / "b")]) == 0
    assert [c[1] for c in calls] == ["train", "benchmarks.scoring.bench_ratescore", "benchmarks.scoring.bench_autocast"]
    assert "--no-released" in calls[1] and asked == [1]


def test_the_gpu_name_becomes_a_file_name_part():
    assert gpu_check.gpu_slug(GPU) == SLUG
    assert gpu_check.gpu_slug("Tesla V100-SXM2-16GB") == "tesla-v100-sxm2-16gb"

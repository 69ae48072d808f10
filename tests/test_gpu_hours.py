"""benchmarks/gpu_hours.py: the GPU-hours of a paper run from a memory-probe JSON (tokens/s), with the
paper's training rows, the config's epochs, the prompts of a reward pair and the layer scaling."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import gpu_hours  # noqa: E402


def probe(config, tokens_per_s, batch=2, rows=None, length=512, layers=12, real_layers=12, device="cuda"):
    return {"config": config, "model": "m", "device": device, "device_name": "NVIDIA H200", "date": "2026-11-27T00:00:00",
            "batch_size": batch, "rows": rows or batch, "max_length": length, "layers": layers,
            "real_layers": real_layers, "tokens_per_s": tokens_per_s, "step_s": 1.0}


def test_ner_hours_are_the_papers_tokens_over_the_measured_rate():
    r = gpu_hours.predict(probe("configs/ner/iob_deberta_v3.yaml", 127_900))
    assert (r["train_rows"], r["epochs"], r["devices"]) == (40_600, 10, 1)
    assert r["hours"] == pytest.approx(40_600 * 512 * 10 / 127_900 / 3600)
    assert r["gpu_hours"] == r["hours"]


def test_a_reward_pair_is_two_prompts_and_fewer_layers_scale_up():
    r = gpu_hours.predict(probe("configs/reward/paper_llama3.yaml", 10_000, batch=6, rows=12, length=1024,
                                layers=2, real_layers=32))
    assert r["hours"] == pytest.approx(24_000 * 2 * 1024 * 4 / 10_000 * 16 / 3600)
    full = gpu_hours.predict(probe("configs/reward/paper_llama3.yaml", 10_000 / 16, batch=6, rows=12, length=1024,
                                   layers=32, real_layers=32))
    assert full["hours"] == pytest.approx(r["hours"])


def test_bleurt_and_span_configs_have_paper_runs_and_an_unknown_model_is_an_error(tmp_path):
    assert gpu_hours.predict(probe("configs/bleurt/paper.yaml", 1e5))["train_rows"] == 17_852
    assert gpu_hours.predict(probe("configs/ner/span_biolord.yaml", 1e5))["unit"] == "sentences"
    with pytest.raises(SystemExit, match="no paper run is recorded"):
        gpu_hours.predict(probe("configs/tune/sample.yaml", 1e5))


def test_the_command_writes_a_table_and_json_and_says_when_there_is_no_gpu_probe(tmp_path, capsys, monkeypatch):
    path = tmp_path / "memory_probe_cuda_iob.json"
    path.write_text(json.dumps(probe("configs/ner/iob_deberta_v3.yaml", 127_900)))
    out = tmp_path / "hours.json"
    assert gpu_hours.main([str(path), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| `ner/iob_deberta_v3` | NVIDIA H200 (2026-11-27) | 2 × 512 | 12 of 12 | 127,900 |" in text
    assert "40,600 sentences × 10 epochs" in text and "| 0.5 | 0.5 |" in text
    assert json.loads(out.read_text())["rows"][0]["hours"] == pytest.approx(0.4514, abs=1e-3)
    monkeypatch.setattr(gpu_hours, "ROOT", tmp_path)  # no benchmarks/results/memory_probe_cuda_*.json there
    assert gpu_hours.main([]) == 1
    assert "no memory_probe_cuda_*.json yet" in capsys.readouterr().err


def test_the_docs_carry_the_cpu_probe_table_from_the_committed_jsons():
    """docs/reproducing.md's CPU probe table is memory_probe_table.py's output over the committed JSONs
    (a number there that no command produces, or a JSON re-run without the docs, fails here)."""
    import glob

    from memory_probe_table import table

    paths = sorted(glob.glob(str(ROOT / "benchmarks/results/memory_probe_cpu_*.json")))
    assert len(paths) >= 16
    out = table(paths)
    assert out in (ROOT / "docs/reproducing.md").read_text()
    assert "| `reward/paper_llama3` | 1 pair |" in out and "| `bleurt/paper` | 2 |" in out

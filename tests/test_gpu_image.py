"""``benchmarks/gpu/gpu_image.py``: a step rehearsed here in an environment that holds only the GPU
machine's package list lacks exactly what that image lacks, in the step's own process and in its
children, and names what would have to travel."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu" / "gpu_image.py"
sys.path.insert(0, str(ROOT / "benchmarks" / "gpu"))

from gpu_image import IMAGE_DISTRIBUTIONS, available, missing_here  # noqa: E402


def test_what_is_missing_is_what_the_image_lacks():
    missing = {m.lower() for m in missing_here()}
    assert {"jsonargparse", "optuna", "seqeval", "wandb"} <= missing  # training extras: not on the image
    assert not {"torch", "transformers", "peft", "numpy", "pyyaml", "radscore"} & missing
    assert {"torch", "transformers", "pytorch-lightning"} <= IMAGE_DISTRIBUTIONS
    # what an image package needs in its version here is not the step's to carry
    assert {"huggingface-hub", "radscore"} <= available()


def _run(tmp_path, code: str):
    step = tmp_path / "step.py"
    step.write_text(code)
    return subprocess.run([sys.executable, str(SCRIPT), "run", str(step)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)


def test_a_step_that_needs_a_missing_package_fails_and_names_it(tmp_path):
    done = _run(tmp_path, "import torch, yaml\nimport jsonargparse\n")
    assert done.returncode == 1
    assert "No module named 'jsonargparse'" in done.stderr
    assert "the step FAILED (exit 1); imports that failed in its output: jsonargparse;" in done.stderr


def test_children_see_the_same_image_and_optional_imports_look_absent(tmp_path):
    code = ("import importlib.util, subprocess, sys\n"
            "child = subprocess.run([sys.executable, '-c', 'import optuna'], capture_output=True, text=True)\n"
            "assert child.returncode == 1 and \"No module named 'optuna'\" in child.stderr, child.stderr\n"
            "assert importlib.util.find_spec('seqeval') is None and importlib.util.find_spec('torch') is not None\n"
            "import radscore, train  # this repository travels as the working tree\n")
    done = _run(tmp_path, code)
    assert done.returncode == 0, done.stderr
    assert "the step passed" in done.stderr


def test_a_step_that_needs_only_the_image_passes(tmp_path):
    done = _run(tmp_path, "import torch, transformers, peft, pytorch_lightning\nimport radscore\n")
    assert done.returncode == 0, done.stderr
    assert "the step passed; imports that failed in its output: none;" in done.stderr


def test_what_a_child_looked_for_is_named_even_when_its_output_is_elsewhere(tmp_path):
    """A child that writes its failure to a log file (as the rehearsal's stages do) still shows up."""
    code = ("import subprocess, sys\n"
            "with open('child.log', 'w') as log:\n"
            "    subprocess.run([sys.executable, '-c', 'import seqeval'], stdout=log, stderr=log)\n")
    done = _run(tmp_path, code)
    assert done.returncode == 0, done.stderr
    assert "No module named 'seqeval'" in (tmp_path / "child.log").read_text()
    assert "looked for by it or its child processes" in done.stderr and "seqeval" in done.stderr.splitlines()[-1]


def test_a_metadata_check_counts_as_looking_for_a_distribution(tmp_path):
    """Lightning checks ``jsonargparse[signatures]`` through package metadata, not an import."""
    code = ("import importlib.metadata\n"
            "try:\n    importlib.metadata.version('jsonargparse')\nexcept importlib.metadata.PackageNotFoundError:\n"
            "    print('not there')\n")
    done = _run(tmp_path, code)
    assert done.returncode == 0 and "not there" in done.stdout, done.stderr
    assert "jsonargparse" in done.stderr.splitlines()[-1]


def test_a_lasting_environment_is_the_same_image(tmp_path):
    """``env DIR`` keeps the environment (the PYTHON of a CPU rehearsal of benchmarks/gpu_session.sh)."""
    done = subprocess.run([sys.executable, str(SCRIPT), "env", str(tmp_path / "env")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    python = Path(done.stdout.strip())
    assert python == tmp_path / "env" / "bin" / "python" and python.exists()
    probe = subprocess.run([str(python), "-c", "import torch, radscore\nimport jsonargparse"], capture_output=True,
                           text=True, timeout=300)
    assert probe.returncode == 1 and "No module named 'jsonargparse'" in probe.stderr
    again = subprocess.run([sys.executable, str(SCRIPT), "env", str(tmp_path / "env")], capture_output=True, text=True)
    assert again.returncode == 2  # never over an existing folder

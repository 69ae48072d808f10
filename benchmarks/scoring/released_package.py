"""The released ``ratescore`` 0.6.0 package, run in a venv of its own (``.venv-ratescore``, made on
first use: its pinned dependencies need numpy<2), never imported by radscore: :func:`ensure_released_venv`
makes the venv, :func:`run_released` scores pairs there through ``ratescore_driver.py``, and
:func:`tie_ambiguous` flags the pairs on which the two packages may differ by a tie. Used by
``bench_ratescore.py``, ``bench_splitter.py`` and the parity tests (``tests/conftest.py``'s ``released_python``
fixture, ``tests/radscore/test_parity.py``).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "ratescore_driver.py"
RELEASED_VENV = Path(os.environ.get("RADSCORE_RELEASED_VENV", ROOT / ".venv-ratescore"))
# The released wheel declares no dependencies: these are the ones it imports, pinned to a set
# that works together (medspacy needs spacy<3.8, hence numpy<2: the reason for a separate venv).
RELEASED_REQUIREMENTS = ["ratescore==0.6.0", "medspacy==1.3.1", "PyRuSH==1.0.13", "spacy==3.7.5",
                         "numpy==1.26.4", "transformers==5.23.0", "pandas==3.0.6"]
PIP_OPTIONS = ["--quiet", "--retries", "2", "--timeout", "60"]  # fail fast when PyPI is unreachable
TORCH_SPEC = os.environ.get("TORCH_SPEC", "torch==2.13.0")  # first, so pip never pulls a CUDA build


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_released_venv(venv: Path = RELEASED_VENV, log=print) -> Path:
    """The python of a venv holding the released package, made on first use (a few minutes,
    needs PyPI). Raises ``RuntimeError`` with the reason when it cannot be made."""
    python, stamp = _venv_python(venv), venv / ".radscore-stamp"
    wanted = json.dumps([TORCH_SPEC, *RELEASED_REQUIREMENTS])
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder at a time (the tests and the benchmark)
        if stamp.is_file() and stamp.read_text() == wanted and python.is_file():
            return python
        log(f"creating {venv} with the released ratescore package (first use only)")
        steps = [[sys.executable, "-m", "venv", "--clear", str(venv)],
                 [str(python), "-m", "pip", "install", *PIP_OPTIONS, TORCH_SPEC],
                 [str(python), "-m", "pip", "install", *PIP_OPTIONS, *RELEASED_REQUIREMENTS],
                 [str(python), "-c", "import RaTEScore"]]
        for cmd in steps:
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
                raise RuntimeError(f"could not make the released-package venv ({' '.join(cmd[:4])}...): "
                                   + " | ".join(tail))
        stamp.write_text(wanted)
    return python


def run_released(candidates: list[str], references: list[str], ner: str, encoder: str,
                 matrix: str = "long", batch_size: int = 1, entities: bool = False,
                 python: Path | None = None, use_gpu: bool = False, warmup_pairs: int = 0) -> dict:
    """Score pairs with the released package in its venv (see ``ratescore_driver.py`` for the
    result's fields)."""
    python = python or ensure_released_venv()
    ner, encoder = (str(Path(x).resolve()) if Path(x).exists() else str(x) for x in (ner, encoder))
    with tempfile.TemporaryDirectory() as tmp:
        job, out = Path(tmp, "in.json"), Path(tmp, "out.json")
        job.write_text(json.dumps({"candidates": candidates, "references": references, "ner": str(ner),
                                   "encoder": str(encoder), "matrix": matrix, "batch_size": batch_size,
                                   "entities": entities, "use_gpu": use_gpu, "warmup_pairs": warmup_pairs}))
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        done = subprocess.run([str(python), str(DRIVER), str(job), str(out)], capture_output=True,
                              text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"the released package failed:\n{done.stderr[-3000:]}")
        return json.loads(out.read_text())


def tie_ambiguous(pair) -> bool:
    """Does some entity's best match have copies of other types on the other side? Then the
    released package keeps whichever copy's float32 dot product rounds highest, radscore the
    first copy, and the two scores may differ (see tests/radscore/test_parity.py)."""
    for side, other in (("candidate", pair.reference_entities), ("reference", pair.candidate_entities)):
        for record in pair.matches[side]:
            if len({e.type for e in other if e.text == record["matched_entity"]}) > 1:
                return True
    return False

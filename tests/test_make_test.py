"""`make test` keeps its own overhead small.

- It runs pytest with Python's bytecode cache on, even where the environment turns it off
  (PYTHONDONTWRITEBYTECODE=1, as some images do): otherwise each worker rewrites and compiles every test
  file again. The Makefile runs on a copy in a temporary folder whose install is up to date (a fresh stamp)
  and whose python is a stand-in that prints what Python would do: no test runs and nothing is installed.
- Each pytest process freezes its heap before it exits (tests/conftest.py), so that the exit's garbage
  collections do not walk what the tests left."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_make_test_keeps_the_bytecode_cache_on(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\nexec {sys.executable} -c "
                      "'import sys; print(\"dont_write_bytecode:\", sys.dont_write_bytecode)' \"$@\"\n")
    python.chmod(0o755)
    stamp = tmp_path / "venv" / ".installed-stamp"
    stamp.write_text("")
    later = time.time() + 60
    os.utime(stamp, (later, later))  # newer than the Makefile and pyproject.toml: install has nothing to do
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(["make", "-s", "test", "VENV=venv"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "dont_write_bytecode: False", done.stdout


def test_a_pytest_process_freezes_its_heap_before_it_exits(tmp_path):
    probe = tmp_path / "test_probe.py"
    probe.write_text("import atexit, gc\n"
                     "atexit.register(lambda: print('objects frozen at exit:', gc.get_freeze_count()))\n\n\n"
                     "def test_nothing():\n    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(probe)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    frozen = int(done.stdout.strip().splitlines()[-1].split(":")[1])
    assert frozen > 1000, done.stdout

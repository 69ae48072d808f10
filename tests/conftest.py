"""Test-wide settings: nothing reaches a hub or an account."""

import os

os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory):
    """A tiny random BERT (2 layers, hidden 32) with the packaged MiniLM tokenizer: fast tests."""
    from train.tiny import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), seed=0)


@pytest.fixture(scope="session")
def released_python():
    """The python of ``.venv-ratescore``, the released ``ratescore`` package's own venv (made on
    first use by ``benchmarks/bench_ratescore.py``); a test using it skips, with the reason, when
    the venv cannot be made."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_ratescore import ensure_released_venv

    try:
        return ensure_released_venv(log=lambda msg: print(msg, file=sys.stderr))
    except RuntimeError as err:
        pytest.skip(f"the released ratescore package's venv could not be made: {err}")

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

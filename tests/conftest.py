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
    from transformers import AutoTokenizer, BertConfig, BertModel

    from radscore.models import PACKAGED_MINILM, resolve_model_path

    folder = tmp_path_factory.mktemp("tiny_bert")
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(PACKAGED_MINILM))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=512)
    import torch

    torch.manual_seed(0)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)

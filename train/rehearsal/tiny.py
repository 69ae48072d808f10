"""Tiny random models and exports for tests, notebooks and smoke runs.

Every builder writes a folder that ``radscore`` loads like a trained export, from a 2-layer BERT
(hidden size 32) with random weights and the tokenizer of the packaged all-MiniLM-L6-v2, so it is
made in about a second on a CPU and needs no network. The weights are seeded: the same arguments
give the same model. **Nothing these models output means anything**: they are untrained.

:func:`walkthrough_export` is the rule the notebooks use to pick their artefacts: the trained
export when it is there, else a tiny random one (``RADSCORE_NOTEBOOK_TINY=1`` forces the tiny one,
which the test suite does so that the notebooks run fast and give the same output everywhere).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from radscore.export import MANIFEST, write_manifest
from radscore.labels import ID2LABEL, IOB_LABELS
from radscore.models import PACKAGED_MINILM, resolve_model_path

TINY_BACKBONE_NAME = "tiny-random"
FORCE_TINY_ENV = "RADSCORE_NOTEBOOK_TINY"
DEFAULT_REWARD_TEMPLATE = "ref: {reference} [SEP] cand: {candidate}"


def _minilm_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(resolve_model_path(PACKAGED_MINILM))


def tiny_bert_config(tokenizer, **extra):
    """The tiny BERT's configuration: 2 layers, hidden size 32, MiniLM's vocabulary."""
    from transformers import BertConfig

    return BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=2, intermediate_size=64, max_position_embeddings=512, **extra)


def build_tiny_bert(folder: str | Path, seed: int = 0) -> str:
    """A random ``BertModel`` and the MiniLM tokenizer in ``folder``: a backbone or an entity encoder."""
    from transformers import BertModel

    tokenizer = _minilm_tokenizer()
    torch.manual_seed(seed)
    BertModel(tiny_bert_config(tokenizer)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def build_tiny_iob_export(folder: str | Path, seed: int = 0, id2label: dict | None = None,
                          head_std: float = 1.0, o_bias: float = 0.0) -> str:
    """A random token classifier with the SPEC labels (an ``ner-iob`` export). The larger
    ``head_std``, the more spread its logits; ``o_bias`` added to the logit of ``O`` makes it tag
    fewer pieces as entities (``head_std=0.3, o_bias=2.5`` gives a few sparse entities)."""
    from transformers import BertForTokenClassification

    tokenizer = _minilm_tokenizer()
    id2label = id2label or dict(ID2LABEL)
    config = tiny_bert_config(tokenizer, num_labels=len(id2label), id2label=id2label,
                              label2id={v: k for k, v in id2label.items()})
    torch.manual_seed(seed)
    model = BertForTokenClassification(config)
    with torch.no_grad():  # a spread-out head, so the random model tags entities of all types
        model.classifier.weight.normal_(0.0, head_std)
        if "O" in config.label2id:
            model.classifier.bias[config.label2id["O"]] += o_bias
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    write_manifest(folder, "ner-iob", backbone=TINY_BACKBONE_NAME, labels=list(IOB_LABELS))
    return str(folder)


def build_tiny_span_export(folder: str | Path, seed: int = 0) -> str:
    """A random PURE span model (an ``ner-span`` export, spans up to 4 words)."""
    from transformers import BertModel

    from radscore.span_model import SpanClassifierHead, SpanNERModel

    tokenizer = _minilm_tokenizer()
    torch.manual_seed(seed)
    model = SpanNERModel(BertModel(tiny_bert_config(tokenizer)),
                         SpanClassifierHead(32, max_span_width=4, width_dim=8, mlp_hidden=16))
    with torch.no_grad():  # favour "none" less than a random head would, so some spans are kept
        model.head.mlp[-1].weight.normal_(0.0, 1.0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    write_manifest(folder, "ner-span", backbone=TINY_BACKBONE_NAME, max_span_width=4)
    return str(folder)


def build_tiny_bleurt_export(folder: str | Path, backbone: str, max_length: int = 64, manifest: bool = True,
                             num_labels: int = 1) -> str:
    """A ClinicalBLEURT export (kind ``bleurt``): a random regression head on ``backbone``."""
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tok = AutoTokenizer.from_pretrained(backbone)
    config = BertConfig.from_pretrained(backbone, num_labels=num_labels)
    torch.manual_seed(1)
    BertForSequenceClassification(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    if manifest:
        write_manifest(folder, "bleurt", backbone=backbone, max_length=max_length)
    return str(folder)


def build_tiny_reward_export(folder: str | Path, backbone: str, system, seed: int = 1,
                             template: str = DEFAULT_REWARD_TEMPLATE, max_length: int = 64, full: bool = False,
                             candidate_format: str = "plain"):
    """An ER²Score export (kind ``reward``) on ``backbone`` (e.g. :func:`build_tiny_bert`) for
    ``system`` (a name, dict or :class:`~radscore.systems.ScoringSystem`), with LoRA on query and
    value (``full``: the whole model trained, no LoRA) and every trainable weight moved at random
    (LoRA's B starts at zero, which would leave the adapter without effect). Returns the saved
    :class:`~radscore.reward_model.MultiRewardModel` in eval mode."""
    from radscore.reward_model import LoraSettings, MultiRewardModel

    torch.manual_seed(seed)
    model = MultiRewardModel.build(backbone, system, template, max_length,
                                   LoraSettings(r=4, target_modules=["query", "value"]), full=full,
                                   candidate_format=candidate_format)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.requires_grad:
                parameter.add_(torch.randn_like(parameter) * 0.5)
    model.save(folder)
    write_manifest(folder, "reward", base_model=backbone, system=model.system.name)
    return model.eval()


@dataclass(frozen=True)
class WalkthroughExport:
    """The export a notebook uses: its folder, whether it is a tiny untrained stand-in, and why."""

    folder: str
    untrained: bool
    reason: str


def force_tiny() -> bool:
    """True when ``RADSCORE_NOTEBOOK_TINY`` is set to 1/true/yes (case-insensitive)."""
    return os.environ.get(FORCE_TINY_ENV, "").strip().lower() in ("1", "true", "yes")


def walkthrough_export(trained: str | Path, build_tiny: Callable[[Path], str], scratch: str | Path) -> WalkthroughExport:
    """``trained`` when it holds an export (a ``radscore_manifest.json``) and the tiny artefacts
    are not forced; else ``build_tiny(scratch / "tiny_export")``, marked untrained."""
    trained = Path(trained)
    if force_tiny():
        why = f"{FORCE_TINY_ENV}=1 forces the tiny random artefacts"
    elif not (trained / MANIFEST).is_file():
        why = f"no trained export at {trained}"
    else:
        return WalkthroughExport(str(trained), False, f"the trained export at {trained}")
    folder = Path(scratch) / "tiny_export"
    return WalkthroughExport(build_tiny(folder), True,
                             f"{why}: a tiny RANDOM, UNTRAINED model stands in; its outputs mean nothing")

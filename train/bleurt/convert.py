"""Load BLEURT checkpoints (the ``bleurt-pytorch`` layout) with transformers 5 classes only.

The PyPI package ``bleurt-pytorch`` 0.0.1 does not import under transformers 5 (it imports
``find_pruneable_heads_and_indices`` from ``transformers.pytorch_utils``, which was removed), so
this module reads its checkpoints (e.g. ``lucadiliello/BLEURT-20-D12``: ``config.json`` with
``model_type: "bleurt"``, the weights, ``spm.model`` or ``vocab.txt``) into standard classes:

- BLEURT's network is BERT plus, when ``embedding_size`` differs from ``hidden_size``, a linear
  projection from the embeddings to the first layer; the head is BERT's pooler (dense + tanh on
  ``[CLS]``) and one linear output. With a projection that is exactly
  ``RemBertForSequenceClassification`` (``input_embedding_size`` = ``embedding_size``,
  projection = ``encoder.embedding_hidden_mapping_in``); without one it is
  ``BertForSequenceClassification``. Weights are renamed one to one and loaded strictly.
- The SentencePiece vocabulary (``spm.model``; ``BleurtSPTokenizer`` was a DeBERTa-v2 tokenizer
  with ``[CLS]``/``[SEP]``/``[PAD]``) becomes a fast ``DebertaV2Tokenizer``, read with protobuf
  (no ``sentencepiece`` package needed). Its normaliser is the fast tokenizer's (NFC, white space
  collapsed), not the SentencePiece model's NFKC map: texts whose NFKC and NFC forms differ
  (full-width forms, ligatures) may tokenize differently from the original. A WordPiece
  ``vocab.txt`` (the older BLEURT-base checkpoints) becomes a ``BertTokenizer``.

:func:`load_regressor` and :func:`load_tokenizer` accept any backbone: a BLEURT checkpoint is
converted on the fly, anything else goes to ``AutoModelForSequenceClassification(num_labels=1)``
and ``AutoTokenizer``. ``python -m train bleurt-convert SRC --out DIR`` writes a converted folder
that ``radscore.ClinicalBLEURT`` and ``from_pretrained`` load directly.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from radscore.models import resolve_model_path
from train.lightning.architectures import bleurt_hf_config

BLEURT_FILES = ["config.json", "*.safetensors", "*.bin", "spm.model", "vocab.txt", "tokenizer_config.json"]
SPECIAL = {"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
           "mask_token": "[MASK]", "bos_token": "[CLS]", "eos_token": "[SEP]"}


def _local(name: str) -> Path | None:
    path = Path(resolve_model_path(name))
    return path if path.is_dir() else None


def bleurt_folder(name: str) -> Path | None:
    """The local folder of a BLEURT (bleurt-pytorch) checkpoint, or None when ``name`` is not one.
    A Hub id is downloaded (config first; the rest only when it is a BLEURT checkpoint)."""
    local = _local(name)
    if local is not None:
        cfg = local / "config.json"
        if cfg.is_file() and json.loads(cfg.read_text()).get("model_type") == "bleurt":
            return local
        return None
    if Path(name).exists() or "/" not in name:
        return None
    from huggingface_hub import hf_hub_download, snapshot_download

    try:
        cfg = json.loads(Path(hf_hub_download(name, "config.json")).read_text())
    except Exception:  # not reachable or no config: let from_pretrained raise its own error
        return None
    if cfg.get("model_type") != "bleurt":
        return None
    return Path(snapshot_download(name, allow_patterns=BLEURT_FILES))


def _bleurt_state_dict(folder: Path) -> dict[str, torch.Tensor]:
    files = sorted(folder.glob("*.safetensors"))
    if files:
        from safetensors.torch import load_file

        state = {}
        for f in files:
            state.update(load_file(str(f)))
        return state
    files = sorted(folder.glob("*.bin"))
    if not files:
        raise FileNotFoundError(f"{folder}: no weights (*.safetensors or *.bin)")
    state = {}
    for f in files:
        state.update(torch.load(f, map_location="cpu", weights_only=True))
    return state


def rename_bleurt_weights(state: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    """bleurt-pytorch names -> ``prefix`` (``rembert``/``bert``) names; position id buffers dropped."""
    out = {}
    for key, value in state.items():
        if key.endswith("position_ids"):
            continue
        new = key
        if new.startswith("bleurt."):
            new = prefix + new[len("bleurt"):]
        new = new.replace(".encoder.embedding_projection.", ".encoder.embedding_hidden_mapping_in.")
        out[new] = value
    return out


def convert_bleurt_model(folder: Path, classifier_dropout: float | None = None):
    """A ``RemBertForSequenceClassification``/``BertForSequenceClassification`` with the BLEURT weights."""
    from transformers import AutoModelForSequenceClassification

    bleurt_cfg = json.loads((folder / "config.json").read_text())
    config = bleurt_hf_config(bleurt_cfg, classifier_dropout)
    model = AutoModelForSequenceClassification.from_config(config)
    prefix = model.base_model_prefix
    state = rename_bleurt_weights(_bleurt_state_dict(folder), prefix)
    expected = {k for k in model.state_dict() if not k.endswith("position_ids")}
    missing, unexpected = sorted(expected - set(state)), sorted(set(state) - expected)
    if missing or unexpected:
        raise ValueError(f"{folder}: BLEURT weights do not match a {type(model).__name__}: "
                         f"missing {missing[:8]}{'…' if len(missing) > 8 else ''}, "
                         f"unexpected {unexpected[:8]}{'…' if len(unexpected) > 8 else ''}")
    for key, value in state.items():
        if model.state_dict()[key].shape != value.shape:
            raise ValueError(f"{folder}: weight {key} has shape {tuple(value.shape)}, the config "
                             f"implies {tuple(model.state_dict()[key].shape)}")
    model.load_state_dict(state, strict=False)
    return model


def read_sentencepiece_vocab(path: Path) -> tuple[list[tuple[str, float]], int]:
    """``([(piece, score)], unk id)`` of a SentencePiece model file, read with protobuf."""
    from transformers.utils import sentencepiece_model_pb2_new as spm_pb2

    proto = spm_pb2.ModelProto()
    proto.ParseFromString(path.read_bytes())
    if not proto.pieces:
        raise ValueError(f"{path}: not a SentencePiece model (no pieces)")
    vocab = [(p.piece, float(p.score)) for p in proto.pieces]
    unk = [i for i, p in enumerate(proto.pieces) if p.type == spm_pb2.ModelProto.SentencePiece.UNKNOWN]
    return vocab, unk[0] if unk else proto.trainer_spec.unk_id


def convert_bleurt_tokenizer(folder: Path):
    """The fast tokenizer of a BLEURT checkpoint (module doc)."""
    from transformers import BertTokenizer, DebertaV2Tokenizer

    cfg_file = folder / "tokenizer_config.json"
    cfg = json.loads(cfg_file.read_text()) if cfg_file.is_file() else {}
    lower = bool(cfg.get("do_lower_case", False))
    if (folder / "spm.model").is_file():
        vocab, unk = read_sentencepiece_vocab(folder / "spm.model")
        return DebertaV2Tokenizer(vocab=vocab, unk_id=unk, do_lower_case=lower, model_max_length=512,
                                  **SPECIAL)
    if (folder / "vocab.txt").is_file():
        return BertTokenizer(vocab=str(folder / "vocab.txt"), do_lower_case=lower, model_max_length=512)
    raise FileNotFoundError(f"{folder}: no spm.model or vocab.txt for the BLEURT tokenizer")


def load_regressor(backbone: str, classifier_dropout: float | None = None):
    """A sequence regressor (one output) from any backbone; BLEURT checkpoints are converted."""
    folder = bleurt_folder(backbone)
    if folder is not None:
        return convert_bleurt_model(folder, classifier_dropout)
    from transformers import AutoModelForSequenceClassification

    kwargs = {"classifier_dropout": classifier_dropout} if classifier_dropout is not None else {}
    return AutoModelForSequenceClassification.from_pretrained(
        resolve_model_path(backbone), num_labels=1, problem_type="regression", **kwargs)


def load_tokenizer(backbone: str):
    folder = bleurt_folder(backbone)
    if folder is not None:
        return convert_bleurt_tokenizer(folder)
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(resolve_model_path(backbone))


def convert(source: str, out_dir: str | Path) -> Path:
    """Write a converted BLEURT checkpoint (weights as safetensors and tokenizer) to ``out_dir``.

    Written whole into a hidden sibling folder that then takes the place of ``out_dir`` (``staged_export``
    of ``train.release.base``): a kill leaves the previous conversion or the new one, never a mix. An
    existing ``out_dir`` is replaced only when empty or a model folder (it holds ``config.json``)."""
    from train.release.base import staged_export

    folder = bleurt_folder(source)
    if folder is None:
        raise ValueError(f"{source}: not a BLEURT (bleurt-pytorch) checkpoint: its config.json "
                         "must say model_type 'bleurt'")
    with staged_export(out_dir, marker="config.json") as staging:
        convert_bleurt_model(folder).save_pretrained(staging)
        convert_bleurt_tokenizer(folder).save_pretrained(staging)
    return Path(out_dir)


def main(argv: list[str]) -> int:
    """``python -m train bleurt-convert <BLEURT folder or Hub id> --out DIR``."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m train bleurt-convert",
                                description="convert a BLEURT (bleurt-pytorch layout) checkpoint into "
                                "a transformers 5 sequence-regression folder")
    p.add_argument("source", help="folder or Hub id, e.g. lucadiliello/BLEURT-20-D12")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    print(f"converted to {convert(a.source, a.out)}")
    return 0

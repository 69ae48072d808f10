"""Entity embeddings: the synonym-aware encoder of RaTEScore.

Each entity text is tokenized alone (``max_length=30`` pieces, as the released package does) and
encoded; its vector is either the ``[CLS]`` state (``pooling="cls"``, the released behaviour) or
the mean of the non-padding states (``pooling="mean"``, how sentence-transformers models such as
all-MiniLM-L6-v2 were trained). Each distinct text is encoded once per call, in batches sorted by
length, under ``torch.inference_mode`` (``torch.no_grad`` under bf16 autocast: :func:`radscore.device.no_grad_for`),
each batch's vectors read one batch late (:class:`radscore.ner.Deferred`: the next batch is launched first).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from radscore.device import no_grad_for
from radscore.models import PACKAGED_MINILM, resolve_model_path
from radscore.ner import Deferred, length_batches, pad_batch, pick_device

POOLINGS = ("cls", "mean")
ENTITY_MAX_LENGTH = 30  # pieces per entity text, special tokens included (released value)


class EntityEncoder:
    """Embeds entity texts with a Hugging Face encoder (a folder or a Hub id).

    Args:
        source: model folder, Hub id, or ``"packaged:all-MiniLM-L6-v2"`` (the default).
        pooling: ``"cls"`` or ``"mean"``.
        device: ``None`` picks CUDA when present, else the CPU.
        batch_size: texts per forward pass.
        trust_remote_code: run the modelling code a Hub repository ships (e.g. CXR-BERT,
            BioViL-T); off by default: it executes that repository's Python code.
    """

    def __init__(self, source: str = PACKAGED_MINILM, pooling: str = "cls", device=None,
                 batch_size: int = 256, max_length: int = ENTITY_MAX_LENGTH, trust_remote_code: bool = False):
        from transformers import AutoModel, AutoTokenizer

        if pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r}; expected one of {list(POOLINGS)}")
        self.source, self.pooling, self.max_length = str(source), pooling, int(max_length)
        self.device = pick_device(device, "entity encoder")
        self.batch_size = max(1, int(batch_size))
        path = resolve_model_path(self.source)
        remote = {"trust_remote_code": True} if trust_remote_code else {}
        self.tokenizer = AutoTokenizer.from_pretrained(path, **remote)
        self.model = AutoModel.from_pretrained(path, **remote).eval().to(self.device)

    @property
    def dim(self) -> int:
        return int(self.model.config.hidden_size)

    def __call__(self, texts: Sequence[str]) -> tuple[dict[str, int], np.ndarray]:
        """``(row of each distinct text, embeddings (n_distinct, dim) float32)``."""
        index: dict[str, int] = {}
        for t in texts:
            if t not in index:
                index[t] = len(index)
        distinct = list(index)
        out = np.zeros((len(distinct), self.dim), dtype=np.float32)
        if not distinct:
            return index, out
        ids = self.tokenizer(distinct, truncation=True, max_length=self.max_length,
                             verbose=False)["input_ids"]
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0

        def read(batch, vec):  # one transfer and one host sync per batch, a batch late (Deferred)
            out[batch] = vec.cpu().numpy()

        pending = Deferred(read)
        with no_grad_for(self.device):
            for batch in length_batches([len(r) for r in ids], self.batch_size):
                x, mask = pad_batch([ids[k] for k in batch], pad, self.device)
                hidden = self.model(input_ids=x, attention_mask=mask).last_hidden_state
                if self.pooling == "cls":
                    vec = hidden[:, 0]
                else:
                    m = mask.unsqueeze(-1).to(hidden.dtype)
                    vec = (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)
                pending.push(batch, vec.float().contiguous())  # (a copy of the [CLS] rows: the batch's states are freed)
            pending.finish()
        return index, out

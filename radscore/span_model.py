"""The PURE-style span entity model (Zhong & Chen 2021), as used by RaTEScore's span NER.

Every span of up to ``max_span_width`` words is represented by the encoder's hidden states at
its first and last sub-word piece plus a learned width embedding, and an MLP classifies it into
one of the five RaTE types or "none" (class 0).

Decoding rule (:func:`decode_spans`): keep the spans whose best class is not "none", then accept
them greedily by descending probability of that class, skipping any span that overlaps one
already accepted (ties: the earlier, then the shorter span first). The result never overlaps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import torch
from torch import nn

from radscore.atomic import atomic_path, write_json_atomic
from radscore.labels import ENTITY_TYPES

SPAN_CLASSES: tuple[str, ...] = ("none", *ENTITY_TYPES)
HEAD_FILE = "span_head.safetensors"
HEAD_CONFIG = "span_head.json"


def enumerate_spans(n_words: int, max_width: int) -> list[tuple[int, int]]:
    """All ``(start, end)`` word spans (inclusive) of at most ``max_width`` words, in order."""
    return [(s, e) for s in range(n_words) for e in range(s, min(n_words, s + max_width))]


def decode_spans(spans: Sequence[tuple[int, int]], probs: torch.Tensor) -> list[tuple[int, int, str]]:
    """Non-overlapping typed entities from per-span class probabilities ``(n_spans, 6)``."""
    if len(spans) == 0:
        return []
    best_p, best_c = probs.max(dim=-1)
    candidates = [
        (-float(best_p[k]), spans[k][0], spans[k][1] - spans[k][0], k)
        for k in range(len(spans)) if int(best_c[k]) != 0
    ]
    taken: set[int] = set()
    out = []
    for _, start, _, k in sorted(candidates):
        end = spans[k][1]
        if any(i in taken for i in range(start, end + 1)):
            continue
        taken.update(range(start, end + 1))
        out.append((start, end, SPAN_CLASSES[int(best_c[k])]))
    return sorted(out)


class SpanClassifierHead(nn.Module):
    """Width embedding + MLP over ``[h_start; h_end; w_width]``."""

    def __init__(self, hidden_size: int, max_span_width: int = 8, width_dim: int = 150,
                 mlp_hidden: int = 150, mlp_layers: int = 2, dropout: float = 0.2,
                 num_classes: int = len(SPAN_CLASSES)):
        super().__init__()
        self.config = dict(hidden_size=hidden_size, max_span_width=max_span_width,
                           width_dim=width_dim, mlp_hidden=mlp_hidden, mlp_layers=mlp_layers,
                           dropout=dropout, num_classes=num_classes)
        self.width_embedding = nn.Embedding(max_span_width, width_dim)
        layers: list[nn.Module] = []
        size = 2 * hidden_size + width_dim
        for _ in range(mlp_layers):
            layers += [nn.Linear(size, mlp_hidden), nn.ReLU(), nn.Dropout(dropout)]
            size = mlp_hidden
        layers.append(nn.Linear(size, num_classes))
        self.mlp = nn.Sequential(*layers)

    def forward(self, hidden: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor,
                widths: torch.Tensor) -> torch.Tensor:
        """hidden (B, T, H); starts/ends/widths (B, S) piece indices and widths-1 -> (B, S, C)."""
        idx = lambda pos: pos.unsqueeze(-1).expand(-1, -1, hidden.size(-1))
        x = torch.cat([hidden.gather(1, idx(starts)), hidden.gather(1, idx(ends)), self.width_embedding(widths)],
                      dim=-1)
        # layer by layer rather than self.mlp(x): no name or call frame keeps the gathered states and
        # their concatenation (4h + w values a span at the encoder's dtype) once the first layer has
        # read them — at a training batch of 32 × 512 pieces 1.6 GiB of a step's peak
        for layer in self.mlp:
            x = layer(x)
        return x


class SpanNERModel(nn.Module):
    """An encoder (any ``AutoModel``) plus :class:`SpanClassifierHead`."""

    def __init__(self, encoder: nn.Module, head: SpanClassifierHead):
        super().__init__()
        self.encoder = encoder
        self.head = head

    @property
    def max_span_width(self) -> int:
        return self.head.config["max_span_width"]

    def forward(self, input_ids, attention_mask, span_starts, span_ends, span_widths, **encoder_kwargs):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                              **encoder_kwargs).last_hidden_state
        return self.head(hidden, span_starts, span_ends, span_widths)

    @classmethod
    def from_backbone(cls, backbone: str, **head_kwargs) -> "SpanNERModel":
        from transformers import AutoModel

        encoder = AutoModel.from_pretrained(backbone)
        return cls(encoder, SpanClassifierHead(encoder.config.hidden_size, **head_kwargs))

    def save_pretrained(self, folder: str | Path) -> None:
        """Encoder via ``save_pretrained`` plus the head's safetensors and its JSON config."""
        from safetensors.torch import save_file

        folder = Path(folder)
        self.encoder.save_pretrained(folder)
        state = {k: v.detach().cpu().contiguous() for k, v in self.head.state_dict().items()}
        with atomic_path(folder / HEAD_FILE) as tmp:
            save_file(state, str(tmp))
        write_json_atomic(folder / HEAD_CONFIG, {**self.head.config, "classes": list(SPAN_CLASSES)},
                          ensure_ascii=True)

    @classmethod
    def from_pretrained(cls, folder: str | Path) -> "SpanNERModel":
        from safetensors.torch import load_file
        from transformers import AutoModel

        folder = Path(folder)
        if not (folder / HEAD_CONFIG).is_file():
            raise ValueError(f"{folder}: not a span NER export (no {HEAD_CONFIG})")
        cfg = json.loads((folder / HEAD_CONFIG).read_text())
        classes = tuple(cfg.pop("classes", SPAN_CLASSES))
        if classes != SPAN_CLASSES:
            raise ValueError(f"{folder}: span classes {list(classes)} differ from {list(SPAN_CLASSES)}")
        head = SpanClassifierHead(**cfg)
        head.load_state_dict(load_file(str(folder / HEAD_FILE)))
        return cls(AutoModel.from_pretrained(folder), head)


def word_piece_bounds(word_ids: Sequence[int | None]) -> dict[int, tuple[int, int]]:
    """First and last sub-word piece of every word present in ``word_ids`` (a fast tokenizer's
    ``word_ids()``); words cut off by truncation are absent."""
    bounds: dict[int, tuple[int, int]] = {}
    for piece, word in enumerate(word_ids):
        if word is None:
            continue
        first = bounds.get(word, (piece, piece))[0]
        bounds[word] = (first, piece)
    return bounds

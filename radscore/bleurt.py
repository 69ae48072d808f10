"""``ClinicalBLEURT``: score candidate sections against references with a trained regressor (SPEC §4).

The model is a cross-encoder: ``[CLS] reference [SEP] candidate [SEP]`` (the tokenizer's own
pair template) goes through the encoder, the pooled ``[CLS]`` state through one linear output;
the output is the predicted quality (``1 - error_score / max_sentlen`` for ClinicalBLEURT
exports; higher is better, it may fall below 0 or rise above 1).

**Pairs longer than the model's maximum** (``max_length`` pieces, special tokens included) are
never truncated silently. The rule, the same at training and at scoring (:func:`encode_pairs`),
is BLEURT's own "longest first": pieces are removed from the end of the longer text until the
pair fits, so a text that fits in half the budget is kept whole and two long texts keep half the
budget each (the beginning of each). Such a pair is scored on what was kept and its result says
so: ``truncated=True``, with the piece counts before and after (:class:`BleurtScore`).

Inputs are checked with :func:`radscore.inputs.check_reports`. An empty candidate or reference
is scored like any text (the training data had empty sections removed, so such a score is an
extrapolation). Pairs are scored in batches sorted by length, under ``torch.inference_mode``,
with a tqdm progress bar; results come back in input order.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator, Sequence

import torch

from radscore.export import MANIFEST, read_manifest
from radscore.inputs import check_reports, pair_arguments
from radscore.scorer import Scorer
from radscore.text import check_candidate_format, format_inputs


@dataclass
class EncodedPair:
    """One tokenized pair, after the length rule of the module doc."""

    input_ids: list[int]
    token_type_ids: list[int] | None
    reference_pieces: int  # pieces of the reference text before truncation
    candidate_pieces: int
    kept_reference_pieces: int
    kept_candidate_pieces: int

    @property
    def truncated(self) -> bool:
        return (self.kept_reference_pieces < self.reference_pieces
                or self.kept_candidate_pieces < self.candidate_pieces)


@dataclass
class BleurtScore:
    """The score of one candidate against its reference, and whether the pair was truncated."""

    score: float
    truncated: bool
    reference_pieces: int
    candidate_pieces: int
    kept_reference_pieces: int
    kept_candidate_pieces: int

    def to_dict(self) -> dict:
        return asdict(self)

    def to_record(self) -> dict:
        """The pair's record (:class:`radscore.scorer.Scorer`): :meth:`to_dict`."""
        return self.to_dict()


def longest_first(n_reference: int, n_candidate: int, budget: int) -> tuple[int, int]:
    """Pieces kept of each text so that they fit in ``budget``: remove from the longer first."""
    if budget < 0:
        raise ValueError(f"a pair budget of {budget} pieces leaves no room for text")
    if n_reference + n_candidate <= budget:
        return n_reference, n_candidate
    half = budget // 2
    if n_reference <= half:
        return n_reference, budget - n_reference
    if n_candidate <= budget - half:
        return budget - n_candidate, n_candidate
    return half, budget - half


def encode_pairs(tokenizer, references: list[str], candidates: list[str], max_length: int,
                 candidate_format: str = "plain") -> list[EncodedPair]:
    """Tokenize ``(reference, candidate)`` pairs with the tokenizer's pair template and apply the
    length rule of the module doc. Needs a fast tokenizer (for ``sequence_ids``). ``candidate_format``
    ``diff_marked`` (an opt-in, :func:`radscore.text.mark_differences`) marks the candidate's differences
    from its reference before tokenizing, ``diff_only`` (opt-in) pairs an empty reference with the marked
    candidate; ``plain`` (default) is ClinicalBLEURT's input."""
    if len(references) != len(candidates):
        raise ValueError(f"{len(references)} references but {len(candidates)} candidates")
    if not references:
        return []
    references, candidates = format_inputs(candidate_format, references, candidates)
    enc = tokenizer(references, candidates, add_special_tokens=True, truncation=False,
                    return_token_type_ids=True, verbose=False)
    if not hasattr(enc, "sequence_ids"):
        raise TypeError(f"{type(tokenizer).__name__} is not a fast tokenizer; ClinicalBLEURT needs one")
    has_types = "token_type_ids" in getattr(tokenizer, "model_input_names", ())
    out = []
    for i, ids in enumerate(enc["input_ids"]):
        seq = enc.sequence_ids(i)
        n_ref, n_cand = seq.count(0), seq.count(1)
        n_special = len(ids) - n_ref - n_cand
        keep_ref, keep_cand = longest_first(n_ref, n_cand, max_length - n_special)
        kept, seen = [], {0: 0, 1: 0}
        for pos, s in enumerate(seq):
            if s is not None:
                seen[s] += 1
                if seen[s] > (keep_ref if s == 0 else keep_cand):
                    continue
            kept.append(pos)
        types = enc["token_type_ids"][i] if has_types else None
        out.append(EncodedPair([ids[p] for p in kept], [types[p] for p in kept] if types else None,
                               n_ref, n_cand, keep_ref, keep_cand))
    return out


def collate_pairs(pairs: list[EncodedPair], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-padded ``input_ids``, ``attention_mask`` and (when the model uses them) ``token_type_ids``."""
    length = max(len(p.input_ids) for p in pairs)
    ids = torch.full((len(pairs), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(pairs), length), dtype=torch.long)
    types = torch.zeros((len(pairs), length), dtype=torch.long)
    for k, p in enumerate(pairs):
        n = len(p.input_ids)
        ids[k, :n] = torch.tensor(p.input_ids)
        mask[k, :n] = 1
        if p.token_type_ids is not None:
            types[k, :n] = torch.tensor(p.token_type_ids)
    batch = {"input_ids": ids, "attention_mask": mask}
    if pairs[0].token_type_ids is not None:
        batch["token_type_ids"] = types
    return batch


def model_max_length(model, tokenizer, wanted: int | None = None) -> int:
    """The longest pair the model reads: the smallest of ``wanted``, the position table and the
    tokenizer's own limit (when it states a real one)."""
    limits = [wanted] if wanted else []
    positions = getattr(model.config, "max_position_embeddings", None)
    if positions:
        limits.append(int(positions))
    tok_limit = getattr(tokenizer, "model_max_length", None)
    if tok_limit and tok_limit < 1_000_000:
        limits.append(int(tok_limit))
    if not limits:
        raise ValueError("cannot tell the model's maximum length; pass max_length")
    return min(limits)


class ClinicalBLEURT(Scorer):
    """A ClinicalBLEURT export (``python -m train fit --config configs/bleurt/<name>.yaml``) or any sequence-regression folder.

    Args:
        model: export folder (manifest kind ``bleurt``), or a folder/Hub id holding a
            ``*ForSequenceClassification`` model with one output (e.g. a converted BLEURT-20,
            ``python -m train bleurt-convert``).
        batch_size: pairs per forward pass; ``None`` (default): the device's default, 32 on the
            CPU and 128 on CUDA (:data:`radscore.device.DEFAULT_BATCH_SIZES`).
        device: ``None`` picks CUDA when present, else the CPU; ``"cpu"``, ``"cuda"``, ``"cuda:1"``
            or a :class:`torch.device`. The model and every input go there; CUDA where torch sees
            none is a ``ValueError``.
        max_length: longest pair in pieces; default: the length the export was trained with,
            capped by the model's position table.
    """

    def __init__(self, model: str, batch_size: int | None = None, device=None, max_length: int | None = None):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from radscore.device import resolve_batch_size, resolve_device
        from radscore.hub import snapshot

        self.device = resolve_device(device, "ClinicalBLEURT")
        self.batch_size = resolve_batch_size(batch_size, "ClinicalBLEURT", self.device)
        self.source = str(model)
        self.path = path = snapshot(self.source, "ClinicalBLEURT model")
        self.manifest = read_manifest(path, "bleurt") if Path(path, MANIFEST).is_file() else None
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForSequenceClassification.from_pretrained(path)
        if self.model.config.num_labels != 1:
            raise ValueError(f"{model}: a regressor has one output, this model has "
                             f"{self.model.config.num_labels} labels")
        self.model.to(self.device).eval()
        trained = (self.manifest or {}).get("max_length")
        self.max_length = model_max_length(self.model, self.tokenizer, max_length or trained)
        #: how the export's model read its candidates (exports from before the key, and plain folders: plain)
        self.candidate_format = check_candidate_format((self.manifest or {}).get("candidate_format", "plain"))
        pad = self.tokenizer.pad_token_id
        self.pad_id = 0 if pad is None else pad

    @classmethod
    def from_export(cls, source: str, **options) -> "ClinicalBLEURT":
        """The scorer of an export folder or Hub id (``model=source``)."""
        return cls(source, **options)

    def signature(self) -> dict:
        """What produced the scores: the model, its length limit and the radscore version."""
        from radscore.version import __version__

        from radscore.hub import fingerprint

        return {"radscore": __version__, "model": {**fingerprint(self.path), "source": self.source},
                "max_length": self.max_length,
                "length_rule": "longest_first", "target": (self.manifest or {}).get("target"),
                "candidate_format": self.candidate_format,
                "device": str(self.device), "batch_size": self.batch_size}

    @torch.inference_mode()
    def predict(self, pairs: list[EncodedPair]) -> list[float]:
        """Model outputs for encoded pairs, in order (batches as given)."""
        batch = {k: v.to(self.device) for k, v in collate_pairs(pairs, self.pad_id).items()}
        logits = self.model(**batch).logits
        return logits.squeeze(-1).float().cpu().tolist()

    def iter_score(self, candidates: Sequence[str], references: Sequence[str], progress: bool = True,
                   chunk_size: int = 4096) -> Iterator[BleurtScore]:
        """:meth:`score` as a stream, ``chunk_size`` pairs at a time (bounded memory)."""
        candidates, references = check_reports(candidates, references)
        from tqdm.auto import tqdm

        with tqdm(total=len(candidates), disable=not progress, unit="pair", desc="ClinicalBLEURT") as bar:
            for lo in range(0, len(candidates), chunk_size):
                refs, cands = references[lo:lo + chunk_size], candidates[lo:lo + chunk_size]
                encoded = encode_pairs(self.tokenizer, refs, cands, self.max_length, self.candidate_format)
                order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].input_ids))
                scores = [0.0] * len(encoded)
                for b in range(0, len(order), self.batch_size):
                    idx = order[b:b + self.batch_size]
                    for i, s in zip(idx, self.predict([encoded[i] for i in idx])):
                        scores[i] = s
                    bar.update(len(idx))
                for e, s in zip(encoded, scores):
                    yield BleurtScore(float(s), e.truncated, e.reference_pieces, e.candidate_pieces,
                                      e.kept_reference_pieces, e.kept_candidate_pieces)

    def score(self, candidates: Sequence[str] | None = None, references: Sequence[str] | None = None,
              progress: bool = True, **aliases) -> list[BleurtScore]:
        """One :class:`BleurtScore` per pair, in input order (sides by position or by any name of
        :mod:`radscore.inputs`: ``candidates``/``hyps``, ``references``/``refs``)."""
        candidates, references = pair_arguments(candidates, references, **aliases)
        return list(self.iter_score(candidates, references, progress))

    def compute_score(self, candidates: Sequence[str] | None = None, references: Sequence[str] | None = None,
                      progress: bool = False, **aliases) -> list[float]:
        """Just the scores, in input order."""
        candidates, references = pair_arguments(candidates, references, **aliases)
        return [s.score for s in self.iter_score(candidates, references, progress)]

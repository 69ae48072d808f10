"""RaTE-NER data for Lightning: sub-word alignment (IOB) and span enumeration (span model).

IOB labelling (SPEC §1.7): every sub-word piece gets a label, because the released scorer reads
one per piece: ``B-X`` on the first piece of an entity's first word, ``I-X`` on every later piece
of the entity, ``O`` on every piece of an ``O`` word. Special tokens get -100 (ignored).
Evaluation is at word level, from the first piece of each word.

Tags are first put through :func:`data.iob.repair_iob` (an ``I-X`` that continues nothing is a
``B-X``), the one invalid-IOB rule of the project, so the model never learns ``I-`` at an entity
start.

A sentence longer than ``max_length`` pieces is truncated for training; the number of words cut
off is counted and reported with a warning (at evaluation they count as predicted ``O``).

Words that yield no sub-word piece (e.g. ``'\u200b'`` or a lone control character) are handled as
at inference (:mod:`radscore.ner`): the model never sees them; the span model enumerates spans
over the words that have pieces (``Encoded.kept``); at word-level evaluation such a word takes
``I-X`` when it lies inside a predicted entity of type X and ``O`` otherwise. Gold entities that
start or end on such a word cannot be predicted exactly: they are counted with a warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader

from radscore.labels import ENTITY_TYPES, LABEL2ID, OUTSIDE
from radscore.models import PACKAGED_MINILM, resolve_model_path
from radscore.span_model import enumerate_spans, word_piece_bounds
from data.iob import repair_iob
from data.ratener import NERSentence, load_split
from train.lightning.samplers import LengthGroupedSampler, split_loader

log = logging.getLogger(__name__)
IGNORE = -100


def piece_labels(word_ids, word_tags: list[str]) -> list[int]:
    """Label ids for every piece from word-level IOB2 tags (see module doc); the tags are repaired
    first (:func:`data.iob.repair_iob`)."""
    word_tags = repair_iob(word_tags)
    labels, prev_word = [], None
    for word in word_ids:
        if word is None:
            labels.append(IGNORE)
        elif word != prev_word:
            labels.append(LABEL2ID[word_tags[word]])
        else:
            tag = word_tags[word]
            labels.append(LABEL2ID[OUTSIDE if tag == OUTSIDE else f"I-{tag[2:]}"])
        prev_word = word
    return labels


def word_tags(n_words: int, kept: list[int], kept_tags: list[str]) -> list[str]:
    """Word-level tags of a sentence of ``n_words`` words from the tags of its ``kept`` words (those
    with pieces). A word without pieces inside an entity (its neighbouring kept words are ``B-X``
    or ``I-X`` then ``I-X``) takes ``I-X``, as its characters lie inside the entity that inference
    builds; any other missing word, cut off or piece-less, is ``O``."""
    tags = [OUTSIDE] * n_words
    for w, tag in zip(kept, kept_tags):
        tags[w] = tag
    for (w0, t0), (w1, t1) in zip(zip(kept, kept_tags), zip(kept[1:], kept_tags[1:])):
        if w1 - w0 > 1 and t1.startswith("I-") and t0 != OUTSIDE and t0[2:] == t1[2:]:
            for w in range(w0 + 1, w1):
                tags[w] = t1
    return tags


@dataclass
class Encoded:
    sentence: NERSentence
    input_ids: list[int]
    first_pieces: list[int]  # first piece of each kept word
    kept: list[int]  # the words (indices) that yield pieces within max_length, in order
    labels: list[int] | None = None  # IOB: one per piece
    spans: list[tuple[int, int]] | None = None  # span: word spans
    span_pieces: list[tuple[int, int]] | None = None
    span_labels: list[int] | None = None


class NERDataModule(pl.LightningDataModule):
    """RaTE-NER splits (local folder or Hub id) encoded for the IOB or the span model.

    Args:
        data_dir: RaTE-NER root (a folder in the Hub's layout, or a Hub dataset id).
        subset: source folder, e.g. ``all``, ``MIMIC_IV``, ``Radiopaedia``, ``clinical``.
        scheme: ``IOB`` (token classification) or ``span`` (PURE span model).
        backbone: model whose tokenizer is used (set from the model by the CLI).
        max_length: maximum pieces per sentence.
        max_span_width: longest span enumerated, in words (span scheme).
        predict_split: split used by ``predict``.
        group_by_length: batch training sentences of similar length (less padding, faster on CPU).
    """

    def __init__(self, data_dir: str = "data/samples/ratener", subset: str = "all",
                 scheme: Literal["IOB", "span"] = "IOB", backbone: str = PACKAGED_MINILM,
                 max_length: int = 256, max_span_width: int = 8, batch_size: int = 16,
                 eval_batch_size: int = 32, num_workers: int = 0,
                 predict_split: Literal["train", "dev", "test"] = "test", group_by_length: bool = True):
        super().__init__()
        self.save_hyperparameters()
        self.data_dir, self.subset, self.scheme = data_dir, subset, scheme
        self.backbone, self.max_length, self.max_span_width = backbone, max_length, max_span_width
        self.batch_size, self.eval_batch_size, self.num_workers = batch_size, eval_batch_size, num_workers
        self.predict_split, self.group_by_length = predict_split, group_by_length
        self.tokenizer = None
        self.splits: dict[str, list[Encoded]] = {}

    def setup(self, stage: str | None = None) -> None:
        from transformers import AutoTokenizer

        if self.tokenizer is None:
            self.tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(self.backbone))
        wanted = {"fit": ("train", "dev"), "validate": ("dev",), "test": ("test",),
                  "predict": (self.predict_split,)}.get(stage, ("train", "dev", "test"))
        for split in wanted:
            if split not in self.splits:
                sentences = load_split(self.data_dir, self.subset, split, self.scheme)
                self.splits[split] = self.encode(sentences, split)

    def encode(self, sentences: list[NERSentence], split: str = "") -> list[Encoded]:
        out, cut_words, long_entities, pieceless, unreachable = [], 0, 0, 0, 0
        for s in sentences:
            enc = self.tokenizer(s.tokens, is_split_into_words=True, truncation=True,
                                 max_length=self.max_length)
            word_ids = enc.word_ids()
            bounds = word_piece_bounds(word_ids)
            kept = sorted(bounds)
            last = kept[-1] if kept else -1
            cut = len(s.tokens) - 1 - last if len(enc["input_ids"]) >= self.max_length else 0
            cut_words += cut
            pieceless += len(s.tokens) - cut - len(kept)
            item = Encoded(s, enc["input_ids"], [bounds[w][0] for w in kept], kept)
            if self.scheme == "IOB":
                item.labels = piece_labels(word_ids, s.tags)
            else:
                index = {w: k for k, w in enumerate(kept)}
                gold = {}
                for a, b, t in s.spans:
                    if a in index and b in index:
                        gold[(index[a], index[b])] = t
                        long_entities += index[b] - index[a] + 1 > self.max_span_width
                    else:
                        unreachable += b <= last
                item.spans = enumerate_spans(len(kept), self.max_span_width)
                item.span_pieces = [(bounds[kept[a]][0], bounds[kept[b]][1]) for a, b in item.spans]
                item.span_labels = [ENTITY_TYPES.index(gold[sp]) + 1 if sp in gold else 0
                                    for sp in item.spans]
            out.append(item)
        if cut_words:
            log.warning("%s: %d words beyond max_length=%d pieces were cut off (they count as O)",
                        split, cut_words, self.max_length)
        if pieceless:
            log.warning("%s: %d words yield no sub-word piece with this tokenizer; the model never sees "
                        "them (as at inference)", split, pieceless)
        if unreachable:
            log.warning("%s: %d gold entities start or end on a word without pieces and cannot be "
                        "predicted exactly", split, unreachable)
        if long_entities:
            log.warning("%s: %d gold entities are longer than max_span_width=%d words and cannot "
                        "be predicted by the span model", split, long_entities, self.max_span_width)
        return out

    def transfer_batch_to_device(self, batch, device, dataloader_idx):
        """Moves the tensors; the sentences (``items``, Python objects read by the metrics) stay as they are,
        rather than being copied object by object by Lightning's collection mover."""
        if not isinstance(batch, dict) or "items" not in batch:
            return super().transfer_batch_to_device(batch, device, dataloader_idx)
        tensors = {k: v for k, v in batch.items() if k != "items"}
        return {**super().transfer_batch_to_device(tensors, device, dataloader_idx), "items": batch["items"]}

    def collate(self, items: list[Encoded]) -> dict:
        pad = self.tokenizer.pad_token_id
        length = max(len(i.input_ids) for i in items)
        ids = torch.full((len(items), length), pad, dtype=torch.long)
        mask = torch.zeros((len(items), length), dtype=torch.long)
        for k, i in enumerate(items):
            ids[k, : len(i.input_ids)] = torch.tensor(i.input_ids)
            mask[k, : len(i.input_ids)] = 1
        batch = {"input_ids": ids, "attention_mask": mask, "items": items}
        if self.scheme == "IOB":
            labels = torch.full((len(items), length), IGNORE, dtype=torch.long)
            for k, i in enumerate(items):
                labels[k, : len(i.labels)] = torch.tensor(i.labels)
            batch["labels"] = labels
        else:
            n = max(1, max(len(i.spans) for i in items))
            starts = torch.zeros((len(items), n), dtype=torch.long)
            ends, widths = torch.zeros_like(starts), torch.zeros_like(starts)
            span_labels = torch.full((len(items), n), IGNORE, dtype=torch.long)
            for k, i in enumerate(items):
                m = len(i.spans)
                if m:
                    starts[k, :m] = torch.tensor([a for a, _ in i.span_pieces])
                    ends[k, :m] = torch.tensor([b for _, b in i.span_pieces])
                    widths[k, :m] = torch.tensor([b - a for a, b in i.spans])
                    span_labels[k, :m] = torch.tensor(i.span_labels)
            batch.update(span_starts=starts, span_ends=ends, span_widths=widths, span_labels=span_labels)
        return batch

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        items = self.splits[split]
        sampler = (LengthGroupedSampler([len(i.input_ids) for i in items], self.batch_size)
                   if shuffle and self.group_by_length else None)
        return split_loader(self, items, shuffle, sampler)

    def train_dataloader(self):
        return self._loader("train", True)

    def val_dataloader(self):
        return self._loader("dev", False)

    def test_dataloader(self):
        return self._loader("test", False)

    def predict_dataloader(self):
        return self._loader(self.predict_split, False)

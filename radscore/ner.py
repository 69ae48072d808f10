"""NER inference: sentences in, typed entities out, from an IOB or a span export (or a Hub model).

:func:`load_ner` picks the reader from the export's manifest (``radscore_manifest.json``), or from
the files present when there is none (a folder or Hub id with ``span_head.json`` is a span model,
anything else a token-classification model), and checks the label set against SPEC §1.3.

IOB models (:class:`IOBRecognizer`) read one label per sub-word piece of the sentence, tokenized
as a plain string, and build entities with the released package's rules
(:func:`decode_released`), so an export gives the same entities in both. Span models
(:class:`SpanRecognizer`) split the sentence into words with :data:`radscore.text.WORD_RE`, as in
training, classify every span of up to ``max_span_width`` words and keep the best
non-overlapping ones (:func:`radscore.span_model.decode_spans`).

Long sentences: where the released package truncates a sentence at 512 pieces, a sentence longer
than the model's maximum is cut into overlapping windows (half a window of overlap); each piece
(IOB) or span (span model) takes its prediction from the window in which it lies most centrally,
so every entity of the sentence is kept.

Sentences are processed in batches sorted by length, under ``torch.inference_mode`` (``torch.no_grad`` under bf16
autocast, where inference mode would re-cast every weight each batch: :func:`radscore.device.no_grad_for`).
Inputs go to the device without waiting for it (:func:`to_device`), and each batch's result is read one batch
late (:class:`Deferred`), so that on a GPU the host prepares and launches the next batch while the device still
computes the current one; the results are the same as reading each batch at once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import NamedTuple, Sequence

import torch

from radscore.device import no_grad_for, resolve_device
from radscore.export import MANIFEST, read_manifest
from radscore.labels import check_label_mapping
from radscore.span_model import HEAD_CONFIG, SpanNERModel, decode_spans, enumerate_spans, word_piece_bounds
from radscore.text import tokenize_words

MAX_PIECES = 512  # the released scorer's max_length; a model may allow less
_SKIPPED_TOKENS = frozenset({"[CLS]", "[SEP]"})  # tokens the released decoder never reads


class Entity(NamedTuple):
    """One recognised entity: its text and its type (one of ``ENTITY_TYPES``)."""

    text: str
    type: str


def pick_device(device: str | torch.device | None, scorer: str = "radscore") -> torch.device:
    """``None`` picks CUDA when present, else the CPU; CUDA asked for where there is none is a
    ``ValueError`` naming ``scorer`` (:func:`radscore.device.resolve_device`)."""
    return resolve_device(device, scorer)


def decode_released(tokens: Sequence[str], labels: Sequence[str]) -> list[tuple[int, int, str]]:
    """Entity spans ``(first piece, last piece, type)`` from per-piece labels, by the rules of
    the released ``ratescore`` 0.6.0 package, reproduced exactly (quirks included):

    - ``tokens``/``labels`` cover the whole sequence, special tokens included; a piece whose token
      is ``[CLS]`` or ``[SEP]`` is never read, but its label is the look-ahead of the piece before
      it (so the model's label at ``[SEP]`` decides how a sentence-final entity ends).
    - For a piece labelled ``B-X``: followed by ``I-``, an entity of type X opens; followed by
      ``B-`` or ``O``, a one-piece entity is emitted.
    - For a piece labelled ``I-``: followed by ``B-`` or ``O``, the open entity (if any) is
      emitted up to this piece, keeping the type it opened with; an ``I-`` run with no open
      entity is dropped.
    - After the loop, an entity still open is emitted up to the last piece before ``[SEP]`` only
      if no entity had ended at a ``B-``/``I-`` boundary before (the released state variable
      ``end`` is only reset after an ``O``).
    """
    spans: list[tuple[int, int, str]] = []
    start: int | None = None
    end: int | None = None
    etype: str | None = None
    last = len(labels) - 1
    for i, (token, label) in enumerate(zip(tokens, labels)):
        if token in _SKIPPED_TOKENS or label == "O" or i >= last:
            continue
        nxt = labels[i + 1]
        if label.startswith("B-"):
            if nxt.startswith("I-"):
                start, etype = i, label[2:]
            elif nxt.startswith("B-"):
                spans.append((i, i, label[2:]))
                start, end, etype = i, i, label[2:]
            elif nxt.startswith("O"):
                spans.append((i, i, label[2:]))
                start = end = etype = None
        elif label.startswith("I-"):
            if nxt.startswith("B-"):
                end = i
                if start is not None:
                    spans.append((start, i, etype))
                start, etype = i, label[2:]
            elif nxt.startswith("O"):
                end = i
                if start is not None:
                    spans.append((start, i, etype))
                start = end = etype = None
    if start is not None and end is None:
        spans.append((start, len(tokens) - 2, etype))
    return spans


def windows(n: int, size: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` windows of at most ``size`` items covering ``range(n)``, each
    overlapping the next by about half a window; one window when ``n <= size``."""
    if n <= size:
        return [(0, n)]
    stride = max(1, size // 2)
    starts = list(range(0, n - size, stride)) + [n - size]
    return [(s, s + size) for s in starts]


def central_window(pos_lo: int, pos_hi: int, spans: list[tuple[int, int]]) -> int:
    """Index of the window containing ``[pos_lo, pos_hi]`` whose edges are farthest from it."""
    best, best_margin = 0, -1
    for k, (a, b) in enumerate(spans):
        if a <= pos_lo and pos_hi < b:
            margin = min(pos_lo - a, b - 1 - pos_hi)
            if margin > best_margin:
                best, best_margin = k, margin
    return best


def length_batches(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Item indices grouped into batches of similar length (longest first)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[k : k + batch_size] for k in range(0, len(order), batch_size)]


def pad_batch(rows: list[list[int]], pad_id: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """``(ids, mask)`` of ``rows`` padded with ``pad_id`` to the longest, on ``device``
    (:func:`to_device`: on CUDA the copy does not wait for the device)."""
    width = max(len(r) for r in rows)
    ids = torch.tensor([r + [pad_id] * (width - len(r)) for r in rows], dtype=torch.long)
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows], dtype=torch.long)
    return to_device(ids, device), to_device(mask, device)


def to_device(tensor: torch.Tensor, device) -> torch.Tensor:
    """``tensor`` (on the CPU) moved to ``device``. To CUDA it goes from pinned memory with
    ``non_blocking=True``: a plain ``.to("cuda")`` of pageable memory makes the host wait until the
    device has finished all earlier work (torch synchronises the stream after the copy), so the
    next batch could not be prepared while the current one runs. torch's pinned-memory allocator
    keeps the source until the copy is done; the values are the same either way."""
    device = torch.device(device)
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


class Deferred:
    """Reads each batch's result one batch late: the host pads, copies and launches batch k+1
    before it waits for batch k's result, so a GPU is not idle while the host prepares a batch.
    (The wait itself, ``.cpu()``, is ordered on the device's stream after batch k+1, so it also
    waits for that batch; a non-blocking copy to pinned memory with an event would let the host
    read batch k while k+1 runs, not done as it cannot be tested without CUDA.)
    ``read(batch, value)`` is called for every batch, in order; :meth:`finish` reads the last. On
    the CPU nothing runs ahead: the same reads, in the same order, with the same values."""

    def __init__(self, read):
        self.read, self.pending = read, None

    def push(self, batch, value) -> None:
        if self.pending is not None:
            self.read(*self.pending)
        self.pending = (batch, value)

    def finish(self) -> None:
        if self.pending is not None:
            self.read(*self.pending)
            self.pending = None


class _Recognizer(ABC):
    """Shared loading of the tokenizer and the special-token layout."""

    kind = ""

    def __init__(self, source: str, model: torch.nn.Module, tokenizer, device, batch_size: int,
                 position_limit: int | None):
        self.source, self.model, self.tokenizer = source, model.eval().to(device), tokenizer
        self.device, self.batch_size = device, max(1, int(batch_size))
        probe = tokenizer("hello", add_special_tokens=False)["input_ids"]
        full = tokenizer("hello", add_special_tokens=True)["input_ids"]
        at = next(k for k in range(len(full)) if full[k : k + len(probe)] == probe)
        self.prefix, self.suffix = full[:at], full[at + len(probe):]
        limits = [MAX_PIECES] + [x for x in (position_limit, getattr(tokenizer, "model_max_length", None))
                                 if isinstance(x, int) and 0 < x < 1_000_000]
        self.max_pieces = min(limits)
        self.window = self.max_pieces - len(self.prefix) - len(self.suffix)
        if self.window < 8:
            raise ValueError(f"{source}: a maximum length of {self.max_pieces} pieces is too short")
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

    @abstractmethod
    def __call__(self, sentences: Sequence[str]) -> list[list[Entity]]:
        """The entities of each sentence, in order of appearance."""


class IOBRecognizer(_Recognizer):
    """A token-classification model labelling every sub-word piece (SPEC §1.3 labels)."""

    kind = "ner-iob"

    @classmethod
    def from_pretrained(cls, source: str, device=None, batch_size: int = 64) -> "IOBRecognizer":
        from transformers import AutoConfig, AutoModelForTokenClassification, AutoTokenizer

        config = AutoConfig.from_pretrained(source)
        try:
            check_label_mapping(getattr(config, "id2label", None) or {})
        except ValueError as err:
            raise ValueError(f"{source}: not a RaTE NER model: {err}") from None
        model = AutoModelForTokenClassification.from_pretrained(source)
        tokenizer = AutoTokenizer.from_pretrained(source)
        return cls(source, model, tokenizer, pick_device(device, "NER model"), batch_size,
                   getattr(config, "max_position_embeddings", None))

    def __call__(self, sentences: Sequence[str]) -> list[list[Entity]]:
        if not sentences:
            return []
        content = self.tokenizer(list(sentences), add_special_tokens=False, verbose=False)["input_ids"]
        items = []  # (sentence index, window start, window stop, input ids)
        for s, ids in enumerate(content):
            for a, b in windows(len(ids), self.window):
                items.append((s, a, b, self.prefix + ids[a:b] + self.suffix))
        labels = [None] * len(items)
        id2label = self.model.config.id2label

        def read(batch, pred):  # one transfer and one host sync per batch
            for k, p in zip(batch, pred.cpu().tolist()):
                labels[k] = [id2label[x] for x in p[: len(items[k][3])]]

        pending = Deferred(read)
        with no_grad_for(self.device):
            for batch in length_batches([len(it[3]) for it in items], self.batch_size):
                ids, mask = pad_batch([items[k][3] for k in batch], self.pad_id, self.device)
                pending.push(batch, self.model(input_ids=ids, attention_mask=mask).logits.argmax(-1))
            pending.finish()
        by_sentence: dict[int, list[int]] = {}
        for k, it in enumerate(items):
            by_sentence.setdefault(it[0], []).append(k)
        return [self._entities(content[s], [items[k] for k in by_sentence[s]],
                               [labels[k] for k in by_sentence[s]]) for s in range(len(content))]

    def _entities(self, ids: list[int], parts: list[tuple], part_labels: list[list[str]]) -> list[Entity]:
        """Merge the windows' labels into one sequence, decode it, and spell each entity."""
        p, q = len(self.prefix), len(self.suffix)
        if len(parts) == 1:
            seq_labels = part_labels[0]
        else:
            spans = [(a, b) for _, a, b, _ in parts]
            head, tail = part_labels[0][:p], part_labels[-1][len(part_labels[-1]) - q:]
            body = []
            for i in range(len(ids)):
                k = central_window(i, i, spans)
                body.append(part_labels[k][p + i - spans[k][0]])
            seq_labels = head + body + tail
        tokens = self.tokenizer.convert_ids_to_tokens(self.prefix + ids + self.suffix)
        return [Entity(self.tokenizer.convert_tokens_to_string(tokens[a : b + 1]), t)
                for a, b, t in decode_released(tokens, seq_labels)]


class SpanRecognizer(_Recognizer):
    """The PURE span model over words (:class:`radscore.span_model.SpanNERModel`)."""

    kind = "ner-span"

    @classmethod
    def from_pretrained(cls, source: str, device=None, batch_size: int = 64) -> "SpanRecognizer":
        from transformers import AutoTokenizer

        model = SpanNERModel.from_pretrained(source)
        tokenizer = AutoTokenizer.from_pretrained(source)
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError(f"{source}: the span model needs a fast tokenizer (word ids)")
        return cls(source, model, tokenizer, pick_device(device, "NER model"), batch_size,
                   getattr(model.encoder.config, "max_position_embeddings", None))

    def __call__(self, sentences: Sequence[str]) -> list[list[Entity]]:
        words = [tokenize_words(s) for s in sentences]
        kept_of: list[list[int]] = []  # per sentence: the words that yield at least one piece
        items: list[tuple] = []  # (sentence, ids, word spans, piece spans, kept-word window)
        for s, ws in enumerate(words):
            kept_of.append(self._encode(s, [w for w, _, _ in ws], items))
        probs: list[torch.Tensor] = [torch.zeros((0, 6))] * len(items)

        def read(batch, out):  # one transfer and one host sync per batch
            out = out.cpu()
            for row, k in enumerate(batch):
                probs[k] = out[row, : len(items[k][2])]

        pending = Deferred(read)
        with no_grad_for(self.device):
            for batch in length_batches([len(it[1]) for it in items], self.batch_size):
                ids, mask = pad_batch([items[k][1] for k in batch], self.pad_id, self.device)
                n = max(len(items[k][2]) for k in batch)
                st, en, wd = (torch.zeros((len(batch), n), dtype=torch.long) for _ in range(3))
                for row, k in enumerate(batch):
                    m = len(items[k][2])
                    st[row, :m] = torch.tensor([x for x, _ in items[k][3]], dtype=torch.long)
                    en[row, :m] = torch.tensor([y for _, y in items[k][3]], dtype=torch.long)
                    wd[row, :m] = torch.tensor([y - x for x, y in items[k][2]], dtype=torch.long)
                out = self.model(ids, mask, *(to_device(t, self.device) for t in (st, en, wd)))
                pending.push(batch, out.float().softmax(-1))
            pending.finish()
        by_sentence: dict[int, list[int]] = {}
        for k, it in enumerate(items):
            by_sentence.setdefault(it[0], []).append(k)
        result: list[list[Entity]] = [[] for _ in sentences]
        for s, ks in by_sentence.items():
            spans, p = self._merge([items[k] for k in ks], [probs[k] for k in ks])
            ws, kept = words[s], kept_of[s]
            for a, b, t in decode_spans(spans, p):
                result[s].append(Entity(sentences[s][ws[kept[a]][1] : ws[kept[b]][2]], t))
        return result

    def _encode(self, s: int, words: list[str], items: list) -> list[int]:
        """Append the model inputs of sentence ``s`` (one per window) to ``items``; return the
        indices of its words that yield pieces (spans are over those, in kept-word indices)."""
        if not words:
            return []
        enc = self.tokenizer(words, is_split_into_words=True, add_special_tokens=False, verbose=False)
        bounds = word_piece_bounds(enc.word_ids())
        kept = sorted(bounds)
        if not kept:
            return kept
        pieces, width = enc["input_ids"], self.model.max_span_width
        for a, b in self._word_windows([bounds[w] for w in kept]):
            lo = bounds[kept[a]][0]
            hi = min(bounds[kept[b - 1]][1] + 1, lo + self.window)
            spans = [(x + a, y + a) for x, y in enumerate_spans(b - a, width)]
            shift = len(self.prefix) - lo
            clip = lambda piece: min(piece, hi - 1) + shift
            piece_spans = [(clip(bounds[kept[x]][0]), clip(bounds[kept[y]][1])) for x, y in spans]
            items.append((s, self.prefix + pieces[lo:hi] + self.suffix, spans, piece_spans, (a, b)))
        return kept

    def _word_windows(self, piece_bounds: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Windows of kept words whose pieces fit the model, overlapping by about half."""
        n = len(piece_bounds)
        if n == 0 or piece_bounds[-1][1] - piece_bounds[0][0] + 1 <= self.window:
            return [(0, n)]
        out, a = [], 0
        while True:
            b = a
            while b < n and piece_bounds[b][1] - piece_bounds[a][0] + 1 <= self.window:
                b += 1
            b = max(b, a + 1)  # a single word longer than a window is cut by the model's limit
            out.append((a, b))
            if b >= n:
                return out
            a = max(a + 1, a + (b - a) // 2)

    def _merge(self, parts: list[tuple], part_probs: list[torch.Tensor]) -> tuple[list, torch.Tensor]:
        """Every span once, with the probabilities of the window where it is most central."""
        if len(parts) == 1:
            return parts[0][2], part_probs[0]
        where: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for k, part in enumerate(parts):
            for j, span in enumerate(part[2]):
                where.setdefault(span, []).append((k, j))
        spans, rows = [], []
        for span, places in sorted(where.items()):
            k, j = places[central_window(span[0], span[1], [parts[k][4] for k, _ in places])]
            spans.append(span)
            rows.append(part_probs[k][j])
        return spans, torch.stack(rows)

def ner_kind(source: str) -> str:
    """``"ner-iob"`` or ``"ner-span"`` for a local export folder or a Hub id."""
    path = Path(source)
    if path.is_dir():
        if (path / MANIFEST).is_file():
            if read_manifest(path).get("kind") == "ratescore":
                raise ValueError(f"{source}: a RaTEScore scorer bundle, not an NER export; load it with "
                                 "RaTEScore.from_bundle(...)")
            return read_manifest(path, ("ner-iob", "ner-span"))["kind"]
        if (path / HEAD_CONFIG).is_file():
            return "ner-span"
        if not (path / "config.json").is_file():
            raise ValueError(f"{source}: neither a radscore NER export nor a model folder (no config.json)")
        return "ner-iob"
    from transformers.utils import cached_file

    found = cached_file(source, MANIFEST, _raise_exceptions_for_missing_entries=False)
    if found:
        return read_manifest(Path(found).parent, ("ner-iob", "ner-span"))["kind"]
    found = cached_file(source, HEAD_CONFIG, _raise_exceptions_for_missing_entries=False)
    return "ner-span" if found else "ner-iob"


def load_ner(source: str, device=None, batch_size: int = 64) -> _Recognizer:
    """An entity recognizer for an export folder or a Hub id (see the module doc)."""
    source = str(source)
    if ner_kind(source) == "ner-span":
        if not Path(source).is_dir():
            from huggingface_hub import snapshot_download

            source = snapshot_download(source)
        return SpanRecognizer.from_pretrained(source, device, batch_size)
    return IOBRecognizer.from_pretrained(source, device, batch_size)

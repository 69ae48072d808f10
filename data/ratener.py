"""RaTE-NER reader: a local folder or a Hugging Face Hub dataset id (SPEC §1.8), via ``datasets``.

Layout (the Hub's): ``<root>/<source>/{train,dev,test}_{IOB,span}.json`` with any source folder
names (the Hub has ``MIMIC_IV``, ``Radiopaedia``, ``all``), plus ``<root>/label2idx.json`` and
``<root>/idx2label.json``. A Hub id is read through ``hf://datasets/<id>/…`` paths, the same code
path as a local folder.

Accepted, because the published encoding is unknown: IOB tags as ints or strings; files as JSON
lines or one JSON array. Span files use PURE's schema ``{"doc_key", "sentences": [[words]],
"ner": [[[start, end, TYPE], …]]}`` with inclusive word indices counted over the whole document
(PURE's convention); when a source has no span file, spans are derived from its IOB file.

Every problem raises :class:`RaTENERFormatError` naming the file and the record (0-based).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from radscore.atomic import atomic_open
from radscore.labels import ENTITY_TYPES, ID2LABEL, LABEL2ID
from data.iob import Span, iob_to_spans, spans_to_iob
from data.textfile import read_text

SPLITS = ("train", "dev", "test")
SCHEMES = ("IOB", "span")
_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


class RaTENERFormatError(ValueError):
    """A RaTE-NER file that does not follow the expected format."""


@dataclass
class NERSentence:
    """One sentence: words, IOB2 tags and the equivalent spans (inclusive word indices)."""

    id: str
    tokens: list[str]
    tags: list[str]
    spans: list[Span]
    meta: dict = field(default_factory=dict)


def resolve_root(source: str | Path) -> str:
    """A local folder as a path string, or a Hub dataset id as an ``hf://datasets/`` URL."""
    path = Path(source)
    if path.is_dir():
        return str(path)
    text = str(source)
    if text.startswith("hf://"):
        return text.rstrip("/")
    if _HUB_ID.match(text) and not path.exists():
        from radscore.models import standin_folder

        return standin_folder(text, "dataset") or f"hf://datasets/{text}"
    raise RaTENERFormatError(f"{source}: neither a local folder nor a Hub dataset id (owner/name)")


def _exists(url: str) -> bool:
    if url.startswith("hf://"):
        from huggingface_hub import HfFileSystem

        return HfFileSystem().exists(url)
    return Path(url).is_file()


def _read_json_file(url: str) -> list[dict]:
    """Records of a JSON-lines or JSON-array file, read with ``datasets``."""
    import datasets

    datasets.disable_progress_bars()
    if not url.startswith("hf://") and not read_text(url, RaTENERFormatError).strip():
        return []
    try:
        ds = datasets.load_dataset("json", data_files=url, split="train")
    except Exception as err:  # datasets wraps parse errors in several exception types
        raise RaTENERFormatError(f"{url}: cannot be read as JSON lines or a JSON array ({err})") from err
    return ds.to_list()


def read_label_map(root: str | Path) -> dict[int, str]:
    """The dataset's ``idx2label.json`` (or ``label2idx.json``), checked against the SPEC set.

    A dataset without label files is read with the SPEC label set.
    """
    root = resolve_root(root)
    for name, invert in (("idx2label.json", False), ("label2idx.json", True)):
        url = f"{root}/{name}"
        if not _exists(url):
            continue
        raw = _load_small_json(url)
        try:
            mapping = {int(v): k for k, v in raw.items()} if invert else {int(k): v for k, v in raw.items()}
        except (AttributeError, TypeError, ValueError):
            raise RaTENERFormatError(f"{url}: expected an object of label ids and labels, got {raw!r:.80}") from None
        if mapping != ID2LABEL:
            raise RaTENERFormatError(
                f"{url}: the label set differs from RaTE-NER's (SPEC §1.3): expected {ID2LABEL}, "
                f"got {mapping}"
            )
        return mapping
    return dict(ID2LABEL)


def _load_small_json(url: str):
    if url.startswith("hf://"):
        from huggingface_hub import HfFileSystem

        with HfFileSystem().open(url, "r") as fh:
            text = fh.read()
    else:
        text = read_text(url, RaTENERFormatError)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise RaTENERFormatError(f"{url}: not valid JSON ({err})") from None


def _iob_record(rec: dict, where: str, id2label: dict[int, str]) -> NERSentence:
    tokens, tags = rec.get("tokens"), rec.get("ner_tags")
    if not isinstance(tokens, list) or not isinstance(tags, list):
        raise RaTENERFormatError(f"{where}: expected fields 'tokens' and 'ner_tags', both lists")
    if not tokens:
        raise RaTENERFormatError(f"{where}: empty token list")
    if len(tokens) != len(tags):
        raise RaTENERFormatError(
            f"{where}: {len(tokens)} tokens but {len(tags)} tags (lengths must match)"
        )
    for k, token in enumerate(tokens):
        if not isinstance(token, str):
            raise RaTENERFormatError(f"{where}: word {k} is {token!r:.40}, not a string")
    labels = []
    for k, tag in enumerate(tags):
        if isinstance(tag, str) and re.fullmatch(r"-?[0-9]+", tag.strip()):
            tag = int(tag)
        if isinstance(tag, int) and not isinstance(tag, bool):
            if tag not in id2label:
                raise RaTENERFormatError(f"{where}: unknown tag id {tag} at word {k}")
            tag = id2label[tag]
        if not isinstance(tag, str) or tag not in LABEL2ID:
            raise RaTENERFormatError(
                f"{where}: unknown tag {tag!r} at word {k}; expected one of {list(LABEL2ID)}"
            )
        labels.append(tag)
    meta = {k: v for k, v in rec.items() if k not in ("tokens", "ner_tags") and v is not None}
    rid = str(meta.pop("id", where))
    return NERSentence(rid, list(tokens), labels, iob_to_spans(labels), meta)


def _span_records(rec: dict, where: str) -> list[NERSentence]:
    sentences, ner = rec.get("sentences"), rec.get("ner")
    if not isinstance(sentences, list) or not isinstance(ner, list) or len(sentences) != len(ner):
        raise RaTENERFormatError(
            f"{where}: expected 'sentences' and 'ner', lists of the same length (PURE format)"
        )
    doc = str(rec.get("doc_key", where))
    out, offset = [], 0
    for k, (words, ents) in enumerate(zip(sentences, ner)):
        sw = f"{where}, sentence {k}"
        if not isinstance(words, list) or not words:
            raise RaTENERFormatError(f"{sw}: empty token list")
        bad = next((w for w in words if not isinstance(w, str)), "")
        if bad != "":
            raise RaTENERFormatError(f"{sw}: word {words.index(bad)} is {bad!r:.40}, not a string")
        local = []
        for ent in ents or []:
            if (not isinstance(ent, (list, tuple)) or len(ent) != 3 or not isinstance(ent[2], str)
                    or not all(isinstance(x, int) and not isinstance(x, bool) for x in ent[:2])):
                raise RaTENERFormatError(f"{sw}: entity {ent!r:.60} is not [start, end, TYPE] (two integers, a type)")
            start, end, etype = ent[0] - offset, ent[1] - offset, ent[2]
            if etype not in ENTITY_TYPES:
                raise RaTENERFormatError(
                    f"{sw}: unknown entity type {etype!r}; expected one of {list(ENTITY_TYPES)}"
                )
            if not 0 <= start <= end < len(words):
                raise RaTENERFormatError(
                    f"{sw}: span {list(ent)} lies outside the sentence (document words "
                    f"{offset}..{offset + len(words) - 1})"
                )
            local.append((start, end, etype))
        try:
            tags = spans_to_iob(len(words), local)
        except ValueError as err:
            raise RaTENERFormatError(f"{sw}: {err}") from None
        out.append(NERSentence(f"{doc}:{k}", list(words), tags, sorted(local),
                               {"doc_key": doc}))
        offset += len(words)
    return out


def load_split(source: str | Path, subset: str = "all", split: str = "train",
               scheme: str = "IOB") -> list[NERSentence]:
    """Sentences of one source folder and split, from its IOB or span file.

    ``scheme="span"`` reads ``{split}_span.json`` and falls back to deriving spans from
    ``{split}_IOB.json`` when the span file does not exist.
    """
    if split not in SPLITS:
        raise RaTENERFormatError(f"unknown split {split!r}; expected one of {list(SPLITS)}")
    if scheme not in SCHEMES:
        raise RaTENERFormatError(f"unknown scheme {scheme!r}; expected one of {list(SCHEMES)}")
    root = resolve_root(source)
    id2label = read_label_map(root)
    iob_url = f"{root}/{subset}/{split}_IOB.json"
    span_url = f"{root}/{subset}/{split}_span.json"
    if scheme == "span" and _exists(span_url):
        url, records = span_url, _read_json_file(span_url)
        sentences = [s for i, r in enumerate(records) for s in _span_records(r, f"{url}: record {i}")]
    elif _exists(iob_url):
        url, records = iob_url, _read_json_file(iob_url)
        sentences = [_iob_record(r, f"{url}: record {i}", id2label) for i, r in enumerate(records)]
    else:
        raise RaTENERFormatError(f"{root}/{subset}: no {split}_{scheme}.json (nor {split}_IOB.json)")
    if not sentences:
        raise RaTENERFormatError(f"{url}: the {split} split is empty")
    return sentences


def list_subsets(source: str | Path) -> list[str]:
    """Source folders (e.g. ``MIMIC_IV``, ``Radiopaedia``, ``all``) holding at least one split."""
    root = resolve_root(source)
    if root.startswith("hf://"):
        from huggingface_hub import HfFileSystem

        fs = HfFileSystem()
        names = [p.rsplit("/", 1)[-1] for p in fs.ls(root, detail=False) if fs.isdir(p)]
        return sorted(n for n in names if any(fs.exists(f"{root}/{n}/{s}_IOB.json") for s in SPLITS))
    return sorted(
        p.name for p in Path(root).iterdir()
        if p.is_dir() and any((p / f"{s}_{sch}.json").is_file() for s in SPLITS for sch in SCHEMES)
    )


def write_iob(path: str | Path, sentences: list[NERSentence]) -> None:
    """Write sentences as JSON lines ``{id, tokens, ner_tags (ints), …meta}``."""
    with atomic_open(path, "w", encoding="utf-8") as fh:
        for s in sentences:
            rec = {"id": s.id, "tokens": s.tokens, "ner_tags": [LABEL2ID[t] for t in s.tags], **s.meta}
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def to_span_docs(doc_key: str, sentences: list[NERSentence]) -> dict:
    """One PURE document: sentences with document-level inclusive span indices."""
    ner, offset = [], 0
    for s in sentences:
        ner.append([[a + offset, b + offset, t] for a, b, t in s.spans])
        offset += len(s.tokens)
    return {"doc_key": doc_key, "sentences": [s.tokens for s in sentences], "ner": ner}

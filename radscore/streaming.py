"""Records written as they are scored, one flushed chunk at a time, and resumable.

``radscore score --out OUT`` (and ``compare``'s per-system files) write through :class:`RecordFile`:

- ``OUT.partial``: the records so far, in OUT's own format (JSON lines, or CSV with its header),
  one chunk appended, flushed and synced at a time. Bytes past the meta file's ``bytes`` are the
  tail of a chunk whose write was cut off; a resume cuts them away.
- ``OUT.meta.json`` (rewritten atomically after every chunk): ``complete`` (false until the run
  has finished), ``records`` and ``bytes`` (the complete chunks in the partial file), ``n``,
  ``chunk_size``, ``format``, ``columns`` (CSV), the scorer's ``metric`` and ``signature``, the
  ``inputs`` (both files' SHA-256 and how they were read), ``explain``; when complete also the
  summary and the seconds; ``resumed_from`` lists the record each resume started at.
- Finishing: the meta file says ``complete: true``, then ``OUT.partial`` is renamed to ``OUT``
  (:func:`os.replace`). So ``OUT`` only ever holds a finished run's records (an earlier run's
  until the new one finishes), and readers (:func:`read_scores`,
  :func:`radscore.atomic.refuse_unfinished`) refuse ``OUT`` while a ``.partial`` lies beside it or
  the meta file says incomplete.

Resume rule (``--resume``): the partial run continues from its last complete chunk when its
metric, scorer signature (models and their hashes, options, radscore version), inputs (SHA-256,
fields/columns, number of pairs), chunk size, format and ``--explain`` equal this run's; else one
line names the file and the first thing that differs, and nothing is written. A chunk is scored
by one call of the scorer, so a resumed run's records equal an uninterrupted run's bit for bit.
``--resume`` with no partial run starts from the first pair; a finished run is not scored again.
Without ``--resume`` a run starts over (an unfinished partial run is discarded, with a message).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from array import array
from pathlib import Path
from typing import Iterator

from radscore.atomic import META_SUFFIX, PARTIAL_SUFFIX, refuse_unfinished, replace, write_json_atomic
from radscore.records import score_records

MAX_DEFAULT_CHUNK = 2048  # RaTEScore's own chunk: larger chunks gain nothing
KEY_FIELDS = ("metric", "signature", "inputs", "chunk_size", "format", "explain", "systems")


def default_chunk_size(n: int) -> int:
    """A fiftieth of the corpus, between 32 and 2,048 pairs: a kill loses at most 2% of a run (or
    32 or 2,048 pairs), so a resume after a late kill costs little more than the pairs left, and large
    corpora keep RaTEScore's own chunk."""
    return min(MAX_DEFAULT_CHUNK, max(32, math.ceil(n / 50)))


def output_format(path: str | os.PathLike) -> str:
    return "csv" if str(path).lower().endswith(".csv") else "jsonl"


def flat(record: dict) -> dict:
    """A CSV row: scalars as they are, entity lists as counts (the JSON lines keep them whole)."""
    out = {}
    for key, value in record.items():
        if isinstance(value, list) and key.endswith("_entities"):
            out[f"n_{key}"] = len(value)
        elif isinstance(value, (dict, list)):
            continue
        else:
            out[key] = value
    return out


def encode_jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def encode_csv(rows: list[dict], columns: list[str], header: bool) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns)
    if header:
        writer.writeheader()
    for row in rows:
        extra = [k for k in row if k not in columns]
        if extra:
            raise ValueError(f"record {row.get('index')}: columns {extra} are not in the CSV header {columns}")
        writer.writerow(row)
    return buf.getvalue()


def scored_chunks(scorer, chunks, explain: bool = False) -> Iterator[tuple[list[dict], list[float]]]:
    """Per chunk (:class:`radscore.reading.Chunk`): its records as written (index, id, every
    sub-score) and headline values; one scorer call per chunk."""
    for chunk in chunks:
        records, values = score_records(scorer, chunk.candidates, chunk.references, explain, progress=False)
        yield ([{"index": chunk.start + k, **({"id": chunk.ids[k]} if chunk.ids else {}), **r}
                for k, r in enumerate(records)], values)


class StdoutRecords:
    """JSON lines on stdout (or ``stream``; ``False``: nowhere, values only), flushed chunk by chunk."""

    complete = False

    def __init__(self, stream=None):
        self.stream = sys.stdout if stream is None else stream
        self.done = 0
        self.values = array("d")

    def write_chunk(self, rows: list[dict], values: list[float]) -> None:
        if self.stream:
            self.stream.write(encode_jsonl(rows))
            self.stream.flush()
        self.done += len(rows)
        self.values.extend(values)

    def finish(self, **meta) -> None:
        pass


def _read_meta(path: Path) -> dict | None:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def difference(old, new, where: str = "") -> tuple[str, object, object] | None:
    """The first place where ``new`` differs from ``old`` (nested dicts): ``(dotted key, old value,
    new value)``; None when they are equal."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(new) + [k for k in old if k not in new]:
            found = difference(old.get(key), new.get(key), f"{where}.{key}" if where else key)
            if found:
                return found
        return None
    return None if old == new else (where, old, new)


def describe_difference(found: tuple[str, object, object], meta: dict) -> str:
    """One line on what differs from the partial run; an input file by its path."""
    where, old, new = found
    parts = where.split(".")
    path = None
    if parts[0] == "inputs" and len(parts) == 3 and parts[2] == "sha256":
        path, what = meta["inputs"][parts[1]]["path"], f"the {parts[1]} file"
    elif parts[0] == "systems" and len(parts) == 2:
        path = next((s["path"] for s in meta["systems"] if s["name"] == parts[1]), None)
        what = f"system {parts[1]}'s candidates file"
    if path is not None and old is not None and new is not None:
        return (f"{what} {path} differs from the partial run's (sha256 {str(new)[:12]}... now, "
                f"{str(old)[:12]}... then)")
    return f"{where} is {_short(new)} now but {_short(old)} in the partial run"


def resume_key(meta: dict) -> dict:
    """What must not change for a run to resume: :data:`KEY_FIELDS`, without the inputs' paths."""
    key = {k: meta.get(k) for k in KEY_FIELDS}
    if isinstance(key["inputs"], dict):
        key["inputs"] = {name: ({k: v for k, v in part.items() if k != "path"} if isinstance(part, dict) else part)
                         for name, part in key["inputs"].items()}
    if isinstance(key["systems"], list):
        key["systems"] = {s["name"]: s["sha256"] for s in key["systems"] if isinstance(s, dict)}
    return json.loads(json.dumps(key))  # tuples as lists, as read back


def read_values(data: bytes, fmt: str, headline: str) -> list[float]:
    """The headline value of every record in ``data`` (a records file's bytes)."""
    text = data.decode("utf-8")
    if fmt == "csv":
        return [float(row[headline]) for row in csv.DictReader(io.StringIO(text, newline=""))]
    return [float(json.loads(line)[headline]) for line in text.splitlines() if line.strip()]


def read_scores(path: str | os.PathLike) -> list[dict]:
    """The records of a finished ``radscore`` output (JSON lines, or CSV rows as strings); a
    half-written one is refused with its name (:func:`radscore.atomic.refuse_unfinished`)."""
    path = Path(path)
    refuse_unfinished(path)
    text = path.read_text(encoding="utf-8")
    if output_format(path) == "csv":
        return list(csv.DictReader(io.StringIO(text, newline="")))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class RecordFile:
    """A records file written chunk by chunk, resumable (module doc). ``meta`` holds the key fields
    (:data:`KEY_FIELDS`) and anything else to keep in the meta file; ``log`` gets one-line notes."""

    def __init__(self, path: str | os.PathLike, meta: dict, headline: str, n: int, resume: bool = False,
                 log=None):
        self.path = Path(path)
        self.partial = Path(f"{self.path}{PARTIAL_SUFFIX}")
        self.meta_file = Path(f"{self.path}{META_SUFFIX}")
        self.format = output_format(self.path)
        self.headline, self.n = headline, n
        self.meta = {"complete": False, "records": 0, "n": n, "bytes": 0, "partial": self.partial.name,
                     "format": self.format, "columns": None, "resumed_from": [], **meta}
        self.log = log or (lambda text: print(text, file=sys.stderr))
        self.values = array("d")
        self.complete = False
        self._fh = None
        old = _read_meta(self.meta_file)
        if resume:
            self._resume(old)
        elif old is not None and old.get("complete") is False and self.partial.exists():
            self.log(f"{self.partial}: an unfinished run ({old.get('records', 0)} of {old.get('n', '?')} records) "
                     "is discarded and scoring starts over (--resume continues it instead)")
        if not self.complete and self._fh is None:
            self._start()

    @property
    def done(self) -> int:
        return self.meta["records"]

    def _start(self) -> None:
        self.partial.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.partial, "wb")
        self._write_meta()

    def _resume(self, old: dict | None) -> None:
        if old is None or "chunk_size" not in old:
            self.log(f"--resume: no partial run of {self.path} ({self.meta_file.name} "
                     f"{'is missing' if old is None else 'predates resumable runs'}); scoring starts at the first pair")
            return
        found = difference(resume_key(old), resume_key(self.meta))
        if found:
            raise ValueError(f"cannot resume {self.path}: {describe_difference(found, self.meta)} "
                             f"({self.meta_file}); run without --resume to start over")
        source = self.partial if self.partial.exists() else self.path if old.get("complete") else None
        if source is None or not source.exists():
            self.log(f"--resume: {self.partial} is missing; scoring starts at the first pair")
            return
        data = source.read_bytes()
        if old.get("complete") is False:
            if len(data) < old["bytes"]:
                raise ValueError(f"cannot resume {self.path}: {self.partial} holds {len(data)} bytes but "
                                 f"{self.meta_file.name} says {old['bytes']} were written; run without --resume")
            data = data[:old["bytes"]]
        values = read_values(data, self.format, self.headline)
        if len(values) != old["records"]:
            raise ValueError(f"cannot resume {self.path}: {source} holds {len(values)} records but "
                             f"{self.meta_file.name} says {old['records']}; run without --resume")
        self.values.extend(values)
        self.meta.update(records=old["records"], bytes=len(data), columns=old.get("columns"),
                         resumed_from=[*old.get("resumed_from", []), old["records"]])
        if old.get("complete"):
            self.complete = True  # nothing to score; finish() completes a rename that a kill cut off
            self.meta = {**old, **{k: self.meta[k] for k in ("records", "bytes", "columns")}}
            self.log(f"--resume: {self.path} is complete ({old['records']} records); nothing to score")
            return
        self._fh = open(self.partial, "r+b")
        self._fh.truncate(len(data))
        self._fh.seek(len(data))
        self.log(f"--resume: {self.path}: {old['records']} of {self.n} records kept from the partial run; "
                 f"scoring resumes at pair {old['records']}")

    def _write_meta(self) -> None:
        write_json_atomic(self.meta_file, self.meta)

    def write_chunk(self, rows: list[dict], values: list[float]) -> None:
        """Append one chunk's records (flushed and synced), then record it in the meta file."""
        if self.format == "csv":
            flat_rows = [flat(r) for r in rows]
            header = self.meta["columns"] is None
            if header:
                self.meta["columns"] = list(dict.fromkeys(k for r in flat_rows for k in r))
            data = encode_csv(flat_rows, self.meta["columns"], header).encode("utf-8")
        else:
            data = encode_jsonl(rows).encode("utf-8")
        self._fh.write(data)
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.values.extend(values)
        self.meta["records"] += len(rows)
        self.meta["bytes"] += len(data)
        self._write_meta()

    def finish(self, **meta) -> None:
        """Mark the run complete (with ``meta``, e.g. the summary) and give the records their final name."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self.meta["records"] != self.n:
            raise RuntimeError(f"{self.partial}: {self.meta['records']} records written for {self.n} pairs")
        if self.complete:  # finished before: only a rename that a kill cut off is left to do
            if self.partial.exists():
                replace(self.partial, self.path)
            return
        self.meta.update(meta, complete=True)
        self._write_meta()
        replace(self.partial, self.path)
        self.complete = True

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

"""The ``radscore`` command's inputs: one report per record of a text file (one report per line; an
empty line is an empty report), JSON lines (a field) or CSV (a column), with optional ids.

:func:`iter_records` reads a file as a stream (errors name the file, line and problem);
:func:`read_records` is the same as lists. :class:`PairFiles` pairs a candidates file with a
references file: :meth:`PairFiles.check` reads both through once (counts, ids, every error before
any scoring, constant memory) and :meth:`PairFiles.chunks` then streams them in chunks of
consecutive pairs, so a corpus is never held in memory whole.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from radscore.atomic import refuse_unfinished


def _text_lines(path: Path) -> Iterator[str]:
    """The lines of a text file as ``str.split("\\n")`` gives them after universal newlines
    (without the newline), without the empty piece after a final line break."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            yield line[:-1] if line.endswith("\n") else line


def _csv_lines(path: Path) -> Iterator[str]:
    """The pieces ``text.splitlines(keepends=True)`` gives of the whole file, streamed."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            yield from line.splitlines(keepends=True)


def iter_records(path: str, field: str | None = None, column: str | None = None,
                 id_name: str | None = None) -> Iterator[tuple[str, str | None]]:
    """``(report, id)`` of each record of a text, JSONL or CSV file (id None without ``id_name``),
    streamed; errors name the file, line and problem. A half-written output of radscore is
    refused (:func:`radscore.atomic.refuse_unfinished`)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{path}: no such file")
    if field and column:
        raise ValueError("give --field (JSON lines) or --column (CSV), not both")
    refuse_unfinished(p)
    if field:
        return _jsonl_records(p, path, field, id_name)
    if column:
        return _csv_records(p, path, column, id_name)
    if p.suffix.lower() in (".jsonl", ".json", ".csv"):
        raise ValueError(f"{path}: a {p.suffix} file needs --field (JSON lines) or --column (CSV)")
    if id_name:
        raise ValueError(f"{path}: a text file has no id column; records are numbered by line (drop --id-column)")
    return ((line.rstrip("\r"), None) for line in _text_lines(p))


def _jsonl_records(p: Path, path: str, field: str, id_name: str | None) -> Iterator[tuple[str, str | None]]:
    for n, line in enumerate(_text_lines(p), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{n}: not valid JSON ({err.msg})") from None
        if not isinstance(record, dict) or field not in record:
            raise ValueError(f"{path}:{n}: no field {field!r} in this record")
        value = record[field]
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{path}:{n}: field {field!r} is a {type(value).__name__}, expected a string")
        rid = None
        if id_name:
            if id_name not in record or record[id_name] is None:
                raise ValueError(f"{path}:{n}: no id field {id_name!r} in this record")
            rid = str(record[id_name])
        yield value or "", rid


def _csv_records(p: Path, path: str, column: str, id_name: str | None) -> Iterator[tuple[str, str | None]]:
    rows = csv.DictReader(_csv_lines(p))
    if rows.fieldnames is None or column not in rows.fieldnames:
        raise ValueError(f"{path}: no column {column!r}; columns are {rows.fieldnames}")
    if id_name and id_name not in rows.fieldnames:
        raise ValueError(f"{path}: no id column {id_name!r}; columns are {rows.fieldnames}")

    def records():
        for row in rows:
            yield row[column] or "", (row[id_name] if id_name else None)
    return records()


def read_records(path: str, field: str | None = None, column: str | None = None,
                 id_name: str | None = None) -> tuple[list[str], list[str] | None]:
    """The reports of a text, JSONL or CSV file and, with ``id_name``, their ids (lists)."""
    reports, ids = [], []
    for report, rid in iter_records(path, field, column, id_name):
        reports.append(report)
        ids.append(rid)
    return reports, (ids if id_name else None)


def read_reports(path: str, field: str | None = None, column: str | None = None) -> list[str]:
    """The reports of a text, JSONL or CSV file (:func:`read_records` without ids)."""
    return read_records(path, field, column)[0]


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class Chunk:
    """Consecutive pairs ``start .. start + len(candidates) - 1``."""

    start: int
    candidates: list[str]
    references: list[str]
    ids: list[str] | None


@dataclass
class PairFiles:
    """A candidates file and a references file read as pairs (module doc)."""

    candidates: str
    references: str
    field: str | None = None
    column: str | None = None
    reference_field: str | None = None
    reference_column: str | None = None
    id_column: str | None = None
    n: int | None = None  # set by check()
    reference_ids: bool = dataclasses.field(default=False, init=False)  # the references carry the ids too

    @classmethod
    def from_args(cls, args, candidates: str) -> "PairFiles":
        return cls(candidates, args.references, args.field, args.column, args.reference_field or args.field,
                   args.reference_column or args.column, args.id_column)

    def _cands(self):
        return iter_records(self.candidates, self.field, self.column, self.id_column)

    def _refs(self):
        return iter_records(self.references, self.reference_field, self.reference_column,
                            self.id_column if self.reference_ids else None)

    def check(self) -> "PairFiles":
        """Read both files through once: every error of either file, the same number of records,
        the same ids where both carry them. Sets :attr:`n`."""
        cands = self._cands()
        self.reference_ids = bool(self.id_column)
        if self.id_column:
            try:
                for _ in self._refs():  # a JSON lines file names a missing id only at its record
                    pass
            except ValueError as err:
                if "no id" not in str(err):
                    raise
                self.reference_ids = False  # ids on one side suffice
        refs = self._refs()
        mismatch, n_cands, n_refs = None, 0, 0
        for c, r in itertools.zip_longest(cands, refs):
            n_cands += c is not None
            n_refs += r is not None
            if mismatch is None and c is not None and r is not None and self.reference_ids and c[1] != r[1]:
                mismatch = (n_cands - 1, c[1], r[1])
        if n_cands != n_refs:
            raise ValueError(f"{self.candidates} holds {n_cands} reports but {self.references} holds "
                             f"{n_refs}; they must pair up line by line")
        if mismatch is not None:
            k, a, b = mismatch
            raise ValueError(f"record {k}: id {a!r} in {self.candidates} but {b!r} in {self.references}; "
                             "the files must list the same ids in the same order")
        self.n = n_cands
        return self

    def chunks(self, size: int, start: int = 0) -> Iterator[Chunk]:
        """Chunks of ``size`` consecutive pairs from pair ``start`` (a multiple of ``size``) on."""
        pairs = zip(self._cands(), self._refs())
        pairs = itertools.islice(pairs, start, None)
        lo = start
        while True:
            block = list(itertools.islice(pairs, size))
            if not block:
                return
            ids = [c[1] for c, _ in block] if self.id_column else None
            yield Chunk(lo, [c[0] for c, _ in block], [r[0] for _, r in block], ids)
            lo += len(block)

    def identity(self) -> dict:
        """What the scores depend on: both files' SHA-256 and how they are read."""
        return {"candidates": {"path": self.candidates, "sha256": file_sha256(self.candidates)},
                "references": {"path": self.references, "sha256": file_sha256(self.references)},
                "reading": {"field": self.field, "column": self.column, "reference_field": self.reference_field,
                            "reference_column": self.reference_column, "id_column": self.id_column},
                "n": self.n}

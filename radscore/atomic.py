"""Files that are either whole or absent: every artefact radscore writes (records, their meta
files, export manifests, bundle files, results JSON) goes to a temporary name in the same folder
and takes its final name with :func:`os.replace`, so a killed process leaves the old file or the
new one under the final name, never half of one.

    write_text_atomic(path, text)                # small files at once
    write_json_atomic(path, obj)
    with atomic_path(path) as tmp:               # anything a library writes to a path
        fig.savefig(tmp)
    with atomic_open(path, "w") as fh:           # a stream written to the end, then renamed
        fh.write(...)

Temporary names end in ``.tmp`` (``<name>.<pid>.tmp``); the resumable records of ``radscore
score --out`` end in ``.partial`` (:mod:`radscore.streaming`). :func:`refuse_unfinished` is what
readers call: it names a file that is one of those, or whose meta file says its run has not
completed, instead of loading it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import IO, Iterator

TMP_SUFFIX = ".tmp"
PARTIAL_SUFFIX = ".partial"
META_SUFFIX = ".meta.json"


def temporary_name(path: str | os.PathLike) -> Path:
    """The temporary name of ``path`` for this process: same folder, ``<name>.<pid>.tmp``."""
    path = Path(path)
    return path.with_name(f"{path.name}.{os.getpid()}{TMP_SUFFIX}")


def fsync_folder(folder: str | os.PathLike) -> None:
    """Make a rename in ``folder`` durable (best effort: not every file system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def replace(tmp: str | os.PathLike, path: str | os.PathLike) -> None:
    """``os.replace(tmp, path)``, then sync the folder."""
    os.replace(tmp, path)
    fsync_folder(Path(path).parent)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path to write; on success it becomes ``path`` (one rename), on an exception it
    is removed and ``path`` is untouched."""
    path = Path(path)
    tmp = temporary_name(path)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:  # what the library wrote reaches the disk before the rename
            os.fsync(fh.fileno())
        replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8",
                newline: str | None = None) -> Iterator[IO]:
    """``open(path, mode)`` on the temporary name; closed, synced and renamed to ``path`` at the
    end of the block (removed on an exception)."""
    if "b" in mode:
        encoding = None
    with atomic_path(path) as tmp:
        with open(tmp, mode, encoding=encoding, newline=newline) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def write_text_atomic(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    with atomic_open(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text)


def write_json_atomic(path: str | os.PathLike, obj, indent: int | None = 1, **dumps) -> None:
    """``obj`` as JSON (``ensure_ascii=False`` unless given), one trailing newline."""
    dumps.setdefault("ensure_ascii", False)
    write_text_atomic(path, json.dumps(obj, indent=indent, **dumps) + "\n")


def meta_path(path: str | os.PathLike) -> Path:
    """The meta file beside an output: ``<out>.meta.json``."""
    return Path(f"{path}{META_SUFFIX}")


def refuse_unfinished(path: str | os.PathLike) -> None:
    """A ValueError naming ``path`` when it is a temporary or partial file, when a partial run of
    it lies beside it, or when its meta file says its run has not completed; else nothing."""
    path = Path(path)
    name = path.name
    if name.endswith(TMP_SUFFIX) or name.endswith(PARTIAL_SUFFIX):
        raise ValueError(f"{path}: a half-written file (its temporary name); not loading it")
    partial = Path(f"{path}{PARTIAL_SUFFIX}")
    meta = meta_path(path)
    if meta.is_file():
        try:
            complete = json.loads(meta.read_text(encoding="utf-8")).get("complete", True)
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            raise ValueError(f"{meta}: not a valid meta file; {path} cannot be trusted") from None
        if complete is False:
            raise ValueError(f"{path}: {meta} says the run writing it has not completed (the partial run is "
                             f"{partial.name}; finish it with --resume); not loading it")
    if partial.is_file():
        raise ValueError(f"{path}: {partial} holds an unfinished run writing it; not loading it")

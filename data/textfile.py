"""Reading the project's text inputs: UTF-8 or a clear error naming the file and line.

A file cut in the middle of a multi-byte character (a truncated download) or written in another
encoding raises the calling reader's own error class, never a bare ``UnicodeDecodeError``.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Iterator


def read_text(path: str | Path, error: type[Exception] = ValueError) -> str:
    """The whole file as text (universal newlines), or ``error`` naming the line of the bad byte."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise error(f"{path}:{line}: not UTF-8 text (byte {err.start}: {err.reason}); "
                    "a truncated or mis-encoded file?") from None
    return io.StringIO(text, newline=None).read()


def numbered_lines(path: str | Path, error: type[Exception] = ValueError) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a UTF-8 text file, numbered from 1, as ``open()`` would split it."""
    return enumerate(io.StringIO(read_text(path, error)), 1)

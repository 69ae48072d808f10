"""The order in which `make test` hands test files to its workers: longest first.

Each file's time comes from ``tests/durations.json`` (seconds per file: setup, call and teardown of its
tests, as a run on the 2-core reference machine measured them). Longest first keeps the long files from
coming last on one worker while the other has nothing left. A file missing from it goes first when it
holds a ``slow`` test (20 s or more by that marker's definition) and last otherwise.
``make test PYTEST_ARGS=--store-durations`` writes the times of the files a run ran into the file; the
times only order the run, no test reads them.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

DURATIONS = Path(__file__).with_name("durations.json")


def file_of(nodeid: str) -> str:
    """The test file of a node id (``tests/x/test_y.py::test_z[a]`` -> ``tests/x/test_y.py``)."""
    return nodeid.split("::", 1)[0]


def read_durations(path: Path = DURATIONS) -> dict[str, float]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def longest_first(items: list, durations: dict[str, float], slow_files: set[str]) -> None:
    """Sort ``items`` (pytest items) in place by their file's time, longest first. The sort is stable,
    so each file's tests stay together and in their order."""
    def estimate(item) -> float:
        name = file_of(item.nodeid)
        if name in durations:
            return durations[name]
        return math.inf if name in slow_files else 0.0

    items.sort(key=lambda item: -estimate(item))


class DurationRecorder:
    """A pytest plugin for the controlling process: adds up each file's test times (every phase) and, at
    the end of the session, writes them into ``path`` over the times stored there, keeping files that
    did not run and dropping files that no longer exist."""

    def __init__(self, path: Path = DURATIONS, root: Path | None = None):
        self.path, self.root = path, root or path.parent.parent
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report) -> None:
        self.seconds[file_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        if not self.seconds:
            return
        merged = {**read_durations(self.path), **{k: round(v, 1) for k, v in self.seconds.items()}}
        kept = {k: merged[k] for k in sorted(merged) if (self.root / k).is_file()}
        self.path.write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")

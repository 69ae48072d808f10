"""`make test`'s order (tests/ordering.py): longest file first from tests/durations.json, and
`--store-durations` writes the times a run measured into that file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tests.ordering import DURATIONS, DurationRecorder, longest_first, read_durations

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Item:
    nodeid: str


@dataclass
class Report:
    nodeid: str
    duration: float


def test_files_go_longest_first_and_keep_their_tests_together_in_order():
    items = [Item(n) for n in ("tests/a.py::t1", "tests/a.py::t2", "tests/b.py::t1", "tests/c.py::t1",
                               "tests/d.py::t1", "tests/a.py::t3", "tests/e.py::t1")]
    longest_first(items, {"tests/a.py": 5.0, "tests/b.py": 50.0, "tests/e.py": 20.0}, slow_files={"tests/c.py"})
    # c holds a slow test and has no time yet: first; d has neither: last
    assert [i.nodeid for i in items] == ["tests/c.py::t1", "tests/b.py::t1", "tests/e.py::t1", "tests/a.py::t1",
                                         "tests/a.py::t2", "tests/a.py::t3", "tests/d.py::t1"]


def test_the_recorder_adds_up_each_files_phases_and_merges_them_into_the_stored_times(tmp_path):
    for name in ("tests/a.py", "tests/b.py", "tests/kept.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    stored = tmp_path / "tests" / "durations.json"
    stored.write_text(json.dumps({"tests/a.py": 99.0, "tests/kept.py": 7.0, "tests/gone.py": 3.0}))
    recorder = DurationRecorder(stored, root=tmp_path)
    for nodeid, seconds in (("tests/a.py::t1", 0.5), ("tests/a.py::t1", 2.0), ("tests/a.py::t2[x]", 1.04),
                            ("tests/b.py::T::t", 4.0)):
        recorder.pytest_runtest_logreport(Report(nodeid, seconds))
    recorder.pytest_sessionfinish(None, 0)
    # a measured file gets its new time, one that did not run keeps its own, a deleted one goes
    assert read_durations(stored) == {"tests/a.py": 3.5, "tests/b.py": 4.0, "tests/kept.py": 7.0}


def test_the_committed_times_name_existing_test_files():
    durations = read_durations(DURATIONS)
    assert durations, "tests/durations.json is missing or empty"
    for name, seconds in durations.items():
        assert (ROOT / name).is_file() and Path(name).name.startswith("test_"), name
        assert isinstance(seconds, (int, float)) and seconds >= 0, (name, seconds)

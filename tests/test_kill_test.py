"""The kill test, fast: every scoring job of ``python -m benchmarks.kill_test`` is SIGKILLed at seeded
random points (and once after its first chunk), resumed or rerun, and leaves no corrupted output,
loses nothing it persisted, refuses a changed input in one line, and ends equal to an
uninterrupted run byte for byte. Tiny random models, a few dozen pairs, jobs forked from this
process (the full run, ``benchmarks/results/kill_test.json``, starts each job afresh)."""

from __future__ import annotations

import json

import pytest

from benchmarks.kill_test import main
from train.rehearsal.tiny import build_tiny_iob_export


@pytest.fixture(scope="module")
def tiny_ner(tmp_path_factory):
    return build_tiny_iob_export(tmp_path_factory.mktemp("kill_ner"), seed=0, head_std=0.3, o_bias=2.5)


def test_kills_leave_nothing_corrupted_and_resume_to_the_same_bytes(tiny_ner, tiny_backbone, tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    out = tmp_path / "kill_test.json"
    code = main(["--kills", "1", "--seed", "3", "--pairs", "18", "--chunk-size", "6", "--writer-iterations", "6",
                 "--launcher", "fork", "--jobs", "score-jsonl", "score-csv", "compare", "atomic-writers",
                 "--ner", tiny_ner, "--encoder", tiny_backbone, "--work", str(tmp_path), "--out", str(out)])
    result = json.loads(out.read_text())
    assert set(result["jobs"]) == {"score-jsonl", "score-csv", "compare", "atomic-writers"}
    for name, job in result["jobs"].items():
        assert job["kills"] >= 1 and job["corrupted_outputs"] == 0 and not job["problems"], (name, job["problems"])
        done = job["equal_to_uninterrupted"].split("/")
        assert done[0] == done[1], (name, job["equal_to_uninterrupted"])
        if name != "atomic-writers":
            refusal = job["refusal"]
            assert refusal["ok"] and "cannot resume" in refusal["message"] and "differs" in refusal["message"], refusal
            assert job["largest_persist_step"] <= 6
    assert code == 0


def test_runs_of_other_jobs_merge_into_one_file_each_with_its_run(tmp_path):
    """Two runs with ``--merge`` (e.g. at the same time, on other jobs) write one JSON that keeps the jobs
    of both, each with the facts of its own run, and the environment record of the last writer."""
    from argparse import Namespace

    from benchmarks.kill_test import write

    out = tmp_path / "kill_test.json"
    job = {"kills": 20, "problems": [], "refusal": None}
    first = {"seed": 0, "threads": 1, "load_average_1min": 1.5, "setup": {}, "jobs": {"a": dict(job)}}
    second = {"seed": 1, "threads": 1, "load_average_1min": 0.5, "setup": {}, "jobs": {"b": dict(job)}}
    assert write(Namespace(out=str(out), merge=True), first, ["c"])
    assert json.loads(out.read_text())["still_to_run"] == ["c"]
    assert write(Namespace(out=str(out), merge=True), second, [])
    merged = json.loads(out.read_text())
    assert set(merged["jobs"]) == {"a", "b"} and merged["still_to_run"] == ["c"] and not merged["complete"]
    assert merged["jobs"]["a"]["run"]["seed"] == 0 and merged["jobs"]["b"]["run"]["seed"] == 1
    assert merged["environment"]["seed"] is None and "cpu_flags" in merged["environment"]  # write_result adds it
    assert not write(Namespace(out=str(out), merge=False), {"setup": {}, "jobs": {"d": {**job, "problems": ["x"]}}}, [])
    assert set(json.loads(out.read_text())["jobs"]) == {"d"}  # without --merge, the file holds this run only

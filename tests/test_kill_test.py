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


def test_a_forked_job_draws_its_bars_while_a_thread_here_holds_tqdms_lock(tmp_path, monkeypatch):
    """tqdm's write lock is held by a thread of this process at the fork (tqdm's monitor thread takes it every
    few seconds, and the suite's workers have one once a bar was drawn): the forked job, which has no such
    thread, takes a lock of its own, draws its bar and ends. With tqdm's inherited lock it waited forever."""
    import threading
    import time

    from tqdm import tqdm

    from benchmarks.kill_test import Child

    (tmp_path / "bar_job.py").write_text(
        "from tqdm import tqdm\n\n\ndef main(argv):\n    for _ in tqdm(range(3)):\n        pass\n    return 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    held, release = threading.Event(), threading.Event()

    def hold():
        with tqdm.get_lock():
            held.set()
            release.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    try:
        child = Child("bar_job", [], tmp_path / "log.txt", "fork", 1)
        deadline = time.monotonic() + 30
        while child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        ended = child.code is not None
        if not ended:
            child.kill()
    finally:
        release.set()
        holder.join()
    assert ended, "the forked job waited for a lock that a thread of its parent held at the fork"
    log = (tmp_path / "log.txt").read_text()
    assert child.code == 0 and "3/3" in log, log


def test_a_hung_run_is_killed_and_fails_naming_its_job(tmp_path, monkeypatch):
    import benchmarks.kill_test as kt

    (tmp_path / "sleepy_job.py").write_text("import time\n\n\ndef main(argv):\n    print('started', flush=True)\n"
                                            "    time.sleep(60)\n    return 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(kt, "HANG_S", 1.0)
    job = kt.Job("sleepy", prepare=lambda work: None, command=lambda work: ("sleepy_job", []),
                 outputs=lambda work: [])
    with pytest.raises(RuntimeError, match=r"(?s)sleepy: the run did not end within 1 s \(hung\).*started"):
        kt.attempt(job, tmp_path, False, None, "fork", 1, tmp_path / "log.txt")

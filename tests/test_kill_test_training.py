"""The kill test of the training jobs, fast: ``python -m train fit`` of NER, ER²Score and
ClinicalBLEURT (resumed with ``--ckpt_path last``) and the TPE search (resumed through its study)
are SIGKILLed once, right after their first checkpoint or trial, then resumed with a changed config
(which must be refused in one line) and resumed to the end; ``export`` and ``publish --dry-run`` are
SIGKILLed once at a seeded random point and rerun. Nothing a kill leaves under a final name is
corrupted, each resume starts from what was persisted, and the results equal an uninterrupted run's
(the fits' test metrics and weights, the search's best value). Tiny random backbones, two epochs,
jobs forked from this process (the full run, ``benchmarks/results/kill_test.json``, kills each job
20 times at random points)."""

from __future__ import annotations

import json

import pytest

from benchmarks.kill_test import main

TRAINING = {"ner-fit", "reward-fit", "bleurt-fit", "tune", "export", "publish-dry-run"}


@pytest.mark.slow
def test_training_jobs_killed_leave_nothing_corrupted_and_resume_to_the_same_result(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    out = tmp_path / "kill_test.json"
    code = main(["--kills", "1", "--seed", "1", "--jobs", *sorted(TRAINING), "--launcher", "fork",
                 "--fit-epochs", "2", "--tune-trials", "15", "--no-spread", "--refusal-first",
                 "--work", str(tmp_path), "--out", str(out)])
    result = json.loads(out.read_text())
    assert set(result["jobs"]) == TRAINING
    for name, job in result["jobs"].items():
        assert job["kills"] >= 1 and job["corrupted_outputs"] == 0 and not job["problems"], (name, job["problems"])
        done = job["equal_to_uninterrupted"].split("/")
        assert done[0] == done[1], (name, job["equal_to_uninterrupted"], [e.get("comparison") for e in job["episodes"]])
    for name in ("ner-fit", "reward-fit", "bleurt-fit", "tune"):
        job = result["jobs"][name]
        refusal = job["refusal"]
        assert refusal["ok"] and "error" in refusal["message"], (name, refusal)
        resumed = [e for e in job["episodes"] if e["kills"] and max(e["kills"][-1]["persisted"].values())]
        assert resumed, name  # at least one resume from something persisted (the targeted kill's)
        for episode in resumed:  # the resume started from what the kill left, not from scratch
            kept = max(episode["kills"][-1]["persisted"].values())
            assert episode["final_resumed_from"] is not None and episode["final_resumed_from"] >= kept, (name, episode)
    for name in ("ner-fit", "reward-fit", "bleurt-fit"):  # last.ckpt at every epoch's end: one epoch lost at most
        job = result["jobs"][name]
        assert 0 < job["largest_persist_step"] <= job["reference"]["steps_per_epoch"], (name, job["largest_persist_step"])
    assert result["jobs"]["tune"]["episodes"][-1]["comparison"]["best_value"] == \
        result["jobs"]["tune"]["reference"]["best_value"]
    assert code == 0

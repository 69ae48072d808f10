"""Atomic artefacts: every radscore writer of records, meta files, manifests, bundle files and
results JSON leaves the old file or the new one under the final name when it dies mid-write, and
readers refuse what a killed writer left instead of loading it."""

from __future__ import annotations

import json

import pytest

from radscore import atomic
from radscore.atomic import atomic_open, refuse_unfinished, write_json_atomic, write_text_atomic
from radscore.export import read_manifest, write_manifest
from radscore.reading import read_reports
from radscore.scoring import AffinityMatrix


class Killed(Exception):
    pass


def _die(*_a, **_k):
    raise Killed


def test_a_writer_that_dies_before_the_rename_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    write_json_atomic(path, {"v": 1})
    monkeypatch.setattr(atomic.os, "replace", _die)
    with pytest.raises(Killed):
        write_json_atomic(path, {"v": 2})
    assert json.loads(path.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # the temporary file is gone too


def test_a_stream_that_dies_midway_leaves_the_old_file(tmp_path):
    path = tmp_path / "scores.jsonl"
    write_text_atomic(path, "old\n")
    with pytest.raises(Killed):
        with atomic_open(path) as fh:
            fh.write("new line 1\n")
            fh.flush()
            _die()
    assert path.read_text() == "old\n" and len(list(tmp_path.iterdir())) == 1
    with atomic_open(path) as fh:
        fh.write("new\n")
    assert path.read_text() == "new\n"


def test_manifest_and_affinity_matrix_writers_are_atomic(tmp_path, monkeypatch):
    write_manifest(tmp_path, "ratescore", ner="ner", encoder="enc")
    AffinityMatrix.builtin("long").save(tmp_path / "affinity_matrix.json")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    monkeypatch.setattr(atomic.os, "replace", _die)
    with pytest.raises(Killed):
        write_manifest(tmp_path, "ratescore", ner="other", encoder="enc")
    with pytest.raises(Killed):
        AffinityMatrix.uniform(0.5, 0.25).save(tmp_path / "affinity_matrix.json")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_readers_refuse_what_a_killed_writer_left(tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    (export / "radscore_manifest.json.123.tmp").write_text('{"kind": "ner-i')
    with pytest.raises(ValueError, match=r"export: a half-written export \(radscore_manifest.json.123.tmp"):
        read_manifest(export)
    (tmp_path / "m.json.77.tmp").write_text("{")
    with pytest.raises(ValueError, match=r"m.json.77.tmp: a half-written file"):
        AffinityMatrix.load(tmp_path / "m.json.77.tmp")
    partial = tmp_path / "scores.jsonl.partial"
    partial.write_text('{"index": 0, "f1": 0.5}\n{"ind')
    with pytest.raises(ValueError, match=r"scores.jsonl.partial: a half-written file"):
        read_reports(str(partial), field="f1")
    out = tmp_path / "scores.jsonl"
    out.write_text('{"index": 0, "f1": 0.5}\n')
    with pytest.raises(ValueError, match=r"scores.jsonl: .*scores.jsonl.partial holds an unfinished run"):
        refuse_unfinished(out)
    partial.unlink()
    (tmp_path / "scores.jsonl.meta.json").write_text(json.dumps({"complete": False, "records": 1}))
    with pytest.raises(ValueError, match=r"scores.jsonl.meta.json says the run writing it has not completed"):
        refuse_unfinished(out)
    (tmp_path / "scores.jsonl.meta.json").write_text(json.dumps({"complete": True}))
    refuse_unfinished(out)  # finished: no complaint
    (tmp_path / "scores.jsonl.meta.json").write_text(json.dumps({"signature": {}}))
    refuse_unfinished(out)  # a meta file from before resumable runs: a finished run

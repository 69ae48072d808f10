"""Streaming, resumable scoring (``radscore score --out``, ``compare --out-dir``): records reach the
disk chunk by chunk under ``<out>.partial``, a crash leaves the complete chunks readable and nothing
under the final name, ``--resume`` gives the uninterrupted run's bytes, a changed input or scorer is
refused in one line, and memory does not grow with the corpus. A toy metric (word overlap, no
model) that can be told to fail at its k-th call stands for a crash."""

from __future__ import annotations

import json
import sys
import textwrap
import tracemalloc

import pytest

from radscore import registry
from radscore.cli import main
from radscore.streaming import read_scores

TOY_MODULE = textwrap.dedent('''
    import json
    from dataclasses import dataclass
    from pathlib import Path

    from radscore.inputs import check_reports
    from radscore.scorer import Scorer


    @dataclass
    class Overlap:
        overlap: float
        shared: int

        def to_record(self):
            return {"overlap": self.overlap, "shared": self.shared, "words": ["w"] * self.shared}


    class StreamToy(Scorer):
        calls = 0          # iter_score calls, over all instances
        fail_on_call = 0   # raise at this call (0: never)
        scored = 0         # pairs scored

        def __init__(self, model, device=None, batch_size=None):
            self.model = str(model)
            self.weight = json.loads(Path(model, "toy.json").read_text())["weight"]

        @classmethod
        def from_export(cls, source, **options):
            return cls(source, **options)

        def iter_score(self, candidates, references, progress=True):
            candidates, references = check_reports(candidates, references)
            StreamToy.calls += 1
            if StreamToy.calls == StreamToy.fail_on_call:
                raise RuntimeError("killed")
            for c, r in zip(candidates, references):
                StreamToy.scored += 1
                cw, rw = set(c.lower().split()), set(r.lower().split())
                union = len(cw | rw)
                yield Overlap(self.weight * len(cw & rw) / union / 3 if union else 0.0, len(cw & rw))

        def score(self, candidates=None, references=None, **aliases):
            return list(self.iter_score(candidates, references))

        def compute_score(self, candidates=None, references=None, **aliases):
            return [r.overlap for r in self.score(candidates, references)]

        def signature(self):
            return {"metric": "stream-toy", "model": self.model, "weight": self.weight}
''')

SPEC = registry.MetricSpec(name="stream-toy", scorer="radscore_stream_toy:StreamToy", display_name="StreamToy",
                           headline="overlap", export_keyword="model")
WORDS = "no pleural effusion heart size normal mild cardiomegaly liver enlarged small left right".split()


def _report(k: int) -> str:
    return " ".join(WORDS[(k * p) % len(WORDS)] for p in (1, 3, 5, 7)[: 1 + k % 4]) + f" {k % 7}"


@pytest.fixture
def toy(tmp_path, monkeypatch):
    code = tmp_path / "code"
    code.mkdir()
    (code / "radscore_stream_toy.py").write_text(TOY_MODULE)
    monkeypatch.syspath_prepend(str(code))
    registry.register(SPEC)
    model = tmp_path / "model"
    model.mkdir()
    (model / "toy.json").write_text(json.dumps({"weight": 2.0}))
    import radscore_stream_toy

    cls = radscore_stream_toy.StreamToy
    cls.calls = cls.fail_on_call = cls.scored = 0
    yield cls, str(model)
    registry.unregister("stream-toy")
    sys.modules.pop("radscore_stream_toy", None)


def _inputs(folder, n: int, offset: int = 0):
    c, r = folder / f"c{n}.txt", folder / f"r{n}.txt"
    c.write_text("".join(_report(k + offset) + "\n" for k in range(n)))
    r.write_text("".join(_report(3 * k + 1) + "\n" for k in range(n)))
    return c, r


def _score(model, c, r, out, *extra):
    return main(["score", "--metric", "stream-toy", "--model", model, "--candidates", str(c), "--references", str(r),
                 "--out", str(out), "--chunk-size", "10", "--quiet", *extra])


def _crash(cls, on_call: int, *run):
    cls.calls, cls.fail_on_call = 0, on_call
    with pytest.raises(RuntimeError, match="killed"):
        _score(*run)
    cls.calls = cls.fail_on_call = 0


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_chunks_reach_the_disk_before_the_run_ends(toy, tmp_path, suffix):
    cls, model = toy
    c, r = _inputs(tmp_path, 45)
    out = tmp_path / f"s.{suffix}"
    _crash(cls, 3, model, c, r, out)  # chunks 1 and 2 scored, the third call dies
    assert not out.exists()
    partial = tmp_path / f"s.{suffix}.partial"
    lines = partial.read_text().splitlines()
    assert len(lines) == 20 + (suffix == "csv")  # two chunks of 10 (and the CSV header)
    meta = json.loads((tmp_path / f"s.{suffix}.meta.json").read_text())
    assert meta["complete"] is False and meta["records"] == 20 and meta["bytes"] == partial.stat().st_size
    if suffix == "jsonl":
        assert [json.loads(line)["index"] for line in lines] == list(range(20))
    with pytest.raises(ValueError, match="partial"):
        read_scores(partial)


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_resume_gives_the_uninterrupted_bytes_and_scores_only_the_rest(toy, tmp_path, suffix, capsys):
    cls, model = toy
    c, r = _inputs(tmp_path, 45)
    whole = tmp_path / f"whole.{suffix}"
    assert _score(model, c, r, whole) == 0
    out = tmp_path / f"s.{suffix}"
    _crash(cls, 4, model, c, r, out)
    with open(f"{out}.partial", "ab") as fh:  # the torn tail of a chunk whose write was cut off
        fh.write(b'{"index": 30, "overl')
    cls.scored = 0
    assert _score(model, c, r, out, "--resume") == 0
    assert out.read_bytes() == whole.read_bytes()
    assert cls.scored == 15  # chunks 4 and 5 only
    meta = json.loads((tmp_path / f"s.{suffix}.meta.json").read_text())
    assert meta["complete"] is True and meta["resumed_from"] == [30] and meta["records"] == 45
    assert meta["summary"] == json.loads((tmp_path / f"whole.{suffix}.meta.json").read_text())["summary"]
    assert not (tmp_path / f"s.{suffix}.partial").exists()
    assert "30 of 45 records kept" in capsys.readouterr().err
    assert len(read_scores(out)) == 45


def test_resume_of_a_run_killed_before_its_first_chunk(toy, tmp_path):
    cls, model = toy
    c, r = _inputs(tmp_path, 25)
    assert _score(model, c, r, tmp_path / "whole.csv") == 0
    _crash(cls, 1, model, c, r, tmp_path / "s.csv")  # the meta file is there, no record
    assert json.loads((tmp_path / "s.csv.meta.json").read_text())["records"] == 0
    assert _score(model, c, r, tmp_path / "s.csv", "--resume") == 0
    assert (tmp_path / "s.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()


def test_resume_refuses_changed_inputs_scorer_or_chunks_in_one_line(toy, tmp_path, capsys):
    cls, model = toy
    c, r = _inputs(tmp_path, 45)
    out = tmp_path / "s.jsonl"
    _crash(cls, 3, model, c, r, out)
    before = (tmp_path / "s.jsonl.partial").read_bytes()
    capsys.readouterr()
    c.write_text(c.read_text().replace("1", "2", 1))
    assert _score(model, c, r, out, "--resume") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"cannot resume {out}: the candidates file {c} differs from the partial run's (sha256 " in err
    assert "s.jsonl.meta.json" in err
    _inputs(tmp_path, 45)  # the inputs as they were
    (tmp_path / "model" / "toy.json").write_text(json.dumps({"weight": 3.0}))
    assert _score(model, c, r, out, "--resume") == 2
    assert "signature.weight is 3.0 now but 2.0 in the partial run" in capsys.readouterr().err
    (tmp_path / "model" / "toy.json").write_text(json.dumps({"weight": 2.0}))
    assert _score(model, c, r, out, "--resume", "--chunk-size", "5") == 2
    assert "chunk_size is 5 now but 10" in capsys.readouterr().err
    assert (tmp_path / "s.jsonl.partial").read_bytes() == before  # refusing wrote nothing
    assert _score(model, c, r, out, "--resume") == 0


def test_a_run_without_resume_starts_over_and_says_so(toy, tmp_path, capsys):
    cls, model = toy
    c, r = _inputs(tmp_path, 45)
    out = tmp_path / "s.jsonl"
    _crash(cls, 3, model, c, r, out)
    capsys.readouterr()
    cls.scored = 0
    assert _score(model, c, r, out) == 0
    assert "an unfinished run (20 of 45 records) is discarded" in capsys.readouterr().err
    assert cls.scored == 45 and len(read_scores(out)) == 45
    cls.scored = 0
    assert _score(model, c, r, out, "--resume") == 0  # finished: nothing to score
    assert cls.scored == 0 and "is complete (45 records); nothing to score" in capsys.readouterr().err


def test_resume_completes_a_rename_that_a_kill_cut_off(toy, tmp_path):
    """Killed after the meta file said complete, before the rename: resume renames, scores nothing."""
    cls, model = toy
    c, r = _inputs(tmp_path, 25)
    out = tmp_path / "s.jsonl"
    assert _score(model, c, r, out) == 0
    whole, meta = out.read_bytes(), (tmp_path / "s.jsonl.meta.json").read_bytes()
    out.rename(tmp_path / "s.jsonl.partial")
    with pytest.raises(ValueError, match="holds an unfinished run"):
        read_scores(out)
    cls.scored = 0
    assert _score(model, c, r, out, "--resume") == 0
    assert cls.scored == 0 and out.read_bytes() == whole and not (tmp_path / "s.jsonl.partial").exists()
    assert (tmp_path / "s.jsonl.meta.json").read_bytes() == meta


def test_resume_with_no_partial_run_starts_from_the_first_pair(toy, tmp_path, capsys):
    _, model = toy
    c, r = _inputs(tmp_path, 12)
    assert _score(model, c, r, tmp_path / "s.jsonl", "--resume") == 0
    assert "no partial run" in capsys.readouterr().err and len(read_scores(tmp_path / "s.jsonl")) == 12


def test_an_earlier_finished_output_stays_whole_until_the_new_run_finishes(toy, tmp_path):
    cls, model = toy
    c, r = _inputs(tmp_path, 45)
    out = tmp_path / "s.jsonl"
    assert _score(model, c, r, out) == 0
    old = out.read_bytes()
    _crash(cls, 3, model, c, r, out)
    assert out.read_bytes() == old  # the old run's file, whole
    with pytest.raises(ValueError, match="has not completed"):
        read_scores(out)  # but the meta file says a run over it is unfinished


def test_stdout_streams_chunk_by_chunk(toy, tmp_path, capsys):
    cls, model = toy
    c, r = _inputs(tmp_path, 25)
    cls.fail_on_call = 3
    with pytest.raises(RuntimeError):
        main(["score", "--metric", "stream-toy", "--model", model, "--candidates", str(c), "--references", str(r),
              "--chunk-size", "10", "--quiet"])
    assert len(capsys.readouterr().out.splitlines()) == 20  # printed before the failure
    assert main(["score", "--metric", "stream-toy", "--model", model, "--candidates", str(c), "--references",
                 str(r), "--resume", "--quiet"]) == 2
    assert "give --out" in capsys.readouterr().err


def _peak_scoring(toy_model, folder, n: int) -> int:
    c, r = _inputs(folder, n)
    tracemalloc.start()
    try:
        assert _score(toy_model, c, r, folder / f"s{n}.jsonl", "--chunk-size", "100") == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_corpus(toy, tmp_path):
    """Python's peak allocation scoring 10,000 pairs is that of 1,000 pairs plus the headline values
    (8 bytes a pair, 16 while the array grows): neither the inputs nor the records are held whole
    (reading everything and writing at the end, as before streaming, took 670 bytes a pair more)."""
    _, model = toy
    _peak_scoring(model, tmp_path, 10)  # imports and first-use caches, outside the comparison
    small = _peak_scoring(model, tmp_path, 1000)
    large = _peak_scoring(model, tmp_path, 10000)
    assert large - small < 9000 * 40, (small, large)


def test_compare_resumes_every_system_to_the_uninterrupted_bytes(toy, tmp_path, capsys):
    cls, model = toy
    refs = tmp_path / "refs.txt"
    systems = []
    for k, name in enumerate(["base", "new", "other"]):
        path, refs = tmp_path / f"{name}.txt", tmp_path / "refs.txt"
        path.write_text("".join(_report(i + 3 * k) + "\n" for i in range(35)))
        systems += ["--candidates", f"{name}={path}"]
    refs.write_text("".join(_report(2 * i) + "\n" for i in range(35)))
    run = ["compare", "--metric", "stream-toy", "--model", model, "--references", str(refs), *systems,
           "--chunk-size", "10", "--quiet", "--randomization", "200"]
    assert main([*run, "--out-dir", str(tmp_path / "whole")]) == 0
    cls.calls, cls.fail_on_call = 0, 5  # chunk 2 of "new": base has 2 chunks, new and other 1
    with pytest.raises(RuntimeError):
        main([*run, "--out-dir", str(tmp_path / "cut")])
    cls.fail_on_call = 0
    assert [len((tmp_path / "cut" / f"scores.{n}.jsonl.partial").read_text().splitlines())
            for n in ("base", "new", "other")] == [20, 10, 10]
    assert not (tmp_path / "cut" / "compare.json").exists()
    original = (tmp_path / "new.txt").read_text()
    (tmp_path / "new.txt").write_text(original.replace("1", "2", 1))
    assert main([*run, "--out-dir", str(tmp_path / "cut"), "--resume"]) == 2
    assert f"system new's candidates file {tmp_path / 'new.txt'} differs" in capsys.readouterr().err
    (tmp_path / "new.txt").write_text(original)
    assert main([*run, "--out-dir", str(tmp_path / "cut"), "--resume"]) == 0
    for name in ("scores.base.jsonl", "scores.new.jsonl", "scores.other.jsonl", "compare.json", "compare.md"):
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name


def test_the_default_chunk_is_a_fiftieth_of_the_pairs_within_bounds():
    from radscore.streaming import default_chunk_size

    assert [default_chunk_size(n) for n in (0, 100, 1000, 2000, 2001, 102400, 200000)] == [32, 32, 32, 40, 41, 2048, 2048]

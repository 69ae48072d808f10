"""``write_result`` of ``benchmarks.results_file``: the lab's results JSONs carry the environment record
of the run that wrote them, are written atomically, and keep a record the caller put there; and
``run_environment`` reads a training run folder's last ``fit`` record."""

import json

import pytest

from benchmarks.results_file import run_environment, write_result
from radscore.environment import REQUIRED


def test_the_record_is_added_with_every_required_key(tmp_path):
    out = tmp_path / "bench.json"
    returned = write_result(out, {"pairs_per_s": 1.5}, precision="bf16", seed=7, indent=1)
    data = json.loads(out.read_text())
    assert data["pairs_per_s"] == 1.5 and data == returned
    env = data["environment"]
    assert set(REQUIRED) <= set(env), f"missing {set(REQUIRED) - set(env)}"
    assert env["precision"] == "bf16" and env["seed"] == 7
    assert out.read_text().endswith("}\n") and out.read_text().startswith("{\n ")  # indent=1, one newline


def test_the_json_options_are_the_callers(tmp_path):
    out = tmp_path / "bench.json"
    write_result(out, {"b": "é", "a": 1}, indent=2, sort_keys=True, ensure_ascii=False)
    text = out.read_text(encoding="utf-8")
    assert "é" in text and text.index('"a"') < text.index('"b"') < text.index('"environment"')
    assert text.startswith('{\n  "a"')


def test_a_callers_record_is_kept(tmp_path):
    out = tmp_path / "bench.json"
    mine = {"cpu": "the run's", "precision": "fp32", "seed": 1}
    write_result(out, {"x": 1, "environment": mine}, precision="bf16")
    assert json.loads(out.read_text())["environment"] == mine


def test_the_write_is_atomic(tmp_path, monkeypatch):
    import radscore.atomic

    out = tmp_path / "bench.json"
    out.write_text('{"old": true}\n')

    def killed(tmp, path):
        raise KeyboardInterrupt("killed before the rename")

    monkeypatch.setattr(radscore.atomic, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        write_result(out, {"new": True})
    assert out.read_text() == '{"old": true}\n', "the old file is what a killed write leaves"
    assert [p.name for p in tmp_path.iterdir()] == ["bench.json"], "no temporary file left behind"


def test_the_last_fit_record_of_a_run_folder(tmp_path):
    assert run_environment(tmp_path) is None
    (tmp_path / "environment.json").write_text(json.dumps({"runs": [
        {"subcommand": "fit", "seed": 1}, {"subcommand": "fit", "seed": 2}, {"subcommand": "test", "seed": 3}]}))
    assert run_environment(tmp_path) == {"subcommand": "fit", "seed": 2}
    (tmp_path / "environment.json").write_text(json.dumps({"runs": [{"subcommand": "test"}]}))
    assert run_environment(tmp_path) is None

"""One registry entry is all a new metric needs: a toy metric (word overlap, from a fake export
folder), registered at test time, is scored by ``radscore score``, RadEval, TRL and Ray with no
other edit."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from radscore import registry

CANDS = ["No pleural effusion.", "Heart size is normal.", "", "Mild cardiomegaly."]
REFS = ["Small left pleural effusion.", "Heart size normal.", "No pneumothorax.", "Mild cardiomegaly."]

# A metric as its author would ship it: one module with a Scorer subclass (written to a folder on
# sys.path, so that Ray's worker processes import it too).
TOY_MODULE = textwrap.dedent('''
    import json
    from dataclasses import dataclass
    from pathlib import Path

    from radscore.inputs import check_reports, pair_arguments
    from radscore.scorer import Scorer


    @dataclass
    class Overlap:
        overlap: float
        shared: int

        def to_record(self):
            return {"overlap": self.overlap, "shared": self.shared}


    class ToyScore(Scorer):
        """Word overlap (Jaccard) times the export's weight."""

        def __init__(self, model, batch_size=8, device=None):
            self.model = str(model)
            self.config = json.loads(Path(model, "toy.json").read_text())

        @classmethod
        def from_export(cls, source, **options):
            return cls(source, **options)

        def iter_score(self, candidates, references, progress=True):
            candidates, references = check_reports(candidates, references)
            for c, r in zip(candidates, references):
                cw, rw = set(c.lower().split()), set(r.lower().split())
                union = len(cw | rw)
                yield Overlap(self.config["weight"] * len(cw & rw) / union if union else 0.0, len(cw & rw))

        def score(self, candidates=None, references=None, **aliases):
            return list(self.iter_score(*pair_arguments(candidates, references, **aliases), progress=False))

        def compute_score(self, candidates=None, references=None, **aliases):
            return [r.overlap for r in self.score(candidates, references, **aliases)]

        def signature(self):
            return {"metric": "toy", "model": self.model, "weight": self.config["weight"]}

        @property
        def higher_is_better(self):
            return self.config["higher_is_better"]

        @property
        def subscore_names(self):
            return ("shared",)
''')

TOY = registry.MetricSpec(
    name="toy", scorer="radscore_toy_metric:ToyScore", display_name="ToyScore", headline="overlap",
    export_keyword="model",
    kinds=(registry.ExportKind("toy-overlap", "text-classification", "toy word overlap",
                               'ToyScore.from_export("{repo_id}")'),))


def _expected(weight: float = 2.0) -> list[float]:
    out = []
    for c, r in zip(CANDS, REFS):
        cw, rw = set(c.lower().split()), set(r.lower().split())
        out.append(weight * len(cw & rw) / len(cw | rw) if cw | rw else 0.0)
    return out


def _export(folder, higher_is_better: bool = True):
    folder.mkdir()
    (folder / "toy.json").write_text(json.dumps({"weight": 2.0, "higher_is_better": higher_is_better}))
    (folder / "radscore_manifest.json").write_text(json.dumps({"kind": "toy-overlap", "format_version": 1}))
    return str(folder)


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy metric, registered for one test (and its module importable, in Ray's workers too)."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "radscore_toy_metric.py").write_text(TOY_MODULE)
    monkeypatch.syspath_prepend(str(code))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(code), os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    registry.register(TOY)
    yield _export(tmp_path / "export")
    registry.unregister("toy")
    sys.modules.pop("radscore_toy_metric", None)
    radeval_registry = sys.modules.get("radeval.metrics._registry")
    if radeval_registry is not None:
        radeval_registry.METRIC_REGISTRY.pop("radscore_toy", None)


def test_the_registry_knows_the_toy_metric_only_while_registered(toy):
    assert registry.names()[-1] == "toy" and registry.spec_for_kind("toy-overlap") is TOY
    scorer = registry.make_scorer("toy", model=toy)
    assert registry.metric_of(scorer) == "toy" and scorer.compute_score(CANDS, REFS) == _expected()
    assert registry.from_export("toy", toy).compute_score(CANDS, REFS) == _expected()
    with pytest.raises(ValueError, match="already registered"):
        registry.register(TOY)
    registry.unregister("toy")
    with pytest.raises(ValueError, match=r"unknown metric 'toy'; expected one of \['ratescore', 'bleurt', 'er2'"):
        registry.get("toy")
    registry.register(TOY)  # for the fixture's clean-up


def test_the_cli_scores_and_compares_with_the_toy_metric(toy, tmp_path, capsys):
    from radscore.cli import main

    c, r, out = tmp_path / "c.txt", tmp_path / "r.txt", tmp_path / "s.jsonl"
    c.write_text("\n".join(CANDS) + "\n")
    r.write_text("\n".join(REFS) + "\n")
    args = ["--metric", "toy", "--model", toy, "--references", str(r), "--quiet"]
    assert main(["score", *args, "--candidates", str(c), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["overlap"] for row in rows] == _expected() and rows[3] == {"index": 3, "overlap": 2.0, "shared": 2}
    meta = json.loads((tmp_path / "s.jsonl.meta.json").read_text())
    assert meta["metric"] == "toy" and meta["signature"]["weight"] == 2.0
    assert "ToyScore  n=4  mean=" in capsys.readouterr().err
    assert main(["score", *args, "--candidates", str(c), "--explain"]) == 2
    assert "no meaning for --metric toy" in capsys.readouterr().err
    assert main(["compare", *args, "--candidates", f"toy={c}", "--candidates", f"copy={r}",
                 "--randomization", "100", "--bootstrap", "100"]) == 0
    assert "ToyScore (higher is better); baseline: toy" in capsys.readouterr().out


def test_radeval_runs_the_toy_metric(toy, radeval_on_path):
    from radscore.integrations.radeval import register

    assert register()[-1] == "radscore_toy"
    evaluator = radeval_on_path.RadEval(metrics={"radscore_toy": {"model": toy}}, per_sample=True,
                                        show_progress=False)
    assert evaluator(refs=REFS, hyps=CANDS) == {"radscore_toy": _expected()}
    detailed = radeval_on_path.RadEval(metrics={"radscore_toy": {"model": toy}}, detailed=True,
                                       show_progress=False)(refs=REFS, hyps=CANDS)
    assert detailed["radscore_toy_shared"] == pytest.approx((2 + 3 + 0 + 2) / 4)


def test_trl_rewards_follow_the_toy_metrics_direction(toy, tmp_path):
    from radscore.integrations.trl import reward_function

    reward = reward_function("toy", reference_column="ref", model=toy)
    assert reward.__name__ == "radscore_toy" and reward(completions=CANDS, ref=REFS) == _expected()
    lower = reward_function("toy", reference_column="ref", model=_export(tmp_path / "lower", higher_is_better=False))
    assert lower(completions=CANDS, ref=REFS) == [-v for v in _expected()]


@pytest.mark.slow
def test_ray_scores_with_the_toy_metric(toy):
    ray = pytest.importorskip("ray")
    from radscore.ray_scoring import score_with_ray

    assert not ray.is_initialized()
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        rows = score_with_ray("toy", {"model": toy}, CANDS, REFS, ids=list("abcd"), actors=1, chunk_size=2)
    finally:
        ray.shutdown()
    assert [r["id"] for r in rows] == list("abcd") and [r["overlap"] for r in rows] == _expected()

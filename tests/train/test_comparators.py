"""The papers' comparator metrics through the packages that maintain them:
train.evaluation.comparators and the rehearsal of their code paths."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

from train.evaluation import comparators
from train.evaluation.comparators import coco_caption, radeval_metrics

RADEVAL_LIB = Path(sys.prefix) / "radeval-lib"  # where the Makefile installs RadEval for the tests
REFS = ["No pleural effusion. Heart size is normal.", "Small left pleural effusion.", "Mild cardiomegaly.",
        "The lungs are clear."]
CANDS = ["No pleural effusion. Heart size is normal.", "Small right pleural effusion.",
         "Heart size is normal.", "The lungs are clear."]


# ---- CIDEr and SPICE: pycocoevalcap ------------------------------------------------------------------
def test_cider_is_pycocoevalcaps_cider_on_our_tokens():
    pytest.importorskip("pycocoevalcap.cider.cider")
    from importlib.metadata import version

    from pycocoevalcap.cider.cider import Cider

    from train.evaluation.baselines import tokenize

    scores = comparators.score("cider", REFS, CANDS)
    gts = {k: [" ".join(tokenize(r))] for k, r in enumerate(REFS)}
    res = {k: [" ".join(tokenize(c))] for k, c in enumerate(CANDS)}
    np.testing.assert_allclose(scores, Cider().compute_score(gts, res)[1])
    assert scores[0] > scores[1] > scores[2] and scores[3] > scores[1]  # the same report scores highest
    assert comparators.implementation("cider").startswith(f"pycocoevalcap {version('pycocoevalcap')} Cider")
    assert comparators.needs("cider") is None
    assert comparators.score("cider", [], []).shape == (0,)
    assert comparators.score("cider", ["", ""], ["a", ""]).tolist() == [0.0, 0.0]  # no reference n-gram


def test_without_pycocoevalcap_cider_says_what_it_needs(monkeypatch):
    monkeypatch.setattr(coco_caption, "_package_dir", lambda: None)
    status = comparators.needs("cider")
    assert status.startswith("skipped: needs the pycocoevalcap package") and "pip install pycocoevalcap" in status
    with pytest.raises(comparators.ComparatorSkipped, match="needs the pycocoevalcap package"):
        comparators.score("cider", REFS, CANDS)


def test_spice_needs_java_and_the_corenlp_jars(monkeypatch, tmp_path):
    monkeypatch.setattr(coco_caption, "_package_dir", lambda: tmp_path)
    monkeypatch.setattr(coco_caption.shutil, "which", lambda _: None)
    assert comparators.needs("spice").startswith("skipped: needs Java for SPICE")
    monkeypatch.setattr(coco_caption.shutil, "which", lambda _: "/usr/bin/java")
    status = comparators.needs("spice")
    assert status.startswith("skipped: needs Stanford CoreNLP 3.6.0") and status.endswith("(offline)")
    assert str(tmp_path / "spice" / "lib") in status
    (tmp_path / "spice" / "lib").mkdir(parents=True)
    for jar in coco_caption.CORENLP_JARS:
        (tmp_path / "spice" / "lib" / jar).write_bytes(b"")
    assert comparators.needs("spice") is None


def test_comparator_inputs_are_checked_and_radcliq_is_turned_higher_is_better(monkeypatch):
    with pytest.raises(ValueError, match="2 references and 1 candidates"):
        comparators.score("cider", ["a", "b"], ["a"])
    with pytest.raises(TypeError, match="pair 1"):
        comparators.score("cider", ["a", None], ["a", "b"])
    with pytest.raises(ValueError, match="unknown comparator 'bleu'"):
        comparators.needs("bleu")
    monkeypatch.setattr(radeval_metrics, "needs", lambda name: None)
    monkeypatch.setattr(radeval_metrics, "score", lambda name, r, c: np.array([0.5, 2.0]))
    assert comparators.score("radcliq", ["a", "b"], ["a", "b"]).tolist() == [-0.5, -2.0]  # error counts
    assert comparators.score("radgraph", ["a", "b"], ["a", "b"]).tolist() == [0.5, 2.0]
    monkeypatch.setattr(radeval_metrics, "score", lambda name, r, c: np.array([0.5]))
    with pytest.raises(RuntimeError, match="1 score"):
        comparators.score("radgraph", ["a", "b"], ["a", "b"])


# ---- RadEval ---------------------------------------------------------------------------------------
@pytest.fixture
def radeval_here(monkeypatch, tmp_path, nltk_errors_to_stderr):
    """RadEval 2.x importable (the Makefile's copy), its dependency appdirs stubbed where missing,
    and empty caches: nothing of its models is on this machine."""
    if not (RADEVAL_LIB / "radeval").is_dir():
        pytest.skip(f"RadEval is not installed in {RADEVAL_LIB} (make install puts it there)")
    monkeypatch.syspath_prepend(str(RADEVAL_LIB))
    try:
        import appdirs  # noqa: F401
    except ImportError:
        stub = types.ModuleType("appdirs")
        stub.user_cache_dir = lambda app, *a, **k: str(tmp_path / "xdg" / app)
        monkeypatch.setitem(sys.modules, "appdirs", stub)
    from huggingface_hub import constants

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return tmp_path


def _cache_file(root: Path, repo: str, filename: str) -> None:
    folder = root / f"models--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / "main").write_text("0" * 40)
    (folder / "snapshots" / ("0" * 40)).mkdir(parents=True, exist_ok=True)
    (folder / "snapshots" / ("0" * 40) / filename).write_bytes(b"x")


def test_radeval_comparators_offline_name_the_model_they_need(radeval_here):
    expected = {"radgraph": "StanfordAIMI/RRG_scorers", "chexbert": "StanfordAIMI/RRG_scorers",
                "semb": "StanfordAIMI/RRG_scorers", "radcliq": "StanfordAIMI/RRG_scorers",
                "green": "StanfordAIMI/GREEN-radllama2-7b"}
    for name, repo in expected.items():
        assert comparators.needs(name) == f"skipped: needs {repo} (offline)", name
        with pytest.raises(comparators.ComparatorSkipped, match=f"needs {repo} \\(offline\\)"):
            comparators.score(name, REFS, CANDS)
        assert comparators.implementation(name).startswith("RadEval 2."), name
    # with CheXbert's checkpoint in RadEval's cache, what is missing next is bert-base-uncased
    _cache_file(radeval_here / "xdg" / "chexbert", "StanfordAIMI/RRG_scorers", "chexbert.pth")
    assert comparators.needs("chexbert") == "skipped: needs bert-base-uncased (offline)"
    for filename in ("config.json", "vocab.txt"):
        _cache_file(radeval_here / "hub", "bert-base-uncased", filename)
    assert comparators.needs("chexbert") is None and comparators.needs("semb") is None


def test_without_radeval_the_rows_say_which_extra(monkeypatch):
    monkeypatch.setattr(radeval_metrics, "importable", lambda: False)
    for name in ("radgraph", "chexbert", "semb", "radcliq", "green"):
        assert comparators.needs(name) == "skipped: needs the radeval package (pip install 'radscore[radeval]')"


# ---- the rehearsal ---------------------------------------------------------------------------------
def test_chexbert_and_semb_run_end_to_end_on_a_tiny_random_labeller(radeval_here):
    from train.rehearsal.comparators import chexbert_standin, rehearse_comparator

    for name in ("chexbert", "semb", "radgraph", "radcliq", "green"):
        rehearse_comparator(name, radeval_here / "standin")  # raises on an import or API error
    with chexbert_standin(radeval_here / "standin"):
        acc = radeval_metrics.score("chexbert", REFS, CANDS)
        cos = radeval_metrics.score("semb", REFS, CANDS)
    assert acc.shape == cos.shape == (len(REFS),) and np.all((acc >= 0) & (acc <= 1))
    assert acc[0] == 1.0 and acc[3] == 1.0 and cos[0] == pytest.approx(1.0, abs=1e-5)  # identical reports


def test_green_runs_end_to_end_on_a_llama2_standin(radeval_here, monkeypatch):
    """GREEN's own pipeline (prompt, chat template, generate, decode, clean, parse) on the stand-in:
    the prompt is cut off the output at GREEN's chat marker, so the answer left is the model's own."""
    from transformers import AutoTokenizer

    from radeval.metrics.green_score import green as target
    from train.rehearsal.comparators import CHAT_MARKERS, green_standin

    answers, prompts = [], []
    real_response = target.GREEN.get_response

    def spy(self, batch):
        prompts.extend(batch["prompt"])
        answers.extend(real_response(self, batch))
        return answers[-len(batch["prompt"]):]

    monkeypatch.setattr(target.GREEN, "get_response", spy)
    with green_standin(radeval_here / "standin") as folder:
        scores = radeval_metrics.score("green", REFS, CANDS)
    assert scores.tolist() == [0.0] * len(REFS)  # RadEval's GREEN of an empty analysis
    assert answers == [""] * len(REFS)  # the end-of-sequence token at once, the prompt cut off
    assert all(ref in p and cand in p for p, ref, cand in zip(prompts, REFS, CANDS))
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert type(tokenizer).__name__.startswith("LlamaTokenizer")
    assert all(len(tokenizer(m, add_special_tokens=False).input_ids) == 1 for m in CHAT_MARKERS)


def test_radgraph_and_radcliq_run_end_to_end_on_a_radgraph_archive_built_here(radeval_here):
    """RadEval's vendored RadGraph (DyGIE on AllenNLP) loads the archive the stand-in writes where
    RadEval extracts one, and RadCliQ-v1 combines it with CheXbert, BERTScore and BLEU-2."""
    import json

    from train.rehearsal.comparators import RADGRAPH_ENTITIES, radcliq_standin, radgraph_standin

    same = [i for i, (r, c) in enumerate(zip(REFS, CANDS)) if r == c]
    other = [i for i in range(len(REFS)) if i not in same]
    with radgraph_standin(radeval_here / "standin") as cache:
        f1 = radeval_metrics.score("radgraph", REFS, CANDS)
        from radeval.metrics.radgraph import RadGraph

        graph = RadGraph(model_type="radgraph-xl")(["Small left pleural effusion."])
    assert f1.shape == (len(REFS),) and np.all((f1 >= 0) & (f1 <= 1))
    assert f1[same].tolist() == [1.0] * len(same)  # a report's graph against itself
    labels = {e["label"] for e in graph["0"]["entities"].values()}
    assert labels <= set(RADGRAPH_ENTITIES) and graph["0"]["text"] == "Small left pleural effusion ."
    assert json.loads((cache / "radgraph-xl" / "config.json").read_text())["model"]["type"] == "dygie"

    with radcliq_standin(radeval_here / "standin"):
        errors = radeval_metrics.score("radcliq", REFS, CANDS)
    assert np.all(np.isfinite(errors))
    # every part is at its best on an identical pair: the lowest predicted error count
    assert errors[same].max() < errors[other].min()


def test_radevals_radgraph_imports_only_through_the_alias(radeval_here, monkeypatch):
    """RadEval 2.2.1's vendored RadGraph imports ``RadEval…``; the wheel installs ``radeval``."""
    import importlib

    def forget():  # what earlier imports left: RadEval's RadGraph and every module of the alias
        for name in [m for m in sys.modules if m.startswith(("radeval.metrics.radgraph", "RadEval"))]:
            monkeypatch.delitem(sys.modules, name)

    forget()
    if importlib.util.find_spec("RadEval") is None:  # a case-sensitive file system, as here
        with pytest.raises(ModuleNotFoundError, match="RadEval"):
            importlib.import_module("radeval.metrics.radgraph")
        forget()
    assert radeval_metrics.load("radgraph").__name__ == "RadGraphMetric"
    assert "radeval.metrics.radgraph" in sys.modules


def test_the_rehearsal_rule_no_longer_counts_not_in_this_project(monkeypatch):
    from train.rehearsal.rehearse import stage_ok, row_status

    old = "unavailable: RadGraph (its package and model) is not part of this project"
    assert not stage_ok(row_status(old))
    offline = "skipped: needs StanfordAIMI/RRG_scorers (offline)"
    assert stage_ok(row_status(offline, "radgraph", "ok"))
    assert stage_ok(row_status(offline, "radgraph", "skipped: needs a comparator's package (pip install x)"))
    assert row_status(offline, "radgraph", "failed: ImportError: appdirs").startswith("failed: ")
    assert row_status(offline, "radgraph", None).startswith("failed: ")
    assert not stage_ok(row_status(offline))  # a skip that is not a comparator's is not excused
    assert row_status("measured", "cider", "ok") == "ok"
    assert stage_ok(row_status("unavailable: nltk's WordNet corpus is not installed and cannot be downloaded here"))


def test_the_rehearsal_runs_every_comparators_code_path(monkeypatch, tmp_path):
    from train.rehearsal.rehearse import Rehearsal, stage_ok

    monkeypatch.setattr(radeval_metrics, "importable", lambda: False)  # the default install: no RadEval
    entries = Rehearsal(tmp_path, progress=False, ddp=False).rehearse_comparators()
    stages = {e.config: e.stages["code path"] for e in entries}
    assert set(stages) == {f"comparators/{n}" for n in comparators.COMPARATORS}
    assert all(stage_ok(s) for s in stages.values()), stages
    assert stages["comparators/radgraph"].startswith("skipped: needs a comparator's package")
    try:
        import pycocoevalcap.cider.cider  # noqa: F401
    except ImportError:
        assert stages["comparators/cider"].startswith("skipped: needs a comparator's package")
    else:
        assert stages["comparators/cider"] == "ok"
    # an adapter whose code path breaks is a failure, never a skip
    monkeypatch.setattr(radeval_metrics, "importable", lambda: True)
    monkeypatch.setattr(radeval_metrics, "load", lambda name: (_ for _ in ()).throw(ImportError("no module x")))
    (entry,) = [e for e in Rehearsal(tmp_path, progress=False, ddp=False).rehearse_comparators()
                if e.config == "comparators/green"]
    assert entry.stages["code path"].startswith("failed: ImportError: no module x")


def test_the_rehearsals_comparator_rows_follow_their_code_path(monkeypatch, tmp_path):
    """rehearse_ablations maps each comparator row of the written tables to its code path's stage."""
    import json

    import train.ablations.cli as ablations_cli
    from train.ablations.paper import PAPER_TABLES
    from train.rehearsal.rehearse import Rehearsal, stage_ok

    offline = "skipped: needs StanfordAIMI/RRG_scorers (offline)"

    def fake_tables(argv):  # what python -m train ablations writes, for the rows that matter here
        out = tmp_path / "ablations"
        out.mkdir(parents=True, exist_ok=True)
        for name, paper in PAPER_TABLES.items():
            rows = [{"label": list(r.label), "in_paper": True,
                     "status": {"radgraph": offline, "chexbert": offline}.get(r.measure, "measured")}
                    for r in paper.rows]
            rows.append({"label": ["CIDEr"], "in_paper": False, "status": "measured"})
            (out / f"{name}.json").write_text(json.dumps({"rows": rows}))
        return 0

    monkeypatch.setattr(ablations_cli, "main", fake_tables)
    entries = Rehearsal(tmp_path, progress=False, ddp=False).rehearse_ablations(
        {"radgraph": "ok", "chexbert": "failed: ImportError: appdirs"})
    stages = {e.config: e.stages.get("row") for e in entries}
    assert stages["ablations/rexval/RadGraph F1"] == (
        "skipped: needs a comparator's package or model (StanfordAIMI/RRG_scorers (offline))")
    assert stage_ok(stages["ablations/rexval/RadGraph F1"])
    assert stages["ablations/rexval/CheXbert"].startswith("failed: " + offline)
    assert stages["ablations/rexval/BLEU"] == stages["ablations/rexval/CIDEr"] == "ok"

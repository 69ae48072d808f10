"""Inputs in every shape researchers hold them, the official preset, and Hub ids resolved from a
Hub cache (a local snapshot folder standing in for the Hub: no network here)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from radscore import RaTEScore
from radscore.hub import ModelNotFoundError, fingerprint, snapshot
from radscore.inputs import check_reports, pair_arguments
from train.rehearsal.tiny import build_tiny_iob_export

CANDS = ["No pleural effusion.", "Mild cardiomegaly.", "", "Right lower lobe pneumonia."]
REFS = ["Small left pleural effusion.", "Heart size is normal.", "No pneumothorax.", "Pneumonia in the right lower lobe."]


@pytest.fixture(scope="module")
def scorer(tmp_path_factory, tiny_backbone):
    ner = build_tiny_iob_export(tmp_path_factory.mktemp("ner") / "export", seed=0, head_std=0.3, o_bias=2.5)
    return RaTEScore(ner, tiny_backbone, batch_size=3)


def test_any_sequence_of_strings_is_a_batch_and_scores_alike(scorer):
    expected = scorer.compute_score(CANDS, REFS)
    series = pd.Series(CANDS, index=[40, 10, 30, 20])  # the index is not the order: values are
    assert scorer.compute_score(series, pd.Series(REFS)) == expected
    assert scorer.compute_score(tuple(CANDS), np.array(REFS)) == expected
    assert scorer.compute_score((c for c in CANDS), REFS) == expected
    assert scorer.compute_score(hyps=CANDS, refs=REFS) == expected
    assert scorer.compute_score(candidates=CANDS, references=REFS) == expected
    assert [p.f1 for p in scorer.score(hyps=series, refs=REFS)] == expected


@pytest.mark.parametrize("bad, message", [
    ("No effusion.", r"candidates must be a sequence of strings .* got a single string"),
    ({"a": "b"}, r"candidates must be a sequence .* got dict"),
    ({"a"}, r"candidates must be a sequence .* got set"),
    (pd.Series(["ok", None]), r"candidates\[1\] is a missing value"),  # pandas stores None as NaN
    (pd.Series(["ok", float("nan")]), r"candidates\[1\] is a missing value \(NaN\)"),
    ([None], r"candidates\[0\] is None"),
])
def test_bad_batches_are_named(bad, message):
    with pytest.raises(ValueError, match=message):
        check_reports(bad, ["x"] * (len(bad) if hasattr(bad, "__len__") and not isinstance(bad, str) else 1))


def test_the_two_sides_are_given_once_each():
    assert pair_arguments(hyps=["a"], refs=["b"]) == (["a"], ["b"])
    with pytest.raises(TypeError, match="given twice: candidates, hyps"):
        pair_arguments(["a"], ["b"], hyps=["c"])
    with pytest.raises(TypeError, match="missing the references"):
        pair_arguments(["a"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'predictions'"):
        pair_arguments(["a"], ["b"], predictions=["c"])
    with pytest.raises(ValueError, match=r"hyps\[0\] is None"):
        pair_arguments(hyps=[None], refs=["b"])


def test_the_official_preset_is_named_and_fails_clearly_offline(monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    for splitter in (None, "radiology", "builtin"):  # the official recipe's splitter is "rush"
        with pytest.raises(ModelNotFoundError, match=r"NER model 'Angelakeke/RaTE-NER-Deberta'.*offline"):
            RaTEScore(splitter=splitter)


def test_mixing_the_official_ner_with_another_encoder_warns_once(scorer, tiny_backbone, monkeypatch):
    import radscore.ratescore as rs

    calls = []
    monkeypatch.setattr(rs, "load_ner", lambda *a, **k: calls.append(a) or scorer.ner)
    monkeypatch.setattr(rs, "_warned_pairings", set())
    with pytest.warns(UserWarning, match="not comparable with published RaTEScore numbers"):
        rs.RaTEScore(ner=rs.OFFICIAL_NER, encoder=tiny_backbone, splitter="radiology")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rs.RaTEScore(ner=rs.OFFICIAL_NER, encoder=tiny_backbone, splitter="radiology")  # once only
    assert calls[0][0] == rs.OFFICIAL_NER


def test_missing_folders_and_unreachable_ids_are_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    with pytest.raises(ModelNotFoundError, match=r"no such folder \(and not a Hub id"):
        snapshot(str(tmp_path / "nope" / "export"), "ER2Score export")
    with pytest.raises(ModelNotFoundError, match=r"could not be fetched .* offline \(HF_HUB_OFFLINE=1\)"):
        snapshot("someone/never-published", "ClinicalBLEURT model")


def test_signature_names_models_by_hash(scorer):
    sig = scorer.signature()
    assert sig["official_recipe"] is False and sig["splitter"] == "rush"
    assert re.fullmatch(r"[0-9a-f]{16}", sig["ner"]["weights_sha256"])
    assert sig["ner"]["weights_sha256"] == fingerprint(scorer.ner.source)["weights_sha256"]
    assert len(sig["affinity_matrix"]) == 26


# ---- Hub ids from a Hub cache ---------------------------------------------------------------------
def hub_cache(root: Path, repo_id: str, folder: Path, revision: str = "0123456789abcdef0123456789abcdef01234567") -> None:
    """``folder`` as the cached snapshot of model repo ``repo_id`` (huggingface_hub's cache layout)."""
    repo = root / ("models--" + repo_id.replace("/", "--"))
    shutil.copytree(folder, repo / "snapshots" / revision)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(revision)


def snippet(kind: str, repo_id: str) -> str:
    from train.release.publish import usage

    return re.search(r"```python\n(.*?)```", usage(kind, repo_id), re.S).group(1)


@pytest.mark.slow
def test_every_published_card_snippet_loads_by_hub_id(tmp_path, tiny_backbone):
    from radscore.systems import RADCLIQ
    from train.rehearsal.tiny import build_tiny_bleurt_export, build_tiny_reward_export, build_tiny_span_export

    built = {"ner-iob": build_tiny_iob_export(tmp_path / "iob", seed=0, head_std=0.3, o_bias=2.5),
             "ner-span": build_tiny_span_export(tmp_path / "span"),
             "reward": tmp_path / "reward",
             "bleurt": build_tiny_bleurt_export(tmp_path / "bleurt", tiny_backbone)}
    build_tiny_reward_export(tmp_path / "reward", tiny_backbone, RADCLIQ, max_length=48)
    from radscore.scoring import AffinityMatrix
    from train.release.bundle import write_bundle

    built["ratescore"] = write_bundle(tmp_path / "bundle", built["ner-iob"], tiny_backbone,
                                      AffinityMatrix.builtin("short"), splitter="builtin")
    cache = tmp_path / "hub"
    code = ["import json, warnings", "warnings.simplefilter('ignore')", "out = {}"]
    for kind, folder in built.items():
        repo_id = f"you/{kind}-tiny"
        hub_cache(cache, repo_id, Path(folder))
        body = snippet(kind, repo_id)
        last = body.strip().splitlines()[-1]
        code += [body.replace(last, f"result = {last}"),
                 f"out[{kind!r}] = [getattr(r, 'total', getattr(r, 'score', r)) for r in result]"]
    code.append("print(json.dumps(out))")
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", "\n".join(code)], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(out) == set(built)
    for kind, values in out.items():
        assert len(values) == 1 and isinstance(values[0], float) and np.isfinite(values[0]), (kind, values)
    direct = RaTEScore(built["ner-iob"], tiny_backbone, affinity_matrix="short").compute_score(
        ["No pleural effusion."], ["Small left pleural effusion."])
    assert out["ratescore"] == direct  # the bundle by Hub id is the scorer it was built from


def test_hub_ids_resolve_to_the_cached_snapshot(tmp_path, tiny_backbone, monkeypatch):
    from radscore.bleurt import ClinicalBLEURT
    from train.rehearsal.tiny import build_tiny_bleurt_export

    folder = build_tiny_bleurt_export(tmp_path / "bleurt", tiny_backbone)
    hub_cache(tmp_path / "hub", "you/bleurt-tiny", Path(folder), revision="f" * 40)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    model = ClinicalBLEURT("you/bleurt-tiny")
    assert model.manifest is not None and model.manifest["kind"] == "bleurt"  # the manifest is read
    assert model.signature()["model"]["revision"] == "f" * 40
    assert model.compute_score(["a"], ["b"]) == ClinicalBLEURT(folder).compute_score(["a"], ["b"])

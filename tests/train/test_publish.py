"""``python -m train publish``: the card, the dry run, refusing a broken export, the upload calls."""

import json

import pytest
import yaml

from train.tiny import build_tiny_iob_export
from train.publish import PublishError, main, publish


@pytest.fixture()
def export(tmp_path):
    folder = build_tiny_iob_export(tmp_path / "export")
    (tmp_path / "export" / "metrics.json").write_text(json.dumps({"test/f1": 0.81, "test/precision": 0.8,
                                                                  "test/recall": 0.82, "epoch": 3}))
    return tmp_path / "export"


def _front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card.split("---\n")[1])


class FakeApi:
    def __init__(self):
        self.calls = []

    def create_repo(self, **kw):
        self.calls.append(("create_repo", kw))
        return f"https://hub.example/{kw['repo_id']}"

    def upload_folder(self, **kw):
        self.calls.append(("upload_folder", kw))


def test_dry_run_prints_files_and_card_and_writes_nothing(export, capsys):
    before = sorted(p.name for p in export.iterdir())
    assert main([str(export), "--repo-id", "someone/rate-ner-tiny", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "model.safetensors" in out and "config.json" in out and "README.md" in out
    assert "dry run: nothing uploaded" in out
    assert sorted(p.name for p in export.iterdir()) == before  # no card written


def test_card_metadata_and_usage(export):
    result = publish(export, "someone/rate-ner-tiny", dry_run=True, echo=lambda *_: None)
    meta = _front_matter(result["card"])
    assert meta["license"] == "apache-2.0" and "radscore" in meta["tags"] and "ner-iob" in meta["tags"]
    metrics = {m["name"]: m["value"] for m in meta["model-index"][0]["results"][0]["metrics"]}
    assert metrics == {"test/f1": 0.81, "test/precision": 0.8, "test/recall": 0.82}  # "epoch" is no test metric
    assert "not a benchmark result" in result["card"]
    assert 'RaTEScore(bert_model="someone/rate-ner-tiny")' in result["card"]  # released package snippet


def test_a_broken_export_is_refused_before_any_upload(export):
    (export / "model.safetensors").unlink()
    api = FakeApi()
    with pytest.raises(PublishError, match="does not load"):
        publish(export, "someone/x", api=api, echo=lambda *_: None)
    assert api.calls == []


def test_bad_repo_id_and_not_an_export(export, tmp_path):
    with pytest.raises(PublishError, match="user-or-org/name"):
        publish(export, "no-slash", dry_run=True)
    with pytest.raises(ValueError, match="not a radscore export"):
        publish(tmp_path, "someone/x", dry_run=True)


def test_upload_creates_the_repo_and_uploads_the_folder_with_its_card(export):
    api = FakeApi()
    result = publish(export, "someone/rate-ner-tiny", private=True, api=api, echo=lambda *_: None)
    assert [c[0] for c in api.calls] == ["create_repo", "upload_folder"]
    assert api.calls[0][1]["private"] is True and api.calls[0][1]["repo_id"] == "someone/rate-ner-tiny"
    assert api.calls[1][1]["folder_path"] == str(export)
    assert (export / "README.md").read_text() == result["card"] and result["uploaded"]


def test_no_token_is_a_clear_error(export, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(export.parent / "hf_home"))  # no stored login
    with pytest.raises(PublishError, match="HF_TOKEN"):
        publish(export, "someone/x", echo=lambda *_: None)

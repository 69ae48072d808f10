"""``python -m train publish``: the card, the dry run, refusing a broken export, the upload calls."""

import json

import pytest
import yaml

from train.rehearsal.tiny import build_tiny_iob_export
from train.release.publish import PublishError, main, publish


def _trained_on(folder, data: dict):
    """The training_config.yaml an export carries: its data section is what publishing reads."""
    (folder / "training_config.yaml").write_text(yaml.safe_dump({"data": data}))


@pytest.fixture()
def export(tmp_path):
    folder = build_tiny_iob_export(tmp_path / "export")
    (tmp_path / "export" / "metrics.json").write_text(json.dumps({"test/f1": 0.81, "test/precision": 0.8,
                                                                  "test/recall": 0.82, "epoch": 3}))
    _trained_on(tmp_path / "export", {"data_dir": "data/samples/ratener", "subset": "all"})
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
    assert "not a benchmark result" in result["card"]  # the sample banner: trained on the sample corpus
    assert "the radscore sample corpus (data/samples/ratener)" in result["card"]
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


# --- licence and datasets from what the run used -------------------------------------------------

def _set_base(folder, base):
    manifest = json.loads((folder / "radscore_manifest.json").read_text())
    manifest["backbone"] = base
    (folder / "radscore_manifest.json").write_text(json.dumps(manifest))


def test_rate_ner_data_gives_its_licence_and_dataset_and_no_sample_banner(export):
    _trained_on(export, {"data_dir": "Angelakeke/RaTE-NER", "subset": "all"})
    _set_base(export, "microsoft/deberta-v3-base")  # mit: the data's cc-by-nc-4.0 is the restrictive one
    card = publish(export, "someone/rate-ner", dry_run=True, echo=lambda *_: None)["card"]
    meta = _front_matter(card)
    assert meta["license"] == "cc-by-nc-4.0" and meta["datasets"] == ["Angelakeke/RaTE-NER"]
    assert meta["base_model"] == "microsoft/deberta-v3-base"
    assert "sample corpus" not in card and "Base model licence: mit" in card


def test_unknown_training_data_is_refused_until_the_user_says_what_it_is(export, capsys):
    """A reward-style run on MIMIC-derived rows: no apache-2.0, no sample banner, no guess."""
    _trained_on(export, {"rows": ["/data/mimic/radcliq_llm.jsonl"], "val_rows": None})
    _set_base(export, "meta-llama/Meta-Llama-3-8B")
    with pytest.raises(PublishError, match="/data/mimic/radcliq_llm.jsonl.*--dataset"):
        publish(export, "someone/er2", dry_run=True, echo=lambda *_: None)
    assert main([str(export), "--repo-id", "someone/er2", "--dry-run"]) == 2
    assert "not known to radscore" in capsys.readouterr().err
    with pytest.raises(PublishError, match="--license"):
        publish(export, "someone/er2", dry_run=True, echo=lambda *_: None, datasets=["MIMIC-CXR RadCliQ rows"])
    assert main([str(export), "--repo-id", "someone/er2", "--dry-run", "--dataset", "MIMIC-CXR RadCliQ rows",
                 "--license", "other"]) == 0
    card = capsys.readouterr().out
    meta = _front_matter(card[card.index("README.md ---\n") + len("README.md ---\n"):])
    assert meta["license"] == "other" and "datasets" not in meta
    assert "MIMIC-CXR RadCliQ rows" in card and "sample corpus" not in card and "synthetic" not in card.lower()


def test_no_training_config_is_refused_and_conflicting_licences_need_a_choice(export):
    (export / "training_config.yaml").unlink()
    with pytest.raises(PublishError, match="names no training data"):
        publish(export, "someone/x", dry_run=True, echo=lambda *_: None)
    _trained_on(export, {"data_dir": "Angelakeke/RaTE-NER"})
    _set_base(export, "meta-llama/Meta-Llama-3-8B")  # llama3 and cc-by-nc-4.0: radscore will not pick
    with pytest.raises(PublishError, match="different licences"):
        publish(export, "someone/x", dry_run=True, echo=lambda *_: None)
    meta = _front_matter(publish(export, "someone/x", dry_run=True, echo=lambda *_: None,
                                 license="cc-by-nc-4.0")["card"])
    assert meta["license"] == "cc-by-nc-4.0"


def test_synthetic_rows_of_the_sample_corpus_are_own_data(export):
    _trained_on(export, {"rows": "checkpoints/synthetic/synthetic_er2/radcliq_synthetic.jsonl"})
    card = publish(export, "someone/x", dry_run=True, echo=lambda *_: None)["card"]
    assert "SYNTHETIC sets generated from the radscore sample corpus" in card and "not a benchmark result" in card


def test_dry_run_of_a_reward_export_on_a_hub_base_model_touches_no_network(tiny_backbone, tmp_path, monkeypatch,
                                                                           capsys):
    """The base model (8B in the paper configs) is not fetched: the dry run checks the rest and says so."""
    import socket

    from radscore.systems import RADCLIQ
    from train.rehearsal.tiny import build_tiny_reward_export

    folder = tmp_path / "er2"
    build_tiny_reward_export(folder, tiny_backbone, RADCLIQ)
    cfg = json.loads((folder / "reward_model.json").read_text())
    cfg["base_model"] = "meta-llama/Meta-Llama-3-8B"
    (folder / "reward_model.json").write_text(json.dumps(cfg))
    _set_base(folder, "meta-llama/Meta-Llama-3-8B")
    _trained_on(folder, {"rows": "checkpoints/synthetic/synthetic_er2/radcliq_synthetic.jsonl"})
    attempts = []

    def no_network(self, address, *a, **k):
        attempts.append(address)
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert main([str(folder), "--repo-id", "someone/er2", "--dry-run", "--license", "llama3"]) == 0
    out = capsys.readouterr().out
    assert attempts == []
    assert "not checked: base model meta-llama/Meta-Llama-3-8B not loaded" in out
    assert "adapter/adapter_config.json" in out and "dry run: nothing uploaded" in out
    (folder / "adapter" / "adapter_config.json").unlink()  # what can be checked locally still is
    assert main([str(folder), "--repo-id", "someone/er2", "--dry-run", "--license", "llama3"]) == 2
    assert "holds no adapter" in capsys.readouterr().err


def test_dry_run_of_a_fully_fine_tuned_reward_export_loads_it_whole(tiny_backbone, tmp_path, monkeypatch, capsys):
    """No adapter and no base model to fetch: the dry run scores with the export as a user would."""
    import socket

    from radscore.systems import RADCLIQ
    from train.rehearsal.tiny import build_tiny_reward_export

    folder = tmp_path / "er2_full"
    build_tiny_reward_export(folder, tiny_backbone, RADCLIQ, full=True)
    cfg = json.loads((folder / "reward_model.json").read_text())
    (folder / "reward_model.json").write_text(json.dumps(cfg | {"base_model": "hub-only/not-on-this-disk"}))
    _set_base(folder, "hub-only/not-on-this-disk")
    _trained_on(folder, {"rows": "checkpoints/synthetic/synthetic_er2/radcliq_synthetic.jsonl"})
    monkeypatch.setattr(socket.socket, "connect", lambda *a, **k: (_ for _ in ()).throw(OSError("no network")))
    assert main([str(folder), "--repo-id", "someone/er2", "--dry-run", "--license", "apache-2.0"]) == 0
    out = capsys.readouterr().out
    assert "not checked" not in out and "dry run: nothing uploaded" in out
    (folder / "model" / "config.json").unlink()
    assert main([str(folder), "--repo-id", "someone/er2", "--dry-run", "--license", "apache-2.0"]) == 2


def test_baselines_beside_the_test_metrics_get_their_own_table_not_the_model_index(export):
    metrics = json.loads((export / "metrics.json").read_text())
    metrics.update({"test/baseline/bleu4/pearson": 0.34, "test/baseline/diff_hunks/kendall": -0.02})
    (export / "metrics.json").write_text(json.dumps(metrics))
    card = publish(export, "someone/rate-ner-tiny", dry_run=True, echo=lambda *_: None)["card"]
    index = {m["name"] for m in _front_matter(card)["model-index"][0]["results"][0]["metrics"]}
    assert index == {"test/f1", "test/precision", "test/recall"}  # no baseline passes for the model's result
    assert "| bleu4 | pearson | 0.3400 |" in card and "| diff_hunks | kendall | -0.0200 |" in card

"""Configs as overlays: a paper variant in a folder named after its base, composed by jsonargparse
with several ``--config`` files. Every training config resolves through the training CLI to what it
was when the paper configs were full copies (tests/fixtures/resolved_configs.json, made before
they became overlays: LightningCLI-parsed with defaults filled in; the YAML as read for tune and
ablations), apart from what the CLI now states itself (the data module's ``class_path``, the model
settings it shares with the data module, the callbacks, the monitored key)."""

import json
from pathlib import Path

import pytest

from train.lightning.cli import LINKED, parse_cli, resolve
from train.lightning.configs import config_chain, overlay_base, read_configs

ROOT = Path(__file__).resolve().parents[1]
RESOLVED = json.loads((ROOT / "tests" / "fixtures" / "resolved_configs.json").read_text(encoding="utf-8"))
TRAINING = sorted(p for p in RESOLVED if p.split("/")[1] in ("ner", "reward", "bleurt"))
OTHERS = sorted(p for p in RESOLVED if p.split("/")[1] in ("tune", "ablations"))


def test_the_fixture_covers_every_config():
    on_disk = {p.relative_to(ROOT).as_posix()
               for d in ("ner", "reward", "bleurt", "tune", "ablations") for p in (ROOT / "configs" / d).rglob("*.yaml")}
    assert on_disk == set(RESOLVED)


def _as_before(cfg: dict) -> dict:
    """A resolved config in the fixture's shape: the data module's arguments without its class_path
    and without the settings shared from the model; no callbacks, no monitored key, no flag the CLI dropped."""
    cfg = json.loads(json.dumps(cfg))
    data = cfg["data"]
    assert data["class_path"].startswith("train.")
    cfg["data"] = {k: v for k, v in data["init_args"].items() if k not in LINKED or k not in cfg["model"]["init_args"]}
    cfg["trainer"].pop("callbacks")
    for key in ("monitor", "mode"):
        cfg["checkpoint"].pop(key)
    return cfg


def _before(rel: str) -> dict:
    want = json.loads(json.dumps(RESOLVED[rel]))
    want.pop("test_baselines")  # an option of the old command line: now the callback's `shallow`
    assert want["trainer"].pop("callbacks") is None
    for key in ("monitor", "mode"):
        want["checkpoint"].pop(key)
    return want


@pytest.mark.parametrize("rel", TRAINING)
def test_a_training_config_resolves_as_before(rel, monkeypatch):
    monkeypatch.chdir(ROOT)  # the paths as a user types them: configs/<task>/<name>.yaml
    assert _as_before(resolve(*config_chain(rel))) == _before(rel)


@pytest.mark.parametrize("rel", OTHERS)
def test_a_tune_or_ablation_config_resolves_as_before(rel, tmp_path):
    """Tune configs through the tune loader (an overlay after its base); the ablations' training
    overlays as written, their data module's arguments now under ``init_args``. The profiles
    themselves load in tests/train/test_config_loaders.py."""
    if rel.startswith("configs/ablations/"):
        if Path(rel).stem in ("sample", "paper"):
            return
        raw = read_configs(ROOT / rel)
        if "data" in raw:
            raw["data"] = raw["data"].pop("init_args")
        assert raw == RESOLVED[rel]
        return
    from train.tune.config import load_config as load_tune

    full = tmp_path / "full.yaml"
    full.write_text(json.dumps(RESOLVED[rel]), encoding="utf-8")
    sections = ("data", "scorer", "objective", "split", "search", "report")
    assert {k: v for k, v in load_tune(*config_chain(ROOT / rel)).to_dict().items() if k in sections} == \
        {k: v for k, v in load_tune(full).to_dict().items() if k in sections}


def test_the_paper_variants_are_overlays_in_a_folder_named_after_their_base():
    overlays = {"reward/paper_llama3": ["gemma_7b", "meditron_7b", "phi_2", "qwen1_5_7b", "vicuna_7b", "total_only",
                                        "individual_only", *(f"lambda{x}" for x in ("0_5", "0_8", "1_2", "2_0", "3_0"))],
                "ner/iob_deberta_v3": ["mimic", "radiopaedia", "medical_ner"],
                "ner/span_biolord": ["biomedbert", "bluebert", "medcpt", "sapbert"],
                "tune/rate_eval_paragraph": ["sentence"]}
    for base, names in overlays.items():
        for name in names:
            path = ROOT / "configs" / base / f"{name}.yaml"
            assert config_chain(path) == [ROOT / "configs" / f"{base}.yaml", path], name
            assert "class_path" not in json.dumps(read_configs(path)), name  # says only what differs
    assert overlay_base(ROOT / "configs" / "reward" / "sample.yaml") is None


def test_reward_configs_are_short():
    files = sorted((ROOT / "configs" / "reward").rglob("*.yaml"))
    lines = [len(p.read_text(encoding="utf-8").splitlines()) for p in files]
    assert sum(lines) / len(lines) <= 15, dict(zip((p.name for p in files), lines))


def test_an_overlays_run_folder_mirrors_its_path_under_configs(monkeypatch):
    monkeypatch.chdir(ROOT)
    cli = parse_cli(["--config", "configs/reward/paper_llama3.yaml", "--config", "configs/reward/paper_llama3/lambda0_5.yaml"])
    assert cli.run_folder().path == Path("checkpoints/reward/paper_llama3/lambda0_5")
    assert [Path(str(c)).name for c in cli.config["config"]] == ["paper_llama3.yaml", "lambda0_5.yaml"]
    assert cli.config["model"]["init_args"]["lam"] == 0.5
    cli = parse_cli(["--config=configs/ner/span_sample.yaml"])
    assert cli.run_folder().path == Path("checkpoints/ner/span_sample")


def test_deep_merge_replaces_lists_and_scalars(tmp_path):
    (tmp_path / "base.yaml").write_text("m:\n  init_args: {a: 1, b: [1, 2], c: {d: 1, e: 2}}\nk: 1\n")
    (tmp_path / "top.yaml").write_text("m:\n  init_args: {b: [3], c: {e: 5}}\nk: x\n")
    assert read_configs(tmp_path / "base.yaml", tmp_path / "top.yaml") == {
        "m": {"init_args": {"a": 1, "b": [3], "c": {"d": 1, "e": 5}}}, "k": "x"}



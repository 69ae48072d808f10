"""Configs as overlays on a base (``base:``, train/lightning/configs.py): every config resolves to
what it was when the paper configs were full copies (tests/fixtures/resolved_configs.json, made
before the change: LightningCLI-parsed for ner/reward/bleurt with defaults filled in, the YAML as
read for tune and ablations), through the code path a real run uses."""

import json
from pathlib import Path

import pytest

from train.lightning.configs import (ConfigError, config_chain, expand_config_args, load_config, parse_cli,
                                     resolve_cli_config)

ROOT = Path(__file__).resolve().parents[1]
RESOLVED = json.loads((ROOT / "tests" / "fixtures" / "resolved_configs.json").read_text(encoding="utf-8"))
TRAINING = sorted(p for p in RESOLVED if p.split("/")[1] in ("ner", "reward", "bleurt"))
OTHERS = sorted(p for p in RESOLVED if p.split("/")[1] in ("tune", "ablations"))


def test_the_fixture_covers_every_config():
    on_disk = {p.relative_to(ROOT).as_posix()
               for d in ("ner", "reward", "bleurt", "tune", "ablations") for p in (ROOT / "configs" / d).rglob("*.yaml")}
    assert on_disk == set(RESOLVED)


@pytest.mark.parametrize("rel", TRAINING)
def test_a_training_config_resolves_as_before(rel, monkeypatch):
    monkeypatch.chdir(ROOT)  # the paths as a user types them: configs/<task>/<name>.yaml
    assert resolve_cli_config(rel.split("/")[1], rel) == RESOLVED[rel]


@pytest.mark.parametrize("rel", OTHERS)
def test_a_tune_or_ablation_config_resolves_as_before(rel, tmp_path):
    if not rel.startswith("configs/tune/"):
        assert load_config(ROOT / rel) == RESOLVED[rel]
        return
    from train.tune.config import load_config as load_tune

    full = tmp_path / "full.yaml"
    full.write_text(json.dumps(RESOLVED[rel]), encoding="utf-8")
    path = ROOT / rel  # an overlay in a folder named after its base composes on that base
    chain = [path.parent.with_suffix(".yaml"), path] if path.parent.name != "tune" else [path]
    sections = ("data", "scorer", "objective", "split", "search", "report")
    assert {k: v for k, v in load_tune(*chain).to_dict().items() if k in sections} == \
        {k: v for k, v in load_tune(full).to_dict().items() if k in sections}


def test_the_paper_variants_are_overlays():
    overlays = {"reward": ["gemma_7b", "meditron_7b", "phi_2", "qwen1_5_7b", "vicuna_7b", "paper_llama3_total_only",
                           "paper_llama3_individual_only", *(f"paper_llama3_lambda{x}" for x in
                                                             ("0_5", "0_8", "1_2", "2_0", "3_0"))],
                "ner": ["iob_deberta_v3_mimic", "iob_deberta_v3_radiopaedia", "iob_medical_ner", "span_biomedbert",
                        "span_bluebert", "span_medcpt", "span_sapbert"]}
    for task, names in overlays.items():
        for name in names:
            assert len(config_chain(ROOT / "configs" / task / f"{name}.yaml")) == 2, name


def test_reward_configs_are_short():
    files = sorted((ROOT / "configs" / "reward").glob("*.yaml"))
    lines = [len(p.read_text(encoding="utf-8").splitlines()) for p in files]
    assert sum(lines) / len(lines) <= 15, dict(zip((p.name for p in files), lines))


def test_an_overlays_run_folder_is_named_after_the_overlay(monkeypatch):
    monkeypatch.chdir(ROOT)
    cli = parse_cli("reward", ["--config", "configs/reward/paper_llama3_lambda0_5.yaml"])
    assert cli.run_dir() == Path("checkpoints/reward_paper_llama3_lambda0_5")
    assert [Path(str(c)).name for c in cli.config["config"]] == ["paper_llama3.yaml", "paper_llama3_lambda0_5.yaml"]
    assert cli.config["model"]["init_args"]["lam"] == 0.5
    cli = parse_cli("ner", ["--config=configs/ner/span_sapbert.yaml"])
    assert cli.run_dir() == Path("checkpoints/span_sapbert")


def test_argv_expansion(tmp_path):
    base, mid, top = tmp_path / "base.yaml", tmp_path / "sub" / "mid.yaml", tmp_path / "sub" / "top.yaml"
    mid.parent.mkdir()
    base.write_text("a: 1\n")
    mid.write_text("base: ../base.yaml\nb: 2\n")
    top.write_text("base: mid.yaml\nc: 3\n")
    assert expand_config_args(["fit", "--config", str(top), "--x=1", f"--config={base}", "--config", "{a: 1}"]) == [
        "fit", "--config", str(tmp_path / "sub" / ".." / "base.yaml"), "--config", str(mid), "--config", str(top),
        "--x=1", "--config", str(base), "--config", "{a: 1}"]


def test_deep_merge_replaces_lists_and_scalars(tmp_path):
    (tmp_path / "base.yaml").write_text("m:\n  init_args: {a: 1, b: [1, 2], c: {d: 1, e: 2}}\nk: 1\n")
    (tmp_path / "top.yaml").write_text("base: base.yaml\nm:\n  init_args: {b: [3], c: {e: 5}}\nk: x\n")
    assert load_config(tmp_path / "top.yaml") == {"m": {"init_args": {"a": 1, "b": [3], "c": {"d": 1, "e": 5}}},
                                                  "k": "x"}


def test_a_base_cycle_is_an_error_naming_the_files(tmp_path):
    (tmp_path / "a.yaml").write_text("base: b.yaml\nx: 1\n")
    (tmp_path / "b.yaml").write_text("y: 2\nbase: a.yaml\n")
    with pytest.raises(ConfigError, match=r"cycle: .*a\.yaml -> .*b\.yaml -> .*a\.yaml"):
        load_config(tmp_path / "a.yaml")
    (tmp_path / "self.yaml").write_text("base: self.yaml\n")
    with pytest.raises(ConfigError, match="cycle"):
        config_chain(tmp_path / "self.yaml")


def test_a_missing_base_is_an_error_naming_the_file_and_line(tmp_path):
    (tmp_path / "top.yaml").write_text("# an overlay\nx: 1\nbase: nowhere.yaml\n")
    where = r"top\.yaml:3 \(base: 'nowhere\.yaml'\): "
    with pytest.raises(ConfigError, match=where + r"base config .*nowhere\.yaml not found"):
        load_config(tmp_path / "top.yaml")

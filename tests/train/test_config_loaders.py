"""The tune config and the ablation profiles: typed dataclasses parsed by jsonargparse, several files
composed in order (no ``base:`` key); every shipped file loads, and errors name the file and the key."""

from pathlib import Path

import pytest
import yaml

from train.ablations.profile import ProfileError, RunSpec, load_profile
from train.tune.config import TuneConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]
TUNE = ROOT / "configs" / "tune"
SAMPLE_PROFILE = ROOT / "configs" / "ablations" / "sample.yaml"


def tune_chain(path: Path) -> list[Path]:
    """An overlay in a folder named after its base composes on that base (base first)."""
    base = path.parent.with_suffix(".yaml")
    return [base, path] if path.parent != TUNE and base.is_file() else [path]


def test_every_tune_config_and_profile_loads():
    configs = sorted(TUNE.rglob("*.yaml"))
    names = {p.relative_to(TUNE).with_suffix("").as_posix() for p in configs}
    assert names >= {"sample", "rate_eval_paragraph", "rate_eval_paragraph/sentence", "rexval"}
    for path in configs:
        cfg = load_config(*tune_chain(path))
        name = path.relative_to(TUNE).with_suffix("").as_posix()
        assert cfg.name == name and cfg.run_dir == Path("checkpoints") / "tune" / name
        assert cfg.cache_dir == cfg.run_dir / "cache"
    assert load_config(TUNE / "sample.yaml").data.synthetic
    assert load_config(TUNE / "rexval.yaml").objective.sign == -1.0
    # the sentence overlay: Task 1, every other value from the paragraph config
    sentence = load_config(*tune_chain(TUNE / "rate_eval_paragraph" / "sentence.yaml"))
    paragraph = load_config(TUNE / "rate_eval_paragraph.yaml")
    assert sentence.data.format == "rate_eval_task1" and paragraph.data.format == "rate_eval_task2"
    assert sentence.scorer == paragraph.scorer and sentence.search == paragraph.search
    assert sentence.run_dir != paragraph.run_dir
    # the unseen-domain overlay on the sample config
    unseen = load_config(TUNE / "sample.yaml", ROOT / "configs" / "unseen" / "tune.yaml")
    assert unseen.data.path == "checkpoints/synthetic_unseen/synthetic_rate_eval"
    assert unseen.data.generate_synthetic is None and unseen.data.synthetic
    assert unseen.scorer == load_config(TUNE / "sample.yaml").scorer
    for name in ("sample", "paper"):
        assert load_profile(ROOT / "configs" / "ablations" / f"{name}.yaml").name == name


def test_no_shipped_config_has_a_base_key():
    for path in [*TUNE.rglob("*.yaml"), ROOT / "configs" / "unseen" / "tune.yaml", SAMPLE_PROFILE]:
        assert "base" not in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}), path


def test_tune_configs_compose_key_by_key_and_errors_name_the_file(tmp_path):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("search: {n_trials: 7}\nsplit: {seed: 3}\n")
    cfg = load_config(TUNE / "sample.yaml", overlay)
    base = load_config(TUNE / "sample.yaml")
    assert cfg.search.n_trials == 7 and cfg.split.seed == 3 and cfg.split.by == base.split.by
    assert cfg.search.enqueue == base.search.enqueue and cfg.name == "overlay"
    assert cfg.run_dir == Path("checkpoints/tune/overlay") and cfg.source.endswith("sample.yaml + " + str(overlay))
    cfg = load_config(TUNE / "sample.yaml", overlay, overrides={"search.n_trials": 9, "run_dir": str(tmp_path)})
    assert cfg.search.n_trials == 9 and cfg.run_dir == tmp_path and cfg.cache_dir == tmp_path / "cache"
    overlay.write_text("search: {n_trialz: 7}\n")
    with pytest.raises(TuneConfigError, match=r"overlay\.yaml: .*search.*n_trialz"):
        load_config(TUNE / "sample.yaml", overlay)
    overlay.write_text("base: ../tune/sample.yaml\n")  # no base: key any more; give both files instead
    with pytest.raises(TuneConfigError, match=r"overlay\.yaml: .*'base'"):
        load_config(overlay)
    for key, value, message in [("data.format", "ratings", "data.format"),
                                ("objective.correlation", "tau", "correlation"),
                                ("split.test_fraction", 1.5, "split.test_fraction"),
                                ("search.weight_range", [1.0, 0.0], "search.weight_range"),
                                ("search.n_trials", -1, "search.n_trials"), ("scorer.pooling", "max", "pooling"),
                                ("report.confidence", 2.0, "report")]:
        with pytest.raises(TuneConfigError, match=rf"^--config .*{key.split('.')[1]}.*: .*{message}"):
            load_config(TUNE / "sample.yaml", overrides={key: value})
    with pytest.raises(TuneConfigError, match=r"nope\.yaml: .*does not exist"):
        load_config(TUNE / "sample.yaml", tmp_path / "nope.yaml")


def test_tune_weights_takes_several_configs_and_short_flags(tmp_path, monkeypatch, capsys):
    import train.tune.cli as cli

    seen = {}
    monkeypatch.setattr(cli, "run", lambda cfg, workers, progress: seen.update(cfg=cfg, workers=workers,
                                                                               progress=progress))
    paragraph, sentence = TUNE / "rate_eval_paragraph.yaml", TUNE / "rate_eval_paragraph" / "sentence.yaml"
    assert cli.main(["--config", str(paragraph), f"--config={sentence}", "--n-trials", "5",
                     "--storage", "sqlite:///s.db", "--study-name", "st", "--run-dir", str(tmp_path),
                     "--search.sampler_seed=4", "--workers", "2", "--no-progress"]) == 0
    cfg = seen["cfg"]
    assert cfg.data.format == "rate_eval_task1" and cfg.name == "rate_eval_paragraph/sentence"
    assert (cfg.search.n_trials, cfg.search.storage, cfg.study_name, cfg.search.sampler_seed) == (5, "sqlite:///s.db",
                                                                                                "st", 4)
    assert cfg.run_dir == tmp_path and seen["workers"] == 2 and seen["progress"] is False
    assert cli.main(["--config", str(sentence)]) == 2  # the overlay alone lacks what its base holds
    assert "sentence.yaml" in capsys.readouterr().err
    assert cli.main(["--config", str(paragraph), "--n-trials", "-3"]) == 2
    assert "--n-trials -3: search.n_trials: must be >= 0" in capsys.readouterr().err


def _profile(tmp_path, text: str) -> Path:
    path = tmp_path / "overlay.yaml"
    path.write_text(text)
    return path


def test_profiles_compose_and_errors_name_the_file_and_key(tmp_path):
    overlay = _profile(tmp_path, "er2: {batch_size: 4}\nrun_overrides: {ner: ['--trainer.max_epochs=1']}\n"
                                 "tables:\n  er2-loss:\n    rows:\n"
                                 "      both: {configs: [a.yaml], overrides: ['--x=1'], name: both_run}\n")
    profile = load_profile(SAMPLE_PROFILE, overlay)
    assert profile.name == "sample" and profile.er2.batch_size == 4
    assert profile.er2.run == RunSpec(("configs/reward/sample.yaml",))  # kept from the sample profile
    assert profile.run_overrides == {"ner": ("--trainer.max_epochs=1",)}
    assert profile.table("er2-loss").rows["both"] == RunSpec(("a.yaml",), ("--x=1",), "both_run")
    assert profile.label("rexval").startswith("SYNTHETIC")
    bad = {"labels: {rexvall: x}\n": r"labels.*rexvall",
           "tables:\n  er2-loss:\n    rows:\n      both: {configs: [a.yaml], overrides: ['--x']}\n":
               r"tables\.er2-loss\.rows\.both\.overrides: \['--x'\] are not of the form --key=value",
           "tables:\n  er2-loss:\n    rows:\n      both: {configs: [a.yaml], name: ../up}\n":
               r"tables\.er2-loss\.rows\.both\.name: '\.\./up' is not a run folder name",
           "tables:\n  er2-loss:\n    extra:\n      - {label: [a, b], configs: [a.yaml]}\n":
               r"tables\.er2-loss\.extra\[0\]\.label: 2 value\(s\) for the 1 key column",
           "tables:\n  encoders:\n    rows:\n      biolord: [a.yaml]\n": r"tables\.encoders\.rows\.biolord: an encoder",
           "tables:\n  er2-loss:\n    rows:\n      both: {encoder: x}\n": r"tables\.er2-loss\.rows\.both: a run is",
           "tables:\n  er2-loss:\n    extra:\n      - {label: [a], encoder: x}\n":
               r"er2-loss\.extra\[0\]: expected a run row",
           "tables:\n  encoders:\n    rows:\n      biolord: {encoder: x, pooling: max}\n": r"pooling",
           "tables:\n  rexval:\n    rows:\n      x: [a.yaml]\n": r"tables\.rexval: table 'rexval' takes no rows",
           "tables:\n  nope: {}\n": r"unknown table 'nope'",
           "metaeval: {confidence: 1.5}\n": r"metaeval: .*confidence",
           "data: {task1_splits: [dev]}\n": r"task1_splits"}
    for text, message in bad.items():
        with pytest.raises(ProfileError, match=r"overlay\.yaml: .*" + message):
            load_profile(SAMPLE_PROFILE, _profile(tmp_path, text))


def test_the_ablations_command_composes_profile_files(tmp_path, monkeypatch):
    import train.ablations.cli as cli

    seen = {}
    monkeypatch.setattr(cli, "run", lambda tables, profile, out, progress: seen.update(profile=profile) or
                        {"tables": {}, "runs": [], "output": "x"})
    overlay = _profile(tmp_path, f"output: {tmp_path / 'out'}\n")
    assert cli.main(["--table", "er2-loss", "--profile-config", str(SAMPLE_PROFILE), "--profile-config", str(overlay),
                     "--no-progress"]) == 0
    assert seen["profile"].name == "sample" and seen["profile"].output == tmp_path / "out"

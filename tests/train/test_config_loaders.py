"""The tune config and the ablation profiles: typed dataclasses parsed by jsonargparse, several files
composed in order (no ``base:`` key); every shipped file loads, and errors name the file and the key."""

from pathlib import Path

import pytest
import yaml

from train.ablations.profile import load_profile
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

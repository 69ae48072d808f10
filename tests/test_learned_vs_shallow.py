"""benchmarks/quality/learned_vs_shallow.py: the learned metrics' test figures beside the shallow learner's,
read from what the training and demo commands wrote, keyed by metric and seed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.quality import learned_vs_shallow as lvs

ROOT = Path(__file__).resolve().parents[1]


def saved_config(configs, seed: int, *overrides: str, run_dir: Path | None = None) -> dict:
    """The config a finished ``python -m train fit`` run of ``configs`` (in order) at ``seed`` with
    ``overrides`` saved: the training CLI's resolved config, with what the CLI sets when the run starts
    (its folder, and the checkpoint's monitored key and mode, which the model's class names)."""
    from train.lightning.cli import model_class, resolve

    cfg = resolve(*[ROOT / c for c in configs], args=(*overrides, f"--seed_everything={seed}"))
    module = model_class(cfg)
    cfg["checkpoint"].update(monitor=module.monitor, mode=module.monitor_mode)
    if run_dir is not None:
        cfg["trainer"]["default_root_dir"], cfg["checkpoint"]["dirpath"] = str(run_dir), str(run_dir / "ckpt")
    return cfg


def _run_folder(path: Path, seed: int, metrics: dict, *overrides: str,
                configs: tuple[str, ...] = ("configs/reward/sample.yaml",)) -> Path:
    """A finished run's folder: its resolved config is ``configs`` at ``seed`` (plus ``overrides``)."""
    import yaml

    resolved = saved_config(configs, seed, *overrides, run_dir=path)
    (path / "logs" / "version_0").mkdir(parents=True)
    (path / "logs" / "version_0" / "config.yaml").write_text(yaml.safe_dump(resolved))
    (path / "test_metrics.json").write_text(json.dumps(metrics))
    return path


def _cli(*args):
    """The script as a user runs it (a subprocess)."""
    return subprocess.run([sys.executable, "-m", "benchmarks.quality.learned_vs_shallow", *args], capture_output=True,
                          text=True, cwd=ROOT)


def _call(*args):
    """The script's main() in this process, with a subprocess's outcome: its exit code (1 for a SystemExit
    with a message, as the interpreter gives) and what it wrote to stderr. Seconds per call, where a
    subprocess spends several importing torch and Lightning."""
    import contextlib
    import io
    import traceback

    err, code = io.StringIO(), 0
    with contextlib.chdir(ROOT), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            lvs.main(list(args))
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if isinstance(stop.code, str):
                err.write(stop.code + "\n")
        except Exception:  # noqa: BLE001 - a subprocess would exit 1 with the traceback
            code = 1
            err.write(traceback.format_exc())
    return subprocess.CompletedProcess(list(args), code, "", err.getvalue())


def test_runs_and_demo_are_merged_by_metric_and_seed(tmp_path):
    out = tmp_path / "learned_vs_shallow.json"
    r42 = _run_folder(tmp_path / "reward" / "sample", 42, {
        "test/pair_acc": 0.81, "test/kendall": 0.5, "test/loss": 1.0,
        "test/baseline/shallow_ridge/pair_acc": 0.79, "test/baseline/shallow_ridge/kendall": 0.45,
        "test/baseline/bleu4/kendall": 0.1})
    demo = tmp_path / "demo"
    demo.mkdir()
    row = lambda k, p, t: {"kendall": {"value": k}, "pearson": {"value": p}, "triad_accuracy": t}  # noqa: E731
    (demo / "demo_report.json").write_text(json.dumps({
        "metrics": {"ratescore_tuned": row(0.4, 0.5, 0.9), "shallow_ridge": row(0.3, 0.35, 0.6)},
        "held_out": {"pairs": 90}, "triads": 150, "tune_seed": 0}))
    done = _cli("--run", f"er2score={r42}", "--demo", str(demo), "--out", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["er2score"]["42"]["test"] == {"pair_accuracy": 0.81, "kendall": 0.5}
    assert data["er2score"]["42"]["shallow_test"] == {"pair_accuracy": 0.79, "kendall": 0.45}
    assert data["er2score"]["42"]["command"] == (f"python -m train fit --config configs/reward/sample.yaml "
                                                 f"--seed_everything 42 --run_dir {r42}")
    assert "SYNTHETIC" in data["er2score"]["42"]["set"]
    assert data["ratescore_tuned"]["sampler_seed 0"]["shallow_test"]["triad_accuracy"] == 0.6
    # a second seed is added beside the first, not over it
    r43 = _run_folder(tmp_path / "reward" / "sample_seed43", 43, {
        "test/pair_acc": 0.7, "test/kendall": 0.4, "test/baseline/shallow_ridge/pair_acc": 0.79,
        "test/baseline/shallow_ridge/kendall": 0.45})
    assert _call("--run", f"er2score={r43}", "--out", str(out)).returncode == 0
    assert set(json.loads(out.read_text())["er2score"]) == {"42", "43"}
    # a demo on the unseen-domain sets fills the *_unseen keys of the same entry; one made with other configs is refused
    unseen = tmp_path / "demo_unseen"
    unseen.mkdir()
    report = {"metrics": {"ratescore_tuned": row(0.2, 0.3, 0.8), "shallow_ridge": row(0.25, 0.3, 0.7)},
              "held_out": {"pairs": 120}, "triads": 150, "tune_seed": 0,
              "ner_config": "configs/ner/iob_sample.yaml configs/unseen/ner.yaml",
              "tune_config": "configs/tune/sample.yaml configs/unseen/tune.yaml"}
    (unseen / "demo_report.json").write_text(json.dumps(report))
    done = _call("--demo-unseen", str(unseen), "--out", str(out))
    assert done.returncode == 0, done.stderr
    entry = json.loads(out.read_text())["ratescore_tuned"]["sampler_seed 0"]
    assert entry["test"]["kendall"] == 0.4 and entry["test_unseen"]["kendall"] == 0.2
    assert entry["shallow_test_unseen"]["kendall"] == 0.25
    assert "--tune-config configs/tune/sample.yaml configs/unseen/tune.yaml" in entry["command_unseen"]
    assert "--ner-config configs/ner/iob_sample.yaml configs/unseen/ner.yaml " in entry["command_unseen"]
    # a report that names the NER overlay alone (the overlay named its base in itself then) is that demo too
    (unseen / "demo_report.json").write_text(json.dumps({**report, "ner_config": "configs/unseen/ner.yaml"}))
    assert _call("--demo-unseen", str(unseen), "--out", str(tmp_path / "old.json")).returncode == 0
    for ner in ("configs/ner/iob_sample.yaml", "configs/unseen/ner.yaml configs/ner/iob_sample.yaml"):
        (unseen / "demo_report.json").write_text(json.dumps({**report, "ner_config": ner}))
        done = _call("--demo-unseen", str(unseen), "--out", str(tmp_path / "y.json"))
        assert done.returncode != 0 and "given as an unseen-domain demo" in done.stderr, ner
    (unseen / "demo_report.json").write_text(json.dumps(report))
    assert _call("--demo", str(demo), "--out", str(out)).returncode == 0  # re-reading the demo keeps them
    assert json.loads(out.read_text())["ratescore_tuned"]["sampler_seed 0"]["test_unseen"]["kendall"] == 0.2
    (unseen / "demo_report.json").write_text(json.dumps({**report, "tune_config": "configs/tune/sample.yaml"}))
    done = _cli("--demo-unseen", str(unseen), "--out", str(tmp_path / "y.json"))
    assert done.returncode != 0 and "given as an unseen-domain demo" in done.stderr and not (tmp_path / "y.json").exists()


@pytest.mark.parametrize("metrics, message", [
    ({"test/pair_acc": 0.8}, "no shallow-learner figures"),
    (None, "no test_metrics.json"),
])
def test_a_run_without_its_figures_is_refused_by_name(tmp_path, metrics, message):
    run = _run_folder(tmp_path / "run", 42, metrics or {})
    if metrics is None:
        (run / "test_metrics.json").unlink()
    done = _call("--run", f"er2score={run}", "--out", str(tmp_path / "x.json"))
    assert done.returncode != 0 and message in done.stderr and str(run) in done.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("overrides, named", [
    (("--model.lr=1.0e-3",), "model.init_args.lr: run has 0.001"),
    (("--data.train_fraction=0.5",), "data.init_args.train_fraction: run has 0.5"),
])
def test_a_run_that_is_not_the_sample_config_is_refused_naming_the_setting(tmp_path, overrides, named):
    """Its command would be the sample config's, which would not reproduce it (e.g. a run of the learning
    curve at another learning rate or share: benchmarks/quality/learning_curve.py keeps those)."""
    figures = {"test/pearson": 0.5, "test/baseline/shallow_ridge/pearson": 0.4}
    run = _run_folder(tmp_path / "run", 42, figures, *overrides, configs=("configs/bleurt/sample.yaml",))
    done = _call("--run", f"clinical_bleurt={run}", "--out", str(tmp_path / "x.json"))
    assert done.returncode != 0 and named in done.stderr and "would not reproduce it" in done.stderr
    assert not (tmp_path / "x.json").exists()
    same = _run_folder(tmp_path / "same", 42, figures, configs=("configs/bleurt/sample.yaml",))
    assert _call("--run", f"clinical_bleurt={same}", "--out", str(tmp_path / "x.json")).returncode == 0


def test_shallow_only_replaces_the_shallow_rows_and_keeps_the_learned_figures(tmp_path, monkeypatch):
    """``--shallow-only`` recomputes the shallow rows alone (here the recomputation is stubbed: the
    real one runs the training commands' own code on the default sets) and says what produced them."""
    out = tmp_path / "learned_vs_shallow.json"
    learned = {"test": {"pearson": 0.5, "kendall": 0.36}, "shallow_test": {"pearson": 0.51, "kendall": 0.41},
               "command": "python -m train fit ...", "set": "SYNTHETIC ..."}
    out.write_text(json.dumps({"clinical_bleurt": {"42": dict(learned), "43": dict(learned)}}))
    sets = tmp_path / "sets"
    sets.mkdir()
    (sets / "generator_synthetic.json").write_text(json.dumps({"seed": 0, "fingerprint": "abc123"}))
    record = {"version": "v2", "chosen_on_validation_of_train_rows": {"alpha": 30.0}}
    monkeypatch.setattr(lvs, "shallow_only", lambda folder, unseen=False: {"clinical_bleurt": ({"pearson": 0.7, "kendall": 0.58},
                                                                               record)})
    lvs.main(["--shallow-only", "--synthetic", str(sets), "--out", str(out)])
    data = json.loads(out.read_text())
    for seed in ("42", "43"):
        entry = data["clinical_bleurt"][seed]
        assert entry["test"] == learned["test"] and entry["command"] == learned["command"]
        assert entry["shallow_test"] == {"pearson": 0.7, "kendall": 0.58} and entry["shallow_learner"] == record
        assert entry["shallow_command"].startswith("python -m benchmarks.quality.learned_vs_shallow --shallow-only")
        assert "fingerprint abc123" in entry["shallow_set"]
    with pytest.raises(SystemExit):
        lvs.main(["--shallow-only", "--demo", "x", "--out", str(out)])


@pytest.mark.parametrize("metric, config, key", [
    ("er2score", "configs/reward/sample.yaml", "data.rows"),
    ("clinical_bleurt", "configs/bleurt/sample.yaml", "data.train_path"),
])
def test_run_unseen_accepts_exactly_the_unseen_rows_override_and_fills_test_unseen(tmp_path, metric, config, key):
    """An unseen-domain run differs from the sample config by its rows alone: that override is accepted under
    --run-unseen and written into its command (a run of the sample config and its configs/unseen overlay gets a
    command naming both); any other difference, or other rows, is refused, and the same run under --run
    (in-distribution) is refused."""
    unseen_rows = lvs.UNSEEN_ROWS[metric][1]
    stat = "pair_acc" if metric == "er2score" else "pearson"
    figures = {f"test/{stat}": 0.6, "test/kendall": 0.3, f"test/baseline/shallow_ridge/{stat}": 0.7,
               "test/baseline/shallow_ridge/kendall": 0.4}
    out = tmp_path / "x.json"
    same = _run_folder(tmp_path / "in_dist", 42, {**figures, "test/kendall": 0.5}, configs=(config,))
    assert _call("--run", f"{metric}={same}", "--out", str(out)).returncode == 0
    unseen = _run_folder(tmp_path / "unseen", 42, figures, f"--{key}={unseen_rows}", configs=(config,))
    done = _call("--run-unseen", f"{metric}={unseen}", "--out", str(out))
    assert done.returncode == 0, done.stderr
    entry = json.loads(out.read_text())[metric]["42"]
    assert entry["test"]["kendall"] == 0.5 and entry["test_unseen"]["kendall"] == 0.3  # both tests, one entry
    assert entry["shallow_test_unseen"]["kendall"] == 0.4
    assert "--seed_everything 42" in entry["command_unseen"]
    overlay = lvs.UNSEEN_CONFIGS[metric]
    if metric == "er2score":  # the sample config with the unseen rows is exactly the overlay: its command names it
        assert f"--config {config} --config {overlay} " in entry["command_unseen"]
        assert "--data.rows" not in entry["command_unseen"]
    else:  # the overlay also sets generate_synthetic false: the run is the sample config plus the rows override
        assert f"--config {config} " in entry["command_unseen"] and f"--{key}={unseen_rows}" in entry["command_unseen"]
        assert overlay not in entry["command_unseen"]
    assert entry["command_unseen"].startswith("python -m train fit --config ")
    by_overlay = _run_folder(tmp_path / "by_overlay", 42, figures, configs=(config, overlay))
    done = _call("--run-unseen", f"{metric}={by_overlay}", "--out", str(tmp_path / "z.json"))
    assert done.returncode == 0, done.stderr
    assert f"--config {config} --config {overlay} " in json.loads((tmp_path / "z.json").read_text())[metric]["42"][
        "command_unseen"]
    assert "split_unseen" in entry["set_unseen"] and "SYNTHETIC" in entry["set_unseen"]
    # re-reading the in-distribution run keeps the unseen-domain figures
    assert _call("--run", f"{metric}={same}", "--out", str(out)).returncode == 0
    assert json.loads(out.read_text())[metric]["42"]["test_unseen"]["kendall"] == 0.3
    refused = [(_run_folder(tmp_path / "also_lr", 42, figures, f"--{key}={unseen_rows}", "--model.lr=1.0e-3",
                            configs=(config,)), "--run-unseen", "model.init_args.lr: run has 0.001"),
               (_run_folder(tmp_path / "other_rows", 42, figures, f"--{key}=elsewhere.jsonl", configs=(config,)),
                "--run-unseen", "not trained on the unseen-domain set"),
               (same, "--run-unseen", "not trained on the unseen-domain set"),
               (unseen, "--run", f"{key.replace('data.', 'data.init_args.')}: run has")]
    for run, flag, named in refused:
        done = _call(flag, f"{metric}={run}", "--out", str(tmp_path / "y.json"))
        assert done.returncode != 0 and named in done.stderr, (flag, run, done.stderr)


def test_shallow_only_unseen_refuses_sets_not_made_on_the_unseen_domain_split(tmp_path):
    """`--shallow-only --unseen` never generates: a folder of corpus-split sets (or none) is refused with the
    command that makes the right ones, and nothing is written."""
    out = tmp_path / "x.json"
    out.write_text(json.dumps({"er2score": {"42": {"test": {"kendall": 0.5}}}}))
    corpus_sets = tmp_path / "corpus_sets"
    corpus_sets.mkdir()
    from data.synth.generate import DEFAULT_SIZES, corpus_paths, fingerprint

    (corpus_sets / "generator_synthetic.json").write_text(json.dumps(
        {"fingerprint": fingerprint(corpus_paths(None)), "seed": 0, "sizes": DEFAULT_SIZES}))
    for folder, named in ((corpus_sets, "not this generator's seed-0 default sets on the unseen-domain split"),
                          (tmp_path / "none", "no unseen-domain sets")):
        done = _call("--shallow-only", "--unseen", "--synthetic", str(folder), "--out", str(out))
        assert done.returncode != 0 and named in done.stderr and "--split data/samples/split_unseen.json" in done.stderr
    assert json.loads(out.read_text()) == {"er2score": {"42": {"test": {"kendall": 0.5}}}}
    assert _call("--unseen", "--out", str(out)).returncode != 0  # only with --shallow-only

"""data.train_fraction: a seeded share of the training split's reference groups, for learning curves
(benchmarks/quality/learning_curve.py); validation and test stay whole, and the shallow learner is
fitted on the same share."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks.quality import learning_curve
from data.ratings import RatedPair
from tests.train.test_split_by import _bleurt, _bleurt_splits, _er2, _reward
from train.lightning.module import keep_train_groups

ROOT = Path(__file__).resolve().parents[2]
CURVE = [sys.executable, "-m", "benchmarks.quality.learning_curve"]  # as a user runs it


def _curve(args: list[str]) -> SimpleNamespace:
    """The learning-curve command run in this process (a fresh interpreter's imports would cost each call
    about ten seconds): its exit code, standard output and standard error, as ``subprocess.run`` gives them."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = learning_curve.main(args) or 0
        except SystemExit as stop:  # argparse's errors (2) and the script's messages (1, printed as Python would)
            code = stop.code if isinstance(stop.code, int) else 1
            if not isinstance(stop.code, int) and stop.code is not None:
                print(stop.code, file=sys.stderr)
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def _groups(rows):
    return {r.group for r in rows}


def test_keep_train_groups_is_a_seeded_nested_share_in_file_order():
    rows = [RatedPair(f"p{k}-{j}", "ref", "cand", 1.0, f"g{k}") for k in range(40) for j in range(2)]
    assert keep_train_groups(rows, 1, 0, "f") is rows
    half = keep_train_groups(rows, 0.5, 0, "f")
    quarter = keep_train_groups(rows, 0.25, 0, "f")
    assert len(_groups(half)) == 20 and len(_groups(quarter)) == 10
    assert _groups(quarter) < _groups(half)  # a smaller share's groups are inside a larger one's
    assert len(half) == 40  # whole groups: both rows of every kept group
    assert [r.id for r in half] == [r.id for r in rows if r.group in _groups(half)]  # file order kept
    assert _groups(keep_train_groups(rows, 0.5, 1, "f")) != _groups(half)  # another seed, other groups
    assert len(_groups(keep_train_groups(rows, 0.001, 0, "f"))) == 1  # never empty
    for bad in (0, -0.5, 1.5):
        with pytest.raises(ValueError, match=r"rows.jsonl: train_fraction=.*\(0, 1\]"):
            keep_train_groups(rows, bad, 0, "rows.jsonl")


@pytest.mark.parametrize("write, read", [(_er2, _reward), (_bleurt, _bleurt_splits)], ids=["reward", "bleurt"])
def test_the_datamodules_train_on_the_share_and_keep_val_and_test_whole(tmp_path, write, read):
    rows = write(tmp_path / "rows.jsonl", n_refs=60)
    whole = read(rows)
    half = read(rows, train_fraction=0.5)
    assert [r.id for r in half["val"]] == [r.id for r in whole["val"]]
    assert [r.id for r in half["test"]] == [r.id for r in whole["test"]]
    assert len(_groups(half["train"])) == len(_groups(whole["train"])) // 2
    assert {r.id for r in half["train"]} < {r.id for r in whole["train"]}
    with pytest.raises(ValueError, match="train_fraction"):
        read(rows, train_fraction=0)


def _shallow_val(dm) -> dict:
    """The shallow learner's validation row as the test report fits it: on the data module's training rows."""
    from train.evaluation.baselines import SHALLOW_NAME
    from train.evaluation.beside import split_baselines

    return split_baselines(dm.rated_split("train"), dm.rated_split("val")).metrics[SHALLOW_NAME]


def test_the_shallow_learner_of_a_run_is_fitted_on_its_share(tmp_path):
    from train.evaluation.baselines import SHALLOW_NAME, shallow_rating_baseline
    from train.bleurt.data import BleurtDataModule

    rows = _bleurt(tmp_path / "rows.jsonl", n_refs=60)
    dm = BleurtDataModule(train_path=rows, train_fraction=0.5)
    got = _shallow_val(dm)
    splits = dm.read_splits()
    train, val = splits["train"], splits["val"]
    assert dm.rated_split("train").ids == [p.id for p in train]  # the share's rows, not the whole split's
    assert len(train) < len(BleurtDataModule(train_path=rows).read_splits()["train"])
    direct = shallow_rating_baseline([p.reference for p in train], [p.candidate for p in train],
                                     [p.rating for p in train], [p.reference for p in val],
                                     [p.candidate for p in val], [p.rating for p in val])[SHALLOW_NAME]
    assert got == direct


def _config(rows: str, max_epochs: int = 3, lr: float = 2e-4) -> dict:
    return {"trainer": {"max_epochs": max_epochs},
            "model": {"class_path": "train.bleurt.ClinicalBLEURTRegressor",
                      "init_args": {"backbone": "packaged:all-MiniLM-L6-v2", "max_length": 128, "lr": lr}},
            "data": {"class_path": "train.bleurt.BleurtDataModule",
                     "init_args": {"train_path": rows, "split_by": "column"}}}


def _fake_run(run: Path, rows: str, seed: int, val: list[tuple[float, float]], fraction: float | None = None,
              max_epochs: int = 3, lr: float = 2e-4):
    """A finished ClinicalBLEURT run folder as the fit command leaves it: its resolved config (of a config
    with these settings) and its CSV log with validation figures after each epoch (and training rows
    between them)."""
    from tests.test_learned_vs_shallow import saved_config

    (run / "logs" / "version_0").mkdir(parents=True)
    config = run / "fit_config.yaml"
    config.write_text(json.dumps(_config(rows, max_epochs, lr)))
    cfg = saved_config((config,), seed, *([f"--data.train_fraction={fraction}"] if fraction is not None else []),
                       run_dir=run)
    (run / "logs" / "version_0" / "config.yaml").write_text(json.dumps(cfg))
    with (run / "logs" / "version_0" / "metrics.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["epoch", "step", "train/loss", "val/kendall", "val/pearson"])
        for epoch, (kendall, pearson) in enumerate(val):
            w.writerow([epoch, 10 * epoch + 5, 0.5, "", ""])
            w.writerow([epoch, 10 * epoch + 9, "", kendall, pearson])
    (run / "test_metrics.json").write_text("{}")
    return run


def test_learning_curve_reads_each_epoch_and_fits_the_shallow_learner_on_the_runs_rows(tmp_path):
    rows = _bleurt(tmp_path / "rows.jsonl", n_refs=60)
    full = _fake_run(tmp_path / "full", rows, 42, [(0.1, 0.2), (0.3, 0.5), (0.25, 0.45)])
    half = _fake_run(tmp_path / "half", rows, 42, [(0.05, 0.1), (0.2, 0.3)], fraction=0.5)
    out = tmp_path / "curve.json"
    config = tmp_path / "config.yaml"  # the runs' config (the curve names its settings' differences from it)
    config.write_text(json.dumps(_config(rows)))
    curve = ["clinical_bleurt", "--config", str(config)]
    done = _curve([*curve, "--seed", "42", "--fractions", "--existing", f"1={full}", "--existing", f"0.5={half}",
                   "--out", str(out)])
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())["clinical_bleurt"]["42"]
    assert [e["pearson"] for e in data["1"]["epochs"]] == [0.2, 0.5, 0.45]
    assert data["1"]["best_epoch"] == 1 and data["1"]["val"] == {"pearson": 0.5, "kendall": 0.3}  # the monitor's best
    from train.bleurt.data import BleurtDataModule

    for key, fraction in (("1", 1.0), ("0.5", 0.5)):
        dm = BleurtDataModule(train_path=rows, split_by="column", train_fraction=fraction)
        shallow = _shallow_val(dm)  # its figures (and its validation choice, not read)
        assert data[key]["shallow_val"] == {k: shallow[k] for k in ("pearson", "kendall")}
        assert data[key]["train_rows"] == len(dm.read_splits()["train"])
        assert data[key]["gap"]["pearson"] == pytest.approx(data[key]["val"]["pearson"]
                                                            - data[key]["shallow_val"]["pearson"])
    assert data["0.5"]["train_rows"] < data["1"]["train_rows"]
    assert set(data["trend"]) == {"pearson", "kendall"} and data["trend"]["pearson"]["points"] == 2
    assert data["1"]["max_epochs"] == 3 and data["0.5"]["fraction"] == 0.5
    # a run of another number of epochs than the config's (3) is a point of its own, outside the trend over rows
    longer = _fake_run(tmp_path / "longer", rows, 42, [(0.1, 0.2)] * 5, fraction=0.5, max_epochs=5)
    more = _curve([*curve, "--seed", "42", "--fractions", "--existing", f"0.5={longer}", "--out", str(out)])
    assert more.returncode == 0, more.stderr
    again = json.loads(out.read_text())["clinical_bleurt"]["42"]
    assert len(again["0.5x5ep"]["epochs"]) == 5 and again["0.5"] == data["0.5"]  # beside the 3-epoch point
    assert "--data.train_fraction 0.5 --trainer.max_epochs 5" in again["0.5x5ep"]["command"]
    assert "train_fraction" not in again["1"]["command"] and "max_epochs" not in again["1"]["command"]
    assert again["trend"] == data["trend"]
    assert "SYNTHETIC" in data["set"] and "VALIDATION" in done.stdout
    # a run that trained on another share than the one named is refused
    wrong = _curve([*curve, "--seed", "42", "--fractions", "--existing", f"0.25={half}", "--out", str(out)])
    assert wrong.returncode != 0 and "train_fraction 0.5, not 0.25" in wrong.stderr
    # runs of another learning rate than the config's: refused without --tag, else points (and a trend) of their own
    slow = [_fake_run(tmp_path / f"slow{f}", rows, 42, [(0.2, 0.3), (0.3, 0.6)], fraction=f, lr=1e-4) for f in (1.0, 0.5)]
    untagged = _curve([*curve, "--seed", "42", "--fractions", "--existing", f"1={slow[0]}", "--out", str(out)])
    assert untagged.returncode != 0 and "model.init_args.lr" in untagged.stderr and "--tag" in untagged.stderr
    tagged = _curve([*curve, "--seed", "42", "--fractions", "--tag", "lr1e-4", "--existing", f"1={slow[0]}",
                     "--existing", f"0.5={slow[1]}", "--out", str(out)])
    assert tagged.returncode == 0, tagged.stderr
    final = json.loads(out.read_text())["clinical_bleurt"]["42"]
    assert final["1+lr1e-4"]["fit_arguments"] == ["--model.init_args.lr=0.0001"]
    assert final["1+lr1e-4"]["command"].endswith(f"--model.init_args.lr=0.0001 --run_dir {slow[0]}")
    assert final["1"] == data["1"] and final["trend"] == data["trend"]  # the config's own points stay as they were
    assert final["trend+lr1e-4"]["pearson"]["points"] == 2 and "trend+lr1e-4 of pearson" in tagged.stdout


def test_further_fit_arguments_need_a_tag_and_stay_off_the_trend(tmp_path):
    """Another setting (e.g. a learning rate after --) is its own point: without --tag it would take the
    config's run folder and key at that share, so it is refused before anything trains."""
    untagged = subprocess.run([*CURVE, "clinical_bleurt",  # once as a user runs it, in a process of its own
                               "--fractions", "1", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "c.json"),
                               "--", "--model.lr=1e-4"], capture_output=True, text=True, cwd=ROOT)
    assert untagged.returncode == 2 and "need --tag NAME" in untagged.stderr
    assert not (tmp_path / "runs").exists() and not (tmp_path / "c.json").exists()
    bad = _curve(["clinical_bleurt",
                  "--fractions", "1", "--tag", "lr/1", "--out", str(tmp_path / "c.json"), "--", "--model.lr=1e-4"])
    assert bad.returncode == 2 and "names a folder" in bad.stderr
    assert learning_curve.point_key(1.0, 3, 3, "lr1e-4") == "1+lr1e-4"
    assert learning_curve.point_key(0.5, 5, 3) == "0.5x5ep"
    assert [k for k in ("1", "0.5", "1+lr1e-4", "0.5x5ep") if learning_curve.on_trend(k)] == ["1", "0.5"]


def test_a_finished_run_in_the_curves_folder_is_reused_only_where_its_settings_are_the_points(tmp_path):
    """The curve reuses checkpoints/curve/<metric>_f<F>_seed<S> when it holds a finished run; a run of
    another learning rate there (the config changed since) is refused by name, not read as the point."""
    rows = _bleurt(tmp_path / "rows.jsonl", n_refs=60)
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps(_config(rows, lr=1e-4)))
    runs = tmp_path / "runs"
    curve = ["clinical_bleurt", "--config", str(config),
             "--seed", "42", "--runs", str(runs), "--out", str(tmp_path / "c.json"), "--fractions", "0.5"]
    _fake_run(runs / "clinical_bleurt_f0.5_seed42", rows, 42, [(0.2, 0.3)], fraction=0.5, lr=2e-4)
    stale = _curve(curve)
    assert stale.returncode != 0 and "holds a finished run of other settings (--model.init_args.lr=0.0002)" in stale.stderr
    assert not (tmp_path / "c.json").exists()
    import shutil

    shutil.rmtree(runs)
    _fake_run(runs / "clinical_bleurt_f0.5_seed42", rows, 42, [(0.2, 0.3)], fraction=0.5, lr=1e-4)
    same = _curve(curve)
    assert same.returncode == 0, same.stderr
    assert json.loads((tmp_path / "c.json").read_text())["clinical_bleurt"]["42"]["0.5"]["val"]["pearson"] == 0.3


def test_shallow_only_refits_the_shallow_learner_of_every_point_without_its_run(tmp_path):
    """``--shallow-only``: a curve measured beside an earlier shallow learner gets the current one's
    figures on each point's rows (from its config and share; the run folders may be gone), the earlier
    figures kept under ``shallow_val_v1``, the gaps and trends recomputed."""
    import shutil

    from train.bleurt.data import BleurtDataModule

    rows = _bleurt(tmp_path / "rows.jsonl", n_refs=60)
    runs = [_fake_run(tmp_path / "full", rows, 42, [(0.1, 0.2), (0.3, 0.5)]),
            _fake_run(tmp_path / "half", rows, 42, [(0.05, 0.1), (0.2, 0.3)], fraction=0.5)]
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps(_config(rows)))
    out = tmp_path / "curve.json"
    made = _curve(["clinical_bleurt", "--config", str(config), "--seed", "42",
                   "--fractions", "--existing", f"1={runs[0]}", "--existing", f"0.5={runs[1]}", "--out", str(out)])
    assert made.returncode == 0, made.stderr
    data = json.loads(out.read_text())
    entry = data["clinical_bleurt"]["42"]
    assert set(entry["1"]["shallow_chosen"]) >= {"alpha"}  # a point records the values its shallow learner chose
    stale = {"pearson": 0.9, "kendall": 0.8}  # as an earlier learner's point was written: no shallow_chosen
    for key in ("1", "0.5"):
        entry[key]["shallow_val"] = dict(stale)
        entry[key]["gap"] = {k: entry[key]["val"][k] - stale[k] for k in stale}
        del entry[key]["shallow_chosen"]
    entry["trend"] = {}
    out.write_text(json.dumps(data))
    for run in runs:
        shutil.rmtree(run)
    done = _curve(["--shallow-only", "clinical_bleurt", "--out", str(out)])
    assert done.returncode == 0, done.stderr
    got = json.loads(out.read_text())["clinical_bleurt"]["42"]
    for key, fraction in (("1", 1.0), ("0.5", 0.5)):
        table = _shallow_val(BleurtDataModule(train_path=rows, split_by="column", train_fraction=fraction))
        assert got[key]["shallow_val"] == {k: table[k] for k in ("pearson", "kendall")}
        assert got[key]["shallow_val_v1"] == stale
        assert got[key]["gap"]["pearson"] == pytest.approx(got[key]["val"]["pearson"] - table["pearson"])
        assert got[key]["shallow_chosen"]["alpha"] == table["alpha"]
    assert got["trend"]["pearson"]["points"] == 2
    assert "shallow 0.900 ->" in done.stdout
    # run again: nothing measured with the earlier learner is left, so the v1 figures are not overwritten
    again = _curve(["--shallow-only", "clinical_bleurt", "--out", str(out)])
    assert again.returncode == 0 and json.loads(out.read_text())["clinical_bleurt"]["42"]["1"]["shallow_val_v1"] == stale

"""python -m train ablations: every table builds beside the paper's numbers, finished runs are
reused (a missing one is trained once, then reused), bad names and unreachable models are clear."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from train.ablations.cli import main as ablations_main
from train.ablations.paper import PAPER_TABLES, TABLE_NAMES
from train.evaluation.comparators import COMPARATORS
from train.evaluation.comparators import implementation as comparator_implementation
from train.evaluation.comparators import needs as comparator_needs
from train.ablations.profile import ProfileError, RunSpec, load_profile
from train.ablations.runs import describe_differences, run_differences
from train.lightning.configs import read_yaml
from train.lightning.cli import resolve

ROOT = Path(__file__).resolve().parents[2]
IOB = str(ROOT / "configs/ner/iob_sample.yaml")
TEACHING = str(ROOT / "configs/ablations/ner_iob_teaching.yaml")
REWARD = str(ROOT / "configs/reward/sample.yaml")
TOTAL_ONLY = str(ROOT / "configs/ablations/er2_total_only.yaml")
ISSUE_TABLES = {"ner-schemes", "ner-data", "encoders", "rexval", "rate-eval", "er2-criteria", "er2-metrics",
                "er2-backbones", "er2-loss", "er2-lambda"}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from data.synth.generate import generate

    out = tmp_path_factory.mktemp("synthetic")
    generate(out, 0, {"rexval": 24, "task1": 30, "task2": 30, "task3": 12, "er2": 36, "bleurt": 0})
    return out


def _finish_run(run_dir: Path, spec: RunSpec, build_export, metrics: dict) -> None:
    """A finished run as python -m train leaves it: export, test_metrics.json, the resolved config."""
    build_export(run_dir / "export")
    (run_dir / "test_metrics.json").write_text(json.dumps(metrics))
    saved = resolve(*spec.configs, args=spec.overrides)
    (run_dir / "export" / "training_config.yaml").write_text(yaml.safe_dump(saved))


@pytest.fixture(scope="module")
def finished_runs(tmp_path_factory, tiny_backbone, synthetic):
    from train.rehearsal.tiny import build_tiny_iob_export, build_tiny_reward_export

    root = tmp_path_factory.mktemp("runs")
    rng = np.random.default_rng(0)
    ner = {k: float(rng.uniform(0.2, 0.9)) for k in ("test/precision", "test/recall", "test/f1", "test/accuracy")}
    # the reward runs' rows are the module's SYNTHETIC set (what the shallow learner beside ER²Score is fitted on)
    rows = (f"--data.rows={synthetic / 'synthetic_er2' / 'radcliq_synthetic.jsonl'}", "--model.max_length=430")
    specs = {"iob": RunSpec((IOB,), name="tiny_iob"), "reward": RunSpec((REWARD,), rows, name="tiny_reward"),
             "total": RunSpec((REWARD, TOTAL_ONLY), rows, name="tiny_reward_total"),
             # trained on half the training groups: other rows than the two above
             "half": RunSpec((REWARD,), (*rows, "--data.train_fraction=0.5"), name="tiny_reward_half")}
    _finish_run(root / "tiny_iob", specs["iob"], lambda f: build_tiny_iob_export(f, seed=0), ner)
    for key, seed in (("reward", 1), ("total", 2), ("half", 3)):
        _finish_run(root / specs[key].run_name, specs[key],
                    lambda f, s=seed: build_tiny_reward_export(f, tiny_backbone, "radcliq", seed=s), {"test/loss": 1.0})
    return root, specs, ner


def _run_entry(spec: RunSpec) -> dict:
    return {"configs": list(spec.configs), "overrides": list(spec.overrides), "name": spec.run_name}


def write_profile(path: Path, synthetic: Path, runs_root: Path, out: Path, tiny: str, specs: dict, **extra) -> Path:
    profile = {
        "profile": "test-sample",
        "labels": {"rexval": "SYNTHETIC sample (data.synth) — not the paper's benchmark",
                   "rate_eval": "RaTE-Eval layout",  # says nothing about the data: the code must add SYNTHETIC
                   "ner": "SAMPLE corpus"},
        "runs_root": str(runs_root), "output": str(out),
        "data": {"rexval": str(synthetic / "synthetic_rexval"), "rate_eval": str(synthetic / "synthetic_rate_eval"),
                 "task1_splits": ["train", "test"], "task2_splits": ["train", "test"]},
        "metaeval": {"bootstrap_resamples": 20},
        "ratescore": {"ner_run": _run_entry(specs["iob"]), "encoder": tiny, "batch_size": 16},
        "baselines": {"bertscore_model": tiny},
        "er2": {"run": _run_entry(specs["reward"])},
        "tables": {
            "ner-schemes": {"extra": [{"label": ["IOB", "tiny"], **_run_entry(specs["iob"])}]},
            "ner-data": {"rows": {"radiopaedia+mimic": _run_entry(specs["iob"])}},
            "encoders": {"extra": [{"label": ["tiny"], "encoder": tiny, "pooling": "mean"}]},
            "er2-backbones": {"extra": [{"label": ["tiny"], **_run_entry(specs["reward"])}]},
            "er2-loss": {"rows": {"both": _run_entry(specs["reward"]), "total-only": _run_entry(specs["total"])},
                         "notes": ["shortened runs (test)"]},
            "er2-lambda": {"rows": {"lambda-1.0": _run_entry(specs["reward"])},
                           "extra": [{"label": ["1.0, half the rows"], **_run_entry(specs["half"])}]},
        },
        **extra,
    }
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    return path


def _csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_the_tables_are_the_issues_and_every_paper_row_has_its_numbers():
    assert set(TABLE_NAMES) == ISSUE_TABLES
    for table in PAPER_TABLES.values():
        keys = [r.key for r in table.rows]
        assert len(keys) == len(set(keys)), table.name
        for row in table.rows:
            assert set(row.values) == set(table.metrics) and len(row.label) == len(table.key_columns)
            assert any(v is not None for v in row.values.values()), (table.name, row.key)
            # every row of a table of metrics is computed by something (none is "not in this project")
            assert row.measure is not None or table.name not in ("rexval", "rate-eval", "er2-metrics"), (
                table.name, row.key)


def test_every_table_builds_beside_the_papers_numbers(synthetic, finished_runs, tiny_backbone, tmp_path, capsys):
    runs_root, specs, ner = finished_runs
    before = {p: p.stat().st_mtime for p in runs_root.rglob("*") if p.is_file()}
    out = tmp_path / "out"
    profile = write_profile(tmp_path / "profile.yaml", synthetic, runs_root, out, tiny_backbone, specs)
    assert ablations_main(["--table", "all", "--profile-config", str(profile), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    for name, paper in PAPER_TABLES.items():
        md = (out / f"{name}.md").read_text()
        rows = _csv(out / f"{name}.csv")
        report = json.loads((out / f"{name}.json").read_text())
        assert name in printed and report["table"] == name
        assert {"git_commit", "cpu", "threads", "versions"} <= set(report["environment"])
        header = md.split("|", 1)[0]
        assert ("SYNTHETIC" in header) == (name not in ("ner-schemes", "ner-data")), name
        assert "SAMPLE corpus" in header or name not in ("ner-schemes", "ner-data")
        in_paper = [r for r in rows if r["in paper"] == "true"]
        assert len(in_paper) == len(paper.rows)
        for prow, row in zip(paper.rows, in_paper):
            assert tuple(row[c] for c in paper.key_columns) == prow.label
            for metric, value in prow.values.items():
                assert row[f"{metric} paper"] == ("" if value is None else repr(float(value)))
            ours = [row[f"{m} ours"] for m in paper.metrics]
            if row["status"] == "measured":
                assert any(ours), (name, prow.key)
            else:  # never a number where we have none
                assert not any(ours), (name, prow.key)
                assert row["status"] == "needs the paper profile" or row["status"].startswith(
                    ("unavailable: ", "skipped: needs ")), row
            assert "not part of this project" not in row["status"] and "does not compute" not in row["status"], row
            if prow.measure in COMPARATORS:  # computed by its package, or says what it needs
                assert row["status"] == "measured" or row["status"] == comparator_needs(prow.measure), row
                if row["status"] == "measured":
                    assert row["source"] == comparator_implementation(prow.measure), row
    # rows the profile does not map need the paper profile; mapped ones were measured
    schemes = _csv(out / "ner-schemes.csv")
    assert [r["status"] for r in schemes] == ["needs the paper profile"] * 7 + ["measured"]
    assert float(schemes[-1]["F1 ours"]) == pytest.approx(ner["test/f1"])
    loss = {r["loss"]: r for r in _csv(out / "er2-loss.csv")}
    assert loss["L_tot only"]["status"] == loss["L_ind + λ·L_tot"]["status"] == "measured"
    assert loss["L_ind only"]["status"] == "needs the paper profile"
    assert "shortened runs (test)" in (out / "er2-loss.md").read_text()
    assert loss["L_tot only"]["Kendall ours"] != loss["L_ind + λ·L_tot"]["Kendall ours"]  # two different runs
    # the trivial baselines (no model) sit beside the metrics in every table of synthetic pairs
    from train.evaluation.baselines import TRIVIAL_LABELS

    for name in ("rexval", "rate-eval", "er2-metrics"):
        trivial = {r[paper_key(name)]: r for r in _csv(out / f"{name}.csv") if r[paper_key(name)] in TRIVIAL_LABELS.values()}
        assert set(trivial) == set(TRIVIAL_LABELS.values()), name
        assert all(r["status"] == "measured" and r["in paper"] == "false" for r in trivial.values()), name
    # CIDEr (pycocoevalcap) beside BLEU and ROUGE-L in every table of synthetic pairs: a row
    # of er2-metrics, a row of ours only in rexval and rate-eval; measured wherever pycocoevalcap is installed
    import importlib.util

    for name in ("rexval", "rate-eval", "er2-metrics"):
        (cider,) = [r for r in _csv(out / f"{name}.csv") if r[paper_key(name)] == "CIDEr"]
        assert cider["in paper"] == str(name == "er2-metrics").lower()
        if importlib.util.find_spec("pycocoevalcap") is None:
            assert cider["status"] == comparator_needs("cider")
            continue
        assert cider["status"] == "measured" and cider["Kendall ours"], cider
        assert cider["source"].startswith("pycocoevalcap ") and "(version unknown)" not in cider["source"]
    # the shallow learner, fitted on the Task 2 train split, beside the metrics of the rate-eval table
    from train.evaluation.baselines import SHALLOW_LABEL

    # (this profile evaluates Task 2's train split too: the learner would score its own fitting data, so it says so)
    (shallow,) = [r for r in _csv(out / "rate-eval.csv") if r[paper_key("rate-eval")] == SHALLOW_LABEL]
    assert shallow["in paper"] == "false" and not shallow["Kendall ours"]
    assert shallow["status"].startswith("unavailable: the evaluated Task 2 splits include the train split")
    (shallow,) = [r for r in _csv(out / "encoders.csv") if r["encoder"] == SHALLOW_LABEL]  # Task 1, likewise
    assert shallow["status"].startswith("unavailable: the evaluated Task 1 splits include the train split")
    # beside ER²Score on the ReXVal pairs: the shallow learner fitted on ER²Score's own training rows
    from scipy.stats import kendalltau

    from data.rexval import read_rexval
    from train.ablations.runs import saved_config
    from train.evaluation.baselines import shallow_learner
    from train.lightning.module import datamodule_from_run_config

    label = f"{SHALLOW_LABEL}, ER²Score's training rows"
    er2_rows = {name: {r[paper_key(name)]: r for r in _csv(out / f"{name}.csv")} for name in ("rexval", "er2-metrics")}
    (reward_run,) = {Path(r["run_dir"]) for r in json.loads((out / "er2-metrics.json").read_text())["runs"]
                     if r["name"] == specs["reward"].run_name}
    dm = datamodule_from_run_config(saved_config(reward_run))
    train = dm.split_rows()["train"]
    assert train and len(train) < len(dm._read(dm.rows))  # the run's train split only
    pairs = read_rexval(str(synthetic / "synthetic_rexval"))
    learner = shallow_learner([r.reference for r in train], [r.candidate for r in train],
                              [dm.system.total_to_internal(r.total) for r in train])
    direct = -kendalltau(learner.predict([p.reference for p in pairs], [p.candidate for p in pairs]),
                         [p.rating for p in pairs], variant="b").statistic
    for name, rows in er2_rows.items():
        row = rows[label]
        assert row["status"] == "measured" and row["in paper"] == "false", (name, row)
        assert float(row["Kendall ours"]) == pytest.approx(direct), name
        assert f"fitted on the {len(train)} training rows of ER²Score" in row["source"], name
    # beside the runs of er2-backbones/-loss/-lambda: one shallow row per distinct set of training rows
    def direct_kendall(run_name: str) -> tuple[float, int]:
        (run_dir,) = {Path(r["run_dir"]) for name in ("er2-loss", "er2-lambda")
                      for r in json.loads((out / f"{name}.json").read_text())["runs"] if r["name"] == run_name}
        dm = datamodule_from_run_config(saved_config(run_dir))
        rows = dm.split_rows()["train"]
        model = shallow_learner([r.reference for r in rows], [r.candidate for r in rows],
                                [dm.system.total_to_internal(r.total) for r in rows])
        return -kendalltau(model.predict([p.reference for p in pairs], [p.candidate for p in pairs]),
                           [p.rating for p in pairs], variant="b").statistic, len(rows)

    runs_label = f"{SHALLOW_LABEL}, these runs' training rows"
    full, n_full = direct_kendall("tiny_reward")
    half, n_half = direct_kendall("tiny_reward_half")
    assert n_half < n_full and half != pytest.approx(full)
    for name, expected in (("er2-backbones", {runs_label: (full, n_full)}),
                           ("er2-loss", {runs_label: (full, n_full)}),  # both runs trained on the same rows
                           ("er2-lambda", {f"{runs_label} (tiny_reward)": (full, n_full),
                                           f"{runs_label} (tiny_reward_half)": (half, n_half)})):
        shallow_rows = {r[paper_key(name)]: r for r in _csv(out / f"{name}.csv") if r[paper_key(name)].startswith(SHALLOW_LABEL)}
        assert set(shallow_rows) == set(expected), name
        for label_, (kendall, n) in expected.items():
            row = shallow_rows[label_]
            assert row["status"] == "measured" and row["in paper"] == "false", (name, row)
            assert float(row["Kendall ours"]) == pytest.approx(kendall), (name, label_)
            assert f"fitted on the {n} training rows of ER²Score" in row["source"], (name, row["source"])
            # the synthetic ER² set splits by the corpus split: no evaluated reference was trained on
            assert f"0 of the {len({p.reference for p in pairs})} evaluated references are among" in row["source"]
    loss_source = shallow_rows_of(out, "er2-loss")[0]["source"]  # the table's first run, then the others
    assert "tiny_reward_total (reused), the same rows as tiny_reward (their totals" in loss_source
    criteria = _csv(out / "er2-criteria.csv")
    assert all(r["status"] == "measured" for r in criteria) and len(criteria) == 7
    # finished runs were reused, not retrained
    report = json.loads((out / "er2-loss.json").read_text())
    assert {r["name"]: r["status"] for r in report["runs"]} == {"tiny_reward": "reused", "tiny_reward_total": "reused"}
    report = json.loads((out / "er2-lambda.json").read_text())
    assert {r["name"]: r["status"] for r in report["runs"]} == {"tiny_reward": "reused", "tiny_reward_half": "reused"}
    report = json.loads((out / "rate-eval.json").read_text())
    assert {r["name"]: r["status"] for r in report["runs"]} == {"tiny_iob": "reused"}  # RaTEScore's NER run
    assert before == {p: p.stat().st_mtime for p in before}


def shallow_rows_of(out: Path, name: str) -> list[dict]:
    from train.evaluation.baselines import SHALLOW_LABEL

    return [r for r in _csv(out / f"{name}.csv") if r[paper_key(name)].startswith(SHALLOW_LABEL)]


def paper_key(name: str) -> str:
    return PAPER_TABLES[name].key_columns[0]


def test_a_missing_run_is_trained_once_then_reused(synthetic, finished_runs, tiny_backbone, tmp_path):
    """The one real (tiny) training: python -m train fit in a subprocess, then the run, trained on
    the teaching subset, is tested on the whole ('all') test split as the paper's Table 7."""
    runs_root, specs, _ = finished_runs
    teaching = RunSpec((IOB, TEACHING), name="tiny_iob_teaching")
    overrides = [f"--model.init_args.backbone={tiny_backbone}", "--trainer.max_epochs=1",
                 "--trainer.limit_train_batches=2", "--trainer.limit_val_batches=1", "--trainer.limit_test_batches=2",
                 "--trainer.precision=32-true", "--data.batch_size=8", "--trainer.enable_progress_bar=false"]
    profile = write_profile(tmp_path / "profile.yaml", synthetic, tmp_path / "runs", tmp_path / "out", tiny_backbone,
                            specs, run_overrides={"ner": overrides})
    raw = yaml.safe_load(profile.read_text())
    raw["tables"]["ner-data"]["rows"] = {"radiopaedia": _run_entry(teaching)}
    profile.write_text(yaml.safe_dump(raw))
    args = ["--table", "ner-data", "--profile-config", str(profile), "--no-progress"]

    assert ablations_main(args) == 0
    first = json.loads((tmp_path / "out" / "ner-data.json").read_text())
    assert first["runs"] == [{**first["runs"][0], "name": "tiny_iob_teaching", "status": "trained"}]
    run = tmp_path / "runs" / "tiny_iob_teaching"
    weights = run / "export" / "model.safetensors"
    stamp = weights.stat().st_mtime
    assert (run / "ablations" / "test_metrics_all.json").is_file()
    row = _csv(tmp_path / "out" / "ner-data.csv")[0]
    assert row["status"] == "measured" and "trained on subset 'teaching'" in row["source"]

    assert ablations_main(args) == 0
    second = json.loads((tmp_path / "out" / "ner-data.json").read_text())
    assert [r["status"] for r in second["runs"]] == ["reused"]
    assert weights.stat().st_mtime == stamp
    assert _csv(tmp_path / "out" / "ner-data.csv")[0]["F1 ours"] == row["F1 ours"]


def test_a_changed_setting_is_not_reused():
    configs, overrides = (REWARD, TOTAL_ONLY), ("--model.lam=0.5",)
    saved = resolve(*configs, args=overrides)
    assert saved["model"]["init_args"]["loss_terms"] == "total" and saved["model"]["init_args"]["lam"] == 0.5
    saved["model"]["class_path"] = "train.reward.modules.ER2RewardModel"  # the same class by another path
    saved["model"]["init_args"]["lr"] = "0.00005"  # 5.0e-5 written otherwise
    saved["data"]["init_args"]["eval_batch_size"] = 99  # ignored: does not change what is trained
    saved["trainer"]["default_root_dir"] = "x"
    assert run_differences(configs, saved, overrides) == {}
    saved["model"]["init_args"]["lam"] = 1.0
    assert describe_differences(run_differences(configs, saved, overrides)) == [
        "model.init_args.lam: run has 1.0, config says 0.5"]
    del saved["model"]["init_args"]["candidate_format"]  # a run from before a setting existed: its default is not compared
    saved["model"]["init_args"]["lam"] = 0.5
    assert run_differences(configs, saved, overrides) == {}
    del saved["model"]["init_args"]["loss_terms"]  # but a stated one is
    assert describe_differences(run_differences(configs, saved, overrides)) == [
        "model.init_args.loss_terms: not in the run's config, config says 'total'"]


def test_bad_table_names_and_profiles_are_clear(tmp_path, capsys):
    assert ablations_main(["--table", "ner-scheme", "--profile", "sample"]) == 2
    err = capsys.readouterr().err
    assert "unknown table 'ner-scheme'" in err and "ner-schemes" in err and "Traceback" not in err
    assert ablations_main(["--profile", "sample"]) == 2
    assert "--table" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"tables": {"er2-lambda": {"rows": {"lambda-9.0": ["x.yaml"]}}}}))
    with pytest.raises(ProfileError, match=r"bad.yaml: tables.er2-lambda.rows: 'lambda-9.0' is not a row"):
        load_profile(bad)
    for name in ("sample", "paper"):  # the shipped profiles load
        assert load_profile(ROOT / "configs" / "ablations" / f"{name}.yaml").name == name


def test_the_paper_profile_fails_naming_what_it_could_not_load(synthetic, tmp_path, monkeypatch, capsys):
    """No Hub here (and an empty cache): every row is written, and the command names each model and
    dataset it could not load, in one line each, without a traceback. The shipped paper profile
    with data.rexval pointed at SYNTHETIC ReXVal-format files, so that the ER²Score runs are tried."""
    import huggingface_hub.constants as hub

    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "empty_cache"))
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", True)
    monkeypatch.chdir(ROOT)
    assert ablations_main(["--table", "rexval", "--profile", "paper", "--out", str(tmp_path / "plain")]) == 1
    assert "needs the ReXVal dataset (PhysioNet" in capsys.readouterr().err

    raw = read_yaml(ROOT / "configs/ablations/paper.yaml")
    raw["data"]["rexval"] = str(synthetic / "synthetic_rexval")
    profile = tmp_path / "paper.yaml"
    profile.write_text(yaml.safe_dump(raw))
    code = ablations_main(["--table", "all", "--profile-config", str(profile), "--out", str(tmp_path / "out"),
                           "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    for name in ("microsoft/deberta-v3-base", "meta-llama/Meta-Llama-3-8B", "Angelakeke/RaTE-EVAL",
                 "FremyCompany/BioLORD-2023-C"):
        assert f"could not load model '{name}'" in err or f"could not load RaTE-Eval dataset '{name}'" in err, name
    for name in TABLE_NAMES:
        rows = _csv(tmp_path / "out" / f"{name}.csv")
        assert rows and all(r["status"] == "measured" or not any(r[f"{m} ours"] for m in PAPER_TABLES[name].metrics)
                            for r in rows), name
        assert "SYNTHETIC" in (tmp_path / "out" / f"{name}.md").read_text().split("|", 1)[0] or name not in (
            "rexval", "er2-metrics", "er2-criteria", "er2-backbones", "er2-loss", "er2-lambda"), name
    schemes = _csv(tmp_path / "out" / "ner-schemes.csv")
    assert schemes[0]["status"].startswith("failed: ") and "microsoft/deberta-v3-base" in schemes[0]["status"]
    metrics = {r["metric"]: r["status"] for r in _csv(tmp_path / "out" / "er2-metrics.csv")}
    assert metrics["BLEU-4"] == "measured"  # rows that need nothing from the Hub are still made


def test_the_shallow_row_is_fitted_on_task2_train_and_scored_on_the_evaluated_pairs(synthetic):
    """Where the profile evaluates Task 2's test split only (the sample and paper profiles), the row is
    the ridge learner fitted on the train split, with the same agreement as a direct fit."""
    from types import SimpleNamespace

    from data.rate_eval import read_rate_eval_task2, read_rate_eval_task3
    from train.ablations.tables_metrics import _shallow_rate_eval_row
    from train.evaluation.baselines import shallow_learner
    from train.evaluation.metaeval import agreement

    root = synthetic / "synthetic_rate_eval"
    ev = SimpleNamespace(rate_eval_root=lambda: root,
                         agreement=lambda s, r, g, m, sign=1.0: agreement(s, r, g, m, 50, 0.95, 0, sign))
    ctx = SimpleNamespace(profile=SimpleNamespace(data=SimpleNamespace(task2_splits=["test"])), ev=ev)
    test, triads = read_rate_eval_task2(root, "test"), read_rate_eval_task3(root)
    row = _shallow_rate_eval_row(ctx, test, triads)
    assert row.status == "measured" and not row.in_paper
    train = read_rate_eval_task2(root, "train")
    assert {p.candidate for p in train}.isdisjoint({p.candidate for p in test})
    model = shallow_learner([p.reference for p in train], [p.candidate for p in train], [p.rating for p in train])
    direct = agreement(model.predict([p.reference for p in test], [p.candidate for p in test]),
                       [p.rating for p in test], [p.group for p in test], ("kendall",), 50, 0.95, 0)
    assert row.ours["Kendall"].value == pytest.approx(direct["kendall"]["value"])
    assert 0.0 <= row.ours["synthetic Acc"].value <= 1.0 and row.ours["synthetic Acc"].n == len(triads)
    ctx.profile.data.task2_splits = ["train", "test"]
    assert _shallow_rate_eval_row(ctx, test, triads).status.startswith("unavailable: ")


def test_the_encoders_table_ends_with_the_shallow_learner_fitted_on_task1_train(synthetic, finished_runs,
                                                                               tiny_backbone, tmp_path):
    """RaTEScore's encoder rows (Task 1 sentence pairs) have the shallow learner beside them, fitted on
    the Task 1 train split and scored on the evaluated test pairs: the same Pearson as a direct fit."""
    from scipy.stats import pearsonr

    from data.rate_eval import read_rate_eval_task1
    from train.evaluation.baselines import SHALLOW_LABEL, shallow_learner

    runs_root, specs, _ = finished_runs
    out = tmp_path / "out"
    profile = write_profile(tmp_path / "profile.yaml", synthetic, runs_root, out, tiny_backbone, specs)
    raw = yaml.safe_load(profile.read_text())
    raw["data"]["task1_splits"] = ["test"]
    profile.write_text(yaml.safe_dump(raw))
    assert ablations_main(["--table", "encoders", "--profile-config", str(profile), "--no-progress"]) == 0
    (row,) = [r for r in _csv(out / "encoders.csv") if r["encoder"] == SHALLOW_LABEL]
    root = synthetic / "synthetic_rate_eval"
    train, test = read_rate_eval_task1(root, "train"), read_rate_eval_task1(root, "test")
    assert {p.candidate for p in train}.isdisjoint({p.candidate for p in test})
    model = shallow_learner([p.reference for p in train], [p.candidate for p in train], [p.rating for p in train])
    direct = pearsonr(model.predict([p.reference for p in test], [p.candidate for p in test]),
                      [p.rating for p in test]).statistic
    assert row["status"] == "measured" and row["in paper"] == "false"
    assert float(row["Pearson ours"]) == pytest.approx(direct)
    assert f"fitted on the {len(train)} Task 1 train pairs" in row["source"]
    tiny = [r for r in _csv(out / "encoders.csv") if r["encoder"] == "tiny"]
    assert tiny and tiny[0]["status"] == "measured"  # beside RaTEScore's own row


def test_er2_truncation_compares_model_and_shallow_learner_on_cut_and_whole_prompts(finished_runs):
    """benchmarks/quality/er2_truncation.py: the split's pairs in two parts by whether a prompt is longer than
    max_length, the export and the shallow learner (fitted on the run's training rows) on each."""
    from benchmarks.quality.er2_truncation import measure

    runs_root, specs, _ = finished_runs
    res = measure(runs_root / specs["reward"].run_name, "val")
    parts = res["parts"]
    assert res["max_length"] == 430 and res["split"] == "val"
    assert parts["all"]["pairs"] == parts["whole"]["pairs"] + parts["cut"]["pairs"] > 0
    assert parts["all"]["candidates"] == parts["whole"]["candidates"] + parts["cut"]["candidates"]
    # the cut candidates are those whose whole prompt is longer than 430 pieces, counted here directly
    from radscore.reward_model import format_prompt, load_tokenizer
    from train.ablations.runs import saved_config

    cfg = saved_config(runs_root / specs["reward"].run_name)
    tok, template = load_tokenizer(cfg["model"]["init_args"]["backbone"]), cfg["model"]["init_args"]["prompt_template"]
    dev = [json.loads(line) for line in Path(cfg["data"]["init_args"]["rows"]).read_text().splitlines()]
    lengths = [len(tok(format_prompt(template, r["reference"], r["candidate"]))["input_ids"])
               for r in dev if r["split"] == "dev"]
    assert parts["cut"]["candidates"] == sum(n > 430 for n in lengths) > 0
    assert parts["whole"]["pairs"] > 0  # 430 pieces cut some of this set's prompts, not all
    for part in parts.values():
        for who in ("model", "shallow"):
            assert 0 <= part[who]["pair_accuracy"] <= 1 or not part["pairs"]
            assert -1 <= part[who]["kendall"] <= 1 or part["candidates"] < 2  # nan: no pair of candidates

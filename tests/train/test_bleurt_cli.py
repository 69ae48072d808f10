"""The ClinicalBLEURT command line: configs instantiate, fast_dev_run, fit -> test -> export round trip."""

import json
from pathlib import Path

import pytest
import torch

from train.__main__ import main
from train.bleurt.data import BleurtDataModule
from train.lightning.cli import RadscoreCLI
from train.bleurt.modules import MONITOR, ClinicalBLEURTRegressor, check_checkpoint

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "configs" / "bleurt").glob("*.yaml"))
CPU = ["--trainer.accelerator=cpu", "--trainer.devices=1", "--trainer.precision=32-true"]


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """A small SYNTHETIC ClinicalBLEURT file from the generator."""
    from data.synth import generate

    out = tmp_path_factory.mktemp("synth")
    generate(out, seed=3, sizes={"rexval": 0, "task1": 0, "task2": 0, "task3": 0, "er2": 0, "bleurt": 40})
    return str(out / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl")


def test_there_are_sample_and_paper_configs():
    assert {c.stem for c in CONFIGS} >= {"sample", "paper"}


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_every_config_parses_and_instantiates(config, tiny_backbone, tmp_path):
    """The paper config gets a tiny stand-in backbone (BLEURT-20 cannot be downloaded here)."""
    default = RadscoreCLI(run=False, args=["--config", str(config), f"--model.init_args.backbone={tiny_backbone}", *CPU])
    assert default.run_folder().path == Path("checkpoints", "bleurt", config.stem)  # apart from other tasks' runs
    cli = RadscoreCLI(run=False, args=["--config", str(config), f"--model.init_args.backbone={tiny_backbone}",
                                       f"--run_dir={tmp_path}", *CPU])
    assert isinstance(cli.model, ClinicalBLEURTRegressor)
    assert cli.datamodule.backbone == tiny_backbone  # linked from the model
    assert cli.datamodule.max_length == cli.model.hparams.max_length
    assert cli.trainer.checkpoint_callback.monitor == MONITOR == "val/pearson"
    assert cli.trainer.checkpoint_callback.mode == "max"
    if config.stem == "paper":
        hp = cli.model.hparams
        assert (hp.lr, hp.warmup_ratio, cli.datamodule.batch_size, cli.trainer.max_epochs) == (1e-5, 0.1, 16, 1)
        from train.lightning.configs import read_configs

        assert read_configs(config)["model"]["init_args"]["backbone"] == "lucadiliello/BLEURT-20-D12"


def _train(*args):
    return main(list(args))


def test_fast_dev_run_through_the_command_line(rows, tiny_backbone, tmp_path):
    assert _train("fit", "--config", str(ROOT / "configs/bleurt/sample.yaml"), f"--data.train_path={rows}",
                  f"--model.init_args.backbone={tiny_backbone}", "--model.init_args.max_length=128",
                  "--trainer.fast_dev_run=true", f"--run_dir={tmp_path}", *CPU) == 0
    assert not (tmp_path / "export").exists()  # fast_dev_run neither checkpoints nor exports


def test_fit_tests_exports_and_the_export_predicts_the_same(rows, tiny_backbone, tmp_path, capsys):
    from radscore import ClinicalBLEURT
    from radscore.export import read_manifest
    from train.release.export import export_any

    _train("fit", "--config", str(ROOT / "configs/bleurt/sample.yaml"), f"--data.train_path={rows}",
           f"--model.init_args.backbone={tiny_backbone}", "--model.init_args.max_length=128",
           "--trainer.max_epochs=2", f"--run_dir={tmp_path}", *CPU)
    export = tmp_path / "export"
    metrics = json.loads((export / "metrics.json").read_text())
    assert {"test/mse", "test/pearson", "test/kendall"} <= set(metrics)
    assert metrics == json.loads((tmp_path / "test_metrics.json").read_text())
    # beside the model: what text alone reaches on the same test rows (printed and written)
    from scipy.stats import kendalltau, pearsonr

    from train.evaluation.baselines import (BESIDE_MODEL, SHALLOW_LABEL, SHALLOW_NAME, bleu, diff_hunks,
                                            shallow_rating_baseline)

    assert {k for k in metrics if "/baseline/" in k} == {f"test/baseline/{n}/{s}" for n in (*BESIDE_MODEL, SHALLOW_NAME)
                                                        for s in ("pearson", "kendall")} | {
        f"test/baseline/{SHALLOW_NAME}/{k}" for k in ("alpha", "char_weight", "count_weight")}  # its validation choice
    splits = BleurtDataModule(train_path=rows, split_by="column").read_splits()
    test_rows, train_rows = splits["test"], splits["train"]
    refs, cands, target = ([p.reference for p in test_rows], [p.candidate for p in test_rows],
                           [p.rating for p in test_rows])
    assert metrics["test/baseline/bleu4/pearson"] == pytest.approx(pearsonr(bleu(refs, cands), target).statistic)
    assert metrics["test/baseline/diff_hunks/kendall"] == pytest.approx(
        kendalltau(diff_hunks(refs, cands), target).statistic)
    # the shallow learner: fitted on the train rows alone, scored on the test rows
    shallow = shallow_rating_baseline([p.reference for p in train_rows], [p.candidate for p in train_rows],
                                      [p.rating for p in train_rows], refs, cands, target)[SHALLOW_NAME]
    assert metrics[f"test/baseline/{SHALLOW_NAME}/pearson"] == pytest.approx(shallow["pearson"])
    assert metrics[f"test/baseline/{SHALLOW_NAME}/alpha"] == shallow["alpha"]
    out = capsys.readouterr().out
    assert "test split: the model beside text-only baselines" in out and SHALLOW_LABEL in out
    line = next(line for line in out.splitlines() if line.startswith("this model"))
    assert [float(x) for x in line.split()[2:]] == pytest.approx([metrics["test/pearson"], metrics["test/kendall"]],
                                                                 abs=5e-4)
    manifest = read_manifest(export, "bleurt")
    assert (manifest["max_length"], manifest["length_rule"]) == (128, "longest_first")
    assert manifest["target"]["weights"]["non_critical"] == pytest.approx(1 / 3)
    for name in ("model.safetensors", "config.json", "tokenizer.json", "training_config.yaml"):
        assert (export / name).is_file(), name

    # the export scores the test split exactly as the LightningModule predicted it
    ckpt = sorted((tmp_path / "ckpt").glob("best-*.ckpt"))[-1]
    module = ClinicalBLEURTRegressor.load_from_checkpoint(ckpt, map_location="cpu").eval()
    dm = BleurtDataModule(train_path=rows, backbone=tiny_backbone, max_length=128, eval_batch_size=5)
    dm.setup("test")
    items = dm.splits["test"]
    with torch.no_grad():
        expected = torch.cat([module(b) for b in dm.test_dataloader()]).tolist()
    scored = ClinicalBLEURT(str(export), batch_size=4).score([i.pair.candidate for i in items],
                                                             [i.pair.reference for i in items], progress=False)
    assert [s.score for s in scored] == pytest.approx(expected, abs=1e-5)
    assert [s.truncated for s in scored] == [i.encoded.truncated for i in items]
    assert any(s.truncated for s in scored)  # full reports exceed 128 pieces: the rule is exercised

    # validate and test from the command line; re-export with `python -m train export`: same weights
    for sub in ("validate", "test"):
        assert _train(sub, "--config", str(ROOT / "configs/bleurt/sample.yaml"), f"--data.train_path={rows}",
                      f"--model.init_args.backbone={tiny_backbone}", "--model.init_args.max_length=128",
                      f"--ckpt_path={ckpt}", f"--run_dir={tmp_path}", *CPU) == 0
        assert ("the model beside text-only baselines" in capsys.readouterr().out) == (sub == "test")
    again = export_any(ckpt, tmp_path / "export2")
    assert (again / "model.safetensors").read_bytes() == (export / "model.safetensors").read_bytes()


def test_other_checkpoints_and_subcommands_are_refused(tmp_path, capsys):
    with pytest.raises(ValueError, match="checkpoint of task 'ner-iob', expected 'bleurt'"):
        check_checkpoint({"radscore": {"task": "ner-iob"}})
    with pytest.raises(ValueError, match="not a radscore checkpoint"):
        check_checkpoint({})
    with pytest.raises(ValueError, match="no predict step: score with radscore"):
        ClinicalBLEURTRegressor.predict_step(None, {}, 0)


def test_data_module_generates_synthetic_rows_and_reports_empty_splits(tmp_path, tiny_backbone, default_synthetic,
                                                                      monkeypatch):
    import shutil

    import data.synth

    made = []

    def generate_default(out):  # what generate_default(out) writes, copied from the session's default sets
        made.append(Path(out))
        shutil.copytree(default_synthetic, out)

    monkeypatch.setattr(data.synth, "generate_default", generate_default)
    train = tmp_path / "synth" / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl"
    dm = BleurtDataModule(train_path=str(train), generate_synthetic=True, backbone=tiny_backbone)
    dm.prepare_data()
    assert made == [tmp_path / "synth"]  # the missing file's sets folder
    assert train.is_file() and (tmp_path / "synth" / "SYNTHETIC_README.md").is_file()
    dm.prepare_data()
    assert len(made) == 1  # there now: not generated again
    with pytest.raises(ValueError, match="is not the generator's layout"):
        BleurtDataModule(train_path=str(tmp_path / "mine.jsonl"), generate_synthetic=True).prepare_data()

    empty = tmp_path / "val.jsonl"
    empty.write_text(json.dumps({"reference": "", "candidate": "No effusion.", "score": 1.0}) + "\n")
    dm = BleurtDataModule(train_path=str(train), val_path=str(empty), backbone=tiny_backbone,
                          split_fractions=(0.9, 0, 0.1))
    with pytest.raises(ValueError, match="the val split is empty"):
        dm.setup("fit")
    with pytest.raises(ValueError, match="the val split is cut from train_path but its share"):
        BleurtDataModule(train_path=str(train), split_fractions=(0.9, 0, 0.1))
    dm = BleurtDataModule(train_path=str(train), backbone=tiny_backbone, max_length=4096)
    dm.setup("validate")
    assert dm.max_length == 512  # capped by the tokenizer's limit


def test_a_diff_marked_model_trains_exports_and_is_scored_on_marked_pairs(rows, tiny_backbone, tmp_path):
    """``--model.init_args.candidate_format diff_marked`` (an opt-in): given to the data module too,
    recorded in the export's manifest, and the thin package scores the export on marked pairs."""
    import yaml

    from radscore import ClinicalBLEURT
    from radscore.bleurt import encode_pairs
    from radscore.export import read_manifest

    assert _train("fit", "--config", str(ROOT / "configs/bleurt/sample.yaml"), f"--data.train_path={rows}",
                  f"--model.init_args.backbone={tiny_backbone}", "--model.init_args.max_length=128",
                  "--model.init_args.candidate_format=diff_marked", "--trainer.max_epochs=1", f"--run_dir={tmp_path}",
                  *CPU) == 0
    saved = yaml.safe_load(next(tmp_path.glob("logs/version_*/config.yaml")).read_text())
    assert saved["model"]["init_args"]["candidate_format"] == "diff_marked"
    assert read_manifest(tmp_path / "export", "bleurt")["candidate_format"] == "diff_marked"
    ckpt = sorted((tmp_path / "ckpt").glob("best-*.ckpt"))[-1]
    state = torch.load(ckpt, map_location="cpu", weights_only=False)
    assert state["datamodule_hyper_parameters"]["candidate_format"] == "diff_marked"  # linked from the model
    module = ClinicalBLEURTRegressor.load_from_checkpoint(ckpt, map_location="cpu").eval()
    dm = BleurtDataModule(train_path=rows, backbone=tiny_backbone, max_length=128, eval_batch_size=5,
                          candidate_format="diff_marked")
    dm.setup("test")
    items = dm.splits["test"]
    refs, cands = [i.pair.reference for i in items], [i.pair.candidate for i in items]
    assert [i.encoded.input_ids for i in items] != [e.input_ids for e in encode_pairs(dm.tokenizer, refs, cands, 128)]
    with torch.no_grad():
        expected = torch.cat([module(b) for b in dm.test_dataloader()]).tolist()
    scorer = ClinicalBLEURT(str(tmp_path / "export"), batch_size=4)
    assert scorer.candidate_format == "diff_marked" and scorer.signature()["candidate_format"] == "diff_marked"
    assert scorer.compute_score(cands, refs) == pytest.approx(expected, abs=1e-5)

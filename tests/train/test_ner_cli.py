"""The NER command line: every config instantiates, sample configs run, export round trip, errors."""

import json
from pathlib import Path

import pytest
import torch

from train.lightning.cli import RadscoreCLI
from train.lightning.configs import config_args, config_chain
from train.ner.data import NERDataModule
from train.ner.modules import IOBTagger, SpanTagger

ROOT = Path(__file__).resolve().parents[2]
HUB = ROOT / "tests" / "fixtures" / "ratener_hub"
CONFIGS = sorted((ROOT / "configs" / "ner").rglob("*.yaml"))
CPU = ["--trainer.accelerator=cpu", "--trainer.devices=1", "--trainer.precision=32-true"]


def test_there_are_sample_and_paper_configs():
    names = {c.relative_to(ROOT / "configs" / "ner").with_suffix("").as_posix() for c in CONFIGS}
    assert {"iob_sample", "span_sample", "iob_deberta_v3", "iob_deberta_v3/medical_ner", "span_biolord/biomedbert",
            "span_biolord/sapbert", "span_biolord/bluebert", "span_biolord/medcpt", "span_biolord",
            "iob_deberta_v3/mimic", "iob_deberta_v3/radiopaedia"} <= names


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_every_config_parses_and_instantiates(config, tiny_backbone, tmp_path):
    """Paper configs (an overlay after its base) get a tiny stand-in backbone (their weights cannot
    be downloaded here)."""
    cli = RadscoreCLI(run=False, args=[
        *config_args(config_chain(config)), f"--model.init_args.backbone={tiny_backbone}",
        f"--run_dir={tmp_path}", *CPU])
    assert isinstance(cli.model, (IOBTagger, SpanTagger))
    assert cli.datamodule.scheme == cli.model.scheme
    assert cli.datamodule.backbone == tiny_backbone  # linked from the model
    assert cli.trainer.checkpoint_callback.monitor == "val/f1"


def _fit(config, run_dir, *extra):
    RadscoreCLI(args=["fit", "--config", str(config), f"--run_dir={run_dir}", *extra])


# SPEC §1.3, written out here (not imported) so that a change of the package's order fails the test.
SPEC_LABEL_ORDER = ["B-ABNORMALITY", "I-ABNORMALITY", "B-NON-ABNORMALITY", "I-NON-ABNORMALITY", "B-DISEASE",
                    "I-DISEASE", "B-NON-DISEASE", "I-NON-DISEASE", "B-ANATOMY", "I-ANATOMY", "O"]


@pytest.mark.parametrize("name", ["iob_sample", "span_sample"])
def test_sample_configs_fast_dev_run(name, tmp_path):
    _fit(ROOT / "configs" / "ner" / f"{name}.yaml", tmp_path, "--trainer.fast_dev_run=true")


@pytest.mark.parametrize("name", ["iob_sample", "span_sample"])
def test_fit_tests_and_exports_and_the_export_predicts_the_same(name, tiny_backbone, tmp_path):
    from radscore.export import read_manifest
    from train.release.base import export_checkpoint

    _fit(ROOT / "configs" / "ner" / f"{name}.yaml", tmp_path, f"--data.data_dir={HUB}",
         f"--model.init_args.backbone={tiny_backbone}", "--trainer.max_epochs=2")
    export = tmp_path / "export"
    metrics = json.loads((export / "metrics.json").read_text())
    for key in ("test/precision", "test/recall", "test/f1", "test/accuracy", "test/ANATOMY/f1"):
        assert key in metrics
    kind = read_manifest(export)["kind"]
    assert kind == ("ner-iob" if name == "iob_sample" else "ner-span")

    # the run folder says what the run ran on: one start (fit), the precision actually used, the seed
    from radscore.environment import REQUIRED

    runs = json.loads((tmp_path / "environment.json").read_text())["runs"]
    assert [r["subcommand"] for r in runs] == ["fit"]
    assert all(runs[0].get(k) is not None for k in REQUIRED if k not in ("git_commit",)), runs[0]
    assert runs[0]["precision"] == "32-true" and runs[0]["seed"] == 42
    assert runs[0]["versions"]["torch"] == torch.__version__ and runs[0]["threads"] == torch.get_num_threads()

    # The exported folder predicts exactly what the LightningModule predicted.
    ckpt = sorted((tmp_path / "ckpt").glob("best-*.ckpt"))[-1]
    module = (IOBTagger if kind == "ner-iob" else SpanTagger).load_from_checkpoint(ckpt, map_location="cpu").eval()
    dm = NERDataModule(data_dir=str(HUB), scheme=module.scheme, backbone=tiny_backbone)
    dm.setup("test")
    batch = next(iter(dm.test_dataloader()))
    with torch.no_grad():
        if kind == "ner-iob":
            from transformers import AutoModelForTokenClassification

            exported = AutoModelForTokenClassification.from_pretrained(export).eval()
            expected = module(batch["input_ids"], batch["attention_mask"])
            got = exported(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
            config = json.loads((export / "config.json").read_text())
            assert config["id2label"] == {str(i): label for i, label in enumerate(SPEC_LABEL_ORDER)}
            assert config["label2id"] == {label: i for i, label in enumerate(SPEC_LABEL_ORDER)}
        else:
            from radscore.span_model import SpanNERModel

            exported = SpanNERModel.from_pretrained(export).eval()
            expected = module(batch)
            got = exported(batch["input_ids"], batch["attention_mask"], batch["span_starts"],
                           batch["span_ends"], batch["span_widths"])
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-6)

    # export again from the run folder with the command's function: same weights
    again = export_checkpoint(ckpt, tmp_path / "export2", metrics)
    assert (again / "model.safetensors").read_bytes() == (export / "model.safetensors").read_bytes()


def _export_as(ckpt, task, tmp_path):
    from train.ner.modules import check_checkpoint

    check_checkpoint(torch.load(ckpt, weights_only=False), task)


def test_a_checkpoint_of_another_task_is_refused(tiny_backbone, tmp_path):
    _fit(ROOT / "configs" / "ner" / "iob_sample.yaml", tmp_path, f"--data.data_dir={HUB}",
         f"--model.init_args.backbone={tiny_backbone}", "--trainer.max_epochs=1")
    ckpt = tmp_path / "ckpt" / "last.ckpt"
    with pytest.raises(Exception, match="IOBTagger"):  # Lightning names the checkpoint's class
        SpanTagger.load_from_checkpoint(ckpt, map_location="cpu")
    # resuming a span run from an IOB checkpoint: LightningCLI restores the checkpoint's model
    # class, and the data/model scheme check names the mismatch
    with pytest.raises(ValueError, match="IOBTagger needs data.scheme='IOB', got 'span'"):
        _fit(ROOT / "configs" / "ner" / "span_sample.yaml", tmp_path / "span", f"--data.data_dir={HUB}",
             f"--model.init_args.backbone={tiny_backbone}", "--trainer.max_epochs=1", f"--ckpt_path={ckpt}")
    with pytest.raises(ValueError, match="checkpoint of task 'ner-iob'"):
        _export_as(ckpt, "ner-span", tmp_path)
    state = torch.load(ckpt, weights_only=False)
    state["radscore"]["labels"] = ["O", "B-X"]
    torch.save(state, tmp_path / "other_labels.ckpt")
    with pytest.raises(ValueError, match="label set"):
        IOBTagger.load_from_checkpoint(tmp_path / "other_labels.ckpt", map_location="cpu")


def test_scheme_mismatch_and_empty_split_are_clear_errors(tiny_backbone, tmp_path):
    with pytest.raises(ValueError, match="needs data.scheme='span'"):
        _fit(ROOT / "configs" / "ner" / "span_sample.yaml", tmp_path, f"--data.data_dir={HUB}",
             f"--model.init_args.backbone={tiny_backbone}", "--data.scheme=IOB", "--trainer.fast_dev_run=true")
    import shutil

    hub = tmp_path / "hub"
    shutil.copytree(HUB, hub)
    (hub / "all" / "dev_IOB.json").write_text("")
    with pytest.raises(ValueError, match="the dev split is empty"):
        _fit(ROOT / "configs" / "ner" / "iob_sample.yaml", tmp_path / "run", f"--data.data_dir={hub}",
             f"--model.init_args.backbone={tiny_backbone}", "--trainer.fast_dev_run=true")


@pytest.mark.parametrize("scheme,name", [("IOB", "iob_sample"), ("span", "span_sample")])
def test_words_without_sub_word_pieces_train_evaluate_and_export(scheme, name, tiny_backbone, tmp_path, caplog):
    """'\\u200b' yields no piece with a BERT tokenizer: training skips it as inference does (it
    raised KeyError), and a zero-width word inside an entity keeps the entity whole."""
    data = tmp_path / "hub" / "all"
    data.mkdir(parents=True)
    for split in ("train", "dev", "test"):
        rows = json.loads((HUB / "all" / f"{split}_IOB.json").read_text())
        for row in rows:
            row["tokens"].insert(1, "\u200b")
            tags = row["ner_tags"]
            inside = 10 not in tags[:2] and tags[1] % 2 == 1 and tags[0] // 2 == tags[1] // 2  # I- of the same type
            tags.insert(1, tags[1] if inside else 10)
        (data / f"{split}_IOB.json").write_text(json.dumps(rows))  # no span files: spans from IOB
    run = tmp_path / "run"
    with caplog.at_level("WARNING"):
        _fit(ROOT / "configs" / "ner" / f"{name}.yaml", run, f"--data.data_dir={tmp_path / 'hub'}",
             f"--model.init_args.backbone={tiny_backbone}", "--trainer.max_epochs=1", *CPU)
    metrics = json.loads((run / "export" / "metrics.json").read_text())
    assert 0.0 <= metrics["test/accuracy"] <= 1.0
    assert "yield no sub-word piece" in caplog.text


@pytest.mark.parametrize("model_class, scheme", [(IOBTagger, "IOB"), (SpanTagger, "span")], ids=["iob", "span"])
def test_an_evaluation_step_runs_the_encoder_once_for_its_loss_and_its_tags(model_class, scheme, tiny_backbone):
    """Validation reads its loss and its predictions off one forward pass, and they are those of the separate
    ``compute_loss`` and ``predict_tags``; the batch's sentences reach the step as the data module's own objects
    (Lightning moves only the tensors)."""
    import pytorch_lightning as pl

    torch.manual_seed(0)
    dm = NERDataModule(scheme=scheme, backbone=tiny_backbone, eval_batch_size=16)
    model = model_class(backbone=tiny_backbone)
    calls, batches, logged = [], [], []
    model.model.register_forward_hook(lambda *_: calls.append(1))
    step = model._eval_step
    model._eval_step = lambda stage, batch: (batches.append(batch), step(stage, batch))
    model.log = lambda name, value, **_: logged.append((name, float(value)))
    trainer = pl.Trainer(accelerator="cpu", devices=1, limit_val_batches=2, logger=False, enable_progress_bar=False,
                         enable_model_summary=False)
    pairs = []
    model._eval_end = lambda stage: pairs.extend(model._eval.pop(stage))
    trainer.validate(model, dm, verbose=False)
    assert len(batches) == 2 and len(calls) == 2  # one encoder pass per batch (two before: loss, then tags)
    own = {id(item) for item in dm.splits["dev"]}
    assert all(id(item) in own for b in batches for item in b["items"])
    model.eval()  # as validation ran it (Lightning puts the module back in training mode afterwards)
    with torch.no_grad():
        assert [name for name, _ in logged] == ["val/loss"] * 2
        assert [v for _, v in logged] == [float(model.compute_loss(b)) for b in batches]
        assert [tags for _, tags in pairs] == [t for b in batches for t in model.predict_tags(b)]
    assert [gold for gold, _ in pairs] == [i.sentence.tags for b in batches for i in b["items"]]

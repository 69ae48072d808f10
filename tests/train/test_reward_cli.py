"""The reward command line: every config instantiates, the sample config runs, fit -> test ->
export -> radscore.ER2Score gives the module's outputs."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from train.__main__ import main as train_main
from train.lightning.cli import RadscoreCLI
from train.lightning.configs import config_args, config_chain, read_configs
from train.reward import ER2RewardModel, RewardDataModule

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "configs" / "reward").rglob("*.yaml"))
CPU = ["--trainer.accelerator=cpu", "--trainer.devices=1", "--trainer.precision=32-true"]
PAPER_DECODERS = {"paper_llama3", "vicuna_7b", "meditron_7b", "gemma_7b", "qwen1_5_7b", "phi_2"}


@pytest.fixture(scope="module")
def er2_rows(tmp_path_factory):
    """A small SYNTHETIC ER² set: 36 rows per system (12 references x 3 quality tiers)."""
    from data.synth.generate import generate

    out = tmp_path_factory.mktemp("synthetic")
    generate(out, 0, {"rexval": 0, "task1": 0, "task2": 0, "task3": 0, "er2": 36, "bleurt": 0})
    return out / "synthetic_er2" / "radcliq_synthetic.jsonl"


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory, tiny_backbone):
    """A tiny random Llama (the paper configs' architecture family) with the MiniLM tokenizer."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    folder = tmp_path_factory.mktemp("tiny_llama")
    tok = AutoTokenizer.from_pretrained(tiny_backbone)
    torch.manual_seed(0)
    LlamaForCausalLM(LlamaConfig(vocab_size=tok.vocab_size, hidden_size=16, intermediate_size=32,
                                 num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                                 max_position_embeddings=1024)).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def test_there_are_sample_paper_backbone_ablation_and_lambda_configs():
    names = {c.stem for c in CONFIGS}
    assert {"sample", "total_only", "individual_only"} | PAPER_DECODERS <= names
    assert {f"lambda{x}" for x in ("0_5", "0_8", "1_2", "2_0", "3_0")} <= names
    paper = read_configs(ROOT / "configs/reward/paper_llama3.yaml")
    assert paper["model"]["init_args"]["backbone"] == "meta-llama/Meta-Llama-3-8B"
    assert paper["data"]["init_args"]["batch_size"] == 6 and paper["trainer"]["max_epochs"] == 4
    assert (paper["model"]["init_args"]["lam"], paper["model"]["init_args"]["c"]) == (1.0, 0.01)
    assert paper["trainer"]["precision"] == "bf16-mixed"
    for name, key, value in [("total_only", "loss_terms", "total"), ("individual_only", "loss_terms", "individual"),
                             ("lambda0_5", "lam", 0.5), ("lambda3_0", "lam", 3.0)]:
        cfg = read_configs(*config_chain(ROOT / f"configs/reward/paper_llama3/{name}.yaml"))  # after its base
        assert cfg["model"]["init_args"][key] == value
        cfg["model"]["init_args"][key] = paper["model"]["init_args"][key]
        assert cfg["model"] == paper["model"] and cfg["data"] == paper["data"]  # nothing else differs


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_every_config_parses_and_instantiates(config, tiny_backbone, tiny_llama, er2_rows, tmp_path):
    """Paper configs get a tiny random Llama in place of their 7-8B backbones (no download here)."""
    sample = "sample" in config.relative_to(ROOT / "configs").as_posix()  # the sample config and its bf16 overlay
    stand_in = tiny_backbone if sample else tiny_llama
    configs = config_args(config_chain(config))
    cli = RadscoreCLI(run=False, args=[
        *configs, f"--model.init_args.backbone={stand_in}", f"--data.rows={er2_rows}", f"--run_dir={tmp_path}", *CPU])
    assert isinstance(cli.model, ER2RewardModel) and cli.model.system.n == 6
    default = RadscoreCLI(run=False, args=[
        *configs, f"--model.init_args.backbone={stand_in}", f"--data.rows={er2_rows}", *CPU])
    # checkpoints/<the config's path under configs/>: apart from other tasks' runs
    assert default.run_folder().path == Path("checkpoints", *config.relative_to(ROOT / "configs").with_suffix("").parts)
    dm = cli.datamodule
    assert dm.backbone == stand_in and dm.system == cli.model.system  # linked from the model
    assert dm.prompt_template == cli.model.reward.prompt_template and dm.max_length == cli.model.reward.max_length
    assert cli.trainer.checkpoint_callback.monitor == "val/pair_acc"
    trainable = [n for n, p in cli.model.named_parameters() if p.requires_grad]
    if sample:  # the small backbone is trained in full (configs/reward/sample.yaml)
        assert len(trainable) == len(list(cli.model.parameters())) and not any("lora_" in n for n in trainable)
        assert dm.cross_reference_pairs and cli.model.hparams.cross_weight == 0.5  # our addition (docs/er2score.md)
    else:  # the paper's LoRA and pairs (SPEC §3.2: candidates of one reference only)
        assert trainable and all("lora_" in n or "modules_to_save" in n for n in trainable)
        assert not dm.cross_reference_pairs


def test_sample_config_fast_dev_run_through_the_command(er2_rows, tmp_path):
    assert train_main(["fit", "--config", str(ROOT / "configs/reward/sample.yaml"),
                       f"--data.rows={er2_rows}", f"--run_dir={tmp_path}", "--trainer.fast_dev_run=true"]) == 0


@pytest.mark.parametrize("finetune", ["full", "lora"])
def test_fit_tests_exports_and_er2score_reproduces_the_module(finetune, er2_rows, tiny_backbone, tmp_path, capsys):
    import radscore
    from radscore.export import read_manifest
    from train.release.export import export_any

    lora = ["--model.init_args.finetune=lora", "--model.init_args.lora_target_modules=[query,value]"]
    train_main(["fit", "--config", str(ROOT / "configs/reward/sample.yaml"), f"--data.rows={er2_rows}",
                f"--model.init_args.backbone={tiny_backbone}", *(lora if finetune == "lora" else []),
                f"--run_dir={tmp_path}", "--trainer.max_epochs=2", *CPU])
    weights = Path("adapter", "adapter_model.safetensors") if finetune == "lora" else Path("model", "model.safetensors")
    export = tmp_path / "export"
    manifest = read_manifest(export, "reward")
    assert manifest["base_model"] == tiny_backbone and manifest["system"] == "radcliq"
    assert manifest["heads"] == ["false_prediction", "omission", "incorrect_location", "incorrect_severity",
                                 "added_comparison", "omitted_comparison"]
    metrics = json.loads((export / "metrics.json").read_text())
    for key in ("test/pair_acc", "test/reward_margin", "test/kendall", "test/spearman", "test/pair_acc/omission",
                "test/kendall/omission", "test/spearman/false_prediction", "test/loss"):
        assert key in metrics
    assert (export / "training_config.yaml").is_file() and (export / weights).is_file()
    # beside the model: what text alone reaches on the same test pairs (printed and written)
    from data.ratings import pair_er2_rows, read_er2_jsonl
    from train.evaluation.baselines import BESIDE_MODEL, SHALLOW_LABEL, SHALLOW_NAME, unigram_f1

    chosen = [f"{p}{k}" for p in ("", "pair_") for k in ("alpha", "char_weight", "count_weight")]
    assert {k for k in metrics if "/baseline/" in k} == {f"test/baseline/{n}/{s}" for n in (*BESIDE_MODEL, SHALLOW_NAME)
                                                        for s in ("pair_acc", "kendall")} | {
        f"test/baseline/{SHALLOW_NAME}/{k}" for k in chosen}  # what the shallow learner chose on validation
    pairs, _ = pair_er2_rows([r for r in read_er2_jsonl(er2_rows) if r.meta["split"] == "test"])
    refs = [p.reference for p in pairs]
    expected_acc = np.mean(unigram_f1(refs, [p.accepted.candidate for p in pairs])
                           > unigram_f1(refs, [p.rejected.candidate for p in pairs]))
    assert metrics["test/baseline/unigram_f1/pair_acc"] == pytest.approx(expected_acc)
    assert 0 <= metrics[f"test/baseline/{SHALLOW_NAME}/pair_acc"] <= 1
    out = capsys.readouterr().out
    assert SHALLOW_LABEL in out
    line = next(line for line in out.splitlines() if line.startswith("this model"))
    assert [float(x) for x in line.split()[2:]] == pytest.approx([metrics["test/pair_acc"], metrics["test/kendall"]],
                                                                 abs=5e-4)

    ckpt = sorted((tmp_path / "ckpt").glob("best-*.ckpt"))[-1]
    module = ER2RewardModel.load_from_checkpoint(ckpt, map_location="cpu").eval()
    dm = RewardDataModule(rows=str(er2_rows), backbone=tiny_backbone, prompt_template=module.reward.prompt_template,
                          max_length=module.reward.max_length)
    dm.setup("test")
    test_rows = {}
    for p in dm.splits["test"]:
        test_rows.setdefault(p.row_w, p)
    items = list(test_rows.values())[:4]
    rows = {r["id"]: r for r in map(json.loads, er2_rows.read_text().splitlines())}
    refs = [rows[i.row_w]["reference"] for i in items]
    cands = [rows[i.row_w]["candidate"] for i in items]
    with torch.no_grad():
        expected = torch.cat([module(**module.reward.pad([i.ids_w])) for i in items])
    scores = radscore.ER2Score(export, batch_size=3, progress=False).score(cands, refs)
    got = torch.tensor([s.rewards for s in scores])
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)
    assert [s.total for s in scores] == pytest.approx((-expected.sum(1)).tolist(), abs=1e-5)  # error counts

    again = export_any(tmp_path, tmp_path / "export2")
    assert (again / weights).read_bytes() == (export / weights).read_bytes()


def test_unknown_task_and_bad_template_are_clear(er2_rows, tiny_backbone, tmp_path, capsys):
    assert train_main(["rewards"]) == 2
    with pytest.raises(ValueError, match="prompt template must contain"):
        RadscoreCLI(run=False, args=[
            "--config", str(ROOT / "configs/reward/sample.yaml"), f"--model.init_args.backbone={tiny_backbone}",
            "--model.init_args.prompt_template=only {reference}", f"--run_dir={tmp_path}", *CPU])


def test_a_diff_marked_reward_model_trains_on_marked_prompts_and_exports_the_format(er2_rows, tiny_backbone, tmp_path,
                                                                                   no_shallow):
    """``--model.init_args.candidate_format diff_marked`` (an opt-in): given to the data module too, its
    prompts carry the marked candidate, the export records the format (ER2Score then marks, tests/radscore)."""
    from radscore.reward_model import encode_prompts
    from radscore.text import mark_differences

    # the shallow learner's fit is not what this test is about
    train_main(["fit", "--config", str(ROOT / "configs/reward/sample.yaml"), "--config", no_shallow,
                f"--data.rows={er2_rows}", f"--model.init_args.backbone={tiny_backbone}",
                "--model.init_args.candidate_format=diff_marked", "--trainer.max_epochs=1", f"--run_dir={tmp_path}", *CPU])
    lines = [json.loads(x) for x in (tmp_path / "test_predictions.jsonl").read_text().splitlines()]
    assert lines and all("shallow_ridge" not in line["baselines"] and "bleu4" in line["baselines"] for line in lines)
    assert json.loads((tmp_path / "export" / "reward_model.json").read_text())["candidate_format"] == "diff_marked"
    cli = RadscoreCLI(run=False, args=[
        "--config", str(ROOT / "configs/reward/sample.yaml"), f"--model.init_args.backbone={tiny_backbone}",
        f"--data.rows={er2_rows}", "--model.init_args.candidate_format=diff_marked", f"--run_dir={tmp_path}", *CPU])
    assert cli.datamodule.candidate_format == "diff_marked"  # linked from the model
    ckpt = sorted((tmp_path / "ckpt").glob("best-*.ckpt"))[-1]
    module = ER2RewardModel.load_from_checkpoint(ckpt, map_location="cpu")
    assert module.reward.candidate_format == "diff_marked"
    dm = RewardDataModule(rows=str(er2_rows), backbone=tiny_backbone, prompt_template=module.reward.prompt_template,
                          max_length=module.reward.max_length, candidate_format="diff_marked")
    dm.setup("test")
    rows = {r["id"]: r for r in map(json.loads, er2_rows.read_text().splitlines())}
    item = dm.splits["test"][0]
    ref, cand = rows[item.row_w]["reference"], rows[item.row_w]["candidate"]
    marked, _ = encode_prompts(dm.tokenizer, dm.prompt_template, dm.max_length, [ref], [mark_differences(ref, cand)])
    plain, _ = encode_prompts(dm.tokenizer, dm.prompt_template, dm.max_length, [ref], [cand])
    assert item.ids_w == marked[0] != plain[0]

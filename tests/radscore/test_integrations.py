"""radscore inside RadEval and TRL, tested against the real packages (``radeval`` installed without
its dependency pins, see the Makefile; ``trl``) with tiny local exports."""

from __future__ import annotations

import pytest

from radscore import ClinicalBLEURT, ER2Score, RaTEScore
from radscore.systems import RADCLIQ
from train.rehearsal.tiny import build_tiny_bleurt_export, build_tiny_iob_export, build_tiny_reward_export

CANDS = ["No pleural effusion. Heart size normal.", "", "Mild cardiomegaly.", "Liver is enlarged."]
REFS = ["Small left pleural effusion.", "No pneumothorax.", "Heart size is normal.", "Fatty liver."]


@pytest.fixture(scope="module")
def exports(tmp_path_factory, tiny_backbone):
    root = tmp_path_factory.mktemp("integrations")
    build_tiny_reward_export(root / "er2", tiny_backbone, RADCLIQ, max_length=48)
    return {"ratescore": {"ner": build_tiny_iob_export(root / "ner", seed=0, head_std=0.3, o_bias=2.5),
                          "encoder": tiny_backbone},
            "bleurt": {"model": build_tiny_bleurt_export(root / "bleurt", tiny_backbone)},
            "er2": {"export": str(root / "er2")}}


@pytest.fixture(scope="module")
def direct(exports):
    """Each metric's per-pair scores from radscore itself."""
    return {"ratescore": RaTEScore(**exports["ratescore"]).compute_score(CANDS, REFS),
            "bleurt": ClinicalBLEURT(**exports["bleurt"]).compute_score(CANDS, REFS),
            "er2": [s.total for s in ER2Score(**exports["er2"], progress=False).score(CANDS, REFS)]}


# ---- RadEval ------------------------------------------------------------------------------------
def test_radeval_runs_radscore_metrics_by_name(exports, direct, radeval_on_path):
    radeval = radeval_on_path
    from radscore.integrations.radeval import register

    assert register() == ["radscore_ratescore", "radscore_bleurt", "radscore_er2"]
    metrics = {f"radscore_{m}": options for m, options in exports.items()}
    per_sample = radeval.RadEval(metrics=metrics, per_sample=True, show_progress=False)(refs=REFS, hyps=CANDS)
    assert per_sample == {f"radscore_{m}": values for m, values in direct.items()}
    detailed = radeval.RadEval(metrics=metrics, detailed=True, show_progress=False)(refs=REFS, hyps=CANDS)
    assert detailed["radscore_ratescore"] == round(sum(direct["ratescore"]) / 4, 4)
    assert {"radscore_ratescore_precision", "radscore_ratescore_recall"} <= set(detailed)
    assert {f"radscore_er2_{item}" for item in RADCLIQ.items} <= set(detailed)
    # the empty candidate keeps its own score in its own place (RadEval's bundled copy drops it)
    assert per_sample["radscore_ratescore"][1] == 0.5


def test_radeval_reward_factory_accepts_radscore_metrics(exports, direct, radeval_on_path):
    rewards = pytest.importorskip("radeval.rewards")
    from radscore.integrations.radeval import register

    register()
    reward = rewards.make_reward_fn("radscore_bleurt", reference_column="ground_truth", **exports["bleurt"])
    assert reward(completions=CANDS, ground_truth=REFS, prompts=["p"] * 4) == pytest.approx(direct["bleurt"])


# ---- TRL ----------------------------------------------------------------------------------------
def test_reward_functions_follow_trl_conventions(exports, direct):
    from radscore.integrations.trl import reward_function

    for metric, options in exports.items():
        reward = reward_function(metric, reference_column="findings", **options)
        sign = -1.0 if metric == "er2" else 1.0  # RadCliQ counts errors: the reward is the negated total
        got = reward(prompts=["Write the findings."] * 4, completions=CANDS, completion_ids=[[1]] * 4,
                     findings=REFS, trainer_state=None)
        assert got == pytest.approx([sign * v for v in direct[metric]]), metric
        assert reward.__name__ == f"radscore_{metric}"
    chat = [[{"role": "assistant", "content": c}] for c in CANDS]
    assert reward_function("bleurt", **exports["bleurt"])(completions=chat, reference=REFS) == pytest.approx(direct["bleurt"])
    with pytest.raises(KeyError, match="no dataset column 'reference'"):
        reward_function("bleurt", **exports["bleurt"])(completions=CANDS, ground_truth=REFS)


@pytest.mark.slow
def test_grpo_trainer_calls_the_reward_on_its_own_completions(exports, tmp_path):
    pytest.importorskip("trl")
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from radscore.integrations.trl import reward_function
    from train.rehearsal.standins import build_model

    build_model("Qwen/Qwen1.5-7B", tmp_path / "policy")  # a tiny random Qwen2 with a byte-level BPE
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "policy")
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "policy")
    inner = reward_function("bleurt", reference_column="reference", **exports["bleurt"])
    seen = []

    def reward(completions, **kwargs):
        values = inner(completions, **kwargs)
        seen.append((list(completions), list(kwargs["reference"]), values))
        return values

    reward.__name__ = inner.__name__
    data = Dataset.from_dict({"prompt": ["Findings:", "Impression:"] * 2, "reference": REFS})
    config = GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=2,
                        max_completion_length=6, max_steps=1, learning_rate=1e-5, report_to=[], use_cpu=True,
                        logging_steps=1, save_strategy="no", bf16=False, seed=0)
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=config, train_dataset=data,
                          processing_class=tokenizer)
    trainer.train()
    assert seen, "TRL never called the reward function"
    completions, references, values = seen[0]
    assert len(completions) == len(references) == len(values) >= 2
    assert all(r in REFS for r in references)
    model_scores = ClinicalBLEURT(**exports["bleurt"]).compute_score(completions, references)
    assert values == pytest.approx(model_scores)  # the completions TRL generated, scored by radscore
    logged = [h for h in trainer.state.log_history if "rewards/radscore_bleurt/mean" in h]
    assert logged and logged[0]["rewards/radscore_bleurt/mean"] == pytest.approx(sum(values) / len(values), abs=1e-5)

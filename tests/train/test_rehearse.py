"""``python -m train rehearse --fast``: the paper configs run end to end on same-family stand-ins
(fit, validate, test, export, score with radscore, publish --dry-run; tune-weights), offline."""

import json
from pathlib import Path

import pytest

from train.lightning.architectures import REAL
from train.lightning.configs import config_chain, read_configs, read_yaml
from train.rehearsal.rehearse import FAST, Rehearsal, discover
from train.rehearsal.standins import MISSING, hub_ids, substitution

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("rehearsal")
    jobs = discover(hub_ids(), None, fast=True)
    assert sorted(rel for rel, _ in jobs) == sorted(FAST)
    return Rehearsal(out, progress=False, ddp=False).run(jobs, ablations=False), out


def test_every_fast_config_runs_every_stage_on_its_stand_in(report):
    report, out = report
    assert report["rehearsal"] is True
    by_config = {e["config"]: e for e in report["configs"]}
    assert set(by_config) == set(FAST)
    for rel, entry in by_config.items():
        backbone = entry["real_model"]
        if backbone in MISSING:  # said, not hidden: the report names the gap
            assert entry["stages"] == {"all": f"not rehearsed: no stand-in: {MISSING[backbone]}"}
            continue
        assert entry["stages"] and all(v == "ok" for v in entry["stages"].values()), (rel, entry["stages"])
        task = rel.split("/")[1]
        training = ["fit", "validate", "test", "export", "score", "publish"]
        expected = {"ner": training, "reward": training, "bleurt": training, "tune": ["tune-weights"]}[task]
        assert list(entry["stages"]) == expected
    assert "REHEARSAL" in (out / "report.md").read_text()
    # the fits (and the validate and test stages, which take the fit's arguments) evaluate batches of
    # REHEARSAL_EVAL_BATCH, whatever the config's eval_batch_size
    from train.rehearsal.rehearse import REHEARSAL_EVAL_BATCH

    saved = [read_yaml(c) for c in (out / "runs").rglob("logs/version_*/config.yaml")]
    assert len(saved) >= len([e for e in by_config.values() if "fit" in e["stages"]]) >= 5
    assert {c["data"]["init_args"]["eval_batch_size"] for c in saved} == {REHEARSAL_EVAL_BATCH}
    assert json.loads((out / "report.json").read_text()) == report
    from radscore.environment import REQUIRED

    assert set(REQUIRED) <= set(report["environment"])
    # the paper's reward figure: LoRA r 16 on q_proj and v_proj of Llama-3-8B is ~6.8M trainable parameters
    llama = by_config["configs/reward/paper_llama3.yaml"]
    assert llama["trainable_params_real"] == pytest.approx(6.8e6, rel=0.02)


def test_stand_ins_have_the_real_classes_and_tokenizer_kinds(report, tmp_path):
    from transformers import AutoConfig, AutoTokenizer

    _, out = report
    for hub_id, real in REAL.items():  # (BLEURT's layout is checked by its fit/export/score stages)
        folder = out / "standins" / hub_id.replace("/", "--")
        config = AutoConfig.from_pretrained(folder)
        assert type(config).__name__ == real.config_class, hub_id
        assert config.architectures == [real.model_class], hub_id
        tok = AutoTokenizer.from_pretrained(folder)
        assert tok.pad_token == real.pad_token, hub_id
        if real.tokenizer_class != "PreTrainedTokenizerFast":
            assert type(tok).__name__ == real.tokenizer_class, hub_id
        pieces = tok.tokenize("Small left pleural effusion.")
        if real.tokenizer.startswith("sp-"):
            assert sum(p.startswith("▁") for p in pieces) >= 3, (hub_id, pieces)  # SentencePiece word starts
            assert not any(p.endswith("▁") for p in pieces), (hub_id, pieces)
        if real.tokenizer.startswith("byte-bpe"):
            assert any(p.startswith("Ġ") for p in pieces), (hub_id, pieces)  # byte-level space marker


def test_the_substitution_point_never_downloads(tmp_path, monkeypatch):
    from radscore.models import resolve_model_path
    from data.ratener import resolve_root

    with substitution(tmp_path, ids={"Angelakeke/RaTE-NER"}):
        assert resolve_root("Angelakeke/RaTE-NER") == str(tmp_path.resolve() / "Angelakeke--RaTE-NER")
        with pytest.raises(FileNotFoundError, match="no stand-in model"):
            resolve_model_path("meta-llama/Meta-Llama-3-8B")
    assert resolve_model_path("meta-llama/Meta-Llama-3-8B") == "meta-llama/Meta-Llama-3-8B"  # outside: the Hub id


def test_every_paper_config_naming_a_hub_model_is_known(tmp_path):
    """A new paper config with a model nobody made a stand-in for fails here, not on a GPU."""
    jobs = discover(hub_ids(), None, fast=False)
    for rel, _ in jobs:
        cfg = read_configs(*config_chain(ROOT / rel))
        backbone = ((cfg.get("model") or {}).get("init_args") or {}).get("backbone") or cfg.get("scorer", {}).get("encoder")
        assert backbone in hub_ids(), (rel, backbone)
    profile = read_yaml(ROOT / "configs" / "ablations" / "paper.yaml")
    encoders = [v if isinstance(v, str) else v["encoder"] for v in profile["tables"]["encoders"]["rows"].values()]
    for model in [*encoders, profile["baselines"]["bertscore_model"], profile["data"]["rate_eval"]]:
        assert model in hub_ids(), model


def test_encoders_with_their_own_code_load_only_with_the_opt_in(report):
    """CXR-BERT and BioViL-T ship modelling code (auto_map): radscore runs it only when asked."""
    from radscore.encoder import EntityEncoder

    _, out = report
    folder = out / "standins" / "microsoft--BiomedVLP-CXR-BERT-specialized"
    with pytest.raises(Exception, match="trust_remote_code"):
        EntityEncoder(str(folder))
    encoder = EntityEncoder(str(folder), trust_remote_code=True)
    assert type(encoder.model).__name__ == "CXRBertModel"

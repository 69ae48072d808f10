"""Every value of a paper config says where it comes from: SPEC/the paper, the released code, a
named default, or "our choice"; and "paper" is claimed only for what SPEC gives."""

import re
from pathlib import Path

import pytest

from train.lightning.configs import config_chain

ROOT = Path(__file__).resolve().parents[1]
PAPER_CONFIGS = sorted(p for d in ("ner", "tune", "reward", "bleurt") for p in (ROOT / "configs" / d).rglob("*.yaml")
                       if "sample" not in p.relative_to(ROOT / "configs").as_posix()) + [ROOT / "configs" / "ablations" / "paper.yaml"]
# Where a value only says where things are (paths, ids, devices, logging), no provenance is asked.
PLUMBING = {"class_path", "accelerator", "devices", "log_every_n_steps", "storage", "study_name", "format", "path",
            "rows", "train_path", "val_path", "test_path", "runs_root", "output", "profile", "rate_eval", "rexval",
            "synthetic", "ner_run", "run", "backbone", "data_dir", "subset", "scheme", "splits", "labels", "ner",
            "encoder", "critical", "non_critical", "spelling_grammar", "higher_rating_is_better", "by",
            "generate_synthetic"}
# The hyper-parameters SPEC gives for the papers' runs (§1.7, §3.3, §3.4, §4).
GIVEN_BY_SPEC = {"max_epochs", "lr", "batch_size", "lam", "c", "loss_terms", "reduction", "max_span_width",
                 "mlp_hidden", "mlp_layers", "system"}
LEAF = re.compile(r"^(\s*)([A-Za-z_][A-Za-z0-9_]*):\s*([^#\s][^#]*?)\s*(#.*)?$")


def leaves(path: Path):
    lines = path.read_text(encoding="utf-8").splitlines()
    for k, line in enumerate(lines):
        m = LEAF.match(line)
        if m and not (path.parent.name == "ablations" and len(m.group(1)) >= 6):  # table rows: config lists
            above = lines[k - 1].strip() if k else ""
            yield k + 1, m.group(2), m.group(4) or (above if above.startswith("#") else "")


def test_there_are_paper_configs():
    assert len(PAPER_CONFIGS) >= 25


@pytest.mark.parametrize("path", PAPER_CONFIGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_value_of_a_paper_config_says_where_it_comes_from(path):
    missing = [f"{path.name}:{n} {key}" for n, key, comment in leaves(path) if key not in PLUMBING and not comment]
    assert not missing, f"values without a provenance comment: {missing}"
    wrong = [f"{path.name}:{n} {key}: {comment}" for n, key, comment in leaves(path)
             if re.match(r"#\s*paper\b", comment, re.I) and key not in GIVEN_BY_SPEC]
    assert not wrong, f"'paper' claimed for values SPEC does not give: {wrong}"


def test_reward_paper_configs_use_specs_sum_and_claim_no_precision():
    for path in (p for p in PAPER_CONFIGS if p.parent.name == "reward"):
        # an overlay's values are those of the nearest file of its chain that sets them (overlay first)
        text = "\n".join(p.read_text(encoding="utf-8") for p in reversed(config_chain(path)))
        assert re.search(r"^\s+reduction:.*$", text, re.M).group(0).split(":", 1)[1].split()[0] == "sum", path.name
        precision = re.search(r"^\s+precision:.*$", text, re.M).group(0)
        assert "our choice" in precision and "paper:" not in precision, path.name

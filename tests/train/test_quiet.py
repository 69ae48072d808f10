"""The known-harmless library messages are silenced, exactly: a LOAD REPORT of a new head goes, a
report with a real problem stays, an unrelated warning stays, the project's own lines stay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from train.lightning.quiet import harmless_load_report

ROOT = Path(__file__).resolve().parents[2]
HEADER = "\x1b[1mBertForTokenClassification LOAD REPORT\x1b[0m from: /x\nKey | Status | \n----+----+-\n"


def test_only_new_head_load_reports_count_as_harmless():
    assert harmless_load_report(HEADER + "pooler.dense.bias | UNEXPECTED | \nclassifier.weight | MISSING | \n")
    assert not harmless_load_report(HEADER + "classifier.weight | MISSING | \n"
                                    "encoder.layer.0.attention.self.query.weight | MISSING | \n")
    assert not harmless_load_report(HEADER + "classifier.weight | MISMATCH | shape\n")
    assert not harmless_load_report("Some other warning | with a bar")


def test_a_training_run_prints_its_own_lines_without_the_known_noise(tmp_path, tiny_backbone):
    import yaml

    from train.lightning.configs import read_yaml

    config = read_yaml(ROOT / "configs/ner/iob_sample.yaml")
    config["model"]["init_args"]["backbone"] = tiny_backbone
    config["trainer"].update(max_epochs=1, limit_train_batches=2, limit_val_batches=1, limit_test_batches=1)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WANDB_MODE": "offline"}
    script = ("import warnings, sys\nfrom train.__main__ import main\n"
              "rc = main(['fit', '--config', sys.argv[1], '--run_dir', sys.argv[2]])\n"
              "warnings.warn('an unrelated warning stays visible')\n")
    done = subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "run")], capture_output=True,
                          text=True, env=env, timeout=600, cwd=ROOT)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    for noise in ("LOAD REPORT", "litlogger", "LightningCLI's args parameter", "LeafSpec",
                  "not supported by the model summary"):
        assert noise not in out, noise
    assert "an unrelated warning stays visible" in out
    assert "test" in out.lower() and (tmp_path / "run" / "export" / "radscore_manifest.json").is_file()

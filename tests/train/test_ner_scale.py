"""A killed run resumes where it stopped; the same config runs under DDP on CPU (gloo)."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
HUB = ROOT / "tests" / "fixtures" / "ratener_hub"


def _train(run_dir, tiny_backbone, *extra, check=True):
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'tests' / 'helpers'}")
    cmd = [sys.executable, "-m", "train", "fit", "--config", "configs/ner/iob_sample.yaml",
           f"--data.data_dir={HUB}", f"--model.init_args.backbone={tiny_backbone}",
           "--data.batch_size=2", f"--run_dir={run_dir}", *extra]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _logged_epochs(run_dir, version):
    with open(run_dir / "logs" / f"version_{version}" / "metrics.csv") as fh:
        return sorted({int(r["epoch"]) for r in csv.DictReader(fh) if r.get("val/f1")})


@pytest.mark.slow
def test_killed_run_resumes_from_last_checkpoint(tmp_path, tiny_backbone):
    run = tmp_path / "run"
    # 6 train sentences, batch 2: 3 steps an epoch. SIGKILL at the 2nd batch of epoch 2.
    killed = _train(run, tiny_backbone, "--trainer.max_epochs=4", 
                    '--trainer.callbacks+={"class_path": "killer.KillAt", "init_args": {"epoch": 2, "batch": 1}}',
                    check=False)
    assert killed.returncode == -9, killed.stderr[-2000:]
    last = torch.load(run / "ckpt" / "last.ckpt", weights_only=False)
    assert (last["epoch"], last["global_step"]) == (1, 6)  # epochs 0 and 1 finished and saved
    assert not (run / "export").exists()

    _train(run, tiny_backbone, "--trainer.max_epochs=4", "--ckpt_path=last")
    final = torch.load(run / "ckpt" / "last.ckpt", weights_only=False)
    assert (final["epoch"], final["global_step"]) == (3, 12)
    assert _logged_epochs(run, 1) == [2, 3]  # the resumed run trained only the missing epochs
    assert (run / "export" / "metrics.json").is_file()


@pytest.mark.slow
def test_ddp_on_two_cpu_processes(tmp_path, tiny_backbone):
    run = tmp_path / "ddp"
    proc = _train(run, tiny_backbone, "--trainer.max_epochs=1", "--trainer.strategy=ddp",
                  "--trainer.devices=2", "--trainer.accelerator=cpu")
    assert "exported to" in proc.stdout
    assert (run / "export" / "model.safetensors").is_file()
    import json

    metrics = json.loads((run / "export" / "metrics.json").read_text())
    assert 0.0 <= metrics["test/f1"] <= 1.0 and "test/accuracy" in metrics

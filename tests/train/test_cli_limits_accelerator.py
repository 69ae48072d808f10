"""Two things every training command and the rehearsal share: ``--trainer.limit_*_batches=N`` written
as a whole number means N batches, and the rehearsal trains on the machine's accelerator."""

import pytest
import torch

from train.lightning.cli import RadscoreCLI, integer_limits, parse_cli
from train.rehearsal import rehearse
from train.rehearsal.rehearse import NeedsCuda, _check_cuda_needs, rehearsal_trainer, resolve_accelerator


def test_a_whole_number_on_the_command_line_is_a_count_of_batches():
    trainer = {"limit_val_batches": 1.0, "limit_test_batches": 1.0, "limit_train_batches": 0.25}
    integer_limits(trainer, ["--trainer.limit_val_batches=1", "--trainer.limit_test_batches", "3",
                             "--trainer.limit_train_batches=0.25"])
    assert trainer == {"limit_val_batches": 1, "limit_test_batches": 3, "limit_train_batches": 0.25}
    assert type(trainer["limit_val_batches"]) is int
    fractions = {"limit_val_batches": 1.0}
    assert integer_limits(fractions, ["--trainer.limit_val_batches=1.0"]) == {"limit_val_batches": 1.0}
    assert type(fractions["limit_val_batches"]) is float  # 1.0 stays "every batch"
    last = {"limit_val_batches": 2.0}
    assert integer_limits(last, ["--trainer.limit_val_batches=5", "--trainer.limit_val_batches=2"]) == {
        "limit_val_batches": 2}  # the last one wins, as on any command line


def test_the_cli_hands_the_trainer_an_int(tmp_path):
    """Through the real CLI class: even where the parser made 1.0 of "1" (as a library version did on
    a GPU host), what reaches the Trainer is the int 1, i.e. one batch."""
    cli = parse_cli(["--config", "configs/bleurt/sample.yaml", f"--run_dir={tmp_path}",
                     "--trainer.limit_val_batches=1", "--trainer.limit_test_batches=1"])
    cli.config["trainer"]["limit_val_batches"] = 1.0  # what jsonargparse handed the Trainer there
    RadscoreCLI.before_instantiate_classes(cli)
    assert cli.config["trainer"]["limit_val_batches"] == 1 and type(cli.config["trainer"]["limit_val_batches"]) is int
    assert type(cli.config["trainer"]["limit_test_batches"]) is int


def test_the_rehearsal_trains_where_the_machine_can(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_accelerator("auto") == "cpu" and resolve_accelerator("cpu") == "cpu"
    with pytest.raises(ValueError, match="no CUDA"):
        resolve_accelerator("gpu")
    with pytest.raises(SystemExit):
        rehearse.main(["--accelerator", "gpu", "--only", "configs/nothing/*"])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_accelerator("auto") == "gpu" and resolve_accelerator("cpu") == "cpu"
    assert rehearsal_trainer("gpu")[0] == "--trainer.accelerator=gpu"
    assert rehearsal_trainer("gpu")[1:] == rehearsal_trainer("cpu")[1:]
    fp16 = {"trainer": {"precision": "16-mixed"}}
    with pytest.raises(NeedsCuda):
        _check_cuda_needs(fp16, "cpu")
    _check_cuda_needs(fp16, "gpu")  # on CUDA it runs as configured
    reh = rehearse.Rehearsal(progress=False, accelerator="gpu")
    assert reh.trainer == rehearsal_trainer("gpu")

"""The task table (train/tasks.py): every command resolves, the help lists each, the exporters
cover every checkpoint kind, and importing the table imports no task."""

import subprocess
import sys
from pathlib import Path

from train.tasks import COMMANDS, TASK_OF_KIND, TRAINING_TASKS, help_text

ROOT = Path(__file__).resolve().parents[2]


def test_every_entry_and_exporter_resolves_and_the_help_lists_every_command():
    for command in COMMANDS.values():
        assert callable(command.main()), command.name
        assert f"  {command.name} " in help_text()
        if command.configs:
            assert (ROOT / command.configs).is_dir(), command.configs
    from pytorch_lightning import LightningDataModule, LightningModule

    from train.lightning.cli import RadscoreCLI
    from train.lightning.configs import task_cli

    for task in TRAINING_TASKS.values():
        assert task.kinds and callable(task.export())
        cli, classes = task_cli(task.name)
        assert issubclass(cli, RadscoreCLI) and cli.task == task.name
        assert all(issubclass(c, (LightningModule, LightningDataModule)) for c in classes), task.name
    assert set(TASK_OF_KIND) == {"ner-iob", "ner-span", "reward", "bleurt"}


def test_export_takes_its_exporters_from_the_table():
    from train.release.export import EXPORTERS

    assert {k: f.__name__ for k, f in EXPORTERS.items()} == {k: t.exporter.split(":")[1]
                                                              for k, t in TASK_OF_KIND.items()}


def test_the_table_is_light_and_an_unknown_command_is_refused():
    code = ("import sys, train.tasks; heavy = [m for m in ('torch', 'train.ner', 'train.reward', 'train.bleurt') "
            "if m in sys.modules]; assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    from train.__main__ import main

    assert main(["no-such-command"]) == 2
    assert main(["--help"]) == 0

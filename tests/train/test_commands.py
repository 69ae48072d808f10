"""``python -m train``: every command resolves to a module with ``main``, the help lists each, an
unknown command is refused, and the help imports no task (nor torch)."""

import importlib
import subprocess
import sys
from pathlib import Path

from train.__main__ import COMMANDS, TRAINING, help_text, main

ROOT = Path(__file__).resolve().parents[2]


def test_every_command_resolves_and_the_help_lists_it():
    for name, (module, _, _) in COMMANDS.items():
        assert callable(importlib.import_module(module).main), name
        assert f"  {name} " in help_text()
    assert "|".join(TRAINING) in help_text()


def test_the_help_is_light_and_an_unknown_command_is_refused(capsys):
    code = ("import sys, train.__main__ as m; m.help_text(); heavy = [x for x in ('torch', 'train.ner', "
            "'train.reward', 'train.bleurt') if x in sys.modules]; assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    assert main(["no-such-command"]) == 2
    assert main(["reward"]) == 2  # the task word of the old command line is gone: the config names the task
    assert main(["--help"]) == 0


def test_the_command_exits_with_its_objects_frozen():
    """``python -m train`` freezes its heap before the process ends, so that the exit does not walk it."""
    code = ("import atexit, gc, runpy, sys; sys.argv = ['train', '--help']; "
            "atexit.register(lambda: print('frozen', gc.get_freeze_count())); "
            "runpy.run_module('train', run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip().splitlines()[-1].split()[1]) > 1000, done.stdout[-500:]


def test_an_overlay_without_its_base_is_refused_with_the_command_that_works(capsys):
    overlay = "configs/reward/paper_llama3/phi_2.yaml"
    assert main(["fit", "--config", str(ROOT / overlay)]) == 2
    err = capsys.readouterr().err
    assert "is an overlay of" in err and f"--config {ROOT / 'configs/reward/paper_llama3.yaml'}" in err

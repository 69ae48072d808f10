"""The commands of ``python -m train``, listed once: the training tasks and the other commands.

Entry points and exporters are ``"module:function"`` strings, resolved by :func:`load` only when
used, so importing this table imports no task (nor torch). :mod:`train.__main__` dispatches from it
and builds its help from it, :mod:`train.release.export` takes its exporters from it, the rehearsal
its config folders, the ablations the run-folder prefixes.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Command:
    """A ``python -m train <name> …`` command: ``entry`` is ``"module:function"``, a function of the
    remaining arguments that returns an exit code (None = 0); ``usage`` is what follows the name in
    the help, ``help`` one line; ``configs`` the folder of its configs, if any."""

    name: str
    entry: str
    usage: str
    help: str
    configs: str | None = None

    def main(self) -> Callable[[list[str]], int | None]:
        return load(self.entry)


@dataclass(frozen=True)
class TrainingTask(Command):
    """A training task: a LightningCLI whose checkpoints carry ``radscore.task`` in ``kinds`` (the
    ``check_checkpoint`` of its ``modules.py``), exported by ``exporter``
    (``"module:function"``, ``(ckpt, out_dir, metrics) -> folder``), with its default run folder
    ``checkpoints/<run_prefix><config stem>/`` (a prefix for tasks whose config stems, ``sample`` or
    ``paper``, would collide with another task's runs). ``rehearsal_rows``: the command-line
    overrides that point a paper config's user-filled local data at the REHEARSAL rows of
    ``python -m train rehearse`` (``{data}``: its data folder, ``{system}``: the config's scoring
    system); empty where the config names a Hub dataset, which resolves to a stand-in."""

    kinds: tuple[str, ...] = ()
    exporter: str = ""
    run_prefix: str = ""
    cli: str = ""  # "module:Class", its RadscoreCLI subclass
    cli_classes: tuple[str, ...] = ()  # "module:Class" of the model and datamodule the CLI class is given
    rehearsal_rows: tuple[str, ...] = ()

    def export(self) -> Callable:
        return load(self.exporter)


TRAINING_TASKS: dict[str, TrainingTask] = {t.name: t for t in (
    TrainingTask("ner", "train.ner.cli:main", "{fit,validate,test,predict} --config configs/ner/<name>.yaml",
                 "train the RaTE NER models", configs="configs/ner", kinds=("ner-iob", "ner-span"),
                 exporter="train.ner.export:export_ner", cli="train.ner.cli:NERCLI",
                 cli_classes=("train.ner:NERTagger", "train.ner:NERDataModule")),
    TrainingTask("reward", "train.reward.cli:main", "{fit,validate,test} --config configs/reward/<name>.yaml",
                 "train the ER²Score reward model", configs="configs/reward", kinds=("reward",),
                 exporter="train.reward.export:export_reward", run_prefix="reward_", cli="train.reward.cli:RewardCLI",
                 cli_classes=("train.reward:ER2RewardModel", "train.reward:RewardDataModule"),
                 rehearsal_rows=("--data.rows={data}/synthetic_er2/{system}_synthetic.jsonl", "--data.val_rows=null",
                                 "--data.test_rows=null")),
    TrainingTask("bleurt", "train.bleurt.cli:main",
                 "{fit,validate,test} --config configs/bleurt/<name>.yaml | convert <BLEURT folder or Hub id> --out DIR",
                 "train ClinicalBLEURT; convert: a BLEURT checkpoint -> transformers 5", configs="configs/bleurt",
                 kinds=("bleurt",), exporter="train.bleurt.export:export_bleurt", run_prefix="bleurt_",
                 cli="train.bleurt.cli:BleurtCLI",
                 rehearsal_rows=("--data.train_path={data}/synthetic_bleurt/clinical_bleurt_synthetic.jsonl",
                                 "--data.val_path=null", "--data.test_path=null", "--data.generate_synthetic=false")),
)}

OTHER_COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("tune-weights", "train.tune.cli:main",
            "--config configs/tune/<name>.yaml [--workers N] [--n-trials N]",
            "learn RaTEScore's W and p (TPE)", configs="configs/tune"),
    Command("export", "train.release.export:main", "<run folder or .ckpt> [--out DIR]",
            "export a checkpoint for radscore"),
    Command("publish", "train.release.publish:main", "<export folder> --repo-id ID [--private] [--dry-run]",
            "upload an export with a model card"),
    Command("ablations", "train.ablations.cli:main", "--table NAME|all [--profile sample|paper] [--out DIR]",
            "the papers' ablation tables beside ours"),
    Command("demo", "train.demo:main", "[--out checkpoints/demo] [--ner-epochs N] [--n-trials N]",
            "the main job end to end on SYNTHETIC data"),
    Command("rehearse", "train.rehearsal.rehearse:main", "[--only GLOB] [--fast] [--no-ddp]",
            "every paper config on same-family stand-ins"),
    Command("memory-probe", "train.lightning.memory_probe:main",
            "--config X [--steps N] [--batch-size B] [--max-length L] [--layers K] [--out JSON]",
            "measured training memory beside the estimate, term by term"),
)}

COMMANDS: dict[str, Command] = {**TRAINING_TASKS, **OTHER_COMMANDS}

#: checkpoint task kind (``radscore.task``) -> training task
TASK_OF_KIND: dict[str, TrainingTask] = {kind: t for t in TRAINING_TASKS.values() for kind in t.kinds}


def load(spec: str):
    """The object a ``"module:function"`` string names (the module imported now)."""
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def help_text() -> str:
    """The help of ``python -m train``, one entry per command of the table."""
    lines = ["python -m train <command> …", "", "Training tasks:"]

    def entry(c: Command) -> None:
        usage = f"  {c.name} {c.usage}"
        lines.append(f"{usage:<70}{c.help}" if len(usage) < 70 else f"{usage}\n{'':<70}{c.help}")

    for c in TRAINING_TASKS.values():
        entry(c)
    lines += ["", "Other commands:"]
    for c in OTHER_COMMANDS.values():
        entry(c)
    return "\n".join(lines)

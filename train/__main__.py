"""``python -m train <command> …``: training runs through LightningCLI's subcommands, and the other commands."""

from __future__ import annotations

import gc
import importlib
import sys

TRAINING = ("fit", "validate", "test", "predict")
#: command -> (module whose main(argv) runs it, usage, one line of help)
COMMANDS = {
    "tune-weights": ("train.tune.cli", "--config configs/tune/<name>.yaml [--config OVERLAY] [--workers N]",
                     "learn RaTEScore's W and p (TPE)"),
    "export": ("train.release.export", "<run folder or .ckpt> [--out DIR]", "export a checkpoint for radscore"),
    "publish": ("train.release.publish", "<export folder> --repo-id ID [--private] [--dry-run]",
                "upload an export with a model card"),
    "ablations": ("train.ablations.cli", "--table NAME|all [--profile sample|paper] [--out DIR]",
                  "the papers' ablation tables beside ours"),
    "demo": ("train.demo", "[--out checkpoints/demo] [--ner-epochs N] [--n-trials N]",
             "the main job end to end on SYNTHETIC data"),
    "rehearse": ("train.rehearsal.rehearse", "[--only GLOB] [--fast] [--no-ddp] [--accelerator auto|cpu|gpu]",
                 "every paper config on same-family stand-ins"),
    "memory-probe": ("train.lightning.memory_probe", "--config X [--config OVERLAY] [--steps N] [--out JSON]",
                     "measured training memory beside the estimate, term by term"),
    "bleurt-convert": ("train.bleurt.convert", "<BLEURT folder or Hub id> --out DIR",
                       "a BLEURT checkpoint -> a transformers 5 regression folder"),
}


def help_text() -> str:
    lines = ["python -m train <command> …", "",
             "Training (LightningCLI; the config names the model and data module by class_path):",
             f"  {'|'.join(TRAINING)} --config configs/<task>/<name>.yaml [--config OVERLAY …] [--run_dir DIR] "
             "[--trainer.max_epochs=N …]", "", "Other commands:"]
    for name, (_, usage, text) in COMMANDS.items():
        entry = f"  {name} {usage}"
        lines.append(f"{entry:<78}{text}" if len(entry) < 78 else f"{entry}\n{'':<78}{text}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(help_text())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in TRAINING and name not in COMMANDS:
        print(f"unknown command {name!r}\n{help_text()}", file=sys.stderr)
        return 2
    from train.lightning import quiet

    quiet.install()  # only the known-harmless library messages (train/lightning/quiet.py)
    if name in TRAINING:
        from train.lightning.cli import main as cli_main

        return cli_main(argv)
    code = importlib.import_module(COMMANDS[name][0]).main(rest)
    return 0 if code is None else int(code)


if __name__ == "__main__":
    code = main()
    # Python's exit would collect the garbage of every object the command made before freeing them all
    # (about 1.9 s after a small training; 0.3 s frozen): freeze them, since the process ends here
    gc.freeze()
    raise SystemExit(code)

"""``python -m train bleurt {fit,validate,test} --config configs/bleurt/<name>.yaml``, and
``python -m train bleurt convert <BLEURT checkpoint folder or Hub id> --out DIR``."""

from __future__ import annotations


from pytorch_lightning.cli import LightningArgumentParser, LightningCLI

from train.bleurt.data import BleurtDataModule
from train.bleurt.modules import MONITOR, MONITOR_MODE, ClinicalBLEURTRegressor
from train.lightning.cli import RadscoreCLI


class BleurtCLI(RadscoreCLI):
    task = "bleurt"  # train.tasks: exporter, run-folder prefix
    monitor = MONITOR
    monitor_mode = MONITOR_MODE

    def __init__(self, args=None, **kwargs):
        super().__init__(ClinicalBLEURTRegressor, BleurtDataModule, args=args, **kwargs)

    @staticmethod
    def subcommands() -> dict[str, set[str]]:
        """fit, validate and test (scoring is radscore's job: ``radscore.ClinicalBLEURT``)."""
        return {k: v for k, v in LightningCLI.subcommands().items() if k in ("fit", "validate", "test")}

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        super().add_arguments_to_parser(parser)
        for name in BleurtDataModule.linked_from_model:  # defined once, in the model
            if name != "backbone":  # linked by RadscoreCLI
                parser.link_arguments(f"model.init_args.{name}", f"data.{name}")


def convert_main(argv: list[str]) -> int:
    import argparse

    from train.bleurt.convert import convert

    p = argparse.ArgumentParser(prog="python -m train bleurt convert",
                                description="convert a BLEURT (bleurt-pytorch layout) checkpoint into "
                                "a transformers 5 sequence-regression folder")
    p.add_argument("source", help="folder or Hub id, e.g. lucadiliello/BLEURT-20-D12")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    print(f"converted to {convert(a.source, a.out)}")
    return 0


def main(args=None) -> int:
    if args and args[0] == "convert":
        return convert_main(list(args[1:]))
    BleurtCLI(args=args)
    return 0

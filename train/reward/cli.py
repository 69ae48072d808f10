"""``python -m train reward {fit,validate,test} --config configs/reward/<name>.yaml``."""

from __future__ import annotations

from pytorch_lightning.cli import LightningArgumentParser

from train.lightning.cli import RadscoreCLI
from train.reward.data import RewardDataModule
from train.reward.modules import MONITOR, ER2RewardModel


class RewardCLI(RadscoreCLI):
    task = "reward"  # train.tasks: exporter, run-folder prefix
    monitor = MONITOR
    monitor_mode = "max"

    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        super().add_arguments_to_parser(parser)  # links the backbone
        for name in RewardDataModule.linked_from_model:  # defined once, in the model
            if name != "backbone":  # linked by RadscoreCLI
                parser.link_arguments(f"model.init_args.{name}", f"data.{name}")


def main(args=None) -> None:
    RewardCLI(ER2RewardModel, RewardDataModule, args=args)

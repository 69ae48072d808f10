"""ER²Score training: the multi-head reward model with the MRE loss and its data module."""

from train.reward.data import RewardDataModule
from train.reward.modules import ER2RewardModel

__all__ = ["ER2RewardModel", "RewardDataModule"]

"""ClinicalBLEURT training: the cross-encoder regressor and its data module (SPEC §4)."""

from train.bleurt.data import BleurtDataModule
from train.bleurt.modules import ClinicalBLEURTRegressor

__all__ = ["BleurtDataModule", "ClinicalBLEURTRegressor"]

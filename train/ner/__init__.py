"""RaTE NER training: the IOB and span taggers and their data module."""

from train.ner.data import NERDataModule
from train.ner.modules import IOBTagger, NERTagger, SpanTagger

__all__ = ["IOBTagger", "NERDataModule", "NERTagger", "SpanTagger"]

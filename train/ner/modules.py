"""LightningModules for RaTE NER: :class:`IOBTagger` and :class:`SpanTagger`.

Both predict word-level IOB2 tags, so one metric path (seqeval, strict IOB2) serves both.
Validation and test gather every rank's sentences before computing metrics, so the figures are
those of the whole split under DDP too (the distributed sampler may repeat up to
``world_size - 1`` sentences to even out the shards).
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch
import pytorch_lightning as pl
from torch import nn

from radscore.labels import ID2LABEL, IOB_LABELS, LABEL2ID, OUTSIDE
from radscore.models import PACKAGED_MINILM, resolve_model_path
from radscore.span_model import SPAN_CLASSES, SpanNERModel, decode_spans
from data.iob import iob_to_spans, spans_to_iob
from train.ner.data import word_tags
from train.ner.metrics import ner_metrics
from train.lightning.distributed import gather_objects
from train.lightning.module import EvalStages, ParameterCounts, adamw_linear_warmup, checkpoint_info, class_path

log = logging.getLogger(__name__)

MONITOR = "val/f1"  # the NER task's monitored key, defined once



class NERTagger(ParameterCounts, EvalStages, pl.LightningModule):
    """Shared training loop, metrics, optimiser and checkpoint checks of the NER models.

    Subclasses define ``loss_and_logits(batch) -> (loss, logits)``, ``logits(batch)`` (no labels needed)
    and ``tags_from_logits(batch, logits) -> word tags``; an evaluation step runs the encoder once for both
    its loss and its predictions.
    """

    task = "ner"
    scheme = ""
    monitor, monitor_mode = MONITOR, "max"

    def __init__(self, backbone: str = PACKAGED_MINILM, lr: float = 5e-5, head_lr: float | None = None,
                 weight_decay: float = 0.01, warmup_ratio: float = 0.1):
        super().__init__()
        self.backbone = backbone
        self._eval: dict[str, list] = {}

    def head_parameters(self) -> list[nn.Parameter]:
        return []

    # --- loop ---------------------------------------------------------------------------------
    def setup(self, stage: str) -> None:
        dm = getattr(self.trainer, "datamodule", None)
        if dm is not None and getattr(dm, "scheme", self.scheme) != self.scheme:
            raise ValueError(f"{type(self).__name__} needs data.scheme={self.scheme!r}, got {dm.scheme!r}")

    def training_step(self, batch, batch_idx):
        loss = self.compute_loss(batch)
        self.log("train/loss", loss, prog_bar=True, batch_size=len(batch["items"]))
        return loss

    def compute_loss(self, batch):
        return self.loss_and_logits(batch)[0]

    @torch.no_grad()
    def predict_tags(self, batch):
        return self.tags_from_logits(batch, self.logits(batch))

    def _eval_step(self, stage: str, batch) -> None:
        loss, logits = self.loss_and_logits(batch)
        self.log(f"{stage}/loss", loss, batch_size=len(batch["items"]), sync_dist=True)
        gold = [i.sentence.tags for i in batch["items"]]
        self._eval.setdefault(stage, []).extend(zip(gold, self.tags_from_logits(batch, logits)))

    def _eval_end(self, stage: str) -> None:
        pairs = gather_objects(self._eval.pop(stage, []))
        if not pairs:
            return
        metrics = ner_metrics([g for g, _ in pairs], [p for _, p in pairs], per_type=stage == "test")
        for key, value in metrics.items():
            self.log(f"{stage}/{key}", value, prog_bar=key == "f1", rank_zero_only=False)

    def predict_step(self, batch, batch_idx):
        out = []
        for item, tags in zip(batch["items"], self.predict_tags(batch)):
            s = item.sentence
            out.append({"id": s.id, "tokens": s.tokens, "pred_tags": tags,
                        "entities": [{"start": a, "end": b, "type": t, "text": " ".join(s.tokens[a:b + 1])}
                                     for a, b, t in iob_to_spans(tags)]})
        return out

    def configure_optimizers(self):
        head = {id(p) for p in self.head_parameters()}
        return adamw_linear_warmup(self, [p for p in self.parameters() if id(p) not in head],
                                   [p for p in self.parameters() if id(p) in head])

    # --- checkpoints: refuse a checkpoint of another task or label set ------------------------
    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["radscore"] = {"task": f"{self.task}-{self.scheme.lower()}", "labels": list(IOB_LABELS),
                                  "class_path": class_path(self)}

    # --- export: the folder radscore loads ------------------------------------------------------
    def export_files(self, folder: Path, state: dict) -> dict:
        """IOB: a standard token-classification folder (``config.json`` with the SPEC ``id2label``,
        weights, tokenizer) that the released ``ratescore`` package also loads unchanged; span: the
        encoder folder plus ``span_head.safetensors`` and ``span_head.json``. Returns the manifest fields.
        ``folder`` is the hidden staging folder of ``staged_export`` of ``train.release.base``, which takes
        the export's place whole once the manifest is written."""
        from transformers import AutoTokenizer

        self.model.save_pretrained(folder)
        AutoTokenizer.from_pretrained(resolve_model_path(self.hparams.backbone)).save_pretrained(folder)
        return {"backbone": self.hparams.backbone, "labels": list(IOB_LABELS), **self.export_extra(folder)}

    def export_extra(self, folder: Path) -> dict:
        return {}

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        check_checkpoint(checkpoint, f"{self.task}-{self.scheme.lower()}")


def check_checkpoint(checkpoint: dict, expected_task: str) -> None:
    info = checkpoint_info(checkpoint, expected_task)
    if "labels" in info and list(info["labels"]) != list(IOB_LABELS):
        raise ValueError(f"checkpoint label set {info['labels']} differs from RaTE-NER's {list(IOB_LABELS)}")


class IOBTagger(NERTagger):
    """``AutoModelForTokenClassification`` with the 11 RaTE-NER labels in SPEC order."""

    scheme = "IOB"

    def __init__(self, backbone: str = PACKAGED_MINILM, lr: float = 5e-5, head_lr: float | None = None,
                 weight_decay: float = 0.01, warmup_ratio: float = 0.1, classifier_dropout: float = 0.1,
                 ignore_mismatched_sizes: bool = False):
        """``ignore_mismatched_sizes``: start from a token classifier with another label set
        (e.g. Medical-NER) and replace its head with a fresh 11-label one."""
        super().__init__(backbone, lr, head_lr, weight_decay, warmup_ratio)
        self.save_hyperparameters()
        from transformers import AutoConfig, AutoModelForTokenClassification

        path = resolve_model_path(backbone)
        config = AutoConfig.from_pretrained(path, num_labels=len(IOB_LABELS), id2label=dict(ID2LABEL),
                                            label2id=dict(LABEL2ID))
        if "classifier_dropout" in config.to_dict():  # BERT-like configs; DeBERTa-v2/v3 has none
            config.classifier_dropout = classifier_dropout
        elif classifier_dropout is not None:
            log.info("%s: its config has no classifier_dropout; the model's own dropout applies", backbone)
        self.model = AutoModelForTokenClassification.from_pretrained(
            path, config=config, ignore_mismatched_sizes=ignore_mismatched_sizes)
        self.model.train()  # from_pretrained returns eval mode; Lightning keeps submodule modes

    def head_parameters(self):
        return list(self.model.classifier.parameters())

    def export_extra(self, folder: Path) -> dict:
        import json

        cfg = json.loads((folder / "config.json").read_text())  # the released scorer reads id2label from it
        if {int(k): v for k, v in cfg["id2label"].items()} != ID2LABEL:
            raise AssertionError("exported config.json lost the SPEC id2label")
        return {}

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).logits

    def loss_and_logits(self, batch):
        out = self.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"])
        return out.loss, out.logits

    def logits(self, batch):
        return self(batch["input_ids"], batch["attention_mask"])

    def tags_from_logits(self, batch, logits):
        pred = logits.argmax(-1).cpu()
        out = []
        for k, item in enumerate(batch["items"]):
            kept_tags = [ID2LABEL[int(pred[k, p])] for p in item.first_pieces]
            out.append(word_tags(len(item.sentence.tokens), item.kept, kept_tags))
        return out


class SpanTagger(NERTagger):
    """The PURE span model: spans up to ``max_span_width`` words, start/end states + width
    embedding, an MLP of ``mlp_layers`` layers of ``mlp_hidden`` units into 5 types or none.

    ``none_weight`` is the cross-entropy weight of the "none" class (PURE: 1.0). About 95% of the
    enumerated spans are "none"; with weight 1.0 a small model first collapses to predicting
    "none" everywhere and needs many epochs to leave that state, so the CPU-sized sample profile
    down-weights it (our choice, see ``configs/ner/span_sample.yaml``).
    """

    scheme = "span"

    def __init__(self, backbone: str = PACKAGED_MINILM, lr: float = 5e-5, head_lr: float | None = 5e-4,
                 weight_decay: float = 0.01, warmup_ratio: float = 0.1, max_span_width: int = 8,
                 width_dim: int = 150, mlp_hidden: int = 150, mlp_layers: int = 2, dropout: float = 0.2,
                 none_weight: float = 1.0):
        super().__init__(backbone, lr, head_lr, weight_decay, warmup_ratio)
        if not 0.0 < none_weight <= 1.0:
            raise ValueError(f"none_weight must be in (0, 1], got {none_weight}")
        self.save_hyperparameters()
        self.model = SpanNERModel.from_backbone(
            resolve_model_path(backbone), max_span_width=max_span_width, width_dim=width_dim,
            mlp_hidden=mlp_hidden, mlp_layers=mlp_layers, dropout=dropout)
        self.model.train()  # from_pretrained returns eval mode; Lightning keeps submodule modes
        class_weights = torch.ones(len(SPAN_CLASSES))
        class_weights[0] = none_weight
        self.loss_fn = nn.CrossEntropyLoss(weight=class_weights, ignore_index=-100)

    def setup(self, stage: str) -> None:
        super().setup(stage)
        dm = getattr(self.trainer, "datamodule", None)
        if dm is not None and dm.max_span_width != self.hparams.max_span_width:
            raise ValueError(f"data.max_span_width={dm.max_span_width} differs from the model's "
                             f"max_span_width={self.hparams.max_span_width}")

    def head_parameters(self):
        return list(self.model.head.parameters())

    def export_extra(self, folder: Path) -> dict:
        return {"max_span_width": self.hparams.max_span_width}

    def forward(self, batch):
        return self.model(batch["input_ids"], batch["attention_mask"], batch["span_starts"],
                          batch["span_ends"], batch["span_widths"])

    def loss_and_logits(self, batch):
        logits = self(batch)
        return self.loss_fn(logits.reshape(-1, len(SPAN_CLASSES)), batch["span_labels"].reshape(-1)), logits

    def logits(self, batch):
        return self(batch)

    def tags_from_logits(self, batch, logits):
        probs = logits.softmax(-1).cpu()
        out = []
        for k, item in enumerate(batch["items"]):
            entities = decode_spans(item.spans, probs[k, : len(item.spans)])
            words = [(item.kept[a], item.kept[b], t) for a, b, t in entities]
            out.append(spans_to_iob(len(item.sentence.tokens), words))
        return out

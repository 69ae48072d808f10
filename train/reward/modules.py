"""The ER²Score LightningModule: :class:`radscore.reward_model.MultiRewardModel` trained with the
MRE loss (:func:`train.reward.losses.mre_loss`).

Checkpoints hold only the trainable parameters (LoRA, the head and any extra ``modules_to_save``;
with ``finetune: full`` every parameter):
the frozen backbone comes from ``backbone`` when a checkpoint is loaded, so an 8B backbone does
not make every checkpoint 16 GB. Loading checks the task, that the checkpoint's scoring system is
the model's and that its parameters are exactly the model's trainable ones, then completes the
state dict with the freshly loaded backbone (so loading stays strict).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pytorch_lightning as pl
import torch
from pytorch_lightning.utilities import rank_zero_warn

from radscore.models import PACKAGED_MINILM
from radscore.reward_model import DEFAULT_PROMPT_TEMPLATE, LoraSettings, MultiRewardModel
from radscore.systems import load_system
from train.reward.losses import mre_loss
from train.reward.metrics import correlation_metrics, pair_metrics
from train.lightning.distributed import gather_objects
from train.lightning.module import (EvalStages, ParameterCounts, adamw_linear_warmup, checkpoint_info, class_path,
                                    enable_activation_checkpointing)

MONITOR = "val/pair_acc"  # the reward task's monitored key, defined once
TASK = "reward"


class ER2RewardModel(ParameterCounts, EvalStages, pl.LightningModule):
    """ER²Score: N reward heads on a LoRA-tuned (or fully fine-tuned) backbone, MRE loss.

    Args:
        backbone: model id, folder or ``packaged:all-MiniLM-L6-v2``.
        system: scoring system (``radcliq``, ``mrscore``, a YAML/JSON file or a dict); N = its items.
        prompt_template: holds ``{reference}`` and ``{candidate}``.
        max_length: tokens per prompt (longer prompts lose the end of the reference first, then of the
            candidate; every cut is counted: :mod:`radscore.reward_model`).
        lora_r, lora_alpha, lora_dropout, lora_target_modules, modules_to_save, lora_layers: LoRA
            (peft); ``lora_target_modules`` None = peft's default for the architecture;
            ``modules_to_save``: modules trained in full besides the head (e.g. BERT's ``pooler``,
            which feeds the head); ``lora_layers``: adapt only these layers (None = all).
        lam, c, loss_terms: the MRE loss (λ, c, and ``both``/``total``/``individual`` for the ablations).
        reduction: ``sum`` (SPEC §3.4: L_MRE = Σ_i over a batch's pairs) or ``mean`` (divided by the
            number of pairs: with gradient clipping or Adam's ε this is not only a learning-rate scale).
        lr, head_lr, weight_decay, warmup_ratio: AdamW with linear warm-up and decay;
            ``head_lr`` (default ``lr``) for the head.
        dtype: dtype the backbone is loaded in (e.g. ``bfloat16`` for 7-8B models); None = float32.
            Under LoRA what is trained (adapters, head, ``modules_to_save``) is float32 whatever
            ``dtype`` says (``radscore.reward_model.trainable_in_float32``); with ``finetune: full``
            a 16-bit ``dtype`` trains the 16-bit weights themselves (fitting warns:
            ``train.lightning.module.ParameterCounts``).
        gradient_checkpointing: trade compute for memory on large backbones.
        backbone_dropout: keep the backbone's dropout; off by default (our choice, as TRL's reward
            trainer): independent masks on a pair's two prompts swamp the small true differences.
        finetune: ``lora`` (SPEC §3.3) or ``full``: every backbone weight trained at ``lr``, the head
            and ``modules_to_save`` at ``head_lr``, the ``lora_*`` settings unused (our option for
            small backbones; checkpoints and exports then hold the whole model).
        cross_weight: weight in the loss of the pairs across references that the data module adds
            when its ``cross_reference_pairs`` is on (our opt-in; the paper's pairs weigh 1).
        candidate_format: ``plain`` (the paper's prompt), ``diff_marked`` (our opt-in: the candidate's
            differences from the reference marked in the prompt, :func:`radscore.text.mark_differences`) or
            ``diff_only`` (our opt-in: the marked candidate, the prompt's reference left empty); recorded in the export, which scores with the same format. Linked into the data module.
    """

    task = TASK
    monitor, monitor_mode = MONITOR, "max"

    def __init__(self, backbone: str = PACKAGED_MINILM, system: str | dict = "radcliq",
                 prompt_template: str = DEFAULT_PROMPT_TEMPLATE, max_length: int = 512, lora_r: int = 8,
                 lora_alpha: int = 16, lora_dropout: float = 0.05, lora_target_modules: list[str] | None = None,
                 modules_to_save: list[str] | None = None, lora_layers: list[int] | None = None,
                 lam: float = 1.0, c: float = 0.01,
                 loss_terms: Literal["both", "total", "individual"] = "both",
                 reduction: Literal["sum", "mean"] = "sum", lr: float = 2e-4,
                 head_lr: float | None = None, weight_decay: float = 0.0, warmup_ratio: float = 0.1,
                 dtype: str | None = None, gradient_checkpointing: bool = False, backbone_dropout: bool = False,
                 finetune: Literal["lora", "full"] = "lora", cross_weight: float = 1.0,
                 candidate_format: Literal["plain", "diff_marked", "diff_only"] = "plain"):
        super().__init__()
        if reduction not in ("sum", "mean"):
            raise ValueError(f"reduction={reduction!r}; expected 'sum' (SPEC §3.4) or 'mean'")
        if finetune not in ("lora", "full"):
            raise ValueError(f"finetune={finetune!r}; expected 'lora' (SPEC §3.3) or 'full'")
        if not cross_weight >= 0:
            raise ValueError(f"cross_weight={cross_weight!r}; expected a weight >= 0")
        self.save_hyperparameters()
        resolved = load_system(system)
        self.hparams["system"] = resolved.to_dict()  # the checkpoint needs no system file
        self.reward = MultiRewardModel.build(
            backbone, resolved, prompt_template, max_length,
            LoraSettings(lora_r, lora_alpha, lora_dropout, lora_target_modules, list(modules_to_save or []),
                         lora_layers), dtype,
            dropout=backbone_dropout, full=finetune == "full", candidate_format=candidate_format)
        if gradient_checkpointing:
            enable_activation_checkpointing(self.reward.model)
            self.reward.model.enable_input_require_grads()
        self.reward.model.train()  # from_pretrained returns eval mode; Lightning keeps submodule modes
        self.system = resolved
        self._eval: dict[str, dict] = {}
        #: after a test: row id -> the model's rewards on it (``reward_total``, per-item ``rewards``)
        self.test_predictions: dict[str, dict] = {}

    # --- forward and loss ---------------------------------------------------------------------------
    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.reward(input_ids, attention_mask)

    def pair_rewards(self, batch) -> tuple[torch.Tensor, torch.Tensor]:
        rewards = self(batch["input_ids"], batch["attention_mask"])
        return rewards[batch["index_w"]], rewards[batch["index_l"]]

    def loss(self, batch, rewards_w, rewards_l) -> torch.Tensor:
        hp = self.hparams
        per_pair = mre_loss(rewards_w, rewards_l, batch["subscores_w"], batch["subscores_l"], batch["totals_w"],
                            batch["totals_l"], lam=hp.lam, c=hp.c, reduction="none", terms=hp.loss_terms)
        if "cross" in batch:  # pairs across references (data module option) weigh cross_weight
            cross = batch["cross"].to(per_pair.device)
            per_pair = per_pair * torch.where(cross, hp.cross_weight, 1.0).to(per_pair.dtype)
        return per_pair.sum() if hp.reduction == "sum" else per_pair.mean()

    def on_fit_start(self) -> None:
        super().on_fit_start()
        dm = getattr(self.trainer, "datamodule", None)
        if self.hparams.cross_weight != 1.0 and dm is not None and not getattr(dm, "cross_reference_pairs", False):
            rank_zero_warn(
                f"model.cross_weight={self.hparams.cross_weight} has no effect: the data module makes no "
                "pairs across references (data.cross_reference_pairs is false); set "
                "data.cross_reference_pairs: true, or drop cross_weight")

    def training_step(self, batch, batch_idx):
        rw, rl = self.pair_rewards(batch)
        loss = self.loss(batch, rw, rl)
        right = (rw.sum(-1) - rl.sum(-1)) > 0
        cross = batch["cross"]  # opt-in pairs across references (data module)
        n = int((~cross).sum())
        self.log("train/loss", loss, prog_bar=True, batch_size=n)
        self.log("train/pair_acc", right[~cross].float().mean(), batch_size=n)  # the paper's pairs only
        if cross.any():
            self.log("train/cross_pair_acc", right[cross].float().mean(), batch_size=int(cross.sum()))
        return loss

    # --- evaluation -----------------------------------------------------------------------------------
    def _eval_step(self, stage: str, batch) -> None:
        rw, rl = self.pair_rewards(batch)
        n = len(batch["rows_w"])
        self.log(f"{stage}/loss", self.loss(batch, rw, rl), batch_size=n, sync_dist=True)
        acc = self._eval.setdefault(stage, {"pairs": [], "rows": {}})
        rw, rl = rw.detach().cpu().numpy(), rl.detach().cpu().numpy()
        m = (batch["subscores_w"] - batch["subscores_l"]).cpu().numpy()
        acc["pairs"] += list(zip(rw - rl, m))
        for side, rewards in (("w", rw), ("l", rl)):
            subs, totals = batch[f"subscores_{side}"].cpu().numpy(), batch[f"totals_{side}"].cpu().numpy()
            for k, row in enumerate(batch[f"rows_{side}"]):
                acc["rows"].setdefault(row, (rewards[k], subs[k], float(totals[k])))

    def _eval_end(self, stage: str) -> None:
        acc = self._eval.pop(stage, None)
        if acc is None:
            return
        pairs = gather_objects(acc["pairs"])
        rows = {}
        for part in gather_objects([acc["rows"]]):
            for k, v in part.items():
                rows.setdefault(k, v)
        if not pairs:
            return
        items = self.system.items
        metrics = pair_metrics(np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs]), items)
        values = list(rows.values())
        metrics.update(correlation_metrics(np.stack([v[0] for v in values]), np.stack([v[1] for v in values]),
                                           np.array([v[2] for v in values]), items))
        for key, value in metrics.items():
            self.log(f"{stage}/{key}", value, prog_bar=key == "pair_acc", rank_zero_only=False)
        if stage == "test":  # per row, every rank's: the CLI writes <run>/test_predictions.jsonl from it
            self.test_predictions = {
                row: {"reward_total": float(np.sum(v[0])), "rewards": {k: float(x) for k, x in zip(items, v[0])}}
                for row, v in rows.items()}

    # --- optimiser ------------------------------------------------------------------------------------
    def configure_optimizers(self):
        trainable = [(n, p) for n, p in self.named_parameters() if p.requires_grad]
        if self.reward.full:  # the head and modules_to_save at head_lr
            fast = {self.reward.head_module, *(self.hparams.modules_to_save or [])}
            in_head = lambda n: bool(fast & set(n.split(".")))  # noqa: E731
        else:
            in_head = lambda n: "modules_to_save" in n  # noqa: E731
        return adamw_linear_warmup(self, [p for n, p in trainable if not in_head(n)],
                                   [p for n, p in trainable if in_head(n)])

    # --- checkpoints: trainable parameters only; refuse another task or system -------------------------
    def trainable_keys(self) -> list[str]:
        return [n for n, p in self.named_parameters() if p.requires_grad]

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        keep = set(self.trainable_keys())
        checkpoint["state_dict"] = {k: v for k, v in checkpoint["state_dict"].items() if k in keep}
        checkpoint["radscore"] = {"task": self.task, "system": self.system.to_dict(),
                                  "backbone": self.hparams.backbone, "class_path": class_path(self)}

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        check_checkpoint(checkpoint, self.system.to_dict())
        missing = sorted(set(self.trainable_keys()) - set(checkpoint["state_dict"]))
        if missing:
            raise ValueError(f"the checkpoint lacks {len(missing)} trainable parameter(s) of this model, "
                             f"e.g. {missing[:3]}; was it made with other LoRA settings?")
        unexpected = sorted(set(checkpoint["state_dict"]) - set(self.trainable_keys()))
        if unexpected:
            raise ValueError(f"the checkpoint has {len(unexpected)} parameter(s) this model does not train, "
                             f"e.g. {unexpected[:3]}; was it made with other LoRA settings?")
        # the frozen backbone is the one just loaded from `backbone`: complete the state dict with it
        for key, value in self.state_dict().items():
            checkpoint["state_dict"].setdefault(key, value)


    # --- export: base model id + adapter with its head + scoring system + prompt template -------------
    def export_files(self, folder, state: dict) -> dict:
        """What ``radscore.ER2Score(folder)`` loads (:meth:`radscore.reward_model.MultiRewardModel.save`);
        returns the manifest fields. ``folder`` is the hidden staging folder of ``staged_export`` of ``train.release.base``, which takes
        the export's place whole once the manifest is written."""
        system = self.system
        self.reward.save(folder)
        return {"base_model": self.hparams.backbone, "system": system.name, "heads": list(system.items),
                "higher_is_better": system.higher_is_better, "prompt_template": self.reward.prompt_template,
                "max_length": self.reward.max_length}


def check_checkpoint(checkpoint: dict, system: dict | None = None) -> None:
    info = checkpoint_info(checkpoint, TASK)
    if system is not None and info.get("system") != system:
        raise ValueError(f"checkpoint scoring system {info.get('system', {}).get('name')!r} "
                         f"({info.get('system', {}).get('items')}) differs from the model's {system['name']!r}")

"""Export an ER²Score checkpoint: base model id + adapter with its head + scoring system + prompt
template (:meth:`radscore.reward_model.MultiRewardModel.save`), the manifest (kind ``reward``),
``metrics.json`` and ``training_config.yaml`` (:func:`train.release.base.export_checkpoint`).
``radscore.ER2Score(folder)`` loads it."""

from __future__ import annotations

from pathlib import Path

from train.release.base import export_checkpoint


def _write_reward(folder: Path, module, state: dict, task: str) -> dict:
    system = module.system
    module.reward.save(folder)
    return {"base_model": module.hparams.backbone, "system": system.name, "heads": list(system.items),
            "higher_is_better": system.higher_is_better, "prompt_template": module.reward.prompt_template,
            "max_length": module.reward.max_length}


def export_reward(ckpt: str | Path, out_dir: str | Path, metrics: dict | None = None) -> Path:
    from train.reward.modules import TASK, ER2RewardModel, check_checkpoint

    return export_checkpoint(ckpt, out_dir, metrics, {TASK: ER2RewardModel},
                             lambda state, task: check_checkpoint(state), _write_reward)

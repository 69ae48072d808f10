"""Export an ER²Score checkpoint: base model id + adapter with its head + scoring system + prompt
template (:meth:`radscore.reward_model.MultiRewardModel.save`), the manifest (kind ``reward``),
``metrics.json`` and ``training_config.yaml``. ``radscore.ER2Score(folder)`` loads it."""

from __future__ import annotations

from pathlib import Path

from radscore.export import write_manifest
from train.release.base import finish_export, load_checkpoint_dict, staged_export


def export_reward(ckpt: str | Path, out_dir: str | Path, metrics: dict | None = None) -> Path:
    from train.reward.modules import ER2RewardModel, check_checkpoint

    ckpt = Path(ckpt)
    state = load_checkpoint_dict(ckpt)
    check_checkpoint(state)
    module = ER2RewardModel.load_from_checkpoint(str(ckpt), map_location="cpu", weights_only=True)
    module.eval()
    system = module.system
    with staged_export(out_dir) as folder:
        module.reward.save(folder)
        write_manifest(folder, "reward", base_model=module.hparams.backbone, system=system.name,
                       heads=list(system.items), higher_is_better=system.higher_is_better,
                       prompt_template=module.reward.prompt_template, max_length=module.reward.max_length,
                       checkpoint=str(ckpt), epoch=state.get("epoch"), global_step=state.get("global_step"))
        finish_export(folder, ckpt, metrics)
    return Path(out_dir)

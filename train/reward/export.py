"""Export an ER²Score checkpoint: base model id + adapter with its head + scoring system + prompt
template (:meth:`radscore.reward_model.MultiRewardModel.save`), the manifest (kind ``reward``),
``metrics.json`` and ``training_config.yaml``. ``radscore.ER2Score(folder)`` loads it."""

from __future__ import annotations

import shutil
from pathlib import Path

from radscore.export import write_manifest


def export_reward(ckpt: str | Path, out_dir: str | Path, metrics: dict | None = None) -> Path:
    from train.export import finish_export, load_checkpoint_dict
    from train.reward.modules import ER2RewardModel, check_checkpoint

    ckpt, out_dir = Path(ckpt), Path(out_dir)
    state = load_checkpoint_dict(ckpt)
    check_checkpoint(state)
    module = ER2RewardModel.load_from_checkpoint(str(ckpt), map_location="cpu")
    module.eval()
    if out_dir.exists():
        shutil.rmtree(out_dir)
    module.reward.save(out_dir)
    system = module.system
    write_manifest(out_dir, "reward", base_model=module.hparams.backbone, system=system.name,
                   heads=list(system.items), higher_is_better=system.higher_is_better,
                   prompt_template=module.reward.prompt_template, max_length=module.reward.max_length,
                   checkpoint=str(ckpt), epoch=state.get("epoch"), global_step=state.get("global_step"))
    return finish_export(out_dir, ckpt, metrics)

"""``python -m train <task> …``: the training command line.

Tasks:
  ner {fit,validate,test,predict} --config configs/ner/<name>.yaml   train the RaTE NER models
  bleurt {fit,validate,test} --config configs/bleurt/<name>.yaml      train ClinicalBLEURT
  bleurt convert <BLEURT folder or Hub id> --out DIR                  BLEURT checkpoint -> transformers 5
  reward {fit,validate,test} --config configs/reward/<name>.yaml      train the ER²Score reward model
  export <run folder or .ckpt> [--out DIR]                            export a checkpoint for radscore
  publish <export folder> --repo-id ID [--private] [--dry-run]        upload an export with a model card
  tune-weights --config configs/tune/<name>.yaml [--workers N] [--n-trials N]
                                                                      learn RaTEScore's W and p (TPE)
  ablations --table NAME|all [--profile sample|paper] [--out DIR]     the papers' ablation tables beside ours
  demo [--out checkpoints/demo] [--ner-epochs N] [--n-trials N]      the main job end to end on SYNTHETIC data
  rehearse [--only GLOB] [--fast] [--no-ddp]                          every paper config on same-family stand-ins
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    task, rest = argv[0], argv[1:]
    from train.lightning import quiet

    quiet.install()  # only the known-harmless library messages (train/lightning/quiet.py)
    if task == "ner":
        from train.ner.cli import main as ner_main

        ner_main(rest)
        return 0
    if task == "bleurt":
        from train.bleurt.cli import main as bleurt_main

        return bleurt_main(rest)
    if task == "reward":
        from train.reward.cli import main as reward_main

        reward_main(rest)
        return 0
    if task == "tune-weights":
        from train.tune.cli import main as tune_main

        return tune_main(rest)
    if task == "demo":
        from train.demo import main as demo_main

        return demo_main(rest)
    if task == "ablations":
        from train.ablations.cli import main as ablations_main

        return ablations_main(rest)
    if task == "rehearse":
        from train.rehearsal.rehearse import main as rehearse_main

        return rehearse_main(rest)
    if task == "publish":
        from train.release.publish import main as publish_main

        return publish_main(rest)
    if task == "export":
        import argparse

        from train.release.export import export_any

        p = argparse.ArgumentParser(prog="python -m train export")
        p.add_argument("run_or_ckpt")
        p.add_argument("--out", default=None,
                       help="new, empty, or previous-export folder (default: <run>/export); "
                            "any other folder is refused")
        a = p.parse_args(rest)
        try:
            print(f"exported to {export_any(a.run_or_ckpt, a.out)}")
        except (FileNotFoundError, ValueError) as exc:  # ExportTargetError, UnsafeCheckpointError, bad task
            print(f"python -m train export: error: {exc}", file=sys.stderr)
            return 2
        return 0
    print(f"unknown task {task!r}\n{__doc__}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())

"""``python -m train ner {fit,validate,test,predict} --config configs/ner/<name>.yaml``."""

from __future__ import annotations

import json

from train.lightning.cli import RadscoreCLI
from train.ner.data import NERDataModule
from train.ner.modules import MONITOR, NERTagger


class NERCLI(RadscoreCLI):
    task = "ner"  # train.tasks: exporter, run-folder prefix
    monitor = MONITOR
    monitor_mode = "max"

    def after_predict(self) -> None:
        """Write ``predictions.jsonl`` (one sentence a line, word tags and entities) in the run folder."""
        preds = getattr(self.trainer.predict_loop, "predictions", None) or []
        if not self.trainer.is_global_zero:
            return
        out = self.run_folder().predictions
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            for batch in preds:
                for row in batch:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"wrote {out}")


def main(args=None) -> None:
    NERCLI(NERTagger, NERDataModule, args=args)

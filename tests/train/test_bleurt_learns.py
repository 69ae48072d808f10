"""Does it learn: the packaged MiniLM regressed on SYNTHETIC ClinicalBLEURT rows, on the CPU.

To fit the time budget the generator runs on a shortened copy of the sample corpus (each report
cut to its shortest findings sentence and its shortest impression sentence), so pairs are about
80 pieces; the labels are the generator's ordinary ClinicalBLEURT targets (SPEC §4).
"""

import json
import time

import pytest
import pytorch_lightning as pl

from data.synth import generate
from data.synth.generate import SAMPLES
from train.bleurt import BleurtDataModule, ClinicalBLEURTRegressor


def short_synthetic_rows(folder, n_rows: int):
    corpus = folder / "short_reports.jsonl"
    with corpus.open("w") as fh:
        for line in (SAMPLES / "reports.jsonl").read_text().splitlines():
            rep = json.loads(line)
            rep["findings"] = sorted(rep["findings"], key=len)[:1]
            rep["impression"] = sorted(rep["impression"], key=len)[:1]
            fh.write(json.dumps(rep) + "\n")
    sizes = {"rexval": 0, "task1": 0, "task2": 0, "task3": 0, "er2": 0, "bleurt": n_rows}
    generate(folder / "synth", seed=0, sizes=sizes, reports=corpus)
    return folder / "synth" / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl"


@pytest.mark.slow
def test_minilm_learns_synthetic_quality(tmp_path):
    start = time.time()
    pl.seed_everything(0)
    rows = short_synthetic_rows(tmp_path, 600)
    # the rows carry the corpus split (split_by "auto" would follow it); this check was sized on a
    # random group split of all 600 rows, so it keeps that
    dm = BleurtDataModule(train_path=str(rows), split_by="group", split_fractions=(0.8, 0.17, 0.03), max_length=96,
                          batch_size=16, eval_batch_size=64)
    model = ClinicalBLEURTRegressor(lr=4e-4, head_lr=2e-3, warmup_ratio=0.1, max_length=96)
    trainer = pl.Trainer(max_epochs=3, accelerator="cpu", devices=1, precision="32-true", logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         check_val_every_n_epoch=100, num_sanity_val_steps=0)  # validate only below
    untrained = trainer.validate(model, dm, verbose=False)[0]
    trainer.fit(model, dm)
    trained = trainer.validate(model, dm, verbose=False)[0]
    print(f"val pearson untrained {untrained['val/pearson']:.3f} -> trained {trained['val/pearson']:.3f}; "
          f"kendall {untrained['val/kendall']:.3f} -> {trained['val/kendall']:.3f}; "
          f"mse {untrained['val/mse']:.3f} -> {trained['val/mse']:.3f}; {time.time() - start:.0f} s")
    # In 32-true, as the sample configs train, so the same kernels run on every CPU class. Measured on a
    # 2-core AVX2 CPU, one thread: 0.155 -> 0.418 after these 3 epochs (187 s in all); 5 epochs at half
    # these learning rates reached 0.403 in about 290 s. On generator v2's sets 3 epochs reached 0.493:
    # v3's surface no longer gives the label away, so the same model learns it more slowly.
    assert trained["val/pearson"] > untrained["val/pearson"] + 0.15
    assert trained["val/pearson"] > 0.3
    assert trained["val/mse"] < untrained["val/mse"]

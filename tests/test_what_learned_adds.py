"""benchmarks/quality/what_learned_adds.py: what a learned metric adds to the shallow learner, on the dev rows
only. A tiny SYNTHETIC set generated here; the learned scores are a stand-in (an oracle)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.quality import what_learned_adds as wla


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    from data.synth import generate

    folder = tmp_path_factory.mktemp("wla")
    generate(folder, seed=0, sizes={"rexval": 0, "task1": 0, "task2": 0, "task3": 0, "er2": 240, "bleurt": 0})
    return folder


def test_dev_rows_only_targets_oriented_and_the_stack_credits_a_learned_score(sets, tiny_backbone, tmp_path,
                                                                              monkeypatch):
    from radscore.encoder import EntityEncoder

    rows = [json.loads(x) for x in (sets / wla.ROWS["er2score"]).read_text().splitlines()]
    dev = {(r["reference"], r["candidate"]): r for r in rows if r["split"] == "dev"}
    assert dev and not all(r["higher_is_better"] for r in rows)  # RadCliQ: lower totals are better
    scored = []

    def oracle(metric, export, refs, cands):  # the target itself: higher is better
        scored.extend(zip(refs, cands))
        return np.array([-dev[(r, c)]["total"] for r, c in zip(refs, cands)], dtype=float)

    monkeypatch.setattr(wla, "learned_scores", oracle)
    run = tmp_path / "run"
    (run / "export").mkdir(parents=True)
    out = wla.measure("er2score", run, sets, encoder=EntityEncoder(tiny_backbone, pooling="mean", device="cpu"))
    assert sorted(scored) == sorted(dev)  # every dev row scored, no train or test row
    assert out["dev_rows"] == len(dev)
    assert out["kendall"]["learned"] == pytest.approx(1.0)  # oriented as the rows' totals
    assert out["stacked_kendall"]["shallow+learned"] > out["stacked_kendall"]["shallow"]
    assert out["learned_adds_to_shallow"] > 0.1
    for key in ("shallow", "counts", "frozen_edit"):
        assert -1 <= out["kendall"][key] <= 1
    assert out["chosen"]["counts_alpha"] in wla.ALPHAS


def test_clear_errors(sets, tmp_path):
    with pytest.raises(SystemExit, match="no export"):
        wla.measure("er2score", tmp_path, sets)
    with pytest.raises(SystemExit, match="no such rows file"):
        wla.read_rows("er2score", tmp_path)
    with pytest.raises(SystemExit, match=r"needs train and dev rows \(0, 0\)"):  # generated with bleurt=0
        wla.read_rows("clinical_bleurt", sets)
    with pytest.raises(SystemExit, match="metric=run_dir:sets_folder"):
        wla.parse_run("er2score")
    with pytest.raises(SystemExit, match="metric must be one of"):
        wla.parse_run("bleu=a:b")

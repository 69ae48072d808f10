"""benchmarks/scoring/bench_autocast.py: bf16 autocast with and without the cache of cast weights, on the CPU
with tiny random models (the figures it writes are the benchmark's; here only what it must hold)."""

from __future__ import annotations

import json

from benchmarks.scoring.bench_autocast import SETTINGS, main


def test_a_small_run_compares_the_three_settings(tmp_path, tiny_backbone):
    from train.rehearsal.tiny import build_tiny_iob_export

    ner = build_tiny_iob_export(tmp_path / "ner", head_std=0.3, o_bias=-1.0)
    out = tmp_path / "autocast.json"
    main(["--ner", ner, "--encoder", tiny_backbone, "--pairs", "3", "--repeats", "1", "--out", str(out)])
    r = json.loads(out.read_text())
    assert r["device"] == "cpu" and r["pairs"] == 3 and r["hardware_class"]
    assert set(r["pairs_per_s"]) == set(SETTINGS) and all(len(v) == 1 for v in r["seconds"].values())
    assert set(r["cold_seconds"]) == set(SETTINGS) and all(t > 0 for t in r["cold_seconds"].values())
    # a cached cast is the same cast: the two bf16 settings score alike to the bit
    assert r["max_abs_delta_bf16_cached_vs_uncached"] == 0.0
    cached, uncached = r["casts_per_ner_pass"]["bf16"], r["casts_per_ner_pass"]["bf16, inference_mode"]
    assert cached["one_batch"] == uncached["one_batch"] > 0
    assert uncached["six_batches"] == 6 * uncached["one_batch"]  # every batch casts every weight again
    assert cached["six_batches"] < uncached["six_batches"]
    # after the run the scorer's own context is back in place
    import radscore.ner
    from radscore.device import no_grad_for

    assert radscore.ner.no_grad_for is no_grad_for

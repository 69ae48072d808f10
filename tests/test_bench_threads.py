"""benchmarks/training/bench_threads.py: how runs at several thread counts are compared (the runs
themselves are the benchmark's: trainings of minutes each)."""

from benchmarks.training.bench_threads import compare, training_command, tune_command


def _run(threads, sha="a", **figures):
    return {"threads": threads, "weights_sha256": sha, "figures": figures}


def test_identical_runs_are_identical_and_any_difference_is_reported_with_its_size():
    same = compare([_run(1, f1=0.81, loss=0.3), _run(2, f1=0.81, loss=0.3), _run(4, f1=0.81, loss=0.3)])
    assert same["identical"] and same["weights_identical"] and same["figures_that_differ"] == {}
    assert same["figures_compared"] == 2

    moved = compare([_run(1, f1=0.81, loss=0.3), _run(2, f1=0.8125, loss=0.3), _run(4, f1=0.80, loss=0.3)])
    assert not moved["identical"] and moved["weights_identical"]
    assert abs(moved["figures_that_differ"]["f1"] - 0.0125) < 1e-12 and "loss" not in moved["figures_that_differ"]

    weights = compare([_run(1, "a", f1=0.81), _run(2, "b", f1=0.81)])
    assert not weights["identical"] and not weights["weights_identical"]
    assert compare([_run(1, f1=0.8), _run(2)])["figures_that_differ"] == {"f1": "missing in a run"}


def test_the_runs_are_the_committed_sample_configs_shortened(tmp_path):
    cmd = training_command("configs/ner/iob_sample.yaml", tmp_path, 40)
    assert cmd[1:6] == ["-m", "train", "fit", "--config", "configs/ner/iob_sample.yaml"]
    assert "--trainer.limit_train_batches=40" in cmd and not any("precision" in c or "seed" in c for c in cmd)
    tune = tune_command(tmp_path, 200, "ner/export")
    assert "--n-trials=200" in tune and "--scorer.ner=ner/export" in tune and "configs/tune/sample.yaml" in tune

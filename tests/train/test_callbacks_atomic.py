"""The run-folder files the callbacks write (``test_metrics.json``, ``test_predictions.jsonl``,
``predictions.jsonl``) are whole or absent: a writer killed part-way through its file leaves the
previous file, and the run folder's reader loads it."""

from __future__ import annotations

import json
import signal
from types import SimpleNamespace

import pytest

from train.callbacks import Export, NERPredictionWriter, RatedTestReport
from train.lightning.run_folder import RunFolder


def _trainer(run_dir, metrics=None):
    return SimpleNamespace(is_global_zero=True, default_root_dir=str(run_dir), callback_metrics=metrics or {},
                           ckpt_path=None, strategy=SimpleNamespace(barrier=lambda: None))


def test_test_metrics_killed_mid_write_leave_the_previous_file(tmp_path, die_mid_write):
    run = RunFolder(tmp_path)
    old = {"test/f1": 0.5}
    run.test_metrics.write_text(json.dumps(old) + "\n")
    export = Export()
    export._fitted = True  # after a fit; no checkpoint, so the export itself is skipped
    big = {f"test/metric_{k:05d}": k / 7 for k in range(2000)}  # ~60 kB, killed at 4 kB
    assert die_mid_write(lambda: export.on_test_end(_trainer(tmp_path, big), None)) == signal.SIGXFSZ
    assert run.read_test_metrics() == old
    export._fitted = True
    export.on_test_end(_trainer(tmp_path, big), None)  # uninterrupted: the new file, whole
    assert run.read_test_metrics() == big


def test_predictions_killed_mid_write_leave_the_previous_file(tmp_path, die_mid_write):
    path = RunFolder(tmp_path).predictions
    path.write_text('{"id": "old"}\n')
    rows = [[{"id": f"s{k}", "tokens": ["No", "effusion"], "pred_tags": ["O", "B-OBS-ABSENT"]} for k in range(500)]]
    writer = NERPredictionWriter()
    assert die_mid_write(lambda: writer.write_on_epoch_end(_trainer(tmp_path), None, rows, None)) == signal.SIGXFSZ
    assert path.read_text() == '{"id": "old"}\n'
    writer.write_on_epoch_end(_trainer(tmp_path), None, rows, None)
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == [f"s{k}" for k in range(500)]


class _Split:
    def __init__(self, n):
        self.ids = [f"r{k}" for k in range(n)]
        self.groups = [k % 5 for k in range(n)]
        self.labels = [{"rating": float(k % 4)} for k in range(n)]


def test_test_predictions_killed_mid_write_leave_the_previous_file(tmp_path, die_mid_write, monkeypatch):
    """``RatedTestReport`` with its baselines stubbed: only the file it writes is under test."""
    import train.evaluation.beside as beside

    n = 400
    monkeypatch.setattr(beside, "split_baselines",
                        lambda train, test, shallow: SimpleNamespace(metrics={}, scores={"length": list(range(n))}))
    trainer = _trainer(tmp_path)
    trainer.datamodule = SimpleNamespace(rated_split=lambda split: _Split(n))
    trainer.limit_test_batches = 1.0
    module = SimpleNamespace(test_predictions={f"r{k}": {"prediction": k / n} for k in range(n)})
    path = RunFolder(tmp_path).test_predictions
    path.write_text('{"id": "old"}\n')
    report = RatedTestReport(shallow=False)
    assert die_mid_write(lambda: report.on_test_end(trainer, module)) == signal.SIGXFSZ
    assert path.read_text() == '{"id": "old"}\n'
    report.on_test_end(trainer, module)
    assert len(path.read_text().splitlines()) == n


def test_a_torn_test_metrics_file_is_named_not_loaded(tmp_path):
    """What a run killed while writing it with a plain write left (the file cut short)."""
    run = RunFolder(tmp_path)
    run.test_metrics.write_text('{"test/f1": 0.5, "test/prec')
    with pytest.raises(ValueError, match="test_metrics.json: not whole JSON"):
        run.read_test_metrics()


def _save_then_kill_on_change(io, path, checkpoint, tmpdir) -> bool:
    """Save ``checkpoint`` to ``path`` with ``io`` in a forked child whose temporary folder is
    ``tmpdir``; SIGKILL it the moment ``path`` changes (a new inode, size or time). True when the
    child was killed before it finished."""
    import os
    import tempfile
    import time

    def state():
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    before = state()
    pid = os.fork()
    if pid == 0:
        try:
            tempfile.tempdir = str(tmpdir)
            io.save_checkpoint(checkpoint, path)
        finally:
            os._exit(0)
    while state() == before:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return False
        time.sleep(0.0005)
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status)


def test_last_ckpt_killed_mid_write_is_the_previous_or_the_new_checkpoint(tmp_path):
    """With the temporary folder on another file system (tmpfs here), Lightning's own write copies
    into ``last.ckpt`` (``shutil.move``), so a kill during the copy leaves it truncated; the
    project's checkpoint IO renames a file written beside it, so ``last.ckpt`` always loads."""
    import os

    import torch

    from train.lightning.checkpoint_io import AtomicCheckpointIO

    shm = "/dev/shm"
    if not os.path.isdir(shm) or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on a file system of its own")  # the cross-device case cannot be made here
    io = AtomicCheckpointIO()
    path = tmp_path / "ckpt" / "last.ckpt"
    io.save_checkpoint({"step": 1, "w": torch.zeros(8)}, path)
    big = {"step": 2, "w": torch.arange(40_000_000, dtype=torch.float32)}  # 160 MB: the copy takes a while
    with __import__("tempfile").TemporaryDirectory(dir=shm) as tmpdir:
        _save_then_kill_on_change(io, path, big, tmpdir)
        loaded = torch.load(path, weights_only=True)  # a truncated file raises here
        assert loaded["step"] in (1, 2)
        assert not list(os.scandir(tmpdir))  # nothing left in the temporary folder either
    io.save_checkpoint({"step": 3, "w": torch.zeros(8)}, path)  # the next write clears what the kill left
    assert [p.name for p in path.parent.iterdir()] == ["last.ckpt"]


def test_the_training_cli_writes_checkpoints_with_the_atomic_io(tiny_backbone, tmp_path):
    from pathlib import Path

    from train.lightning.checkpoint_io import AtomicCheckpointIO
    from train.lightning.cli import RadscoreCLI

    root = Path(__file__).resolve().parents[2]
    cli = RadscoreCLI(run=False, args=["--config", str(root / "configs/ner/iob_sample.yaml"),
                                       f"--model.init_args.backbone={tiny_backbone}", f"--run_dir={tmp_path}",
                                       "--trainer.precision=32-true"])
    assert isinstance(cli.trainer.strategy.checkpoint_io, AtomicCheckpointIO)

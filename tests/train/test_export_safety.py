"""Exports never destroy what is not an export, survive a kill, and never execute a checkpoint."""

import builtins
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from radscore.export import MANIFEST, read_manifest
from train.release.export import export_any
from train.release.base import STAGING_PREFIX, ExportTargetError, UnsafeCheckpointError, staged_export
from train.lightning.cli import RadscoreCLI

ROOT = Path(__file__).resolve().parents[2]
HUB = ROOT / "tests" / "fixtures" / "ratener_hub"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "WANDB_MODE": "offline", "HF_HUB_OFFLINE": "1"}


@pytest.fixture(scope="module")
def run(tiny_backbone, tmp_path_factory):
    """A one-epoch IOB run on the hub fixture, with its export."""
    run_dir = tmp_path_factory.mktemp("ner_run")
    RadscoreCLI(args=[
        "fit", "--config", str(ROOT / "configs" / "ner" / "iob_sample.yaml"), f"--run_dir={run_dir}",
        f"--data.data_dir={HUB}", f"--model.init_args.backbone={tiny_backbone}", "--trainer.max_epochs=1",
        "--trainer.accelerator=cpu", "--trainer.devices=1", "--trainer.enable_progress_bar=false"])
    assert (run_dir / "export" / MANIFEST).is_file()
    return run_dir


def _snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _staging(parent: Path) -> list[Path]:
    return sorted(parent.glob(f"{STAGING_PREFIX}*"))


def test_out_dot_is_refused_and_nothing_is_deleted(run, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("keep me")
    (project / "data").mkdir()
    (project / "data" / "x.csv").write_text("a,b\n")
    before = _snapshot(project)
    proc = subprocess.run([sys.executable, "-m", "train", "export", str(run), "--out", "."], cwd=project,
                          env=ENV, capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "not a radscore export" in proc.stderr and "refusing" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert _snapshot(project) == before


def test_current_folder_is_refused_even_when_empty(run, tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    with pytest.raises(ExportTargetError, match="current folder"):
        export_any(run, ".")
    assert list(empty.iterdir()) == []


def test_a_non_empty_foreign_folder_is_refused(run, tmp_path):
    foreign = tmp_path / "my_model"
    foreign.mkdir()
    (foreign / "config.json").write_text("{}")
    with pytest.raises(ExportTargetError, match="my_model.*not a radscore export"):
        export_any(run, foreign)
    assert _snapshot(foreign) == {"config.json": b"{}"}
    assert _staging(tmp_path) == []
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    with pytest.raises(ExportTargetError, match="not a folder"):
        export_any(run, a_file)
    assert a_file.read_text() == "x"


def test_a_previous_export_or_an_empty_folder_is_replaced_whole(run, tmp_path):
    out = tmp_path / "exp"
    out.mkdir()
    export_any(run, out)  # empty folder: allowed
    (out / "stale_file.bin").write_bytes(b"old")
    export_any(run, out)  # previous export: replaced, not merged
    assert not (out / "stale_file.bin").exists()
    assert read_manifest(out)["kind"] == "ner-iob"
    assert _staging(tmp_path) == []


def test_the_manifest_names_the_checkpoint_relative_to_its_run_folder(run, tmp_path):
    """``publish`` uploads the manifest: no local absolute path (a user's home folder) in it."""
    out = export_any(run, tmp_path / "exp")
    manifest = read_manifest(out)
    best = sorted((run / "ckpt").glob("best-*.ckpt"))
    assert best and manifest["checkpoint"] == f"ckpt/{best[-1].name}"
    assert read_manifest(run / "export")["checkpoint"].startswith("ckpt/best-")  # the export after fit
    strings = [v for v in manifest.values() if isinstance(v, str)]
    assert not [v for v in strings if str(run) in v or str(tmp_path) in v or v.startswith(str(Path.home()))]


KILL_SCRIPT = """
import os, signal, sys
import train.release.base as export_base
real = export_base.write_manifest
def write_then_die(folder, *a, **k):
    real(folder, *a, **k)
    (folder / "half_written.bin").write_bytes(b"x" * 1000)
    os.kill(os.getpid(), signal.SIGKILL)
export_base.write_manifest = write_then_die
from train.release.export import export_any
export_any(sys.argv[1], sys.argv[2])
"""


def test_an_export_killed_half_way_leaves_the_previous_export_intact(run, tmp_path):
    out = tmp_path / "exp"
    export_any(run, out)
    before = _snapshot(out)
    proc = subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(run), str(out)], env=ENV,
                          capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr
    assert _snapshot(out) == before  # the old export, byte for byte
    left = _staging(tmp_path)
    assert len(left) == 1 and (left[0] / "half_written.bin").is_file()  # the unfinished one, hidden
    export_any(run, out)  # the next export cleans up
    assert _staging(tmp_path) == []
    assert read_manifest(out)["kind"] == "ner-iob"


def test_a_kill_between_the_two_renames_is_repaired_by_the_next_export(tmp_path):
    out = tmp_path / "exp"
    moved_aside = tmp_path / f"{STAGING_PREFIX}exp-old-12345"
    moved_aside.mkdir()
    (moved_aside / MANIFEST).write_text('{"kind": "ner-iob", "format_version": 1}')
    with pytest.raises(RuntimeError):
        with staged_export(out):
            raise RuntimeError("export failed")
    assert (out / MANIFEST).is_file()  # the previous export is back in place
    assert _staging(tmp_path) == []


class _RunsCode:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return builtins.open, (str(self.marker), "w")


def test_a_checkpoint_that_would_run_code_is_refused_not_executed(tmp_path):
    marker = tmp_path / "pwned"
    ckpt = tmp_path / "evil.ckpt"
    torch.save({"radscore": {"task": "ner-iob"}, "state_dict": {}, "payload": _RunsCode(marker)}, ckpt)
    with pytest.raises(UnsafeCheckpointError, match="evil.ckpt.*refused"):
        export_any(ckpt, tmp_path / "out")
    assert not marker.exists()
    assert not (tmp_path / "out").exists()
    proc = subprocess.run([sys.executable, "-m", "train", "export", str(ckpt), "--out", str(tmp_path / "o2")],
                          env=ENV, capture_output=True, text=True)
    assert proc.returncode == 2 and "refused to load" in proc.stderr and not marker.exists()


def _fake_export(folder: Path, tag: str) -> None:
    from radscore.export import write_manifest

    write_manifest(folder, "ner-iob", tag=tag)
    (folder / "model.safetensors").write_bytes(tag.encode() * 1000)


def _killed_at_first_rename(write, out: Path) -> int:
    """Run ``write()`` in a forked child that SIGKILLs itself right after the first ``os.replace`` of
    a folder beside ``out`` (the files renamed inside the staging folder go through): with two
    renames, the instant between them."""
    import signal

    real = os.replace

    def replace(src, dst):
        folder = Path(src).parent == out.parent and Path(src).is_dir()
        real(src, dst)
        if folder:
            os.kill(os.getpid(), signal.SIGKILL)

    pid = os.fork()
    if pid == 0:
        try:
            os.replace = replace
            write()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


def test_an_export_killed_while_taking_the_place_of_the_previous_one_leaves_a_whole_export(tmp_path):
    """The previous export and the new one trade places in one step: a kill at any point of the swap
    leaves a whole export under the name (here the new one) and the next export cleans up."""
    out = tmp_path / "exp"
    with staged_export(out) as folder:
        _fake_export(folder, "old")

    def export_new():
        with staged_export(out) as folder:
            _fake_export(folder, "new")

    assert _killed_at_first_rename(export_new, out) == 9
    assert read_manifest(out)["tag"] in ("old", "new")
    assert (out / "model.safetensors").read_bytes() == read_manifest(out)["tag"].encode() * 1000
    export_new()
    assert read_manifest(out)["tag"] == "new" and _staging(tmp_path) == []


def test_where_folders_cannot_trade_places_a_kill_between_the_renames_is_named(tmp_path, monkeypatch):
    import train.release.base as base

    out = tmp_path / "exp"
    with staged_export(out) as folder:
        _fake_export(folder, "old")
    monkeypatch.setattr(base, "exchange", lambda a, b: False)

    def export_new():
        with staged_export(out) as folder:
            _fake_export(folder, "new")

    assert _killed_at_first_rename(export_new, out) == 9
    assert not out.exists()
    with pytest.raises(ValueError, match=r"exp: an export was killed while replacing this one; the previous "
                                         r"export is .*\.radscore-export-exp-old-"):
        base.check_export_folder(out)
    export_new()  # puts the previous one back first, then replaces it
    assert base.check_export_folder(out)["tag"] == "new" and _staging(tmp_path) == []


def test_a_half_written_export_is_named_by_its_readers(tmp_path):
    """An export with no manifest, an unfinished staging folder where none is: publish, the bundle
    writer and the tuner's precomputation name it instead of loading or copying it."""
    from radscore.scoring import AffinityMatrix
    from train.release.base import check_export_folder
    from train.release.bundle import write_bundle
    from train.release.publish import publish
    from train.tune.precompute import ScorerSettings, precompute

    ner = tmp_path / "ner"
    staging = tmp_path / f"{STAGING_PREFIX}ner-abc123"
    staging.mkdir()
    (staging / "config.json").write_text("{}")  # killed before the manifest: no export under the name
    for load in (lambda: check_export_folder(ner), lambda: publish(ner, "you/ner", dry_run=True),
                 lambda: write_bundle(tmp_path / "bundle", str(ner), "you/encoder", AffinityMatrix.builtin("long")),
                 lambda: precompute(["a"], ["b"], ScorerSettings(ner=str(ner)), tmp_path / "cache", progress=False)):
        with pytest.raises(ValueError, match=r"ner: a half-written export \(.*\.radscore-export-ner-abc123 was never"):
            load()
    assert not (tmp_path / "bundle").exists()


def test_a_bundle_killed_while_taking_the_place_of_the_previous_one_leaves_a_whole_bundle(tmp_path):
    from radscore.scoring import AffinityMatrix
    from train.release.base import check_export_folder
    from train.release.bundle import write_bundle

    out = tmp_path / "bundle"
    write_bundle(out, "you/ner-old", "you/encoder", AffinityMatrix.builtin("long"))
    before = _snapshot(out)
    assert _killed_at_first_rename(lambda: write_bundle(out, "you/ner-new", "you/encoder",
                                                        AffinityMatrix.builtin("short")), out) == 9
    manifest = check_export_folder(out, "ratescore")
    if manifest["ner"] == "you/ner-old":
        assert _snapshot(out) == before
    else:
        assert manifest["ner"] == "you/ner-new"
        assert AffinityMatrix.load(out / manifest["affinity_matrix"]) == AffinityMatrix.builtin("short")

